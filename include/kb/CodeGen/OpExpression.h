//===- OpExpression.h - A pointwise kb op as a CUDA expression -*- C++ -*-===//
//
// The one place an elementwise or broadcast `kb.aten` op becomes CUDA: its
// row's template (OpTemplate.h) with each operand rendered from the IR. The
// graph emitter (RegionEmitter) names tensor operands by the loads it
// emits; the C++ rewriter (CxxKernel.cpp) names them, and the scalars its
// fused functions take at run time, by the element function's parameters.
// Constants, absent operands and ATen's Scalar overloads are decided here
// for both, so the frontends cannot disagree on them.
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_OPEXPRESSION_H
#define KB_CODEGEN_OPEXPRESSION_H

#include "kb/IR/KbDialect.h"
#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kb::codegen {

/// CUDA text for values of the op's operands that are not constants: a
/// tensor operand's element, a scalar the kernel takes as a parameter.
using OperandNames = llvm::DenseMap<mlir::Value, std::string>;

/// Operand `v` (schema operand `arg`) of `op`: its name in `names`, else a
/// constant's float literal (a string option's first character), else the
/// value an absent (None) operand takes. The error says which operand of
/// which op has none of these.
llvm::Expected<std::string> operandExpression(AtenOp op, const ArgSpec &arg,
                                              mlir::Value v,
                                              const OperandNames &names);

/// Pointwise `op` as a CUDA expression: its row's template over
/// operandExpression, through the Scalar overload's row where `other` is a
/// constant (ATen's TensorIterator takes a constant as a CPU scalar, so a
/// division multiplies by the float reciprocal, as that row's template
/// does).
llvm::Expected<std::string> pointwiseExpression(AtenOp op,
                                                const OperandNames &names);

} // namespace kb::codegen

#endif // KB_CODEGEN_OPEXPRESSION_H

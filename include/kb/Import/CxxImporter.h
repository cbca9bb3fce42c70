//===- CxxImporter.h - C++ chains as kb-dialect IR --------------*- C++ -*-===//
//
// The libtorch C++ frontend's chains in the IR the TorchScript importer
// produces: one func.func per rewritable chain, its ops as `kb.aten` with
// the op table's schema operands, each located at its C++ source.
//
//===----------------------------------------------------------------------===//
#ifndef KB_IMPORT_CXXIMPORTER_H
#define KB_IMPORT_CXXIMPORTER_H

#include "kb/Import/CxxChains.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"

namespace kb {

/// A module with one function per chain that has a rewrite plan, named
/// `<function>_<n>`: its first argument is the anchor's result (the anchor
/// stays in cuBLAS/cuDNN and is named by the `kb.anchor` attribute), then
/// the chain's tensor and non-literal scalar operands (`kb.source` gives
/// their C++ expression); literals become `kb.constant`. Shapes are
/// symbolic in C++, so tensors are unranked `tensor<*xf32>`.
mlir::OwningOpRef<mlir::ModuleOp> importCxxChains(mlir::MLIRContext &ctx,
                                                  const CxxAnalysis &a);

/// One chain's function, as importCxxChains makes it.
struct ImportedChain {
  /// Its first argument is the anchor's result.
  mlir::func::FuncOp fn;
  /// The IR value of each use of a plan operand: an argument, or the
  /// constant a literal became; with the operand's index.
  llvm::SmallVector<std::pair<mlir::Value, int>> operandValues;
  /// The `kb.aten` op of each plan op, in the plan's order.
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Chain `c` (with a rewrite plan) as function `name` at the end of
/// `module`, whose context has the kb and func dialects loaded.
ImportedChain importCxxChain(mlir::ModuleOp module, const CxxChain &c,
                             llvm::StringRef name);

} // namespace kb

#endif // KB_IMPORT_CXXIMPORTER_H

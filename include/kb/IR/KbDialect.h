//===- KbDialect.h - The kb dialect -----------------------------*- C++ -*-===//
#ifndef KB_IR_KBDIALECT_H
#define KB_IR_KBDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kb/IR/OpSemantics.h"

#include "kb/IR/KbOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kb/IR/KbOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "kb/IR/KbOps.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kb {
/// Registers every dialect a kb module uses (kb and func): the importers
/// produce them, kb-opt and the passes consume them.
void registerKbDialects(mlir::DialectRegistry &registry);
} // namespace kb

#endif // KB_IR_KBDIALECT_H

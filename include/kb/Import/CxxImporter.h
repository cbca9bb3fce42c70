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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kb {

/// A module with one function per chain that has a rewrite plan, named
/// `<function>_<n>`: its first argument is the anchor's result (the anchor
/// stays in cuBLAS/cuDNN and is named by the `kb.anchor` attribute), then
/// the chain's tensor and non-literal scalar operands (`kb.source` gives
/// their C++ expression); literals become `kb.constant`. Shapes are
/// symbolic in C++, so tensors are unranked `tensor<*xf32>`.
mlir::OwningOpRef<mlir::ModuleOp> importCxxChains(mlir::MLIRContext &ctx,
                                                  const CxxAnalysis &a);

} // namespace kb

#endif // KB_IMPORT_CXXIMPORTER_H

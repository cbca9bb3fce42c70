//===- Passes.h - kb passes -------------------------------------*- C++ -*-===//
#ifndef KB_TRANSFORMS_PASSES_H
#define KB_TRANSFORMS_PASSES_H

#include "kb/IR/KbDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace kb {

#define GEN_PASS_DECL
#include "kb/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kb/Transforms/Passes.h.inc"

/// decompose -> classify -> simplify -> sink-views -> unfuse-linear-bias ->
/// classify -> form-regions: what `analyze` runs. `rewrite` passes normsBeforeTF32 =
/// false unless --fuse-before-tf32, and reductionsBeforeSteps = false (its
/// numerics policy would keep such regions whole; the linear-bias split
/// then avoids step, singular and convolution consumers too).
void buildAnalysisPipeline(mlir::OpPassManager &pm, bool normsBeforeTF32 = true,
                           bool reductionsBeforeSteps = true);

/// Classify and form-regions only: the regions of the graph as it was
/// traced, without decompose or simplify (`kb-rewrite analyze
/// --no-simplify`).
void buildTracedRegionsPipeline(mlir::OpPassManager &pm);

/// What the rewrite pipeline runs after the analysis pipeline: outline (a
/// kb.kernel and a kb.launch per region). `analyze --coverage` runs it
/// after reporting on the regions.
void buildOutliningPipeline(mlir::OpPassManager &pm);

/// The analysis pipeline, then the outlining one: what `codegen` and
/// `rewrite` run before generating kernels.
void buildRewritePipeline(mlir::OpPassManager &pm, bool normsBeforeTF32 = true,
                          bool reductionsBeforeSteps = true);

/// Registers both pipelines with the pass registry (kb-opt's
/// --kb-analysis-pipeline and --kb-rewrite-pipeline, options
/// norms-before-tf32 and reductions-before-steps).
void registerKbPipelines();

} // namespace kb

#endif // KB_TRANSFORMS_PASSES_H

//===- Pipeline.cpp - The analysis pipeline -------------------------------===//

#include "kb/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

void kb::buildAnalysisPipeline(mlir::OpPassManager &pm, bool normsBeforeTF32,
                               bool reductionsBeforeSteps) {
  // Losses and distances first, so that their parts are classified too.
  pm.addPass(createDecompose());
  pm.addPass(createClassify());
  // Simplify rewrites chains (e.g. merges clamps), so classify again after.
  pm.addPass(createSimplify());
  // Pointwise consumers behind a view move next to their producer.
  pm.addPass(createSinkViews());
  UnfuseLinearBiasOptions unfuse;
  unfuse.beforeSteps = reductionsBeforeSteps;
  pm.addPass(createUnfuseLinearBias(unfuse));
  pm.addPass(createClassify());
  FormRegionsOptions form;
  form.normsBeforeTF32 = normsBeforeTF32;
  form.reductionsBeforeSteps = reductionsBeforeSteps;
  pm.addPass(createFormRegions(form));
}

void kb::buildTracedRegionsPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createClassify());
  pm.addPass(createFormRegions());
}

void kb::buildOutliningPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createOutline());
  pm.addPass(createStreamLayouts());
  pm.addPass(createGemmOperandLayouts());
}

void kb::buildRewritePipeline(mlir::OpPassManager &pm, bool normsBeforeTF32,
                              bool reductionsBeforeSteps) {
  buildAnalysisPipeline(pm, normsBeforeTF32, reductionsBeforeSteps);
  buildOutliningPipeline(pm);
}

namespace {
struct PipelineOptions : mlir::PassPipelineOptions<PipelineOptions> {
  Option<bool> normsBeforeTF32{
      *this, "norms-before-tf32",
      llvm::cl::desc("Let norms whose results reach a convolution join "
                     "regions (rewrite: false)"),
      llvm::cl::init(true)};
  Option<bool> reductionsBeforeSteps{
      *this, "reductions-before-steps",
      llvm::cl::desc("Let sums, norms and softmax whose results reach a step "
                     "op join regions (rewrite: false)"),
      llvm::cl::init(true)};
};
} // namespace

void kb::registerKbPipelines() {
  mlir::PassPipelineRegistration<PipelineOptions>(
      "kb-analysis-pipeline",
      "decompose, classify, simplify, sink-views, unfuse-linear-bias, "
      "classify, "
      "form-regions (kb-rewrite analyze)",
      [](mlir::OpPassManager &pm, const PipelineOptions &o) {
        buildAnalysisPipeline(pm, o.normsBeforeTF32, o.reductionsBeforeSteps);
      });
  mlir::PassPipelineRegistration<PipelineOptions>(
      "kb-rewrite-pipeline",
      "the analysis pipeline, then outline, stream-layouts and "
      "gemm-operand-layouts "
      "(kb-rewrite codegen and rewrite)",
      [](mlir::OpPassManager &pm, const PipelineOptions &o) {
        buildRewritePipeline(pm, o.normsBeforeTF32, o.reductionsBeforeSteps);
      });
}

//===- Pipeline.cpp - The analysis pipeline -------------------------------===//

#include "kb/Transforms/Passes.h"

void kb::buildAnalysisPipeline(mlir::OpPassManager &pm, bool normsBeforeTF32,
                               bool reductionsBeforeSteps) {
  // Losses and distances first, so that their parts are classified too.
  pm.addPass(createDecompose());
  pm.addPass(createClassify());
  // Simplify rewrites chains (e.g. merges clamps), so classify again after.
  pm.addPass(createSimplify());
  UnfuseLinearBiasOptions unfuse;
  unfuse.beforeSteps = reductionsBeforeSteps;
  pm.addPass(createUnfuseLinearBias(unfuse));
  pm.addPass(createClassify());
  FormRegionsOptions form;
  form.normsBeforeTF32 = normsBeforeTF32;
  form.reductionsBeforeSteps = reductionsBeforeSteps;
  pm.addPass(createFormRegions(form));
}

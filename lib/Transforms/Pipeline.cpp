//===- Pipeline.cpp - The analysis pipeline -------------------------------===//

#include "kb/Transforms/Passes.h"

void kb::buildAnalysisPipeline(mlir::OpPassManager &pm, bool normsBeforeTF32) {
  pm.addPass(createClassify());
  // Simplify rewrites chains (e.g. merges clamps), so classify again after.
  pm.addPass(createSimplify());
  pm.addPass(createClassify());
  FormRegionsOptions form;
  form.normsBeforeTF32 = normsBeforeTF32;
  pm.addPass(createFormRegions(form));
}

//===- Pipeline.cpp - The analysis pipeline -------------------------------===//

#include "kb/Transforms/Passes.h"

void kb::buildAnalysisPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createClassify());
  // Simplify rewrites chains (e.g. merges clamps), so classify again after.
  pm.addPass(createSimplify());
  pm.addPass(createClassify());
  pm.addPass(createFormRegions());
}

//===- Pipeline.cpp - Stage 2: the rewrite pipeline -----------------------===//
#include "kb/Driver/Failure.h"
#include "kb/Driver/Stages.h"
#include "kb/Emit/AnalysisReport.h"
#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace llvm;

namespace kb::driver {

Error runRewritePipeline(mlir::ModuleOp module, StringRef inputName,
                         bool normsBeforeTF32, bool reductionsBeforeSteps) {
  mlir::PassManager pm(module.getContext());
  buildRewritePipeline(pm, normsBeforeTF32, reductionsBeforeSteps);
  if (mlir::failed(pm.run(module)))
    return failure(FailureKind::Internal,
                   "the pipeline failed on '" + inputName + "'");
  return Error::success();
}

Error runPipeline(RewriteRun &run) {
  mlir::ModuleOp module = *run.module;
  bool relaxed = run.opts.numerics == Numerics::Relaxed;
  if (Error err = runRewritePipeline(
          module, run.opts.graphPath,
          /*normsBeforeTF32=*/run.opts.fuseBeforeTF32 || relaxed,
          /*reductionsBeforeSteps=*/relaxed))
    return err;
  module.walk([&](mlir::Operation *op) {
    if (op->hasAttr("kb.numerics"))
      if (auto why = op->getAttrOfType<mlir::StringAttr>("kb.unfused"))
        run.result.keptOps.push_back(
            {displayName(op), describeLocation(op->getLoc()).first, why.str()});
    if (op->hasAttr("kb.bias_unfused"))
      run.result.biasFreeGemms.push_back(
          {displayName(op), describeLocation(op->getLoc()).first, ""});
  });
  run.numerics = numericsFacts(module);
  return Error::success();
}

} // namespace kb::driver

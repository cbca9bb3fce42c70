//===- Load.cpp - Stage 1: the graph and its params.json, read once -------===//
#include "kb/Driver/Failure.h"
#include "kb/Driver/Stages.h"
#include "kb/Emit/Files.h"
#include "kb/Import/TorchScriptImporter.h"

#include "mlir/IR/Verifier.h"

using namespace llvm;

namespace kb::driver {

Expected<RewriteRun> load(mlir::MLIRContext &ctx, const RewriteOptions &opts) {
  RewriteRun run;
  run.opts = opts;
  if (run.opts.paramsPath.empty())
    run.opts.paramsPath = defaultParamsPath(opts.graphPath);
  auto graph = readGraphFile(opts.graphPath);
  if (!graph)
    return withKind(graph.takeError(), FailureKind::Input);

  auto text = readTextFile(run.opts.paramsPath);
  if (!text)
    return failure(
        FailureKind::Input,
        "rewrite needs the params.json kb-export wrote beside the graph: " +
            toString(text.takeError()) + " (pass --params FILE)");
  auto params = json::parse(*text);
  if (!params || !params->getAsObject())
    return failure(FailureKind::Input,
                   run.opts.paramsPath + ": not a JSON object" +
                       (params ? "" : ": " + toString(params.takeError())));
  run.paramsText = std::move(*text);
  run.params = std::move(*params->getAsObject());
  auto importOptions = paramsFromJson(run.params, run.opts.paramsPath);
  if (!importOptions)
    return withKind(importOptions.takeError(), FailureKind::Input);
  auto module = importGraph(ctx, *graph, *importOptions);
  if (!module)
    return withKind(module.takeError(), FailureKind::Input);
  if (mlir::failed(mlir::verify(**module)))
    return failure(FailureKind::Internal,
                   "internal error: the imported IR of '" + opts.graphPath +
                       "' failed to verify");
  run.module = std::move(*module);
  run.result.graphPath = opts.graphPath;
  run.result.fastMath = opts.fastMath;
  run.result.relaxed = opts.numerics == Numerics::Relaxed;
  return std::move(run);
}

} // namespace kb::driver

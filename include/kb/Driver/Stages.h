//===- Stages.h - The stages of `kb-rewrite rewrite`, in order ---*- C++
//-*-===//
//
// A graph rewrite runs these in order, each on the RewriteRun the first
// returns (docs/architecture.md):
//
//   load -> runPipeline -> generateKernels -> verifyKernels ->
//   searchWithModel -> selectKernels -> emitRewrite
//
// Errors name the file and what to do; progress lines go to `log`.
//
//===----------------------------------------------------------------------===//
#ifndef KB_DRIVER_STAGES_H
#define KB_DRIVER_STAGES_H

#include "kb/Driver/NumericsPolicy.h"
#include "kb/Driver/RewriteOptions.h"
#include "kb/Emit/RewritePlan.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace kb::driver {

/// Everything the stages of one graph rewrite share.
struct RewriteRun {
  RewriteOptions opts;
  /// The graph, imported with its params.json; the pipeline rewrites it.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// params.json as read (copied beside the outputs) and parsed.
  std::string paramsText;
  llvm::json::Object params;
  /// Absolute output directory and its kernels/ folder.
  std::string outDir, kernelDir;
  /// The numerics policy's facts per outlined kernel (after the pipeline).
  std::map<std::string, NumericsFacts> numerics;
  /// Region name -> index in result.regions.
  std::map<std::string, unsigned> regionIndex;
  RewriteResult result;
};

/// 1. Reads the graph and its params.json (opts.paramsPath, else
/// <stem>.params.json beside the graph), each once, and imports the graph.
llvm::Expected<RewriteRun> load(mlir::MLIRContext &ctx,
                                const RewriteOptions &opts);

/// The rewrite pipeline (buildRewritePipeline) over a module: the one place
/// a command runs it (rewrite through runPipeline, codegen directly).
llvm::Error runRewritePipeline(mlir::ModuleOp module, llvm::StringRef inputName,
                               bool normsBeforeTF32,
                               bool reductionsBeforeSteps);

/// 2. The rewrite pipeline (buildRewritePipeline) under the numerics
/// options; records the ops the policy kept in ATen and the GEMMs that run
/// without their bias.
llvm::Error runPipeline(RewriteRun &run);

/// 3. A kernel per region from the code generator under the numerics
/// policy, and its channels-last form; writes kernels/<name>.{cu,job.json}.
llvm::Error generateKernels(RewriteRun &run);

/// 4. kb-verify on every kernel: verified on a GPU, compiled without one.
llvm::Error verifyKernels(RewriteRun &run, llvm::raw_ostream &log);

/// 5. The code model's candidates (docs/model.md), when it was asked for.
llvm::Error searchWithModel(RewriteRun &run, llvm::raw_ostream &log);

/// 6. Kernels verified but not bit-identical where the policy needs it are
/// kept out; verified kernels not measurably faster than their ATen ops are
/// not used (never slower).
void selectKernels(RewriteRun &run);

/// 7. manifest.json, the runtime, params.json, model_new.py (when the
/// traced model file is at hand) and the reports.
llvm::Error emitRewrite(RewriteRun &run);

} // namespace kb::driver

#endif // KB_DRIVER_STAGES_H

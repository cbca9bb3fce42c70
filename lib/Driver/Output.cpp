//===- Output.cpp - Stage 7: the rewritten model's files ------------------===//
//
// Decides the layouts model_new.py's program uses (channels-last kernels,
// convolutions converted for NCHW kernels) and hands everything to
// lib/Emit's writers: manifest.json, the runtime, params.json,
// model_new.py, the reports.
//
//===----------------------------------------------------------------------===//
#include "kb/Driver/Stages.h"
#include "kb/Emit/FileTransaction.h"
#include "kb/Emit/Files.h"
#include "kb/Emit/RewriteOutput.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace llvm;

namespace kb::driver {

Error emitRewrite(RewriteRun &run) {
  const RewriteOptions &opts = run.opts;
  RewriteResult &result = run.result;
  mlir::ModuleOp module = *run.module;
  // model_new.py's forward first: it decides which regions have a library
  // form.
  std::set<std::string> clKernels, clReads;
  for (const RegionPlan &plan : result.regions) {
    const RegionRecord &rec = plan.record;
    if (plan.channelsLast && rec.clStatus != RegionStatus::Rejected &&
        rec.clStatus != RegionStatus::CompileError && runsKernel(rec.status)) {
      clKernels.insert(rec.name);
      if (plan.channelsLast->readsOnly)
        clReads.insert(rec.name);
    }
  }
  // A convolution feeding a kernel that reads NCHW only may still run
  // channels-last, its output made contiguous for the kernel (the runtime
  // times both layouts): 17 convolution tasks of six seeds without a
  // channels-last variant ran at 0.68x torch.compile, 13 with one at 1.25x
  // (bench/NOTES.md, session 24). Also where the region runs its ATen ops
  // (its kernel was not faster, not generated or rejected): they read the
  // contiguous copy as the kernel would (gen-20261212 task 2: a grouped
  // convolution into a layer norm no faster than ATen's ran NCHW, 0.67x
  // compile). Not where the numerics policy kept the region: it feeds a
  // TF32 convolution or a step op, where the other layout's bits would be
  // amplified. Where a step or singular op in the region would turn the
  // other layout's rounding into a flipped comparison, the layout must
  // leave the region's inputs bit-identical (exactLayout): cuDNN's
  // channels-last dgrad gave ConvTranspose2d's NCHW bits exactly and ran
  // 0.429 -> 0.344 ms (bench/NOTES.md, session 34).
  std::set<std::string> clConvert;
  for (RegionPlan &plan : result.regions) {
    auto kernel = module.lookupSymbol<KernelOp>(plan.record.name);
    if (!kernel)
      continue;
    plan.record.exactLayout = hasStepOrSingularOp(kernel);
    if (!clKernels.count(plan.record.name) &&
        plan.record.status != RegionStatus::Kept)
      clConvert.insert(plan.record.name);
  }
  auto prog =
      emitPython(module, run.regionIndex, clKernels, clReads, clConvert);
  if (prog)
    for (RegionPlan &plan : result.regions)
      if (auto it = prog->library.find(plan.record.name);
          it != prog->library.end())
        plan.record.library = it->second.first;

  // The package's files change together (FileTransaction): a failure
  // half-way must not leave this run's manifest beside an earlier run's
  // model_new.py, and a run killed between renames is undone by the next.
  FileTransaction tx(FileTransaction::journalIn(run.outDir));
  auto stage = [&](StringRef name, StringRef text) {
    SmallString<256> path(run.outDir);
    sys::path::append(path, name);
    return tx.stage(path, text);
  };
  json::Value manifest = manifestJson(result, prog ? &*prog : nullptr,
                                      run.params, opts.cudaGraphs);
  if (auto err = stage("manifest.json", formatv("{0:2}", manifest).str()))
    return err;
  for (auto &[name, text] : runtimeFiles())
    if (auto err = stage(name, text))
      return err;
  if (auto err = stage("params.json", run.paramsText))
    return err;

  // model_new.py, when the original model's source is at hand.
  std::string name = run.params.getString("name").value_or("model").str();
  std::string source = opts.modelSource.empty()
                           ? run.params.getString("source").value_or("").str()
                           : opts.modelSource;
  if (prog) {
    if (auto err = stage("kb_program.py",
                         programSource(result, run.outDir, name, *prog)))
      return err;
    result.program = true;
  }
  if (!prog) {
    result.modelNewNote = toString(prog.takeError());
  } else if (source.empty() || !StringRef(source).ends_with(".py")) {
    result.modelNewNote = "params.json names no model file (source '" + source +
                          "'); model_new.py needs the original Model class";
  } else if (auto text = readTextFile(source); !text) {
    result.modelNewNote = toString(text.takeError()) +
                          " (the model file kb-export traced; pass --source "
                          "FILE where it has moved)";
  } else {
    if (auto err = stage("original_model.py", *text))
      return err;
    if (auto err = stage("model_new.py", modelNewSource(result, run.outDir,
                                                        name, *prog, "Model")))
      return err;
    result.modelNew = true;
  }
  if (auto err =
          stage("report.json", formatv("{0:2}", reportJson(result)).str()))
    return err;
  if (auto err = stage("report.md", reportMarkdown(result)))
    return err;
  if (auto err = stage("report.html", reportHtml(result)))
    return err;
  if (auto err = tx.commit())
    return err;
  if (!result.modelNew) // an earlier run's would not match this package
    sys::fs::remove(Twine(run.outDir) + "/model_new.py");
  if (!result.program)
    sys::fs::remove(Twine(run.outDir) + "/kb_program.py");
  return Error::success();
}

} // namespace kb::driver

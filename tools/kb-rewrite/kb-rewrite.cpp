//===- kb-rewrite.cpp - The kb-rewrite driver -----------------------------===//
//
// Subcommands:
//   analyze <graph.txt> [--json] [--params F]   fusion report
//   analyze --coverage DIR [--json]            kernels' share over many graphs
//   analyze a.cpp ... [-p BUILD] [--json] [-- FLAGS]  chains in libtorch C++
//   import  <graph.txt> [--params F]            the kb dialect, as MLIR
//   ops     [--markdown]                        the op-semantics table
//   codegen <graph.txt> -o DIR [--params F]     CUDA + kb-verify job per region
//   rewrite <graph.txt> -o DIR [--params F]     ModelNew + kernels + reports
//   rewrite a.cpp ... (-o DIR | --in-place) [-p BUILD] [--json] [-- FLAGS]
//                                               fused calls in libtorch C++
//
// One cl::SubCommand parser takes both frontends' options; the inputs pick
// the frontend (C++ sources by their extension), and an option of the
// other frontend is an error. Everything after `--` is a compiler's command
// line for the C++ frontend, cut off before cl sees it.
//
// Exit codes (docs/cli.md): 0 success; 1 usage or I/O error; 2 malformed or
// unsupported input (the message names file:line:col); 3 internal failure
// (a pass or the verifier failed; please report it).
//
//===----------------------------------------------------------------------===//

#include "CodegenKnobs.h"
#include "CommandLine.h"

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Driver/Coverage.h"
#include "kb/Driver/CxxRewrite.h"
#include "kb/Driver/Failure.h"
#include "kb/Driver/Stages.h"
#include "kb/Emit/AnalysisReport.h"
#include "kb/Emit/CxxAnalysisReport.h"
#include "kb/Emit/Files.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Import/CxxFrontend.h"
#include "kb/Import/CxxImporter.h"
#include "kb/Import/TorchScriptImporter.h"
#include "kb/Model/Store.h"
#include "kb/Support/InputFile.h"
#include "kb/Support/Printable.h"
#include "kb/Transforms/Passes.h"
#include "kb/Verify/Client.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace kbtool;

namespace {

cl::SubCommand analyzeCmd("analyze", "Report fusable regions of a graph or of "
                                     "libtorch C++ sources");
cl::SubCommand importCmd("import", "Print a graph as kb-dialect MLIR");
cl::SubCommand opsCmd("ops", "Print the op-semantics table");
cl::SubCommand &codegenCmd = codegenCommand();
cl::SubCommand rewriteCmd("rewrite",
                          "Write ModelNew, verified kernels and a report, or "
                          "libtorch C++ sources calling fused kernels");
cl::list<std::string>
    rewriteInputs(cl::Positional, cl::OneOrMore,
                  cl::desc("<graph.txt> | <a.cpp ...> [-- FLAGS]"),
                  cl::sub(rewriteCmd));
cl::opt<std::string> rewriteOut("o", cl::desc("Output directory"),
                                cl::sub(rewriteCmd));
cl::opt<kb::VerifyMode> verifyMode(
    "verify", cl::desc("Run kb-verify on every kernel"),
    cl::values(clEnumValN(kb::VerifyMode::Auto, "auto",
                          "when a GPU and kb-verify are present (default)"),
               clEnumValN(kb::VerifyMode::On, "on",
                          "required: fail without a GPU"),
               clEnumValN(kb::VerifyMode::Off, "off", "never")),
    cl::init(kb::VerifyMode::Auto), cl::sub(rewriteCmd));
cl::opt<std::string> kbVerifyPath(
    "kb-verify",
    cl::desc("kb-verify executable (default: $KB_VERIFY, then beside "
             "kb-rewrite)"),
    cl::sub(rewriteCmd));
cl::opt<bool> noCudaGraphs("no-cuda-graphs",
                           cl::desc("Never replay the forward as a CUDA graph"),
                           cl::sub(rewriteCmd));
cl::opt<std::string> modelFile(
    "source",
    cl::desc("The traced model.py (default: the source params.json names)"),
    cl::sub(rewriteCmd));
cl::opt<bool> fuseBeforeTF32(
    "fuse-before-tf32",
    cl::desc("Fuse reductions and norms even where they feed a TF32 "
             "convolution (outputs then differ from eager by ~1e-4)"),
    cl::sub(rewriteCmd));
cl::opt<kb::Numerics> numericsOpt(
    "numerics",
    cl::desc("What fused kernels must keep of eager's numerics "
             "(docs/correctness.md)"),
    cl::values(clEnumValN(kb::Numerics::Exact, "exact",
                          "last bits that a step, singular op or TF32 "
                          "convolution would magnify stay ATen's (default)"),
               clEnumValN(kb::Numerics::Relaxed, "relaxed",
                          "fuse everything fusable; outputs may move past "
                          "1e-4 there (opt-in, reported)")),
    cl::init(kb::Numerics::Exact), cl::sub(rewriteCmd));
cl::opt<bool> fastMath(
    "fast-math",
    cl::desc("Approximate exp and division in sigmoid, silu, mish and "
             "softmax, as torch.compile does (2 ulp; default: ATen-exact)"),
    cl::sub(rewriteCmd), cl::sub(codegenCmd));
cl::OptionCategory modelCat("Code model (docs/model.md)");
cl::opt<std::string>
    modelUrl("model-url",
             cl::desc("OpenAI-compatible server (default $KB_MODEL_URL)"),
             cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string> modelName("model",
                               cl::desc("Model name (default $KB_MODEL)"),
                               cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string> strategy("strategy",
                              cl::desc("zero-shot | profile | refine | agent"),
                              cl::init(""), cl::sub(rewriteCmd),
                              cl::cat(modelCat));
cl::opt<int> samples("samples", cl::desc("Best-of-n: samples per region"),
                     cl::init(1), cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<int> rounds("rounds", cl::desc("Repair rounds (refine, agent)"),
                    cl::init(3), cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<double> draftTemperature("draft-temperature", cl::init(0.8),
                                 cl::desc("Temperature of drafts"),
                                 cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<double> repairTemperature("repair-temperature", cl::init(0.2),
                                  cl::desc("Temperature of repairs"),
                                  cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<double>
    analyzeTemperature("analyze-temperature", cl::init(0.3),
                       cl::desc("Temperature of the agent's analysis"),
                       cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<uint64_t>
    modelSeed("model-seed", cl::init(0),
              cl::desc("Sampling seed sent to the server (0 = none)"),
              cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<int> maxTokens("max-tokens", cl::init(4096),
                       cl::desc("Reply length limit"), cl::sub(rewriteCmd),
                       cl::cat(modelCat));
cl::opt<double> modelTimeout("model-timeout", cl::init(180),
                             cl::desc("Seconds per request"),
                             cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<double> modelDeadline(
    "model-deadline", cl::init(1800),
    cl::desc("Seconds for all model requests of the run (0 = no limit)"),
    cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<int> modelConcurrency("model-concurrency", cl::init(4),
                              cl::desc("Requests in flight at once"),
                              cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string> transcriptPath(
    "transcript", cl::desc("JSONL transcript (default <out>/transcript.jsonl)"),
    cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string>
    replayPath("replay",
               cl::desc("Replay a transcript instead of asking a server"),
               cl::sub(rewriteCmd), cl::cat(modelCat));
enum class AnswersOpt { Any, Model };
cl::opt<AnswersOpt> answersOpt(
    "answers", cl::desc("Whose kernels may answer a region"),
    cl::values(clEnumValN(AnswersOpt::Any, "any",
                          "the code generator's and the model's: the "
                          "fastest verified one (default)"),
               clEnumValN(AnswersOpt::Model, "model",
                          "only the model's (the paper's experiment, "
                          "bench/paper.py): the fastest accepted one, even "
                          "if slower; none = the ATen ops")),
    cl::init(AnswersOpt::Any), cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<bool> replayVerify(
    "replay-verify",
    cl::desc("With --replay: run kb-verify again on the recorded replies "
             "instead of serving the recorded verdicts"),
    cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string> verdictCache(
    "verdict-cache",
    cl::desc("Directory of model candidates' verdicts by kernel hash and GPU "
             "(the same kernel is verified once)"),
    cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<std::string> promptDir("prompt-dir",
                               cl::desc("Directory of edited prompt templates"),
                               cl::sub(rewriteCmd), cl::cat(modelCat));
cl::SubCommand storeCmd("store", "List, show or prune verified kernels");
cl::list<std::string> storeArgs(cl::Positional,
                                cl::desc("list | show SIG | prune"),
                                cl::sub(storeCmd));
cl::opt<std::string>
    storeDir("store",
             cl::desc("Verified-kernel store (default $KB_CACHE_DIR/store)"),
             cl::sub(rewriteCmd), cl::sub(storeCmd));
cl::opt<int> olderThanDays("older-than-days", cl::init(-1),
                           cl::desc("prune: entries older than this"),
                           cl::sub(storeCmd));
cl::opt<bool> pruneAll("all", cl::desc("prune: every entry"),
                       cl::sub(storeCmd));
cl::opt<bool> noModel("no-model", cl::desc("Never ask a model"),
                      cl::sub(rewriteCmd), cl::cat(modelCat));
cl::opt<bool> quiet("quiet", cl::desc("Only errors"), cl::sub(rewriteCmd));
cl::opt<std::string> codegenInput(cl::Positional, cl::Required,
                                  cl::desc("<graph.txt>"), cl::sub(codegenCmd));
cl::opt<std::string> outDir("o", cl::desc("Output directory"), cl::Required,
                            cl::sub(codegenCmd));

cl::list<std::string>
    analyzeInputs(cl::Positional, cl::OneOrMore,
                  cl::desc("<graph.txt> | <dir> | <a.cpp ...> [-- FLAGS]"),
                  cl::sub(analyzeCmd));
cl::opt<std::string> importInput(cl::Positional, cl::Required,
                                 cl::desc("<graph.txt>"), cl::sub(importCmd));
cl::opt<bool> jsonOut("json", cl::desc("Print one JSON object"),
                      cl::sub(analyzeCmd), cl::sub(rewriteCmd));
cl::OptionCategory cxxCat("C++ sources (docs/cxx.md)");
enum class ProgressMode { Auto, Always, Never };
cl::opt<ProgressMode> progressOpt(
    "progress", cl::desc("Say which C++ source is being parsed, on stderr"),
    cl::values(clEnumValN(ProgressMode::Auto, "auto",
                          "when stderr is a terminal and not --quiet "
                          "(default)"),
               clEnumValN(ProgressMode::Always, "always", ""),
               clEnumValN(ProgressMode::Never, "never", "")),
    cl::init(ProgressMode::Auto), cl::sub(analyzeCmd), cl::sub(rewriteCmd),
    cl::cat(cxxCat));
cl::opt<std::string>
    buildDirOpt("p", cl::desc("Build directory with compile_commands.json"),
                cl::value_desc("BUILD"), cl::sub(analyzeCmd),
                cl::sub(rewriteCmd), cl::cat(cxxCat));
enum class EmitKind { Report, Kb };
cl::opt<EmitKind> emitOpt(
    "emit", cl::desc("What analyze prints"),
    cl::values(clEnumValN(EmitKind::Kb, "kb",
                          "the chains as kb IR, each op at its source line")),
    cl::init(EmitKind::Report), cl::sub(analyzeCmd), cl::cat(cxxCat));
cl::opt<bool> inPlaceOpt("in-place",
                         cl::desc("Rewrite the sources where they are (a "
                                  "backup <file>.kb-orig is kept)"),
                         cl::sub(rewriteCmd), cl::cat(cxxCat));
cl::opt<std::string>
    lockOpt("lock",
            cl::desc("Replay this lock file's kernels (with --update-lock: "
                     "write it; default kb.lock.json)"),
            cl::value_desc("FILE"), cl::sub(rewriteCmd), cl::cat(cxxCat));
cl::opt<bool> updateLockOpt("update-lock",
                            cl::desc("Write the lock file instead of reading "
                                     "it"),
                            cl::sub(rewriteCmd), cl::cat(cxxCat));
cl::opt<bool> verifyHarnessOpt(
    "verify-harness",
    cl::desc("Also write kb_verify_harness.cpp (what kb-verify --cxx runs)"),
    cl::sub(rewriteCmd), cl::cat(cxxCat));
cl::opt<std::string>
    paramsPath("params",
               cl::desc("kb-export params.json (default: <stem>.params.json "
                        "beside <stem>.graph.txt)"),
               cl::sub(analyzeCmd), cl::sub(importCmd), cl::sub(codegenCmd),
               cl::sub(rewriteCmd));
cl::opt<bool> coverage(
    "coverage",
    cl::desc("The positional argument is a directory: for every *.graph.txt "
             "under it, which regions get no kernel and why, and the share of "
             "memory-bound bytes in generated kernels (statuses from a "
             "rewritten/report.json beside a graph, when there is one)"),
    cl::sub(analyzeCmd));
cl::opt<bool> noSimplify("no-simplify",
                         cl::desc("Skip the exact algebraic simplifications"),
                         cl::sub(analyzeCmd));
cl::opt<bool> markdown("markdown", cl::desc("Markdown (docs/op-semantics.md)"),
                       cl::sub(opsCmd));

/// What main cut off after `--`: a compiler's command line (C++ sources).
std::vector<std::string> compilerFlags;
bool haveCompilerFlags = false;

kb::CxxInputs cxxInputsFrom(ArrayRef<std::string> files) {
  kb::CxxInputs in;
  in.files.assign(files.begin(), files.end());
  in.buildDir = buildDirOpt;
  in.flags = compilerFlags;
  in.haveFlags = haveCompilerFlags;
  if (progressOpt == ProgressMode::Always ||
      (progressOpt == ProgressMode::Auto && !quiet && errs().is_displayed()))
    in.progress = &errs();
  return in;
}

/// Imports and verifies `input`; on failure reports and sets `code`.
mlir::OwningOpRef<mlir::ModuleOp> load(mlir::MLIRContext &ctx, StringRef input,
                                       int &code) {
  auto module = kb::importGraphFile(ctx, input, paramsPath);
  if (!module) {
    code = fail(module.takeError(), kb::driver::FailureKind::Input);
    return nullptr;
  }
  if (mlir::failed(mlir::verify(**module))) {
    code = fail(InternalError, "imported IR failed to verify");
    return nullptr;
  }
  return std::move(*module);
}

int runCoverage(StringRef analyzeInput) {
  if (!sys::fs::is_directory(analyzeInput))
    return fail(UsageError, "--coverage needs a directory of *.graph.txt "
                            "files; '" +
                                analyzeInput + "' is not one");
  std::vector<std::string> graphs;
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(analyzeInput, ec), end;
       it != end && !ec; it.increment(ec))
    if (StringRef(it->path()).ends_with(".graph.txt"))
      graphs.push_back(it->path());
  if (ec)
    return fail(UsageError,
                "cannot read '" + analyzeInput + "': " + ec.message());
  llvm::sort(graphs);
  std::vector<kb::GraphCoverage> results;
  for (const std::string &path : graphs) {
    mlir::MLIRContext ctx;
    auto module = kb::importGraphFile(ctx, path, "");
    if (!module) {
      kb::GraphCoverage g;
      g.graph = path;
      g.error = toString(module.takeError());
      results.push_back(std::move(g));
      continue;
    }
    // The bench layout: <task>/<task>.graph.txt, <task>/rewritten/report.json.
    SmallString<256> report(sys::path::parent_path(path));
    sys::path::append(report, "rewritten", "report.json");
    std::optional<json::Value> parsed;
    if (auto buf = kb::readInputFile(report)) {
      if (auto v = json::parse((*buf)->getBuffer()))
        parsed = std::move(*v);
      else
        consumeError(v.takeError());
    }
    results.push_back(kb::graphCoverage(
        **module, path, parsed ? parsed->getAsObject() : nullptr));
  }
  if (jsonOut)
    outs() << formatv("{0:2}", kb::coverageJson(results)) << "\n";
  else
    kb::printCoverage(results, outs());
  return Ok;
}

int runAnalyzeCxx(ArrayRef<std::string> files);

int runAnalyze() {
  auto isCxx = pickFrontend("analyze", analyzeInputs, haveCompilerFlags,
                            {&paramsPath, &coverage, &noSimplify},
                            {&buildDirOpt, &emitOpt, &progressOpt});
  if (!isCxx)
    return fail(isCxx.takeError(), kb::driver::FailureKind::Usage);
  if (*isCxx)
    return runAnalyzeCxx(analyzeInputs);
  const std::string &analyzeInput = analyzeInputs.front();
  if (coverage)
    return runCoverage(analyzeInput);
  mlir::MLIRContext ctx;
  int code = Ok;
  auto module = load(ctx, analyzeInput, code);
  if (!module)
    return code;
  int64_t importedOps = kb::countOps(*module);
  mlir::PassManager pm(&ctx);
  if (noSimplify)
    kb::buildTracedRegionsPipeline(pm);
  else
    kb::buildAnalysisPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return fail(InternalError,
                "the analysis pipeline failed on '" + analyzeInput + "'");
  kb::AnalysisReport report = kb::buildAnalysisReport(*module, analyzeInput);
  report.numOps = importedOps;
  if (jsonOut)
    outs() << formatv("{0:2}", report.toJSON()) << "\n";
  else
    report.printTable(outs());
  return Ok;
}

int runImport() {
  mlir::MLIRContext ctx;
  int code = Ok;
  auto module = load(ctx, importInput, code);
  if (!module)
    return code;
  module->print(outs());
  outs() << "\n";
  return Ok;
}

int runCodegen() {
  mlir::MLIRContext ctx;
  int code = Ok;
  auto module = load(ctx, codegenInput, code);
  if (!module)
    return code;
  // codegen emits a kernel for every region the pipeline can form: the
  // numerics policy (rewrite's --numerics) does not narrow them here.
  if (Error err = kb::driver::runRewritePipeline(
          *module, codegenInput, /*normsBeforeTF32=*/true,
          /*reductionsBeforeSteps=*/true))
    return fail(std::move(err), kb::driver::FailureKind::Internal);
  if (auto ec = sys::fs::create_directories(outDir))
    return fail(UsageError, "cannot create '" + outDir + "': " + ec.message());
  auto knobs = knobEmitOptions();
  if (!knobs)
    return fail(UsageError, toString(knobs.takeError()));
  unsigned written = 0, skipped = 0;
  for (kb::KernelOp kernel : module->getOps<kb::KernelOp>()) {
    kb::EmitOptions emitOptions = *knobs;
    emitOptions.fastMath = fastMath;
    auto emitted = kb::emitKernel(kernel, emitOptions);
    if (!emitted) {
      outs() << "skipped " << toString(emitted.takeError()) << "\n";
      ++skipped;
      continue;
    }
    for (auto [ext, text] :
         {std::pair<StringRef, std::string>{".cu", emitted->source},
          {".job.json", kb::verifyJobJson(*emitted)}}) {
      // Whole or not at all: a full disk left a truncated kernel under its
      // final name.
      if (Error err =
              kb::writeFileAtomic(outDir, emitted->name + ext.str(), text))
        return fail(UsageError, toString(std::move(err)));
    }
    outs() << "wrote " << emitted->name << ".cu and " << emitted->name
           << ".job.json (" << emitted->kind << ")\n";
    ++written;
  }
  outs() << written << " kernels written, " << skipped
         << " regions not generated yet\n";
  return Ok;
}

std::string findVerifier(const char *argv0) {
  return kb::verify::findVerifier(argv0, (void *)&findVerifier, kbVerifyPath);
}

int runRewriteCxx(const char *argv0) {
  kb::driver::CxxRewriteOptions opts;
  opts.inputs = cxxInputsFrom(rewriteInputs);
  opts.outDir = rewriteOut;
  opts.inPlace = inPlaceOpt;
  opts.lockPath = lockOpt;
  opts.updateLock = updateLockOpt;
  opts.writeHarness = verifyHarnessOpt;
  opts.json = jsonOut;
  opts.verify = verifyMode;
  opts.kbVerify = findVerifier(argv0);
  opts.fastMath = fastMath;
  opts.quiet = quiet;
  if (Error err = kb::driver::rewriteCxxSources(opts, outs()))
    return fail(std::move(err), kb::driver::FailureKind::Internal);
  return Ok;
}

int runRewrite(const char *argv0) {
  auto isCxx =
      pickFrontend("rewrite", rewriteInputs, haveCompilerFlags,
                   {&paramsPath,       &modelFile,         &noCudaGraphs,
                    &fuseBeforeTF32,   &numericsOpt,       &storeDir,
                    &noModel,          &modelUrl,          &modelName,
                    &strategy,         &samples,           &rounds,
                    &draftTemperature, &repairTemperature, &analyzeTemperature,
                    &modelSeed,        &maxTokens,         &modelTimeout,
                    &modelDeadline,    &modelConcurrency,  &transcriptPath,
                    &replayPath,       &answersOpt,        &replayVerify,
                    &verdictCache,     &promptDir},
                   {&buildDirOpt, &inPlaceOpt, &lockOpt, &updateLockOpt,
                    &verifyHarnessOpt, &jsonOut, &progressOpt});
  if (!isCxx)
    return fail(isCxx.takeError(), kb::driver::FailureKind::Usage);
  if (*isCxx)
    return runRewriteCxx(argv0);
  if (rewriteOut.empty())
    return fail(UsageError, "rewrite: -o DIR is required (the directory "
                            "for ModelNew, kernels and reports)");
  kb::RewriteOptions opts;
  opts.graphPath = rewriteInputs.front();
  opts.paramsPath = paramsPath;
  opts.outDir = rewriteOut;
  opts.verify = verifyMode;
  opts.kbVerify = findVerifier(argv0);
  opts.cudaGraphs = !noCudaGraphs;
  opts.quiet = quiet;
  opts.modelSource = modelFile;
  opts.fuseBeforeTF32 = fuseBeforeTF32;
  opts.fastMath = fastMath;
  opts.numerics = numericsOpt;
  const char *envUrl = getenv("KB_MODEL_URL");
  opts.model.enabled = !noModel && (!modelUrl.empty() || !replayPath.empty() ||
                                    !strategy.empty() || (envUrl && *envUrl));
  opts.model.client.baseUrl = modelUrl;
  opts.model.client.model = modelName;
  opts.model.client.timeoutS = modelTimeout;
  opts.model.client.deadlineS = modelDeadline;
  opts.model.client.concurrency = modelConcurrency;
  opts.model.strategy.strategy =
      strategy.empty() ? std::string("zero-shot") : strategy.getValue();
  opts.model.strategy.samples = samples;
  opts.model.strategy.rounds = rounds;
  opts.model.strategy.draft.temperature = draftTemperature;
  opts.model.strategy.draft.maxTokens = maxTokens;
  opts.model.strategy.repair.temperature = repairTemperature;
  opts.model.strategy.repair.maxTokens = maxTokens;
  opts.model.strategy.analyze.temperature = analyzeTemperature;
  if (modelSeed) {
    opts.model.strategy.draft.seed = modelSeed.getValue();
    opts.model.strategy.repair.seed = modelSeed.getValue();
    opts.model.strategy.analyze.seed = modelSeed.getValue();
  }
  opts.model.transcript = transcriptPath;
  opts.model.replay = replayPath;
  opts.model.replayVerify = replayVerify;
  opts.model.verdictCache = verdictCache;
  opts.model.strategy.modelOnly = answersOpt == AnswersOpt::Model;
  opts.model.promptDir = promptDir;
  opts.model.storeDir = storeDir;
  if (samples < 1 || rounds < 0)
    return fail(UsageError, "--samples must be >= 1 and --rounds >= 0");
  if (replayVerify && replayPath.empty())
    return fail(UsageError, "--replay-verify needs --replay TRANSCRIPT");
  if (answersOpt == AnswersOpt::Model && !opts.model.enabled)
    return fail(UsageError, "--answers model needs a model (--model-url, "
                            "$KB_MODEL_URL or --replay)");
  // The stages, in order (include/kb/Driver/Stages.h). What a callee's
  // failure means in each: the pipeline's and kb-verify's are internal,
  // the rest files that could not be written (or a model server's setup).
  using kb::driver::FailureKind;
  using kb::driver::withKind;
  mlir::MLIRContext ctx;
  auto run = kb::driver::load(ctx, opts);
  Error err = run ? Error::success() : run.takeError();
  if (!err)
    err = withKind(kb::driver::runPipeline(*run), FailureKind::Internal);
  if (!err)
    err = withKind(kb::driver::generateKernels(*run), FailureKind::Usage);
  if (!err)
    err = withKind(kb::driver::verifyKernels(*run, outs()),
                   FailureKind::Internal);
  if (!err)
    err =
        withKind(kb::driver::searchWithModel(*run, outs()), FailureKind::Usage);
  if (!err) {
    kb::driver::selectKernels(*run);
    err = withKind(kb::driver::emitRewrite(*run), FailureKind::Usage);
  }
  if (err)
    return fail(std::move(err), FailureKind::Input);
  const kb::RewriteResult *result = &run->result;
  if (!quiet) {
    for (const kb::RegionPlan &plan : result->regions) {
      const kb::RegionRecord &r = plan.record;
      outs() << formatv(
          "{0,-14} {1,-13} {2}{3}\n", r.name, kb::statusName(r.status), r.ops,
          r.kernelMs && r.eagerMs ? formatv("  ({0:F3} ms vs eager {1:F3} ms)",
                                            *r.kernelMs, *r.eagerMs)
                                        .str()
                                  : std::string());
    }
    if (!result->gpu)
      outs() << "warning: no GPU: kernels were compiled but NOT verified "
                "(report.md says so)\n";
    bool program = result->program;
    if (!result->modelNew)
      outs() << "note: model_new.py not written: " << result->modelNewNote
             << (program ? "; kb_program.py holds the graph program "
                           "(kb_rewrite.optimize, docs/python.md)"
                         : "")
             << "\n";
    outs() << "wrote " << rewriteOut << "/{"
           << (result->modelNew ? "model_new.py," : "")
           << (program ? "kb_program.py," : "")
           << "manifest.json,report.md,report.html,report.json,kernels/}\n";
  }
  return Ok;
}

int runStore() {
  kb::model::KernelStore store(storeDir.empty()
                                   ? kb::model::KernelStore::defaultDir()
                                   : storeDir.getValue());
  std::string verb = storeArgs.empty() ? "list" : storeArgs[0];
  if (verb == "list") {
    auto entries = store.list();
    if (!entries)
      return fail(UsageError, toString(entries.takeError()));
    outs() << entries->size() << " verified kernels in " << store.path()
           << "\n";
    for (const auto &e : *entries)
      // Entries are files anyone could edit: nothing of them reaches the
      // terminal as a control sequence.
      outs() << formatv("{0}  {1,-9} {2,-8} {3,9:F4} ms  {4}  ({5})\n",
                        e.signature.substr(0, 16), kb::printable(e.kind),
                        kb::printable(e.origin), e.kernelMs,
                        kb::printable(e.ops), kb::printable(e.gpu));
    return Ok;
  }
  if (verb == "show") {
    if (storeArgs.size() != 2)
      return fail(UsageError,
                  "store show needs a signature (or a prefix of one)");
    auto entries = store.list();
    if (!entries)
      return fail(UsageError, toString(entries.takeError()));
    for (const auto &e : *entries)
      if (StringRef(e.signature).starts_with(storeArgs[1])) {
        outs() << "// " << e.signature << "\n// " << kb::printable(e.ops)
               << " (" << kb::printable(e.kind) << "), "
               << kb::printable(e.origin) << ", "
               << formatv("{0:F4}", e.kernelMs) << " ms on "
               << kb::printable(e.gpu) << "\n"
               << kb::printable(e.source, /*keepLines=*/true);
        return Ok;
      }
    return fail(UsageError,
                "no stored kernel with signature '" + storeArgs[1] + "'");
  }
  if (verb == "prune") {
    if (!pruneAll && olderThanDays < 0)
      return fail(UsageError, "store prune needs --all or --older-than-days N");
    int64_t cutoff = 0;
    if (!pruneAll)
      cutoff = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count() -
               int64_t(olderThanDays) * 86400;
    auto n = store.prune(cutoff);
    if (!n)
      return fail(UsageError, toString(n.takeError()));
    outs() << "removed " << *n << " entries from " << store.path() << "\n";
    return Ok;
  }
  return fail(UsageError, "store: expected list, show SIG or prune");
}

int runOps() {
  if (markdown) {
    outs() << kb::renderOpSemanticsMarkdown();
    return Ok;
  }
  for (const kb::OpInfo &info : kb::allOps())
    outs() << formatv("{0,-40} {1,-12} {2}\n", info.qualifiedName(),
                      kb::kindName(info.kind), info.schema);
  return Ok;
}

/// `analyze` over C++ sources.
int runAnalyzeCxx(ArrayRef<std::string> files) {
  auto result = kb::analyzeCxxSources(cxxInputsFrom(files));
  if (!result)
    return fail(result.takeError(), kb::driver::FailureKind::Input);
  if (emitOpt == EmitKind::Kb) {
    // The chains as kb IR, each op at its C++ source (kb-opt reads it back).
    mlir::MLIRContext ctx;
    auto module = kb::importCxxChains(ctx, *result);
    module->print(outs(), mlir::OpPrintingFlags().enableDebugInfo(true, false));
    outs() << "\n";
    return Ok;
  }
  outs() << (jsonOut ? kb::cxxAnalysisJson(*result)
                     : kb::cxxAnalysisText(*result));
  return Ok;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // analyze and rewrite pass what follows `--` to Clang (C++ sources).
  if (argc > 1 &&
      (StringRef(argv[1]) == "analyze" || StringRef(argv[1]) == "rewrite"))
    for (int i = 2; i < argc; ++i)
      if (StringRef(argv[i]) == "--") {
        haveCompilerFlags = true;
        compilerFlags.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
  // LLVM's own options (hundreds of backend flags linked in with MLIR and
  // Clang) still parse, but only kb-rewrite's are listed by --help.
  cl::HideUnrelatedOptions(ArrayRef<const cl::OptionCategory *>{});
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << "kb-rewrite 0.1.0 (LLVM/MLIR 22)\n"; });
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "kb-rewrite: fuse memory-bound "
                                   "epilogues of PyTorch models\n\n"
                                   "  Exit codes: 0 success; 1 usage error or "
                                   "a file that cannot be read or written; 2 "
                                   "malformed or unsupported input "
                                   "(file:line:col: error: ...); 3 internal "
                                   "error (please report it)\n",
                                   &errs()))
    return UsageError;
  if (analyzeCmd)
    return runAnalyze();
  if (importCmd)
    return runImport();
  if (opsCmd)
    return runOps();
  if (codegenCmd)
    return runCodegen();
  if (rewriteCmd)
    return runRewrite(argv[0]);
  if (storeCmd)
    return runStore();
  errs() << "kb-rewrite: a subcommand is required (analyze, import, ops, "
            "codegen, rewrite, store); "
            "see kb-rewrite --help\n";
  return UsageError;
}

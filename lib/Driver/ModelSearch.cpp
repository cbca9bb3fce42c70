//===- ModelSearch.cpp - Stage 5: the code model's candidates per region --===//
//
// For every region with a generated kernel: a KernelSpec (the region as
// PyTorch calls and as kb IR, tensors, signature, launch rule, a kernel of
// the same kind as example, the baseline's profile), the chosen strategy
// against the model server (or a transcript being replayed), and kb-verify
// as the judge of every candidate. The code generator's kernel is
// candidate 0 and stays unless a model kernel is accepted and faster; with
// --answers model (the paper's experiment) only model kernels answer and
// the prompt's example is the paper's one elementwise kernel, never a
// kernel of the code generator's.
//
//===----------------------------------------------------------------------===//
#include "kb/Driver/Stages.h"
#include "kb/Emit/Files.h"
#include "kb/Emit/PythonEmitter.h"
#include "kb/Model/Store.h"
#include "kb/Support/Printable.h"
#include "kb/Support/ShapeText.h"
#include "kb/Verify/Client.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <regex>

using namespace llvm;
using njson = nlohmann::json;

namespace kb::driver {
namespace {

/// What the model is shown of one region.
struct ModelRegionInput {
  RegionPlan *plan;
  std::string pytorch, kbIR, jobJson, example;
};

std::string signatureOf(const EmittedKernel &k) {
  std::string s = "extern \"C\" __global__ void " + k.name + "(";
  bool first = true;
  // The code generator's own types (masks bool, indices long long).
  for (const EmittedTensor &t : k.inputs) {
    s += (first ? "const " : ", const ") + std::string(elementCType(t.dtype)) +
         "* __restrict__ " + t.name;
    first = false;
  }
  for (const EmittedTensor &t : k.outputs) {
    s += (first ? "" : ", ") + std::string(elementCType(t.dtype)) +
         "* __restrict__ " + t.name;
    first = false;
  }
  return s + ")";
}

// Stored kernels as prompt text; long sources are cut (a 7B model's context
// is better spent on the region itself).
std::string retrievedText(const std::vector<model::StoreEntry> &entries) {
  std::string out;
  for (const model::StoreEntry &e : entries) {
    std::string src = e.source.size() > 4000
                          ? e.source.substr(0, 4000) + "\n// ... (cut)\n"
                          : e.source;
    out +=
        formatv("// {0} ({1}), {2:F4} ms on {3}\n```cuda\n{4}", e.ops, e.kind,
                e.kernelMs, e.gpu.empty() ? "an unknown GPU" : e.gpu, src)
            .str();
    if (!src.empty() && src.back() != '\n')
      out += "\n";
    out += "```\n";
  }
  return out;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return s;
}

/// One kb-verify run on one candidate job.
model::VerifyResult runVerifier(const RewriteOptions &opts, bool gpu,
                                const std::string &jobPath) {
  model::VerifyResult v;
  if (opts.kbVerify.empty()) {
    v.status = "not_verified";
    v.detail = "kb-verify not found (pass --kb-verify PATH)";
    return v;
  }
  std::string out = jobPath + ".verdict.json", err = jobPath + ".log";
  bool onGpu = gpu && opts.verify != VerifyMode::Off;
  auto run = onGpu ? verify::verifyJob(opts.kbVerify, jobPath, out, err)
                   : verify::compileJobs(opts.kbVerify, {jobPath},
                                         opts.compileArchs, out, err);
  if (!run) {
    v.status = "verifier_failed";
    v.detail = "kb-verify did not run: " + toString(run.takeError());
    return v;
  }
  if (run->empty()) {
    v.status = "verifier_failed";
    v.detail = "kb-verify printed no verdict (see " + err + ")";
    return v;
  }
  const verify::JobVerdict &j = run->front();
  // The model search keeps the wire word (its candidates also carry states
  // of their own: no_reply, check_failed, compiled_only ...).
  v.status = verify::statusName(j.verdict.status);
  if (onGpu) {
    v.accepted = j.verdict.accepted();
    v.detail = j.verdict.detail;
    if (j.verdict.candidateTiming)
      v.kernelMs = j.verdict.candidateTiming->medianMs;
  } else {
    // Compiled is all a machine without a GPU can say.
    v.detail = v.status == "compiled"
                   ? "compiled for " + opts.compileArchs +
                         "; not verified (no GPU): cannot replace the code "
                         "generator's kernel"
                   : j.compileLog;
    if (v.status == "compiled")
      v.status = "compiled_only";
  }
  return v;
}

/// kb-verify's verdicts on model candidates, kept by the hash of the job
/// (the region's inputs, shapes and the candidate's source, not its id) and
/// the GPU: best-of-n over the same regions meets the same kernel again.
class VerdictCache {
public:
  VerdictCache(std::string dir, std::string gpu)
      : dir(std::move(dir)), gpu(std::move(gpu)) {}

  std::string keyOf(njson job) const {
    job.erase("id");
    SHA256 h;
    h.update(job.dump());
    h.update(gpu);
    return toHex(h.final(), /*LowerCase=*/true).substr(0, 32);
  }

  std::optional<model::VerifyResult> get(const std::string &key) const {
    if (dir.empty())
      return std::nullopt;
    auto buf = MemoryBuffer::getFile(path(key));
    if (!buf)
      return std::nullopt;
    njson j = njson::parse((*buf)->getBuffer().str(), nullptr, false);
    if (!j.is_object() || !j.contains("status"))
      return std::nullopt; // a damaged entry is verified again
    model::VerifyResult v;
    v.status = j.value("status", "");
    v.accepted = j.value("accepted", false);
    v.detail = j.value("detail", "");
    if (j.contains("kernel_ms") && j["kernel_ms"].is_number())
      v.kernelMs = j["kernel_ms"].get<double>();
    return v;
  }

  void put(const std::string &key, const model::VerifyResult &v) const {
    if (dir.empty() || v.status == "verifier_failed")
      return;
    njson j = {
        {"status", v.status}, {"accepted", v.accepted}, {"detail", v.detail}};
    if (v.kernelMs)
      j["kernel_ms"] = *v.kernelMs;
    if (!sys::fs::create_directories(dir))
      consumeError(writeFileAtomic(dir, key + ".json", j.dump(1)));
  }

private:
  std::string path(const std::string &key) const {
    SmallString<256> p(dir);
    sys::path::append(p, key + ".json");
    return p.str().str();
  }
  std::string dir, gpu;
};

/// Runs the strategy for every region with a generated kernel; updates the
/// records (origin, time, candidates) and the plans' chosenSource on wins.
Error searchRegions(const RewriteOptions &opts, bool gpu, StringRef outDir,
                    std::vector<ModelRegionInput> &regions, raw_ostream &log) {
  const ModelSearchOptions &mo = opts.model;
  auto templates = model::PromptTemplates::load(mo.promptDir);
  if (!templates)
    return templates.takeError();
  std::unique_ptr<model::Client> client;
  std::unique_ptr<model::Backend> backend;
  model::ReplayBackend *replay = nullptr;
  if (!mo.replay.empty()) {
    auto r = model::ReplayBackend::load(mo.replay);
    if (!r)
      return r.takeError();
    replay = r->get();
    backend = std::move(*r);
  } else {
    auto cfg = model::ClientConfig::resolve(mo.client);
    if (!cfg)
      return cfg.takeError();
    client = std::make_unique<model::Client>(*cfg);
    backend = std::make_unique<model::LiveBackend>(*client);
  }
  std::string transcriptPath = mo.transcript;
  if (transcriptPath.empty()) {
    SmallString<256> p(outDir);
    sys::path::append(p, mo.replay.empty() ? "transcript.jsonl"
                                           : "transcript.replay.jsonl");
    transcriptPath = p.str().str();
  }
  sys::fs::remove(transcriptPath);
  model::Transcript transcript(transcriptPath);
  SmallString<256> candDir(outDir);
  sys::path::append(candDir, "candidates");
  if (auto ec = sys::fs::create_directories(candDir))
    return createStringError(ec, "cannot create '" + candDir + "'");

  bool unreachable = false;
  for (ModelRegionInput &in : regions) {
    RegionRecord &rec = in.plan->record;
    const EmittedKernel *kernel = &*in.plan->kernel;
    if (!runsKernel(rec.status))
      continue;
    if (unreachable) {
      rec.modelChoice = "the model server was unreachable: the code "
                        "generator's kernel";
      continue;
    }
    model::KernelSpec spec;
    spec.name = kernel->name;
    spec.kind = kernel->kind;
    // model_new.py's call-site objects read as the ATen calls they are.
    static const std::regex site(R"(\b_op[0-9]+_([A-Za-z0-9_]+)\()");
    spec.pytorch = std::regex_replace(in.pytorch, site, "torch.ops.aten.$1(");
    while (!spec.pytorch.empty() && spec.pytorch.back() == '\n')
      spec.pytorch.pop_back();
    spec.kbIR = in.kbIR;
    for (const EmittedTensor &t : kernel->inputs)
      spec.tensors += t.name + ": input, float32 " + shapeText(t.shape) + "\n";
    for (const EmittedTensor &t : kernel->outputs)
      spec.tensors += t.name + ": output, float32 " + shapeText(t.shape) + "\n";
    spec.signature = signatureOf(*kernel);
    spec.grid = join(kernel->grid);
    spec.block = join(kernel->block);
    spec.example = in.example;
    spec.exampleKind = kernel->kind;
    if (mo.strategy.modelOnly) {
      // The paper's one example, never a kernel of the code generator's.
      auto ex = templates->render("example", {});
      if (!ex)
        return ex.takeError();
      spec.example = *ex;
      spec.exampleKind = "elementwise add, the paper's one example";
    }
    std::string gpuName = rec.gpu;
    model::KernelStore store(
        mo.storeDir.empty() ? model::KernelStore::defaultDir() : mo.storeDir);
    std::string sig = model::KernelStore::signature(in.kbIR, gpuName);
    if (mo.strategy.strategy == "agent") {
      if (replay) {
        spec.retrieved = replay->retrieval(spec.name).value_or("");
      } else if (auto found = store.similar(spec.kind, rec.ops, gpuName, sig,
                                            /*limit=*/2)) {
        spec.retrieved = retrievedText(*found);
      } else {
        log << "warning: " << toString(found.takeError()) << "\n";
      }
    }
    spec.baselineMs = rec.kernelMs;
    spec.eagerMs = rec.eagerMs;
    spec.copyGBs = rec.copyGBs;
    spec.bytes = rec.bytes;
    model::Candidate baseline;
    baseline.origin = "codegen";
    baseline.source = kernel->source;
    baseline.status = rec.status == RegionStatus::Verified
                          ? std::string("accepted")
                          : statusName(rec.status).str();
    baseline.kernelMs = rec.kernelMs;

    njson job = njson::parse(in.jobJson);
    VerdictCache cache(mo.verdictCache, gpu ? gpuName : "no GPU");
    model::VerifyFn verify = [&](const std::string &source,
                                 const std::string &id) {
      if (replay && !mo.replayVerify) {
        int cand = std::stoi(id.substr(id.find('#') + 1));
        if (auto v = replay->verdict(spec.name, cand))
          return *v;
        model::VerifyResult none;
        none.status = "not_recorded";
        none.detail = "the transcript has no verdict for " + id;
        return none;
      }
      std::string file = id;
      std::replace(file.begin(), file.end(), '#', '_');
      SmallString<256> jp(candDir);
      sys::path::append(jp, file + ".job.json");
      njson j = job;
      j["id"] = file;
      j["candidate"]["source"] = source;
      j["candidate"]["origin"] = "model";
      std::string key = cache.keyOf(j);
      if (auto hit = cache.get(key))
        return *hit;
      if (Error err = writeFileAtomic(sys::path::parent_path(jp),
                                      sys::path::filename(jp), j.dump(1))) {
        model::VerifyResult v;
        v.status = "internal_error";
        v.detail = toString(std::move(err));
        return v;
      }
      model::VerifyResult v = runVerifier(opts, gpu, jp.str().str());
      cache.put(key, v);
      return v;
    };
    if (!opts.quiet)
      log << spec.name << ": asking the model (" << mo.strategy.strategy << ", "
          << mo.strategy.samples << " sample"
          << (mo.strategy.samples == 1 ? "" : "s") << ")\n";
    auto result = model::searchRegion(spec, baseline, *backend, *templates,
                                      mo.strategy, verify, transcript);
    if (!result)
      return result.takeError();
    rec.modelCandidates = (int)result->candidates.size() - 1;
    // A server that cannot be reached at all is not asked again for every
    // region (each attempt costs the retries' backoff).
    unreachable = rec.modelCandidates > 0;
    for (const model::Candidate &c : result->candidates)
      if (c.origin == "model" &&
          c.detail.find("is the model server running?") == std::string::npos)
        unreachable = false;

    for (const model::Candidate &c : result->candidates)
      rec.modelAccepted += c.origin == "model" && c.status == "accepted";
    rec.modelChoice = result->why;
    if (!opts.quiet) {
      for (const model::Candidate &c : result->candidates)
        if (c.origin == "model")
          log << "  candidate " << c.index << ": " << c.status
              << (c.kernelMs ? formatv(" {0:F4} ms", *c.kernelMs).str() : "")
              << (c.detail.empty() ? "" : " - " + clipText(c.detail, 120))
              << "\n";
      log << "  -> " << result->why << "\n";
      if (unreachable)
        log << "warning: the model server is unreachable; the remaining "
               "regions keep the code generator's kernels\n";
    }
    const bool modelOnly = mo.strategy.modelOnly;
    if (modelOnly && result->chosen == 0) {
      rec.status = RegionStatus::Rejected;
      rec.detail = "--answers model: no model kernel was accepted; the "
                   "region runs its ATen ops";
      continue;
    }
    // The store: a kernel verified earlier for this very region (same ops,
    // shapes, dtype and GPU) is verified again and competes too.
    std::optional<double> bestMs =
        result->chosen != 0 ? result->candidates[result->chosen].kernelMs
                            : rec.kernelMs;
    // The store's kernels are earlier answers: not the experiment's.
    if (gpu && !replay && !gpuName.empty() && !modelOnly)
      if (auto stored = store.get(sig)) {
        model::VerifyResult v = verify(stored->source, spec.name + "#stored");
        if (!opts.quiet)
          log << "  stored kernel " << sig.substr(0, 12) << ": " << v.status
              << (v.kernelMs ? formatv(" {0:F4} ms", *v.kernelMs).str() : "")
              << "\n";
        if (v.accepted && v.kernelMs && bestMs &&
            mo.strategy.clearlyFaster(*v.kernelMs, *bestMs)) {
          in.plan->chosenSource = stored->source;
          rec.origin = KernelOrigin::Store;
          rec.kernelMs = v.kernelMs;
          rec.modelChoice = "the stored kernel " + sig.substr(0, 12);
          continue;
        }
      }
    if (result->chosen != 0) {
      const model::Candidate &c = result->candidates[result->chosen];
      in.plan->chosenSource = c.source;
      rec.origin = KernelOrigin::Model;
      rec.kernelMs = c.kernelMs;
      if (gpu && !replay && !gpuName.empty() && c.kernelMs && !modelOnly) {
        model::StoreEntry e;
        e.signature = sig;
        e.region = spec.name;
        e.kind = spec.kind;
        e.ops = rec.ops;
        e.gpu = gpuName;
        e.origin = "model";
        e.source = c.source;
        e.kernelMs = *c.kernelMs;
        if (auto err = store.put(e))
          log << "warning: " << toString(std::move(err)) << "\n";
      }
    }
  }
  return Error::success();
}

} // namespace

Error searchWithModel(RewriteRun &run, raw_ostream &log) {
  if (!run.opts.model.enabled)
    return Error::success();
  mlir::ModuleOp module = *run.module;
  std::vector<RegionPlan> &plans = run.result.regions;
  auto refs = emitPython(module, run.regionIndex);
  std::vector<KernelOp> kernelOps(module.getOps<KernelOp>().begin(),
                                  module.getOps<KernelOp>().end());
  std::vector<ModelRegionInput> inputs;
  for (auto [idx, plan] : llvm::enumerate(plans)) {
    if (!plan.kernel)
      continue;
    ModelRegionInput in;
    in.plan = &plan;
    if (refs)
      in.pytorch = refs->referenceOf[plan.record.name];
    llvm::raw_string_ostream irOs(in.kbIR);
    kernelOps[idx]->print(irOs);
    irOs.flush();
    in.jobJson = verifyJobJson(*plan.kernel);
    // A verified kernel of the same kind from another region, else this
    // region's own (the baseline to beat).
    in.example = plan.kernel->source;
    for (auto [j, other] : llvm::enumerate(plans))
      if (j != idx && other.kernel && other.kernel->kind == plan.kernel->kind) {
        in.example = other.kernel->source;
        break;
      }
    inputs.push_back(std::move(in));
  }
  if (!refs)
    consumeError(refs.takeError());
  if (auto err =
          searchRegions(run.opts, run.result.gpu, run.outDir, inputs, log))
    return err;
  for (RegionPlan &plan : plans) {
    if (plan.chosenSource.empty())
      continue;
    // The code generator's kernel stays beside it, for comparison.
    if (auto err =
            writeFileAtomic(run.kernelDir, plan.kernel->name + ".codegen.cu",
                            plan.kernel->source))
      return err;
    if (auto err = writeFileAtomic(run.kernelDir, plan.kernel->name + ".cu",
                                   plan.chosenSource))
      return err;
    // The channels-last form is the code generator's.
    plan.channelsLast.reset();
    plan.record.clStatus.reset();
  }
  return Error::success();
}

} // namespace kb::driver

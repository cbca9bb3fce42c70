//===- RewriteModel.cpp - The code model's candidates for each region -----===//
//
// For every region with a generated kernel: a KernelSpec (the region as
// PyTorch calls and as kb IR, tensors, signature, launch rule, a kernel of
// the same kind as example, the baseline's profile), the chosen strategy
// against the model server (or a transcript being replayed), and kb-verify
// as the judge of every candidate. The code generator's kernel is
// candidate 0 and stays unless a model kernel is accepted and faster.
//
//===----------------------------------------------------------------------===//
#include "RewriteModel.h"
#include "kb/Model/Store.h"
#include "kb/Verify/Client.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <regex>

using namespace llvm;
using njson = nlohmann::json;

namespace kb {
namespace {

std::string signatureOf(const EmittedKernel &k) {
  std::string s = "extern \"C\" __global__ void " + k.name + "(";
  bool first = true;
  for (const EmittedTensor &t : k.inputs) {
    s += (first ? "" : ", ") + std::string("const float* __restrict__ ") + t.name;
    first = false;
  }
  for (const EmittedTensor &t : k.outputs) {
    s += (first ? "" : ", ") + std::string("float* __restrict__ ") + t.name;
    first = false;
  }
  return s + ")";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Stored kernels as prompt text; long sources are cut (a 7B model's context
// is better spent on the region itself).
std::string retrievedText(const std::vector<model::StoreEntry> &entries) {
  std::string out;
  for (const model::StoreEntry &e : entries) {
    std::string src = e.source.size() > 4000
                          ? e.source.substr(0, 4000) + "\n// ... (cut)\n"
                          : e.source;
    out += formatv("// {0} ({1}), {2:F4} ms on {3}\n```cuda\n{4}", e.ops,
                   e.kind, e.kernelMs, e.gpu.empty() ? "an unknown GPU" : e.gpu,
                   src)
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

/// One kb-verify run on one candidate job; its stdout's JSON line.
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
  std::vector<std::string> args =
      onGpu ? std::vector<std::string>{"--job", jobPath}
            : std::vector<std::string>{"--compile", jobPath, "--arch",
                                       opts.compileArchs};
  auto run = verify::runVerifier(opts.kbVerify, args, "", out, err);
  if (!run) {
    v.status = "verifier_failed";
    v.detail = "kb-verify did not run: " + toString(run.takeError());
    return v;
  }
  if (run->lines.empty()) {
    v.status = "verifier_failed";
    v.detail = "kb-verify printed no verdict (see " + err + ")";
    return v;
  }
  const json::Object &j = run->lines.front();
  v.status = j.getString("status").value_or("?").str();
  if (onGpu) {
    v.accepted = j.getBoolean("accepted").value_or(false);
    v.detail = j.getString("detail").value_or("").str();
    if (const json::Object *t = j.getObject("candidate_timing"))
      v.kernelMs = t->getNumber("median_ms").value_or(0.0);
  } else {
    // Compiled is all a machine without a GPU can say.
    v.detail = v.status == "compiled"
                   ? "compiled for " + opts.compileArchs +
                         "; not verified (no GPU): cannot replace the code "
                         "generator's kernel"
                   : j.getString("log").value_or("").str();
    if (v.status == "compiled")
      v.status = "compiled_only";
  }
  return v;
}

} // namespace

Error searchRegionsWithModel(const RewriteOptions &opts, bool gpu,
                             StringRef outDir,
                             std::vector<ModelRegionInput> &regions,
                             raw_ostream &log) {
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
    RegionRecord &rec = *in.record;
    if (rec.status != "verified" && rec.status != "unverified")
      continue;
    if (unreachable) {
      rec.modelChoice = "the model server was unreachable: the code "
                        "generator's kernel";
      continue;
    }
    model::KernelSpec spec;
    spec.name = in.kernel->name;
    spec.kind = in.kernel->kind;
    // model_new.py's call-site objects read as the ATen calls they are.
    static const std::regex site(R"(\b_op[0-9]+_([A-Za-z0-9_]+)\()");
    spec.pytorch = std::regex_replace(in.pytorch, site, "torch.ops.aten.$1(");
    while (!spec.pytorch.empty() && spec.pytorch.back() == '\n')
      spec.pytorch.pop_back();
    spec.kbIR = in.kbIR;
    for (const EmittedTensor &t : in.kernel->inputs)
      spec.tensors += t.name + ": input, float32 " + shapeText(t.shape) + "\n";
    for (const EmittedTensor &t : in.kernel->outputs)
      spec.tensors += t.name + ": output, float32 " + shapeText(t.shape) + "\n";
    spec.signature = signatureOf(*in.kernel);
    spec.grid = join(in.kernel->grid);
    spec.block = join(in.kernel->block);
    spec.example = in.example;
    spec.exampleKind = in.kernel->kind;
    std::string gpuName;
    if (auto *o = rec.verdict.getAsObject())
      gpuName = o->getString("gpu").value_or("").str();
    model::KernelStore store(mo.storeDir.empty() ? model::KernelStore::defaultDir()
                                                 : mo.storeDir);
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
    baseline.source = in.kernel->source;
    baseline.status = rec.status == "verified" ? "accepted" : rec.status;
    baseline.kernelMs = rec.kernelMs;

    njson job = njson::parse(in.jobJson);
    model::VerifyFn verify = [&](const std::string &source,
                                 const std::string &id) {
      if (replay) {
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
      {
        std::error_code ec;
        raw_fd_ostream f(jp, ec);
        f << j.dump(1);
      }
      return runVerifier(opts, gpu, jp.str().str());
    };
    if (!opts.quiet)
      log << spec.name << ": asking the model (" << mo.strategy.strategy
          << ", " << mo.strategy.samples << " sample"
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
              << (c.detail.empty() ? "" : " - " + c.detail.substr(0, 120))
              << "\n";
      log << "  -> " << result->why << "\n";
      if (unreachable)
        log << "warning: the model server is unreachable; the remaining "
               "regions keep the code generator's kernels\n";
    }
    // The store: a kernel verified earlier for this very region (same ops,
    // shapes, dtype and GPU) is verified again and competes too.
    std::optional<double> bestMs = result->chosen != 0
                                       ? result->candidates[result->chosen].kernelMs
                                       : rec.kernelMs;
    if (gpu && !replay && !gpuName.empty())
      if (auto stored = store.get(sig)) {
        model::VerifyResult v = verify(stored->source, spec.name + "#stored");
        if (!opts.quiet)
          log << "  stored kernel " << sig.substr(0, 12) << ": " << v.status
              << (v.kernelMs ? formatv(" {0:F4} ms", *v.kernelMs).str() : "")
              << "\n";
        if (v.accepted && v.kernelMs && bestMs &&
            mo.strategy.clearlyFaster(*v.kernelMs, *bestMs)) {
          in.chosenSource = stored->source;
          rec.origin = "store";
          rec.kernelMs = v.kernelMs;
          rec.modelChoice = "the stored kernel " + sig.substr(0, 12);
          continue;
        }
      }
    if (result->chosen != 0) {
      const model::Candidate &c = result->candidates[result->chosen];
      in.chosenSource = c.source;
      rec.origin = "model";
      rec.kernelMs = c.kernelMs;
      if (gpu && !replay && !gpuName.empty() && c.kernelMs) {
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

} // namespace kb

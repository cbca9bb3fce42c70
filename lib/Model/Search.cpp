//===- Search.cpp - Strategies that ask the model for kernels -------------===//

#include "kb/Model/Search.h"
#include "kb/Support/InputFile.h"
#include "kb/Support/Printable.h"

#include "llvm/Support/FormatVariadic.h"

#include <sstream>

using json = nlohmann::json;
using namespace llvm;

namespace kb::model {
namespace {

json messagesJson(const std::vector<Message> &messages) {
  json a = json::array();
  for (const Message &m : messages)
    a.push_back({{"role", m.role}, {"content", m.content}});
  return a;
}

json samplingJson(const Sampling &s, int n) {
  json j = {{"temperature", s.temperature}, {"top_p", s.topP},
            {"max_tokens", s.maxTokens}, {"n", n}};
  if (s.seed)
    j["seed"] = *s.seed;
  return j;
}

std::string keyOf(const std::string &region, int candidate, int round,
                  const std::string &role) {
  return region + "/" + std::to_string(candidate) + "/" +
         std::to_string(round) + "/" + role;
}

std::string clip(const std::string &s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n / 2) + "\n[...]\n" +
                                 s.substr(s.size() - n / 2);
}

class Searcher {
public:
  Searcher(const KernelSpec &spec, Backend &backend,
           const PromptTemplates &templates, const StrategyOptions &options,
           const VerifyFn &verify, Transcript &transcript)
      : spec(spec), backend(backend), templates(templates), opt(options),
        verify(verify), transcript(transcript) {}

  std::vector<Reply> ask(const std::vector<Message> &messages,
                         const Sampling &sampling, int n, CallInfo info) {
    info.region = spec.name;
    transcript.write({{"kind", "request"},
                      {"region", spec.name},
                      {"candidate", info.candidate},
                      {"round", info.round},
                      {"role", info.role},
                      {"strategy", opt.strategy},
                      {"sampling", samplingJson(sampling, n)},
                      {"messages", messagesJson(messages)}});
    ++result.modelCalls;
    std::vector<Reply> replies = backend.sample(messages, sampling, n, info);
    for (auto [i, r] : llvm::enumerate(replies)) {
      json rec = {{"kind", "response"},  {"region", spec.name},
                  {"candidate", info.candidate + (int)i},
                  {"round", info.round}, {"role", info.role},
                  {"sample", (int)i},    {"error", r.error},
                  {"attempts", r.attempts}};
      if (!r.completions.empty()) {
        rec["text"] = r.completions[0].text;
        rec["finish_reason"] = r.completions[0].finishReason;
        rec["prompt_tokens"] = r.completions[0].promptTokens;
        rec["completion_tokens"] = r.completions[0].completionTokens;
      }
      transcript.write(rec);
    }
    return replies;
  }

  /// Static check and kb-verify for one reply; the candidate joins the list.
  /// `attempt`: which of the `samples` independent attempts the candidate
  /// belongs to (a refine chain's repairs keep their draft's).
  Candidate &evaluate(const Reply &reply, int index, int round, int attempt) {
    Candidate c;
    c.index = index;
    c.origin = "model";
    auto check = [&](bool ok, const std::string &detail) {
      transcript.write({{"kind", "check"},
                        {"region", spec.name},
                        {"candidate", index},
                        {"round", round},
                        {"attempt", attempt},
                        {"ok", ok},
                        {"status", ok ? std::string() : c.status},
                        {"detail", detail}});
    };
    if (!reply.error.empty() || reply.completions.empty()) {
      c.status = "no_reply";
      c.detail = reply.error.empty() ? "empty reply" : reply.error;
      check(false, c.detail);
    } else if (reply.completions[0].truncated) {
      c.status = "truncated";
      c.detail = "finish_reason \"length\": the reply was cut off at "
                 "max_tokens (raise it)";
      check(false, c.detail);
    } else if (auto k = extractKernel(reply.completions[0].text, spec.name);
               !k) {
      c.status = "check_failed";
      c.detail = toString(k.takeError());
      check(false, c.detail);
    } else {
      check(true, "");
      c.source = *k;
      VerifyResult v = verify(c.source, spec.name + "#" + std::to_string(index));
      c.status = v.accepted ? "accepted" : v.status;
      c.detail = v.detail;
      c.kernelMs = v.kernelMs;
      json rec = {{"kind", "verdict"},      {"region", spec.name},
                  {"candidate", index},     {"round", round},
                  {"attempt", attempt},     {"status", v.status},
                  {"accepted", v.accepted}, {"detail", v.detail}};
      if (v.kernelMs)
        rec["kernel_ms"] = *v.kernelMs;
      transcript.write(rec);
    }
    result.candidates.push_back(std::move(c));
    return result.candidates.back();
  }

  Expected<std::vector<Message>> draft(bool profile) {
    return draftMessages(templates, spec, profile);
  }

  /// refine: repair on feedback; a repeated failure restarts from a draft.
  Error refineChain(std::vector<Message> conversation, Reply reply,
                    int firstIndex, int attempt) {
    std::string lastFailure;
    int index = firstIndex;
    for (int round = 0;; ++round) {
      Candidate &c = evaluate(reply, index, round, attempt);
      if (c.status == "accepted" || round >= opt.rounds)
        return Error::success();
      std::string failure = c.status + ": " + clipText(c.detail, 200);
      std::string text =
          reply.completions.empty() ? "" : reply.completions[0].text;
      index = nextIndex++;
      if (failure == lastFailure || text.empty()) {
        auto d = draft(false);
        if (!d)
          return d.takeError();
        conversation = *d;
        reply = ask(conversation, opt.draft, 1, {"", index, round + 1, "draft"})[0];
        lastFailure.clear();
        continue;
      }
      lastFailure = failure;
      auto r = repairMessages(templates, spec, conversation, text, c.status,
                              clip(c.detail, 1500));
      if (!r)
        return r.takeError();
      conversation = *r;
      reply = ask(conversation, opt.repair, 1, {"", index, round + 1, "repair"})[0];
    }
  }

  /// The agent's loop with `samples` drafts per round; their attempts are
  /// firstAttempt, firstAttempt + 1, ...
  Error agent(int samples, int firstAttempt) {
    std::string history = "(none yet)";
    // Retrieval: what the caller found in the verified-kernel store goes to
    // the transcript (a replay must send the same prompts) and into both the
    // analysis and the generation prompts.
    transcript.write({{"kind", "retrieval"},
                      {"region", spec.name},
                      {"candidate", 0},
                      {"found", !spec.retrieved.empty()},
                      {"text", spec.retrieved}});
    std::string retrievedNote;
    if (!spec.retrieved.empty()) {
      auto r = templates.render("retrieved", specVars(spec));
      if (!r)
        return r.takeError();
      retrievedNote = "\n\n" + *r;
    }
    for (int round = 0; round <= opt.rounds; ++round) {
      auto vars = specVars(spec);
      auto d = draft(false);
      if (!d)
        return d.takeError();
      vars["draft"] = (*d)[1].content;
      vars["history"] = history;
      auto analyzeText = templates.render("analyze", vars);
      if (!analyzeText)
        return analyzeText.takeError();
      // Analysis: the same model, asked to plan before writing.
      Reply notes = ask({(*d)[0], {"user", *analyzeText}}, opt.analyze, 1,
                        {"", nextIndex, round, "analyze"})[0];
      std::vector<Message> gen = *d;
      gen[1].content += retrievedNote;
      if (!notes.completions.empty())
        gen[1].content += "\n\nChecklist from the review:\n" +
                          notes.completions[0].text;
      int first = nextIndex;
      nextIndex += samples;
      auto replies = ask(gen, opt.draft, samples, {"", first, round, "draft"});
      bool any = false;
      std::string failures;
      for (auto [i, r] : llvm::enumerate(replies)) {
        Candidate &c =
            evaluate(r, first + (int)i, round, firstAttempt + (int)i);
        any |= c.status == "accepted";
        failures += "- " + c.status + ": " + clip(c.detail, 300) + "\n";
      }
      if (any)
        return Error::success();
      // Triage: the failures become the next analysis' history.
      history = failures;
    }
    return Error::success();
  }

  Expected<SearchResult> run(const Candidate &baseline) {
    result.candidates.push_back(baseline);
    nextIndex = 1;
    const std::string &s = opt.strategy;
    if (s == "zero-shot" || s == "profile") {
      auto d = draft(s == "profile");
      if (!d)
        return d.takeError();
      int first = nextIndex;
      nextIndex += opt.samples;
      auto replies = ask(*d, opt.draft, opt.samples, {"", first, 0, "draft"});
      for (auto [i, r] : llvm::enumerate(replies))
        evaluate(r, first + (int)i, 0, (int)i);
    } else if (s == "refine") {
      auto d = draft(true);
      if (!d)
        return d.takeError();
      int first = nextIndex;
      nextIndex += opt.samples;
      auto replies = ask(*d, opt.draft, opt.samples, {"", first, 0, "draft"});
      for (auto [i, r] : llvm::enumerate(replies))
        if (auto err = refineChain(*d, r, first + (int)i, (int)i))
          return std::move(err);
    } else if (s == "agent") {
      // Best-of-n drafts per round share the loop (it stops at the first
      // accepted one); the experiment's attempts must not.
      if (opt.modelOnly) {
        for (int a = 0; a < opt.samples; ++a)
          if (auto err = agent(1, a))
            return std::move(err);
      } else if (auto err = agent(opt.samples, 0)) {
        return std::move(err);
      }
    } else {
      return createStringError(inconvertibleErrorCode(),
                               "unknown strategy '" + s +
                                   "' (zero-shot, profile, refine, agent)");
    }
    select();
    return result;
  }

  /// --answers model: the fastest accepted model kernel (the first one
  /// where nothing was timed), however it compares with the code
  /// generator's.
  void selectModelOnly() {
    result.chosen = 0;
    result.why = "no model kernel was accepted: the region runs its ATen ops";
    for (auto [i, c] : llvm::enumerate(result.candidates)) {
      if (i == 0 || c.status != "accepted")
        continue;
      const Candidate &best = result.candidates[result.chosen];
      if (result.chosen == 0 ||
          (c.kernelMs && (!best.kernelMs || *c.kernelMs < *best.kernelMs))) {
        result.chosen = (int)i;
        result.why = "model candidate " + std::to_string(c.index) +
                     (c.kernelMs ? formatv(": {0:F4} ms", *c.kernelMs).str()
                                 : std::string()) +
                     " (--answers model)";
      }
    }
  }

  void select() {
    if (opt.modelOnly)
      selectModelOnly();
    else
      selectFastest();
    json rec = {{"kind", "selection"},
                {"region", spec.name},
                {"candidate", result.candidates[result.chosen].index},
                {"why", result.why}};
    // The code generator's time beside the model's (bench/paper.py).
    if (result.candidates[0].kernelMs)
      rec["codegen_ms"] = *result.candidates[0].kernelMs;
    transcript.write(rec);
  }

  /// The code generator's kernel unless an accepted model kernel is
  /// faster beyond the noise.
  void selectFastest() {
    const Candidate &base = result.candidates[0];
    result.chosen = 0;
    result.why = "the code generator's kernel";
    std::optional<double> best = base.kernelMs;
    for (auto [i, c] : llvm::enumerate(result.candidates)) {
      if (i == 0 || c.status != "accepted")
        continue;
      if (!c.kernelMs || !best) {
        result.why = "a model kernel was accepted but there is no time to "
                     "compare (no GPU timing): keeping the code generator's";
        continue;
      }
      if (opt.clearlyFaster(*c.kernelMs, *best)) {
        best = c.kernelMs;
        result.chosen = (int)i;
        result.why = formatv("model candidate {0}: {1:F4} ms vs {2:F4} ms "
                             "(faster beyond the {3:P0} and {4} us noise)",
                             c.index, *c.kernelMs, *base.kernelMs, opt.noise,
                             opt.noiseFloorMs * 1000)
                         .str();
      }
    }
  }

  const KernelSpec &spec;
  Backend &backend;
  const PromptTemplates &templates;
  const StrategyOptions &opt;
  const VerifyFn &verify;
  Transcript &transcript;
  SearchResult result;
  int nextIndex = 1;
};

} // namespace

std::vector<Reply> LiveBackend::sample(const std::vector<Message> &messages,
                                       const Sampling &sampling, int n,
                                       const CallInfo &) {
  return client.sample(messages, sampling, n);
}

Transcript::Transcript(const std::string &path) {
  if (!path.empty())
    out = std::make_unique<std::ofstream>(path, std::ios::app);
}

void Transcript::write(json record) {
  std::lock_guard<std::mutex> lock(mutex);
  if (out) {
    // Replies are UTF-8 (their JSON was parsed), but a log line must never
    // end a run: anything else is written as U+FFFD.
    *out << record.dump(-1, ' ', false, json::error_handler_t::replace)
         << "\n";
    out->flush(); // a killed run keeps what it did
  }
  kept.push_back(std::move(record));
}

std::vector<json> Transcript::records() const {
  std::lock_guard<std::mutex> lock(mutex);
  return kept;
}

Expected<std::unique_ptr<ReplayBackend>>
ReplayBackend::load(const std::string &path) {
  auto text = readInputText(path);
  if (!text)
    return createStringError(inconvertibleErrorCode(),
                             "transcript: " + toString(text.takeError()));
  std::istringstream in(*text);
  auto r = std::make_unique<ReplayBackend>();
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("kind"))
      return createStringError(inconvertibleErrorCode(),
                               formatv("{0}:{1}: not a transcript record", path, n)
                                   .str());
    std::string kind = j["kind"];
    std::string region = j.value("region", "");
    int cand = j.value("candidate", 0);
    if (kind == "request")
      r->requests[keyOf(region, cand, j.value("round", 0), j["role"])] = j;
    else if (kind == "response") {
      // Responses are keyed by their request (first candidate of the call).
      int first = cand - j.value("sample", 0);
      r->responses[keyOf(region, first, j.value("round", 0), j["role"])]
          .push_back(j);
    } else if (kind == "verdict")
      r->verdicts[region + "#" + std::to_string(cand)] = j;
    else if (kind == "retrieval")
      r->retrievals[region] = j.value("text", "");
  }
  return r;
}

std::optional<std::string>
ReplayBackend::retrieval(const std::string &region) const {
  auto it = retrievals.find(region);
  if (it == retrievals.end())
    return std::nullopt;
  return it->second;
}

std::vector<Reply> ReplayBackend::sample(const std::vector<Message> &messages,
                                         const Sampling &, int n,
                                         const CallInfo &info) {
  std::string key = keyOf(info.region, info.candidate, info.round, info.role);
  auto fail = [&](const std::string &why) {
    Reply r;
    r.error = "replay: " + why;
    return std::vector<Reply>(n, r);
  };
  auto req = requests.find(key);
  if (req == requests.end())
    return fail("the transcript has no request " + key +
                " (the session diverged from the recording)");
  if (req->second["messages"] != messagesJson(messages))
    return fail("the prompt for " + key +
                " differs from the recorded one (templates or kb-rewrite "
                "changed since the recording)");
  // Concurrent samples finish in any order: the recording is put back in
  // sample order.
  std::vector<json> recs = responses[key];
  std::stable_sort(recs.begin(), recs.end(), [](const json &a, const json &b) {
    return a.value("sample", 0) < b.value("sample", 0);
  });
  std::vector<Reply> out;
  for (const json &rec : recs) {
    Reply r;
    r.error = rec.value("error", "");
    r.attempts = rec.value("attempts", 1);
    if (rec.contains("text")) {
      Completion c;
      c.text = rec["text"];
      c.finishReason = rec.value("finish_reason", "");
      c.promptTokens = rec.value("prompt_tokens", (int64_t)0);
      c.completionTokens = rec.value("completion_tokens", (int64_t)0);
      c.truncated = c.finishReason == "length";
      r.completions.push_back(std::move(c));
    }
    out.push_back(std::move(r));
  }
  out.resize(n, fail("no recorded response")[0]);
  return out;
}

std::optional<VerifyResult> ReplayBackend::verdict(const std::string &region,
                                                   int candidate) const {
  auto it = verdicts.find(region + "#" + std::to_string(candidate));
  if (it == verdicts.end())
    return std::nullopt;
  VerifyResult v;
  v.status = it->second.value("status", "");
  v.accepted = it->second.value("accepted", false);
  v.detail = it->second.value("detail", "");
  if (it->second.contains("kernel_ms"))
    v.kernelMs = it->second["kernel_ms"].get<double>();
  return v;
}

Expected<SearchResult> searchRegion(const KernelSpec &spec,
                                    const Candidate &baseline, Backend &backend,
                                    const PromptTemplates &templates,
                                    const StrategyOptions &options,
                                    const VerifyFn &verify,
                                    Transcript &transcript) {
  Searcher s(spec, backend, templates, options, verify, transcript);
  return s.run(baseline);
}

} // namespace kb::model

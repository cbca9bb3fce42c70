//===- Search.h - Strategies that ask the model for kernels -----*- C++ -*-===//
//
// The paper's strategies over one region (docs/model.md):
//   zero-shot  one prompt per sample;
//   profile    the prompt carries the baseline's time, bandwidth, roofline;
//   refine     each sample is repaired on kb-verify's feedback for up to
//              `rounds` rounds, restarting from a fresh draft when the same
//              failure repeats;
//   agent      analysis -> retrieval of similar verified kernels (the
//              caller fills KernelSpec::retrieved from the store) ->
//              generation -> evaluation -> feedback triage, the same model
//              in each role.
// `samples` > 1 is best-of-n: the drafts are sampled in one request (or n
// concurrent ones). The code generator's kernel is always candidate 0; a
// model kernel replaces it only when kb-verify accepts it and it is faster
// by more than the measured noise.
//
// Every request, response, static check and verdict goes to the transcript
// (one JSON object per line); a ReplayBackend serves a recorded session's
// responses and verdicts again, with no server, and fails loudly where the
// prompts diverge from the recording.
//
//===----------------------------------------------------------------------===//
#ifndef KB_MODEL_SEARCH_H
#define KB_MODEL_SEARCH_H

#include "kb/Model/Client.h"
#include "kb/Model/Prompt.h"
#include "kb/Verify/SpeedRule.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace kb::model {

/// Where one model call is in the search (transcript keys).
struct CallInfo {
  std::string region;
  int candidate = 0; // first candidate index this call's samples get
  int round = 0;
  std::string role; // draft | repair | analyze
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::vector<Reply> sample(const std::vector<Message> &messages,
                                    const Sampling &sampling, int n,
                                    const CallInfo &info) = 0;
};

class LiveBackend : public Backend {
public:
  explicit LiveBackend(Client &client) : client(client) {}
  std::vector<Reply> sample(const std::vector<Message> &messages,
                            const Sampling &sampling, int n,
                            const CallInfo &info) override;

private:
  Client &client;
};

struct VerifyResult {
  std::string status; // accepted | wrong_result | compile_error | ...
  bool accepted = false;
  std::string detail;
  std::optional<double> kernelMs;
};
using VerifyFn = std::function<VerifyResult(const std::string &source,
                                            const std::string &candidateId)>;

class Transcript {
public:
  Transcript() = default;
  /// Appends to `path` ("" = keep in memory only).
  explicit Transcript(const std::string &path);
  void write(nlohmann::json record);
  std::vector<nlohmann::json> records() const;

private:
  mutable std::mutex mutex;
  std::vector<nlohmann::json> kept;
  std::unique_ptr<std::ofstream> out;
};

/// Serves a transcript's responses (and verdicts) again.
class ReplayBackend : public Backend {
public:
  static llvm::Expected<std::unique_ptr<ReplayBackend>>
  load(const std::string &path);
  std::vector<Reply> sample(const std::vector<Message> &messages,
                            const Sampling &sampling, int n,
                            const CallInfo &info) override;
  /// The recorded verdict of a candidate, if any.
  std::optional<VerifyResult> verdict(const std::string &region,
                                      int candidate) const;
  /// What the agent's retrieval step found when the session was recorded.
  std::optional<std::string> retrieval(const std::string &region) const;

private:
  std::map<std::string, nlohmann::json> requests; // key -> request record
  std::map<std::string, std::vector<nlohmann::json>> responses;
  std::map<std::string, nlohmann::json> verdicts;
  std::map<std::string, std::string> retrievals;
};

struct StrategyOptions {
  std::string strategy = "zero-shot"; // zero-shot | profile | refine | agent
  int samples = 1;
  int rounds = 3; // refine / agent repair rounds
  Sampling draft{0.8, 0.95, 4096, std::nullopt};
  Sampling repair{0.2, 0.95, 4096, std::nullopt};
  Sampling analyze{0.3, 0.95, 1024, std::nullopt};
  double noise = 0.03; // a model kernel must be this much faster
  /// ... and this many ms faster: a few-microsecond kernel's CUDA-event
  /// timings differ by more than 3% run to run (the same kernel measured
  /// 0.0037 vs 0.0038 ms in gpu_model_search), while the event resolution
  /// is about 0.5 us.
  double noiseFloorMs = 0.001;
  /// The paper's experiment (bench/paper.py, `--answers model`): only model
  /// kernels answer. The fastest accepted one is chosen whatever the code
  /// generator's time, and the agent's samples are independent loops, so
  /// that sample k of every strategy is one attempt of the pass@k estimate.
  bool modelOnly = false;
  /// Whether `ms` beats `bestMs` beyond both.
  bool clearlyFaster(double ms, double bestMs) const {
    return verify::SpeedRule{noise, noiseFloorMs}.measurablyFaster(
        {ms, std::nullopt}, {bestMs, std::nullopt});
  }
};

struct Candidate {
  int index = 0;
  std::string origin; // codegen | model
  std::string source;
  std::string status; // accepted | rejected reason
  std::string detail;
  std::optional<double> kernelMs;
};

struct SearchResult {
  std::vector<Candidate> candidates; // [0] is the code generator's
  /// candidates[chosen]; 0 (the code generator's) also where, with
  /// modelOnly, no model kernel was accepted.
  int chosen = 0;
  std::string why;
  int modelCalls = 0;
};

llvm::Expected<SearchResult>
searchRegion(const KernelSpec &spec, const Candidate &baseline,
             Backend &backend, const PromptTemplates &templates,
             const StrategyOptions &options, const VerifyFn &verify,
             Transcript &transcript);

} // namespace kb::model

#endif // KB_MODEL_SEARCH_H

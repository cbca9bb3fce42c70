//===- Client.h - OpenAI-compatible chat completions client -----*- C++ -*-===//
//
// Talks to a locally hosted code model (vLLM, llama.cpp's llama-server,
// Ollama) through POST {base}/v1/chat/completions, streaming off. Sampling
// parameters are always sent explicitly: servers fill silent, different
// defaults otherwise. Servers differ in `n`: vLLM honours it, llama-server
// rejects n > 1, Ollama ignores it and answers once; the client detects the
// latter two on first use and falls back to n concurrent requests.
//
//===----------------------------------------------------------------------===//
#ifndef KB_MODEL_CLIENT_H
#define KB_MODEL_CLIENT_H

#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kb::model {

struct ClientConfig {
  std::string baseUrl; // http://127.0.0.1:8000 or .../v1
  std::string model;
  std::string apiKey;
  double timeoutS = 180;      // per request, connection included
  int maxRetries = 3;         // on 429, 5xx and connection errors
  double backoffS = 0.5;      // first wait; doubles, Retry-After wins
  int concurrency = 4;        // requests in flight at once
  /// Seconds from the client's creation after which no request starts and
  /// requests in flight end (0: none): a server that never answers costs
  /// this, not timeoutS per request of every region.
  double deadlineS = 0;
  /// The most bytes a response body may have; a larger one is abandoned.
  size_t maxReplyBytes = size_t(8) << 20;

  /// Fills unset fields from KB_MODEL_URL, KB_MODEL and OPENAI_API_KEY.
  /// Fails (naming the variable to set) when no URL or model is known.
  static llvm::Expected<ClientConfig> resolve(ClientConfig given);
};

struct Sampling {
  double temperature = 0.7;
  double topP = 0.95;
  int maxTokens = 2048;
  std::optional<uint64_t> seed;
};

struct Message {
  std::string role; // system | user | assistant
  std::string content;
};

struct Completion {
  std::string text;
  std::string finishReason;
  bool truncated = false; // finish_reason "length": the reply was cut off
  int64_t promptTokens = 0, completionTokens = 0;
};

/// How the server treats `n > 1` (detected on first use).
enum class NSupport { Unknown, Native, Rejected, Ignored };

/// One request's outcome: completions, or the reason there are none.
struct Reply {
  std::vector<Completion> completions;
  std::string error; // "" on success
  int httpStatus = 0;
  int attempts = 0;
};

class Client {
public:
  explicit Client(ClientConfig config);

  /// n samples of one conversation. Never throws; failures are in
  /// Reply::error (each sample of a fallback batch has its own Reply).
  std::vector<Reply> sample(const std::vector<Message> &messages,
                            const Sampling &sampling, int n);

  /// The JSON body sent for one request (tests and transcripts).
  std::string requestBody(const std::vector<Message> &messages,
                          const Sampling &sampling, int n) const;

  NSupport nSupport() const { return nMode.load(); }
  const ClientConfig &config() const { return cfg; }
  int64_t requestsSent() const { return sent.load(); }

private:
  Reply post(const std::string &body, int expectedChoices, int maxRetries);
  /// Seconds until cfg.deadlineS (a large number without one).
  double secondsLeft() const;
  std::vector<Reply> concurrent(const std::vector<Message> &messages,
                                const Sampling &sampling, int n);

  /// Holds one of config().concurrency request slots while alive.
  class Slot {
  public:
    explicit Slot(Client &c);
    ~Slot();

  private:
    Client &client;
  };

  ClientConfig cfg;
  std::string endpoint;
  std::mutex slotMutex;
  std::condition_variable slotFree;
  int inFlight = 0;
  std::atomic<NSupport> nMode{NSupport::Unknown};
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  std::atomic<int64_t> sent{0};
};

} // namespace kb::model

#endif // KB_MODEL_CLIENT_H

//===- Client.cpp - OpenAI-compatible chat completions client -------------===//

#include "kb/Model/Client.h"
#include "CurlShim.h"
#include "kb/Support/Printable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

using json = nlohmann::json;

namespace kb::model {
namespace {

/// A response body up to a cap: past it the transfer is abandoned (libcurl
/// ends it when fewer bytes are taken than given).
struct Body {
  std::string text;
  size_t cap;
  bool over = false;
};

size_t appendBody(char *data, size_t size, size_t n, void *user) {
  Body &b = *static_cast<Body *>(user);
  if (b.text.size() + size * n > b.cap) {
    b.over = true;
    return 0;
  }
  b.text.append(data, size * n);
  return size * n;
}

/// Retry-After (seconds form) from the response headers.
size_t readHeader(char *data, size_t size, size_t n, void *user) {
  std::string line(data, size * n);
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (lower.rfind("retry-after:", 0) == 0)
    *static_cast<double *>(user) = std::atof(line.c_str() + 12);
  return size * n;
}

/// The server's own words, as one printable line of valid UTF-8 (a body
/// cut inside a character, a Latin-1 or binary body and terminal escape
/// codes must neither end the run in the transcript's JSON nor reach the
/// user's terminal). OpenAI and llama-server send
/// {"error": {"message": ...}}, Ollama {"error": "..."}.
std::string serverMessage(const std::string &body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const json &e = j["error"];
    if (e.is_string())
      return printable(e.get<std::string>());
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return printable(e["message"].get<std::string>());
  }
  return printable(body.substr(0, 300));
}

std::string trimSlash(std::string s) {
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  return s;
}

} // namespace

llvm::Expected<ClientConfig> ClientConfig::resolve(ClientConfig c) {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (c.baseUrl.empty())
    c.baseUrl = env("KB_MODEL_URL");
  if (c.model.empty())
    c.model = env("KB_MODEL");
  if (c.apiKey.empty())
    c.apiKey = env("OPENAI_API_KEY");
  if (c.baseUrl.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no model server: pass --model-url URL or set KB_MODEL_URL (e.g. "
        "http://127.0.0.1:8000 for vLLM, :8080 for llama-server, :11434 for "
        "Ollama)");
  if (c.model.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no model name: pass --model NAME or set KB_MODEL (e.g. "
        "Qwen/Qwen2.5-Coder-7B-Instruct)");
  if (c.concurrency < 1 || c.maxRetries < 0 || c.timeoutS <= 0 ||
      c.deadlineS < 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "model client: concurrency must be >= 1, "
                                   "retries >= 0, the timeout positive and "
                                   "the deadline >= 0");
  return c;
}

double Client::secondsLeft() const {
  if (cfg.deadlineS <= 0)
    return 1e9;
  return cfg.deadlineS -
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count();
}

Client::Client(ClientConfig config) : cfg(std::move(config)) {
  std::string base = trimSlash(cfg.baseUrl);
  if (base.size() < 3 || base.compare(base.size() - 3, 3, "/v1") != 0)
    base += "/v1";
  endpoint = base + "/chat/completions";
}

Client::Slot::Slot(Client &c) : client(c) {
  std::unique_lock<std::mutex> lock(client.slotMutex);
  client.slotFree.wait(lock,
                       [&] { return client.inFlight < client.cfg.concurrency; });
  ++client.inFlight;
}

Client::Slot::~Slot() {
  {
    std::lock_guard<std::mutex> lock(client.slotMutex);
    --client.inFlight;
  }
  client.slotFree.notify_one();
}

std::string Client::requestBody(const std::vector<Message> &messages,
                                const Sampling &s, int n) const {
  json msgs = json::array();
  for (const Message &m : messages)
    msgs.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", cfg.model},       {"messages", msgs},
               {"temperature", s.temperature}, {"top_p", s.topP},
               {"max_tokens", s.maxTokens}, {"n", n},
               {"stream", false}};
  if (s.seed)
    body["seed"] = *s.seed;
  return body.dump();
}

Reply Client::post(const std::string &body, int expectedChoices,
                   int maxRetries) {
  Reply r;
  std::string loadError;
  const CurlApi *api = curlApi(loadError);
  if (!api) {
    r.error = loadError;
    return r;
  }
  double wait = cfg.backoffS;
  for (int attempt = 0; attempt <= maxRetries; ++attempt) {
    double left = secondsLeft();
    if (left <= 0) {
      r.error = "the model deadline (--model-deadline " +
                std::to_string((int)cfg.deadlineS) +
                " s) has passed; no further requests";
      return r;
    }
    r.attempts = attempt + 1;
    Body received{{}, cfg.maxReplyBytes};
    std::string &response = received.text;
    double retryAfter = -1;
    long status = 0;
    CURLcode rc;
    {
      Slot slot(*this);
      CURL *curl = api->easy_init();
      if (!curl) {
        r.error = "cannot create an HTTP handle (libcurl)";
        return r;
      }
      struct curl_slist *headers = nullptr;
      headers = api->slist_append(headers, "Content-Type: application/json");
      // No "Expect: 100-continue" round trip before large prompts.
      headers = api->slist_append(headers, "Expect:");
      std::string auth;
      if (!cfg.apiKey.empty()) {
        auth = "Authorization: Bearer " + cfg.apiKey;
        headers = api->slist_append(headers, auth.c_str());
      }
      api->easy_setopt(curl, CURLOPT_URL, endpoint.c_str());
      api->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      api->easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
      api->easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body.size());
      api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendBody);
      api->easy_setopt(curl, CURLOPT_WRITEDATA, &received);
      api->easy_setopt(curl, CURLOPT_HEADERFUNCTION, readHeader);
      api->easy_setopt(curl, CURLOPT_HEADERDATA, &retryAfter);
      api->easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                       (long)(std::min(cfg.timeoutS, left) * 1000) + 1);
      api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); // threads
      ++sent;
      rc = api->easy_perform(curl);
      api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
      api->slist_free_all(headers);
      api->easy_cleanup(curl);
    }
    r.httpStatus = (int)status;
    bool retryable = false;
    if (received.over) {
      // A reply this large is no kernel: not retried (it would be again).
      r.error = "the reply from " + endpoint + " exceeded " +
                std::to_string(cfg.maxReplyBytes) + " bytes; abandoned";
      return r;
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
      // A slow server stays slow: report rather than retry.
      r.error = "no reply from " + endpoint + " within " +
                std::to_string((int)cfg.timeoutS) + " s (raise --model-timeout)";
      return r;
    } else if (rc != CURLE_OK) {
      r.error = std::string("cannot reach ") + endpoint + ": " +
                api->easy_strerror(rc) + " (is the model server running?)";
      retryable = true;
    } else if (status == 429 || status >= 500) {
      r.error = "HTTP " + std::to_string(status) + " from " + endpoint + ": " +
                serverMessage(response);
      retryable = true;
    } else if (status != 200) {
      r.error = "HTTP " + std::to_string(status) + " from " + endpoint + ": " +
                serverMessage(response);
      return r;
    } else {
      json j = json::parse(response, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("choices") ||
          !j["choices"].is_array() || j["choices"].empty()) {
        r.error = "malformed reply from " + endpoint +
                  " (expected a JSON object with choices): " +
                  serverMessage(response);
        return r;
      }
      for (const json &c : j["choices"]) {
        Completion comp;
        if (c.contains("message") && c["message"].is_object() &&
            c["message"].contains("content") &&
            c["message"]["content"].is_string())
          comp.text = c["message"]["content"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string())
          comp.finishReason = c["finish_reason"].get<std::string>();
        comp.truncated = comp.finishReason == "length";
        // usage counts the request (all n choices): the first choice
        // carries it, so that summing over completions counts it once.
        if (r.completions.empty() && j.contains("usage") &&
            j["usage"].is_object()) {
          comp.promptTokens = j["usage"].value("prompt_tokens", 0);
          comp.completionTokens = j["usage"].value("completion_tokens", 0);
        }
        r.completions.push_back(std::move(comp));
      }
      (void)expectedChoices;
      r.error.clear();
      return r;
    }
    if (!retryable || attempt == maxRetries)
      break;
    double delay = retryAfter >= 0 ? std::min(retryAfter, 30.0) : wait;
    if (delay >= secondsLeft())
      break; // the deadline comes first: report what failed
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    wait *= 2;
  }
  if (r.attempts > 1)
    r.error += " (after " + std::to_string(r.attempts) + " attempts)";
  return r;
}

std::vector<Reply> Client::concurrent(const std::vector<Message> &messages,
                                      const Sampling &sampling, int n) {
  std::vector<Reply> replies(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      Sampling s = sampling;
      if (s.seed)
        s.seed = *s.seed + i; // distinct samples from seeded servers
      replies[i] = post(requestBody(messages, s, 1), 1, cfg.maxRetries);
    });
  for (std::thread &t : threads)
    t.join();
  return replies;
}

std::vector<Reply> Client::sample(const std::vector<Message> &messages,
                                  const Sampling &sampling, int n) {
  if (n <= 1)
    return {post(requestBody(messages, sampling, 1), 1, cfg.maxRetries)};
  NSupport mode = nMode.load();
  if (mode == NSupport::Rejected || mode == NSupport::Ignored)
    return concurrent(messages, sampling, n);
  // One request for n samples, never retried: servers refuse n > 1 in their
  // own ways (llama-server throws, which its handler answers with HTTP 500
  // "Only one completion choice is allowed"; others send a 4xx), and a
  // retried refusal only repeats it. Any HTTP failure falls back at once to
  // n requests of one sample, which retry as usual; a server that never
  // accepted n > 1 is not asked again. No HTTP answer at all (unreachable,
  // timed out) says nothing about n: that error is every sample's.
  Reply r = post(requestBody(messages, sampling, n), n, /*maxRetries=*/0);
  if (!r.error.empty()) {
    if (r.httpStatus == 0)
      return std::vector<Reply>(n, r);
    if (mode == NSupport::Unknown)
      nMode = NSupport::Rejected;
    return concurrent(messages, sampling, n);
  }
  std::vector<Reply> out;
  for (Completion &c : r.completions) {
    Reply one = r;
    one.completions = {std::move(c)};
    out.push_back(std::move(one));
  }
  if ((int)out.size() >= n) {
    nMode = NSupport::Native;
    out.resize(n);
    return out;
  }
  // Ollama ignores n and answers once: keep that answer, ask for the rest.
  nMode = NSupport::Ignored;
  std::vector<Reply> rest = concurrent(messages, sampling, n - (int)out.size());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

} // namespace kb::model

//===- ClientTest.cpp - The model client against a scripted server -------===//
//
// Each test starts test/fixtures/model-server/scripted_server.py on a free
// loopback port with its own script, and stops it afterwards.
//
//===----------------------------------------------------------------------===//
#include "kb/Model/Client.h"
#include "ScriptedServer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

using namespace kb::model;
using json = nlohmann::json;
using kbtest::ScriptedServer;

namespace {

ClientConfig config(const ScriptedServer &s) {
  ClientConfig c;
  c.baseUrl = s.url();
  c.model = "Qwen/Qwen2.5-Coder-7B-Instruct";
  c.timeoutS = 5;
  c.maxRetries = 2;
  c.backoffS = 0.01;
  c.concurrency = 8;
  return c;
}

std::vector<Message> ask(const std::string &tag) {
  return {{"system", "You write CUDA."}, {"user", "[" + tag + "] write it"}};
}

} // namespace

TEST(ModelClient, ReplySamplingParametersAndUsage) {
  ScriptedServer s(R"({"cases": {"[good]": [{"reply": "```cuda\nkernel\n```"}]}})");
  ASSERT_NE(s.port, 0);
  Client c(config(s));
  Sampling sp;
  sp.temperature = 0.2;
  sp.topP = 0.9;
  sp.maxTokens = 512;
  sp.seed = 7;
  auto r = c.sample(ask("good"), sp, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error, "");
  ASSERT_EQ(r[0].completions.size(), 1u);
  EXPECT_EQ(r[0].completions[0].text, "```cuda\nkernel\n```");
  EXPECT_EQ(r[0].completions[0].finishReason, "stop");
  EXPECT_FALSE(r[0].completions[0].truncated);
  EXPECT_GT(r[0].completions[0].promptTokens, 0);
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 1u);
  // Every sampling parameter is explicit: servers' silent defaults differ.
  EXPECT_EQ(reqs[0]["model"], "Qwen/Qwen2.5-Coder-7B-Instruct");
  EXPECT_DOUBLE_EQ(reqs[0]["temperature"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(reqs[0]["top_p"].get<double>(), 0.9);
  EXPECT_EQ(reqs[0]["max_tokens"], 512);
  EXPECT_EQ(reqs[0]["n"], 1);
  EXPECT_EQ(reqs[0]["seed"], 7);
  EXPECT_EQ(reqs[0]["stream"], false);
  EXPECT_EQ(reqs[0]["messages"][0]["role"], "system");
}

TEST(ModelClient, TruncatedReply) {
  ScriptedServer s(R"({"default": [{"reply": "__global__ void k(", "finish_reason": "length"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 1);
  ASSERT_EQ(r[0].completions.size(), 1u);
  EXPECT_TRUE(r[0].completions[0].truncated);
}

TEST(ModelClient, RetriesOn429ThenSucceeds) {
  ScriptedServer s(R"({"default": [{"status": 429, "message": "slow down", "retry_after": 0},
                                    {"reply": "ok"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_EQ(r[0].error, "");
  EXPECT_EQ(r[0].attempts, 2);
  EXPECT_EQ(s.requests().size(), 2u);
}

TEST(ModelClient, GivesUpOn5xxWithTheServersMessage) {
  ScriptedServer s(R"({"default": [{"status": 500, "message": "CUDA out of memory"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_NE(r[0].error.find("HTTP 500"), std::string::npos) << r[0].error;
  EXPECT_NE(r[0].error.find("CUDA out of memory"), std::string::npos) << r[0].error;
  EXPECT_NE(r[0].error.find("after 3 attempts"), std::string::npos) << r[0].error;
  EXPECT_EQ(s.requests().size(), 3u);
}

TEST(ModelClient, ClientErrorsAreNotRetried) {
  ScriptedServer s(R"({"default": [{"status": 400, "message": "model 'x' not found"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_EQ(r[0].attempts, 1);
  EXPECT_EQ(r[0].httpStatus, 400);
  EXPECT_NE(r[0].error.find("model 'x' not found"), std::string::npos) << r[0].error;
}

TEST(ModelClient, MalformedJson) {
  ScriptedServer s(R"({"default": [{"raw": "<html>proxy error</html>"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_NE(r[0].error.find("malformed reply"), std::string::npos) << r[0].error;
  EXPECT_NE(r[0].error.find("proxy error"), std::string::npos) << r[0].error;
}

TEST(ModelClient, SlowReplyPastTheTimeout) {
  ScriptedServer s(R"({"default": [{"sleep": 2.0, "reply": "late"}]})");
  ClientConfig cfg = config(s);
  cfg.timeoutS = 0.5;
  Client c(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.sample(ask("x"), Sampling(), 1);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r[0].error.find("no reply"), std::string::npos) << r[0].error;
  EXPECT_EQ(r[0].attempts, 1);
  EXPECT_LT(secs, 1.5);
}

TEST(ModelClient, NoServer) {
  ScriptedServer s(R"({"default": [{"reply": "x"}]})");
  ClientConfig cfg = config(s);
  cfg.baseUrl = "http://127.0.0.1:9"; // discard port: nothing listens
  Client c(cfg);
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_NE(r[0].error.find("is the model server running?"), std::string::npos) << r[0].error;
  EXPECT_EQ(r[0].attempts, 3);
}

TEST(ModelClient, NativeN) {
  ScriptedServer s(R"({"n_mode": "native", "default": [{"reply": "a"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 4);
  ASSERT_EQ(r.size(), 4u);
  for (const Reply &x : r)
    EXPECT_EQ(x.completions.size(), 1u);
  EXPECT_EQ(c.nSupport(), NSupport::Native);
  EXPECT_EQ(s.requests().size(), 1u);
}

TEST(ModelClient, ServerRejectingNFallsBackToConcurrentRequests) {
  ScriptedServer s(R"({"n_mode": "reject", "default": [{"reply": "a"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 4);
  ASSERT_EQ(r.size(), 4u);
  for (const Reply &x : r)
    EXPECT_EQ(x.error, "");
  EXPECT_EQ(c.nSupport(), NSupport::Rejected);
  auto reqs = s.requests();
  // The rejected n=4 once (llama-server's HTTP 500 is not retried although
  // 5xx are), then four n=1.
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs[0]["n"], 4);
  for (size_t i = 1; i < reqs.size(); ++i)
    EXPECT_EQ(reqs[i]["n"], 1);
  // Known now: no second rejected request.
  c.sample(ask("x"), Sampling(), 2);
  EXPECT_EQ(s.requests().size(), 7u);
}

TEST(ModelClient, ServerErrorBodiesBecomePrintableUtf8) {
  // A 300-byte cut inside a two-byte character, a Latin-1 body with an
  // escape sequence: the error is one line of valid UTF-8 without control
  // codes, and a transcript of it is written.
  std::string cut(299, 'a');
  json script = {{"cases",
                  {{"cut", {{{"raw", cut + "\u00e9\u00e9 tail"}, {"status", 500}}}},
                   {"latin", {{{"raw_latin1", "caf\u00e9 \u001b[31mred\u00ff"},
                               {"status", 400}}}}}},
                 {"default", {{{"reply", "a"}}}}};
  ScriptedServer s(script.dump());
  ClientConfig cfg = config(s);
  cfg.maxRetries = 0;
  Client c(cfg);
  for (const char *tag : {"cut", "latin"}) {
    auto r = c.sample(ask(tag), Sampling(), 1);
    ASSERT_FALSE(r[0].error.empty()) << tag;
    EXPECT_TRUE(llvm::json::isUTF8(r[0].error)) << tag << ": " << r[0].error;
    for (char ch : r[0].error)
      EXPECT_FALSE((unsigned char)ch < 0x20 || ch == 0x7f) << tag;
    EXPECT_NO_THROW(json({{"error", r[0].error}}).dump()) << tag;
  }
  auto latin = c.sample(ask("latin"), Sampling(), 1);
  EXPECT_NE(latin[0].error.find("[31mred"), std::string::npos) << latin[0].error;
}

TEST(ModelClient, AFailedRequestForNSamplesIsNotRetried) {
  // llama-server's HTTP 500 for n > 1 with three retries configured: the
  // n > 1 request is sent once, then n requests of one sample each.
  ScriptedServer s(R"({"n_mode": "reject", "default": [{"reply": "b"}]})");
  ClientConfig cfg = config(s);
  cfg.maxRetries = 3;
  Client c(cfg);
  auto r = c.sample(ask("x"), Sampling(), 3);
  ASSERT_EQ(r.size(), 3u);
  for (const Reply &x : r) {
    EXPECT_EQ(x.error, "");
    EXPECT_EQ(x.attempts, 1);
  }
  EXPECT_EQ(s.requests().size(), 4u);
  EXPECT_EQ(c.nSupport(), NSupport::Rejected);
}

TEST(ModelClient, NoAnswerForNSamplesIsEverySamplesError) {
  ClientConfig cfg;
  cfg.baseUrl = "http://127.0.0.1:1"; // nothing listens
  cfg.maxRetries = 0;
  cfg.timeoutS = 2;
  Client c(cfg);
  auto r = c.sample(ask("x"), Sampling(), 3);
  ASSERT_EQ(r.size(), 3u);
  for (const Reply &x : r)
    EXPECT_NE(x.error.find("cannot reach"), std::string::npos) << x.error;
  EXPECT_EQ(c.nSupport(), NSupport::Unknown);
  EXPECT_EQ(c.requestsSent(), 1);
}

TEST(ModelClient, TheDeadlineEndsRequestsInFlightAndStopsNewOnes) {
  // A server that answers after 5 s, a 30 s request timeout and a 1 s
  // deadline: the request ends at the deadline, and the next call sends
  // nothing.
  ScriptedServer s(R"({"default": [{"sleep": 5, "reply": "late"}]})");
  ClientConfig cfg = config(s);
  cfg.timeoutS = 30;
  cfg.deadlineS = 1;
  Client c(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.sample(ask("x"), Sampling(), 1);
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_NE(r[0].error, "");
  EXPECT_LT(took, 4.0);
  auto again = c.sample(ask("y"), Sampling(), 2);
  ASSERT_EQ(again.size(), 2u);
  for (const Reply &x : again)
    EXPECT_NE(x.error.find("model deadline"), std::string::npos) << x.error;
  EXPECT_EQ(c.requestsSent(), 1);
}

TEST(ModelClient, OversizedRepliesAreAbandonedNotRetried) {
  ScriptedServer s(R"({"default": [{"reply": ")" + std::string(5000, 'x') +
                   R"("}]})");
  ClientConfig cfg = config(s);
  cfg.maxReplyBytes = 1000;
  Client c(cfg);
  auto r = c.sample(ask("x"), Sampling(), 1);
  EXPECT_NE(r[0].error.find("exceeded 1000 bytes"), std::string::npos)
      << r[0].error;
  EXPECT_EQ(r[0].attempts, 1);
  EXPECT_TRUE(r[0].completions.empty());
}

TEST(ModelClient, ServerIgnoringNIsDetected) {
  ScriptedServer s(R"({"n_mode": "ignore", "default": [{"reply": "a"}]})");
  Client c(config(s));
  auto r = c.sample(ask("x"), Sampling(), 4);
  ASSERT_EQ(r.size(), 4u);
  for (const Reply &x : r)
    ASSERT_EQ(x.completions.size(), 1u);
  EXPECT_EQ(c.nSupport(), NSupport::Ignored);
  EXPECT_EQ(s.requests().size(), 4u); // one answered n=4 once, three more
}

TEST(ModelClient, SamplesRunConcurrently) {
  ScriptedServer s(R"({"n_mode": "reject", "default": [{"sleep": 0.4, "reply": "a"}]})");
  Client c(config(s));
  c.sample(ask("x"), Sampling(), 2); // learns that n is rejected
  auto t0 = std::chrono::steady_clock::now();
  c.sample(ask("x"), Sampling(), 1);
  double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  auto r = c.sample(ask("x"), Sampling(), 8);
  double eight = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.size(), 8u);
  EXPECT_LT(eight, 1.5 * one) << "one " << one << " s, eight " << eight << " s";
  std::printf("one sample %.3f s, eight samples %.3f s\n", one, eight);
}

TEST(ModelClient, ConcurrencyLimit) {
  ScriptedServer s(R"({"n_mode": "reject", "default": [{"sleep": 0.3, "reply": "a"}]})");
  ClientConfig cfg = config(s);
  cfg.concurrency = 2;
  Client c(cfg);
  c.sample(ask("x"), Sampling(), 2);
  auto t0 = std::chrono::steady_clock::now();
  c.sample(ask("x"), Sampling(), 4); // two waves of two
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(secs, 0.55);
}

TEST(ModelClient, ConfigFromEnvironmentAndClearErrors) {
  ::setenv("KB_MODEL_URL", "http://127.0.0.1:8000/v1/", 1);
  ::setenv("KB_MODEL", "qwen2.5-coder:7b", 1);
  ::unsetenv("OPENAI_API_KEY");
  auto c = ClientConfig::resolve({});
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->model, "qwen2.5-coder:7b");
  ClientConfig given;
  given.model = "explicit";
  auto d = ClientConfig::resolve(given);
  ASSERT_TRUE(bool(d));
  EXPECT_EQ(d->model, "explicit"); // flags win over the environment
  ::unsetenv("KB_MODEL_URL");
  auto e = ClientConfig::resolve({});
  ASSERT_FALSE(bool(e));
  EXPECT_NE(llvm::toString(e.takeError()).find("KB_MODEL_URL"), std::string::npos);
  ::unsetenv("KB_MODEL");
}

//===- Client.cpp - The one way the compiler runs kb-verify ---------------===//

#include "kb/Verify/Client.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <optional>

using namespace llvm;

namespace {
bool envFlag(const char *name) {
  const char *v = getenv(name);
  return v && *v && *v != '0';
}
} // namespace

bool kb::verify::gpuPresent() {
  if (envFlag("KB_ASSUME_NO_GPU"))
    return false;
  if (envFlag("KB_ASSUME_GPU"))
    return true;
  return sys::fs::exists("/dev/nvidiactl") || sys::fs::exists("/dev/nvidia0");
}

std::string kb::verify::findVerifier(const char *argv0, void *mainAddr,
                                     StringRef given) {
  if (!given.empty())
    return given.str();
  if (const char *env = getenv("KB_VERIFY"); env && *env)
    return env;
  std::string self = sys::fs::getMainExecutable(argv0, mainAddr);
  SmallString<256> beside(sys::path::parent_path(self));
  sys::path::append(beside, "kb-verify");
  return sys::fs::can_execute(beside) ? beside.str().str() : "";
}

Expected<kb::verify::VerifierRun>
kb::verify::runVerifier(StringRef exe, ArrayRef<std::string> args,
                        StringRef stdinPath, StringRef outPath,
                        StringRef errPath) {
  std::vector<StringRef> argv{exe};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {
      stdinPath.empty() ? std::optional<StringRef>(std::nullopt)
                        : std::optional<StringRef>(stdinPath),
      outPath, errPath};
  std::string msg;
  VerifierRun run;
  run.exitCode =
      sys::ExecuteAndWait(exe, argv, std::nullopt, redirects, 0, 0, &msg);
  if (run.exitCode < 0)
    return createStringError(inconvertibleErrorCode(),
                             "cannot run kb-verify '" + exe + "': " + msg);
  auto buf = MemoryBuffer::getFile(outPath);
  if (!buf)
    return createStringError(buf.getError(),
                             "kb-verify wrote no output to '" + outPath +
                                 "': " + buf.getError().message());
  SmallVector<StringRef> parts;
  (*buf)->getBuffer().split(parts, '\n', -1, false);
  for (StringRef line : parts) {
    auto v = json::parse(line);
    if (!v) {
      consumeError(v.takeError());
      continue;
    }
    if (auto *o = v->getAsObject())
      run.lines.push_back(std::move(*o));
  }
  return run;
}

namespace {

Expected<std::vector<kb::verify::JobVerdict>>
jobVerdicts(Expected<kb::verify::VerifierRun> run) {
  if (!run)
    return run.takeError();
  std::vector<kb::verify::JobVerdict> out;
  for (json::Object &line : run->lines) {
    kb::verify::JobVerdict v;
    // The line is valid JSON (runVerifier parsed it): parseVerdict reads
    // the fields it knows, as kb-verify's own tests do.
    v.verdict = kb::verify::parseVerdict(
        formatv("{0}", json::Value(json::Object(line))).str());
    v.arch = line.getString("arch").value_or("").str();
    v.compileLog = line.getString("log").value_or("").str();
    v.printed = std::move(line);
    out.push_back(std::move(v));
  }
  return out;
}

} // namespace

Expected<std::vector<kb::verify::JobVerdict>>
kb::verify::serveJobs(StringRef exe, StringRef jobsPath, StringRef outPath,
                      StringRef errPath) {
  return jobVerdicts(runVerifier(exe, {"--serve"}, jobsPath, outPath, errPath));
}

Expected<std::vector<kb::verify::JobVerdict>>
kb::verify::verifyJob(StringRef exe, StringRef jobPath, StringRef outPath,
                      StringRef errPath) {
  return jobVerdicts(
      runVerifier(exe, {"--job", jobPath.str()}, "", outPath, errPath));
}

Expected<std::vector<kb::verify::JobVerdict>>
kb::verify::compileJobs(StringRef exe, ArrayRef<std::string> jobPaths,
                        StringRef archs, StringRef outPath, StringRef errPath) {
  std::vector<std::string> args{"--compile"};
  args.insert(args.end(), jobPaths.begin(), jobPaths.end());
  args.push_back("--arch");
  args.push_back(archs.str());
  return jobVerdicts(runVerifier(exe, args, "", outPath, errPath));
}

Expected<std::vector<kb::verify::CxxVerdict>>
kb::verify::verifyCxxSources(StringRef exe, StringRef dir, StringRef outPath,
                             StringRef errPath) {
  auto run = runVerifier(exe, {"--cxx", dir.str()}, "", outPath, errPath);
  if (!run)
    return run.takeError();
  std::vector<CxxVerdict> out;
  for (json::Object &line : run->lines) {
    if (auto e = line.getString("error"))
      return createStringError(inconvertibleErrorCode(),
                               "kb-verify --cxx " + dir + ": " + *e);
    auto function = line.getString("function");
    if (!function)
      continue;
    CxxVerdict v;
    v.function = function->str();
    v.verdict = line.getString("verdict").value_or("").str();
    // The harness prints verified, unverified or rejected (anything else
    // is a harness newer than this client: its function is not used).
    v.state = v.verdict == "verified"     ? CxxVerdict::State::Verified
              : v.verdict == "unverified" ? CxxVerdict::State::Unverified
                                          : CxxVerdict::State::Rejected;
    v.detail = line.getString("detail").value_or("").str();
    v.printed = std::move(line);
    out.push_back(std::move(v));
  }
  return out;
}

//===- kb-verify.cpp - The execution oracle -------------------------------===//
//
//   kb-verify --job job.json [--cache DIR | --no-cache]
//   kb-verify --serve [--cache DIR | --no-cache]     JSON lines in and out
//   kb-verify --compile job.json... --arch sm_75,sm_90  static checks + NVRTC
//   kb-verify --cxx DIR [--timeout S]  the C++ rewrite's kernels (CxxHarness.h)
//   kb-verify --worker                                (internal)
//
// The supervisor (this process) never touches the GPU: candidates run in a
// worker process it restarts after a crash, a timeout or a poisoned context.
// Exit codes (docs/verify.md): 0 accepted / compiled; 1 rejected; 2 invalid
// job or usage; 3 internal error (no worker could be started).
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "CxxHarness.h"
#include "Headers.h"
#include "Supervisor.h"
#include "Worker.h"

#include "kb/Verify/Checks.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <iostream>
#include <sstream>

using namespace kb::verify;

namespace {

void usage() {
  std::cerr << "usage: kb-verify --job FILE [--cache DIR | --no-cache]\n"
               "       kb-verify --serve [--cache DIR | --no-cache]\n"
               "       kb-verify --compile FILE... --arch sm_XY[,sm_XY...]\n"
               "       kb-verify --cxx DIR [--timeout SECONDS]\n"
               "       kb-verify --version\n"
               "Verdict and job schemas: docs/verify.md\n";
}

/// One line per job and architecture; exit 0 when all compiled.
int compileOnly(const std::vector<std::string> &paths,
                const std::string &archList) {
  int code = 0;
  for (const std::string &path : paths) {
    std::string text;
    if (!readFile(path, text)) {
      std::cerr << "kb-verify: error: cannot read '" << path << "'\n";
      return 2;
    }
    Job job;
    try {
      job = parseJob(text);
    } catch (const JobError &e) {
      std::cerr << "kb-verify: error: " << path << ": " << e.what() << "\n";
      return 2;
    }
    std::stringstream archs(archList);
    for (std::string arch; std::getline(archs, arch, ',');) {
      CompileResult r = compileCandidate(job.candidate.source,
                                         job.candidate.entry, arch);
      std::cout << nlohmann::json{{"id", job.id},
                                  {"file", path},
                                  {"arch", arch},
                                  {"status",
                                   statusName(r.ok ? VerdictStatus::Compiled
                                                   : r.status)},
                                  {"cubin_bytes", r.cubin.size()},
                                  {"log", r.log}}
                       .dump()
                << std::endl;
      if (!r.ok)
        code = 1;
    }
  }
  return code;
}

} // namespace

int main(int argc, char **argv) {
  std::string jobPath, arch = "sm_90", cacheDir = defaultCacheDir(), cxxDir;
  int timeout = 300;
  std::vector<std::string> compilePaths;
  bool serve = false, worker = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "kb-verify: error: " << a << " needs a value\n";
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--job")
      jobPath = value();
    else if (a == "--serve")
      serve = true;
    else if (a == "--worker")
      worker = true;
    else if (a == "--compile") {
      compilePaths.push_back(value());
      while (i + 1 < argc && argv[i + 1][0] != '-')
        compilePaths.push_back(argv[++i]);
    }
    else if (a == "--arch")
      arch = value();
    else if (a == "--cxx")
      cxxDir = value();
    else if (a == "--timeout")
      timeout = std::atoi(value().c_str());
    else if (a == "--cache")
      cacheDir = value();
    else if (a == "--no-cache")
      cacheDir.clear();
    else if (a == "--version") {
      std::cout << "kb-verify 0.1.0 (job schema " << kSchemaVersion << ")\n";
      return 0;
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      std::cerr << "kb-verify: error: unknown argument '" << a << "'\n";
      usage();
      return 2;
    }
  }
  if (worker)
    return workerMain();
  if (!cxxDir.empty())
    return verifyCxxDirectory(cxxDir, timeout > 0 ? timeout : 300);
  if (!compilePaths.empty())
    return compileOnly(compilePaths, arch);
  Supervisor sup(argv[0], cacheDir);
  if (serve) {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      std::cout << toJson(sup.verify(line)) << std::endl;
    }
    return 0;
  }
  if (jobPath.empty()) {
    usage();
    return 2;
  }
  std::string text;
  if (!readFile(jobPath, text)) {
    std::cerr << "kb-verify: error: cannot read '" << jobPath << "'\n";
    return 2;
  }
  Verdict v = sup.verify(text);
  std::cout << toJson(v) << std::endl;
  if (v.status == VerdictStatus::InvalidJob)
    return 2;
  if (v.status == VerdictStatus::InternalError)
    return 3;
  return v.accepted() ? 0 : 1;
}

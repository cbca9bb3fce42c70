//===- CxxHarness.cpp - kb-verify --cxx: the C++ rewrite's kernels --------===//

#include "CxxHarness.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

namespace kb::verify {
namespace {

bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs `cmd` through the shell, its output (stdout and stderr) in `out`.
int run(const std::string &cmd, std::string &out) {
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void error(const std::string &msg) {
  std::cout << nlohmann::json{{"error", msg}}.dump() << std::endl;
}

} // namespace

int verifyCxxDirectory(const std::string &dir, int timeoutSeconds) {
  const std::string harness = dir + "/kb_verify_harness.cpp";
  const std::string kernels = dir + "/kb_kernels.cu";
  if (!exists(harness) || !exists(kernels)) {
    error(dir + " has no kb_verify_harness.cpp and kb_kernels.cu (write "
                "them with kb-rewrite rewrite ... --verify-harness)");
    return 2;
  }
  // The libtorch kb-verify was built against (CMake's Torch config); nvcc
  // picks CUDA for .cu and the host compiler for .cpp by extension.
  const std::string exe = dir + "/kb_verify_harness";
  std::ostringstream cmd;
  cmd << quote(KB_NVCC) << " -std=c++17 -O2 " << KB_TORCH_CXX_FLAGS << " "
      << KB_TORCH_INCLUDE_FLAGS << " -I" << quote(dir) << " "
      << quote(kernels) << " " << quote(harness) << " -L"
      << quote(KB_TORCH_LIB_DIR) << " -Xlinker -rpath -Xlinker "
      << quote(KB_TORCH_LIB_DIR)
      << " -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -o " << quote(exe);
  std::string log;
  if (int rc = run(cmd.str(), log); rc != 0) {
    error("the harness did not compile (nvcc exit " + std::to_string(rc) +
          "): " + log.substr(0, 2000));
    return 3;
  }
  // A child process with a time limit: a hung kernel cannot hang the caller.
  std::string out;
  int rc = run("timeout -k 5 " + std::to_string(timeoutSeconds) + " " +
                   quote(exe),
               out);
  bool anyBad = false, any = false;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("verdict"))
      continue;
    any = true;
    anyBad |= j["verdict"] != "verified";
    std::cout << j.dump() << std::endl;
  }
  if (rc == 124 || rc == 137) {
    error("the harness ran past " + std::to_string(timeoutSeconds) + " s");
    return 3;
  }
  if (rc == 77) {
    error("no GPU: the harness needs one");
    return 3;
  }
  if (rc != 0 || !any) {
    error("the harness failed (exit " + std::to_string(rc) +
          "): " + out.substr(out.size() > 2000 ? out.size() - 2000 : 0));
    return 3;
  }
  return anyBad ? 1 : 0;
}

} // namespace kb::verify

//===- Compile.cpp - NVRTC compilation of candidates ----------------------===//

#include "Compile.h"
#include "CudaCompat.h"
#include "Headers.h"
#include "TorchCompat.h"

#include "kb/Verify/Checks.h"

#include <nvrtc.h>
#include <vector>

using namespace kb::verify;

CompileResult kb::verify::compileCandidate(const std::string &source,
                                           const std::string &entry,
                                           const std::string &arch) {
  CompileResult r;
  if (auto rej = staticCheck(source, entry)) {
    r.status = rej->status;
    r.log = rej->detail;
    return r;
  }
  // No include path: the allow-listed headers and what they include come
  // from memory (Headers.h), so nothing else of the host can be read.
  const InMemoryHeaders &headers = toolkitHeaders();
  std::vector<const char *> names, bodies;
  for (size_t i = 0; i < headers.names.size(); ++i) {
    names.push_back(headers.names[i].c_str());
    bodies.push_back(headers.bodies[i].c_str());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "candidate.cu",
                         static_cast<int>(names.size()), bodies.data(),
                         names.data()) != NVRTC_SUCCESS) {
    r.status = VerdictStatus::CompileError;
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  // The entry may be extern "C" or a C++ name; a name expression resolves
  // both to the symbol in the cubin.
  std::string nameExpr = "&" + entry;
  nvrtcAddNameExpression(prog, nameExpr.c_str());
  std::string archOpt = "--gpu-architecture=" + arch;
  std::vector<std::string> opts = {archOpt, "--std=c++17", "-default-device",
                                   "--no-source-include",
                                   compat::torchVersionDefine()};
  std::vector<const char *> argv;
  for (const std::string &o : opts)
    argv.push_back(o.c_str());
  nvrtcResult res = nvrtcCompileProgram(prog, argv.size(), argv.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  r.log = truncateMiddle(log, 2000);
  if (res != NVRTC_SUCCESS) {
    r.status = VerdictStatus::CompileError;
    if (r.log.empty())
      r.log = nvrtcGetErrorString(res);
    nvrtcDestroyProgram(&prog);
    return r;
  }
  const char *lowered = nullptr;
  if (nvrtcGetLoweredName(prog, nameExpr.c_str(), &lowered) != NVRTC_SUCCESS ||
      !lowered) {
    r.status = VerdictStatus::EntryPointMissing;
    r.log = "no __global__ function '" + entry + "' in the compiled program";
    nvrtcDestroyProgram(&prog);
    return r;
  }
  // The rules again on what NVRTC produced: inline PTX inside a string,
  // macros and token pasting hide from the source check.
  size_t ptxSize = 0;
  std::string ptx;
  if (nvrtcGetPTXSize(prog, &ptxSize) == NVRTC_SUCCESS && ptxSize) {
    ptx.assign(ptxSize, '\0');
    if (nvrtcGetPTX(prog, ptx.data()) != NVRTC_SUCCESS)
      ptx.clear();
  }
  std::optional<Rejection> rej =
      ptx.empty() ? std::optional<Rejection>(Rejection{
                        VerdictStatus::CompileError,
                        "NVRTC gave no PTX to check; the kernel is not used"})
                  : ptxCheck(ptx);
  if (rej) {
    r.status = rej->status;
    r.log = rej->detail;
    nvrtcDestroyProgram(&prog);
    return r;
  }
  r.loweredEntry = lowered;
  size_t cubinSize = 0;
  nvrtcGetCUBINSize(prog, &cubinSize);
  r.cubin.resize(cubinSize);
  nvrtcGetCUBIN(prog, r.cubin.data());
  nvrtcDestroyProgram(&prog);
  r.ok = true;
  return r;
}

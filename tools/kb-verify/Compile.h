//===- Compile.h - NVRTC compilation of candidates --------------*- C++ -*-===//
#ifndef KB_VERIFY_COMPILE_H
#define KB_VERIFY_COMPILE_H

#include "kb/Verify/Job.h"

#include <string>

namespace kb::verify {

struct CompileResult {
  bool ok = false;
  // On failure: CompileError | ForbiddenConstruct | EntryPointMissing.
  VerdictStatus status = VerdictStatus::Unknown;
  std::string log;    // truncated NVRTC log or the static-check reason
  std::string cubin;  // machine code for `arch`
  std::string loweredEntry;
};

/// Static checks, then NVRTC for `arch` ("sm_90"); needs no GPU.
CompileResult compileCandidate(const std::string &source,
                               const std::string &entry,
                               const std::string &arch);

} // namespace kb::verify

#endif

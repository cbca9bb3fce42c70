//===- Compile.h - NVRTC compilation of candidates --------------*- C++ -*-===//
#ifndef KB_VERIFY_COMPILE_H
#define KB_VERIFY_COMPILE_H

#include <string>

namespace kb::verify {

struct CompileResult {
  bool ok = false;
  std::string status; // on failure: compile_error | forbidden_construct |
                      // entry_point_missing
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

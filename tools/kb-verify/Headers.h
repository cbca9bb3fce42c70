//===- Headers.h - The toolkit headers NVRTC gets in memory ------*- C++
//-*-===//
//
// Candidates compile with no include path: the allow-listed headers and
// everything they include are read from the CUDA toolkit once, by kb-verify
// itself, and handed to NVRTC in memory. A directive that slipped past the
// source check (docs/security.md) then finds no file of the host.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_HEADERS_H
#define KB_VERIFY_HEADERS_H

#include <string>
#include <vector>

namespace kb::verify {

struct InMemoryHeaders {
  /// As the directives name them ("cuda_fp16.hpp", "cuda/std/cmath").
  std::vector<std::string> names;
  std::vector<std::string> bodies;
};

/// The closure of allowedHeaders() over their #include directives (every
/// branch of every conditional, so whatever NVRTC's macros select is
/// there), found under `roots` in order; a name found in none (a host C++
/// header behind a not-NVRTC branch) is left out.
InMemoryHeaders collectHeaders(const std::vector<std::string> &roots);

/// The whole file at `path` into `out`; false when it cannot be opened.
bool readFile(const std::string &path, std::string &out);

/// collectHeaders over the toolkit kb-verify was built with, read once.
const InMemoryHeaders &toolkitHeaders();

} // namespace kb::verify

#endif

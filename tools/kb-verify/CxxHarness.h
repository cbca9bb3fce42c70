//===- CxxHarness.h - kb-verify --cxx: the C++ rewrite's kernels -*- C++ -*-===//
//
// kb-rewrite's C++ kernels are host wrappers compiled into the user's
// program; kb-rewrite writes kb_verify_harness.cpp beside kb_kernels.cu, a
// differential test of every fused function against its own ATen fallback.
// kb-verify --cxx DIR compiles both with nvcc against the libtorch it was
// built with and runs the program in a child process with a time limit.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_CXXHARNESS_H
#define KB_VERIFY_CXXHARNESS_H

#include <string>

namespace kb::verify {

/// Prints one JSON line per fused function ({"function", "verdict", ...}),
/// or one {"error": ...} line. Exit code: 0 all verified, 1 any rejected or
/// unverified, 2 no harness in DIR, 3 it did not compile or run.
int verifyCxxDirectory(const std::string &dir, int timeoutSeconds);

} // namespace kb::verify

#endif // KB_VERIFY_CXXHARNESS_H

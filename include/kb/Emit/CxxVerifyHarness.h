//===- CxxVerifyHarness.h - Differential test of fused C++ chains -*- C++ -*-===//
//
// The C++ rewrite's kernels are host wrappers linked into the user's
// program, not NVRTC kernels, so kb-verify checks them through a generated
// program: for every fused function it runs the function's own ATen
// fallback (kb_rewrite::testing::forceReference) and its kernel on the same
// inputs, over every input rank, size and operand broadcast the original
// ops accept, with special values, and a non-contiguous input that must take
// the fallback. It prints one JSON line per function (kb-verify --cxx).
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_CXXVERIFYHARNESS_H
#define KB_EMIT_CXXVERIFYHARNESS_H

#include "kb/Emit/CxxRewrite.h"
#include "kb/Import/CxxChains.h"

#include <string>

namespace kb {

/// kb_verify_harness.cpp for `out` (compiled with kb_kernels.cu against
/// libtorch; needs a GPU to run).
std::string cxxVerifyHarness(const CxxAnalysis &analysis,
                             const CxxRewriteOutput &out);

} // namespace kb

#endif // KB_EMIT_CXXVERIFYHARNESS_H

//===- CxxRewrite.h - `kb-rewrite rewrite` over libtorch C++ -----*- C++
//-*-===//
//
// The C++ frontend's rewrite, as the graph rewrite's stages are in
// Stages.h: analyze the sources (Clang), generate the fused functions,
// verify them on a GPU (kb-verify --cxx) or replay a lock's verdicts, write
// the outputs. Inputs are never modified unless `inPlace`, and then only
// after every output was written to a temporary file beside its target
// (renames are atomic; a backup <file>.kb-orig is kept).
//
//===----------------------------------------------------------------------===//
#ifndef KB_DRIVER_CXXREWRITE_H
#define KB_DRIVER_CXXREWRITE_H

#include "kb/Driver/RewriteOptions.h"
#include "kb/Import/CxxFrontend.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kb::driver {

struct CxxRewriteOptions {
  CxxInputs inputs;
  std::string outDir; // "" with inPlace
  bool inPlace = false;
  /// A lock to replay ("" = none); with updateLock, the one to write
  /// ("" = kb.lock.json).
  std::string lockPath;
  bool updateLock = false;
  bool writeHarness = false; // also kb_verify_harness.cpp
  bool json = false;         // print one JSON object instead of the log
  VerifyMode verify = VerifyMode::Auto;
  std::string kbVerify; // path of kb-verify ("" = not found)
  /// --fast-math: approximate sigmoid, silu, mish and softmax division.
  bool fastMath = false;
  /// --quiet: no log (errors are the returned Error; --json still prints).
  bool quiet = false;
};

/// Rewrites `opts.inputs`, printing the log (or JSON) to `out`; failures are
/// DriverErrors (Failure.h).
llvm::Error rewriteCxxSources(const CxxRewriteOptions &opts,
                              llvm::raw_ostream &out);

} // namespace kb::driver

#endif // KB_DRIVER_CXXREWRITE_H

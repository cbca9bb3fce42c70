//===- CxxRewrite.h - Rewrite libtorch C++ chains into fused calls -*- C++
//-*-===//
//
// The rewriting half of issue 7: each rewritable chain found by the C++
// frontend becomes one call `kb_rewrite::kb_fused_<hash>(input, operands...)`
// declared in a generated kb_kernels.h and defined in kb_kernels.cu (a
// shape-generic CUDA kernel and a host wrapper whose guards fall back to the
// chain's original ATen ops, also whenever autograd needs gradients).
// Replacements go through clang::tooling::Replacements: overlapping edits are
// an error and then nothing is written.
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_CXXREWRITE_H
#define KB_EMIT_CXXREWRITE_H

#include "kb/Import/CxxChains.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kb {

/// What the lock file records for one generated function.
struct CxxLockEntry {
  std::string signature; // what the chain computes (the name's hash input)
  std::string hash;      // xxh3 of the kernel and wrapper source
  std::string chain, where;
  /// kb-verify --cxx's verdict (verified | rejected | unverified) and what
  /// it measured; "unverified" when nothing ran it.
  std::string verdict = "unverified";
  llvm::json::Object evidence;
};

struct CxxRewriteOutput {
  /// Rewritten text of every input that changed, by its path.
  std::map<std::string, std::string> files;
  std::string header, source; // kb_kernels.h, kb_kernels.cu
  /// Per chain (in analysis order): the fused function, or "" when left alone.
  std::vector<std::string> functions;
  unsigned rewritten = 0;
  std::map<std::string, CxxLockEntry> lock; // by function name
  /// The functions' declarations and definitions, each between
  /// "// kb-rewrite: begin/end NAME" lines (assembleCxxKernels).
  std::string decls, defs;
  bool usesModules = false; // the header includes torch::nn's classes
};

/// header and source from decls, defs and usesModules.
void assembleCxxKernels(CxxRewriteOutput &out);

/// Adds the functions of earlier kb_kernels.h/.cu (text of both) that this
/// run does not generate again, so that sources rewritten by earlier runs
/// into the same files still find theirs; returns how many.
unsigned keepEarlierKernels(CxxRewriteOutput &out, llvm::StringRef header,
                            llvm::StringRef source);

/// The name a plan's fused function gets: a hash of what it computes, so
/// identical chains share one kernel and names are stable across edits.
/// `approximate`: built with --fast-math and calling an approximate
/// helper (a function apart from the chain's exact one).
std::string cxxFusedName(const CxxRewritePlan &plan, bool approximate = false);

/// Builds the generated files and the rewritten sources. `includeFor` maps
/// a source path to the #include spelling of kb_kernels.h from it.
/// `fastMath`: kb-rewrite rewrite --fast-math (CxxKernel.h).
llvm::Expected<CxxRewriteOutput>
rewriteCxx(const CxxAnalysis &analysis,
           const std::map<std::string, std::string> &includeFor,
           bool fastMath = false);

/// kb.lock.json for C++ rewrites: function -> signature, source hash, origin
/// (the code generator), verdict and the toolchain that produced it.
std::string cxxLockJson(const CxxRewriteOutput &out);
/// The functions a lock file records as rejected by kb-verify: a replay
/// must not use them (their chains keep the original code).
std::set<std::string> lockedRejections(llvm::StringRef lockText);

/// Checks that every function of `out` is in the lock with the same source;
/// the error names each difference and says how to refresh the lock.
llvm::Error checkCxxLock(llvm::StringRef lockPath, llvm::StringRef lockText,
                         const CxxRewriteOutput &out);

/// `kb-rewrite rewrite --json` for C++ inputs: the chains, what was done with
/// each, and the files written.
std::string cxxRewriteJson(const CxxAnalysis &analysis,
                           const CxxRewriteOutput &out,
                           const std::vector<std::string> &written);

} // namespace kb

#endif // KB_EMIT_CXXREWRITE_H

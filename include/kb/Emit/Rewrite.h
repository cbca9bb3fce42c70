//===- Rewrite.h - `kb-rewrite rewrite` for TorchScript graphs --*- C++ -*-===//
//
// Writes a rewritten model directory (docs/rewrite.md): kernels and their
// kb-verify jobs, manifest.json, model_new.py with ModelNew, the runtime
// files, and report.{json,md,html}.
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_REWRITE_H
#define KB_EMIT_REWRITE_H

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Model/Search.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kb {

enum class VerifyMode { Auto, On, Off };

/// Asking the code model for kernels (docs/model.md).
struct ModelSearchOptions {
  bool enabled = false; // a server URL was given, or a transcript to replay
  model::ClientConfig client;
  model::StrategyOptions strategy;
  std::string transcript; // "" = <out>/transcript.jsonl
  std::string replay;     // a transcript to replay instead of a server
  std::string promptDir;
  std::string storeDir; // "" = KernelStore::defaultDir()
};

/// What the numerics policy asks of fused kernels (docs/correctness.md).
enum class Numerics {
  /// Sums, norms and softmax whose last bits could flip a step op, be
  /// magnified by a singular op or by a TF32 convolution keep ATen's ops
  /// unless their kernel is bit-identical to eager (the default).
  Exact,
  /// Everything fusable is fused (--numerics=relaxed): outputs may differ
  /// from eager past 1e-4 where such ops follow; reported as such.
  Relaxed
};

struct RewriteOptions {
  std::string graphPath, paramsPath, outDir;
  std::string modelSource; // the traced model.py ("" = params.json's source)
  VerifyMode verify = VerifyMode::Auto;
  std::string kbVerify; // path of kb-verify ("" = not found)
  std::string compileArchs = "sm_75,sm_90"; // checked when no GPU is present
  bool cudaGraphs = true;
  /// Fuse reductions/norms/softmax even where their result feeds a TF32
  /// convolution (see docs/rewrite.md, "Numerics").
  bool fuseBeforeTF32 = false;
  /// EmitOptions::fastMath for every generated kernel.
  bool fastMath = false;
  Numerics numerics = Numerics::Exact;
  bool quiet = false;
  ModelSearchOptions model;
};

/// What happened to one region (one row of the report).
struct RegionRecord {
  std::string name, kind, anchor, ops;
  /// verified | rejected | unverified | compile_error | not_generated |
  /// kept (ATen ops by policy) | slower (verified, not measurably faster
  /// than its ATen ops, which it then runs)
  std::string status;
  std::string origin = "codegen";
  std::string detail; // why (rejection, skip reason, "no GPU")
  std::optional<double> kernelMs, eagerMs, copyGBs;
  /// The channels-last variant (pointwise regions after a convolution):
  /// its status as above ("" = none) and time.
  std::string clStatus, clDetail;
  std::optional<double> clKernelMs;
  /// The library form that competes with anchor + kernel at run time
  /// ("" = none; LibraryEpilogue.h).
  std::string library;
  int64_t bytes = 0;    // bytes the fused kernel reads and writes
  int64_t elements = 0; // output elements
  unsigned numOps = 0;
  /// Its kernel uses --fast-math's approximate exp and division.
  bool approximate = false;
  /// Its kernel computes a layer norm in ATen's own order (EmittedKernel::
  /// atenOrder): used only where kb-verify finds every bit equal to eager's.
  bool atenOrder = false;
  /// Its reductions are maxima, minima or their indices
  /// (EmittedKernel::orderFree): likewise used before a step op only where
  /// kb-verify finds every bit equal to eager's.
  bool orderFree = false;
  llvm::json::Value verdict = nullptr;
  /// Model search: candidates tried, accepted, and why the choice.
  int modelCandidates = 0, modelAccepted = 0;
  std::string modelChoice;
};

/// An op the numerics policy left in ATen before region formation (a norm
/// before a TF32 convolution, a reduction before a step op).
struct KeptOp {
  std::string op, location, reason;
};

struct RewriteResult {
  std::vector<RegionRecord> regions;
  std::vector<KeptOp> keptOps;
  /// GEMMs --kb-unfuse-linear-bias runs without their bias (the add is in
  /// the epilogue's region); their `reason` is empty, the reports' section
  /// heading says why.
  std::vector<KeptOp> biasFreeGemms;
  bool gpu = false, modelNew = false;
  std::string modelNewNote; // why model_new.py was not written
};

/// `module` is the imported graph (before the pipeline). Progress lines go
/// to `log`. Errors name the file and what to do.
llvm::Expected<RewriteResult> rewriteGraph(mlir::ModuleOp module,
                                           const RewriteOptions &opts,
                                           llvm::raw_ostream &log);

/// report.json / report.md / report.html of a finished rewrite.
llvm::json::Value reportJson(const RewriteOptions &opts,
                             const RewriteResult &result);
std::string reportMarkdown(const RewriteOptions &opts,
                           const RewriteResult &result);
std::string reportHtml(const RewriteOptions &opts, const RewriteResult &result);

/// What the numerics policy weighs for one outlined kernel.
struct NumericsFacts {
  bool feedsConvolution = false; // its results reach a (TF32) convolution
  std::string stepDownstream;    // a step op its results reach ("" = none)
  std::string stepInside;        // a step op after an inexact op inside it
  std::string anyStep;           // any step op inside it
  // A singular op (sqrt, log, ...) reading a centring norm's result, inside
  // the kernel or downstream of it ("" = none).
  std::string singularInside, singularDownstream;
};
/// Per outlined kernel (kb_region_N), through any ops and other kernels
/// downstream; step ops are the KB_STEP_OP rows of OpSemantics.def.
std::map<std::string, NumericsFacts> numericsFacts(mlir::ModuleOp module);

/// Why a generated kernel keeps its region's ATen ops by the numerics policy
/// (docs/rewrite.md, "Numerics policy"), or nothing when it may be used.
std::optional<std::string> keptByNumericsPolicy(const EmittedKernel &k,
                                                const NumericsFacts &facts,
                                                bool fuseBeforeTF32);

/// keptByNumericsPolicy for `k` (emitted from `kernel` with `options`),
/// trying the region again in exact math, then with its layer norm or
/// softmax in ATen's own order: the first that passes replaces `k` and
/// `options`; the first kernel's reason when none does.
std::optional<std::string> kernelUnderNumericsPolicy(KernelOp kernel,
                                                     EmittedKernel &k,
                                                     EmitOptions &options,
                                                     const NumericsFacts &facts,
                                                     bool fuseBeforeTF32);

/// The runtime files copied into every rewritten model (name, contents).
const std::vector<std::pair<std::string, std::string>> &runtimeFiles();

} // namespace kb

#endif // KB_EMIT_REWRITE_H

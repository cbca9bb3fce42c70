//===- RewritePlan.h - What a graph rewrite writes --------------*- C++ -*-===//
//
// One RegionPlan per outlined region: its record (a row of the reports)
// and the kernels it runs (the manifest's entries). The driver's stages
// fill it in order (docs/architecture.md); lib/Emit only writes it out.
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_REWRITEPLAN_H
#define KB_EMIT_REWRITEPLAN_H

#include "kb/CodeGen/KernelEmitter.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace kb {

/// What happened to a region's kernel; the reports print statusName.
enum class RegionStatus {
  Verified,     // kb-verify accepted it
  Rejected,     // kb-verify rejected it: the ATen ops run
  Unverified,   // compiled or written, not checked (no GPU, no kb-verify)
  CompileError, // did not compile (no GPU: kb-verify --compile)
  NotGenerated, // the code generator cannot make it yet
  Kept,         // the numerics policy keeps the ATen ops
  Slower        // verified, not measurably faster than its ATen ops
};
/// verified | rejected | unverified | compile_error | not_generated | kept |
/// slower (report.json's "status").
llvm::StringRef statusName(RegionStatus status);
/// Whether a region in `status` runs its kernel (else its ATen ops).
inline bool runsKernel(RegionStatus status) {
  return status == RegionStatus::Verified || status == RegionStatus::Unverified;
}

/// Where a region's kernel came from; report.json's "origin".
enum class KernelOrigin { Codegen, Model, Store };
llvm::StringRef originName(KernelOrigin origin);

/// What happened to one region (one row of the report).
struct RegionRecord {
  std::string name, kind, anchor, ops;
  RegionStatus status = RegionStatus::NotGenerated;
  KernelOrigin origin = KernelOrigin::Codegen;
  std::string detail; // why (rejection, skip reason, "no GPU")
  std::optional<double> kernelMs, eagerMs, copyGBs;
  /// The channels-last variant's status (none: no variant) and time.
  std::optional<RegionStatus> clStatus;
  std::string clDetail;
  /// It holds a step or singular op: the runtime keeps a layout other than
  /// the traced one only where this region's inputs come out bit-identical
  /// (manifest "exact_layout"), since one flipped comparison is an error of
  /// a whole unit.
  bool exactLayout = false;
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
  /// kb-verify's verdict on the kernel, as it printed it, and what the
  /// driver decides by (parsed with verify::parseVerdict): the fastest
  /// timed runs of kernel and ATen ops, the output elements whose bits
  /// differ from eager's (-1: not measured), the GPU.
  llvm::json::Value verdict = nullptr;
  std::optional<double> kernelMinMs, eagerMinMs;
  int64_t eagerMismatches = -1;
  std::string gpu;
  /// Model search: candidates tried, accepted, and why the choice.
  int modelCandidates = 0, modelAccepted = 0;
  std::string modelChoice;
};

/// A kernel's channels-last form (a pointwise or pooling region after a
/// convolution, reading NHWC): the runtime times both layouts.
struct ChannelsLastKernel {
  EmittedKernel kernel;
  std::vector<int64_t> perm; // NCHW -> NHWC (rank 4) or NCDHW -> NDHWC
  std::vector<std::vector<int64_t>> permutedShapes; // per kernel input
  bool readsOnly = false;                           // only input 0 is permuted
};

/// One region from code generation to the files: replaces what were
/// parallel vectors of records, kernels and channels-last variants.
struct RegionPlan {
  RegionRecord record;
  /// The code generator's kernel (none: not generated).
  std::optional<EmittedKernel> kernel;
  /// The options it was emitted with (the numerics policy may have chosen
  /// exact math or ATen's order).
  EmitOptions emitOptions;
  std::optional<ChannelsLastKernel> channelsLast;
  /// A model's or the store's kernel that replaced the code generator's.
  std::string chosenSource;
};

/// An op the numerics policy left in ATen before region formation (a norm
/// before a TF32 convolution, a reduction before a step op).
struct KeptOp {
  std::string op, location, reason;
};

struct RewriteResult {
  /// The settings the reports state.
  std::string graphPath;
  bool fastMath = false, relaxed = false;
  std::vector<RegionPlan> regions;
  std::vector<KeptOp> keptOps;
  /// GEMMs --kb-unfuse-linear-bias runs without their bias (the add is in
  /// the epilogue's region); their `reason` is empty, the reports' section
  /// heading says why.
  std::vector<KeptOp> biasFreeGemms;
  bool gpu = false, modelNew = false;
  /// kb_program.py was written (whenever the graph program could be).
  bool program = false;
  std::string modelNewNote; // why model_new.py was not written
};

} // namespace kb

#endif // KB_EMIT_REWRITEPLAN_H

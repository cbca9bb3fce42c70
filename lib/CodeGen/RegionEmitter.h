//===- RegionEmitter.h - The C++ of a region's values ----------*- C++ -*-===//
//
// A region is a chain of stages: pointwise ops, then at most a few
// reductions or poolings, each followed by pointwise ops. The emitters build
// CUDA from one primitive, valueAt(v, idx): the C++ that computes SSA value
// `v` at linear index `idx` of its shape. Pointwise ops become expressions
// (from the CUDA column of OpSemantics.def), block arguments become loads
// with broadcast index math, and earlier reduction or pooling stages become
// device lambdas evaluated per element, so no intermediate tensor is stored.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_REGIONEMITTER_H
#define KB_LIB_CODEGEN_REGIONEMITTER_H

#include "Stages.h"
#include "ValueTypes.h"

#include "kb/CodeGen/IndexMath.h"
#include "kb/CodeGen/KernelEmitter.h"
#include "kb/CodeGen/OpExpression.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/RowLayout.h"
#include "kb/IR/KbDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kb::codegen {

/// The element a norm's row kernel writes (RowPlans.cpp), from its row's
/// double `mean` and `rstd` and the channel's `w` and `b` (empty: absent),
/// and a softmax's (or log_softmax's) from its row's max `m` and sum of
/// exponentials `acc`. A cross-row kernel's second phase evaluates the
/// first stage with the same expressions, so each element rounds alike.
/// With `fast` (--fast-math) the division is the prelude's kb::softmax_div,
/// approximate under KB_FAST_MATH; the exp is expf either way.
std::string normElement(llvm::StringRef x, llvm::StringRef mean,
                        llvm::StringRef rstd, llvm::StringRef w,
                        llvm::StringRef b);
/// `safe` (_safe_softmax): 0 where the row's maximum is -inf, i.e. every
/// element is -inf (the maximum propagates NaN, so a row with a NaN stays
/// NaN, as ATen's `all(x == -inf)` test leaves it).
std::string softmaxElement(llvm::StringRef x, llvm::StringRef m,
                           llvm::StringRef acc, bool log, bool fast = false,
                           bool safe = false);
/// Softmax's `ex` (exp(x - m)) over the row's sum `acc` (softmaxElement's
/// division, also of an exp held from the sum's pass), with `safe` 0 where
/// the row's maximum `m` is -inf.
std::string softmaxQuotient(llvm::StringRef ex, llvm::StringRef m,
                            llvm::StringRef acc, bool fast, bool safe);
/// Softmax's exp of `arg` (x - max), expf in both modes (Prelude.cpp says why).
std::string softmaxExp(llvm::StringRef arg);

class RegionEmitter : public ElementSource {
public:
  explicit RegionEmitter(KernelOp k);
  /// The probes' and defaults' settings of `options` (the fields below).
  void takeOptions(const EmitOptions &options);
  /// Every tensor of the region has fewer than 2^31 elements: index math in
  /// 32 bits.
  bool narrow = false;
  /// EmitOptions::fastMath: the prelude's approximate variants.
  bool fastMath = false;
  /// EmitOptions::splitChunks (0: the heuristic).
  int64_t splitChunks = 0;
  /// EmitOptions::splitBlock/splitPerSM/splitUnroll (0: the defaults).
  int splitBlock = 0, splitPerSM = 0, splitUnroll = 0;
  /// EmitOptions::splitQuad.
  bool splitQuad = false;
  /// EmitOptions::splitAhead.
  int splitAhead = 0;
  /// EmitOptions::splitFoldUnroll.
  int splitFoldUnroll = 0;
  /// EmitOptions::splitCombineOnceMin.
  int splitCombineOnceMin = 0;
  /// EmitOptions::splitFlat.
  bool splitFlat = true;
  /// EmitOptions::splitFlatOutputs.
  bool splitFlatOutputs = false;
  /// EmitOptions::splitSerialCombine.
  bool splitSerialCombine = false;
  /// EmitOptions::splitItemRegisters.
  bool splitItemRegisters = false;
  /// EmitOptions::splitRowVectors.
  bool splitRowVectors = true;
  /// EmitOptions::outputsPerThread (0: the default).
  int perOutputUnroll = 0;
  /// EmitOptions::pointwiseVectors (0: the default, one).
  int pointwiseVectors = 0;
  /// EmitOptions::rowBlock (0: the default).
  int rowBlock = 0;
  /// EmitOptions::registerRowMax (0: the default).
  int registerRowMax = 0;
  /// EmitOptions::threadRowMax (0: the default).
  int threadRowMax = 0;
  /// EmitOptions::divisionStats.
  bool divisionStats = false;
  /// EmitOptions::threadShortRows.
  bool threadShortRows = false;
  /// EmitOptions::laneShortRows.
  bool laneShortRows = false;
  /// EmitOptions::splitBarrierStore.
  bool splitBarrierStore = true;
  /// EmitOptions::stageTransposedStores.
  bool stageTransposedStores = true;
  /// EmitOptions::tileTransposes.
  bool tileTransposes = true;
  /// An output the row loops store into a shared-memory tile
  /// (TransposedStores.cpp): store() writes `stagedOutAt` for output
  /// `stagedOut` at the index named `stagedOutIdx`; -1: none.
  int stagedOut = -1;
  std::string stagedOutIdx, stagedOutAt;
  /// EmitOptions::sharedRowMax (0: the default).
  int sharedRowMax = 0;
  /// The region holds float16 / bfloat16 values (pointwise kernels only):
  /// valueAt loads them converted to float and rounds 16-bit op results.
  bool halfStorage = false;
  /// floatStorage(t), where a 16-bit storage counts only in such a region.
  std::optional<Storage> storageOf(mlir::Type t) const;
  /// How value `v` is stored: storageOf, float32 for the rest (masks and
  /// indices are never converted).
  Storage storedAs(mlir::Value v) const {
    return storageOf(v.getType()).value_or(Storage::F32);
  }
  /// EmitOptions::atenOrderNorms.
  bool atenOrderNorms = false;
  /// EmitOptions::groupUnroll (0: the default, one).
  int groupUnroll = 0;
  /// EmitOptions::vectorLanes (0: the default).
  int vectorLanes = 0;
  /// EmitOptions::momentsBatch (0: the default).
  int momentsBatch = 0;
  /// The region reads input 0 channels-last through a permute back to
  /// NCHW (a "reads" variant, ChannelsLast.h): kernels must then put
  /// neighbouring channels on neighbouring lanes, or refuse.
  bool channelsLastRead = false;
  /// Per yielded value: its traced strides (a permuted layout the trace
  /// recorded, which later ops and their kernels' guards expect), empty
  /// for row-major.
  std::vector<llvm::SmallVector<int64_t>> outputStrides;
  /// Output k at linear index `idx` of its shape, where its layout puts it.
  std::string outputAt(size_t k, llvm::StringRef idx) const;
  /// The statement storing the float `value` as element `idx` of output k,
  /// converted to the output's 16-bit storage where it has one (the value
  /// is rounded already where eager rounds it: the conversion is exact).
  std::string store(size_t k, llvm::StringRef idx, llvm::StringRef value) const;
  /// Statements storing four consecutive elements idx..idx+3 of output k
  /// from the array `a`: one float4 store, or four scalar ones for a
  /// strided or 16-bit output.
  std::string storeFour(size_t k, llvm::StringRef idx, llvm::StringRef a) const;
  /// That permute's result; its block argument is contiguous [N, ..., C].
  mlir::Value channelsLastView;
  /// Training batch norms whose per-channel mean and rstd (double arrays
  /// of these names), and softmax whose per-row max and sum (floats), a
  /// cross-row kernel's first phase stored: valueAt evaluates them per
  /// element from there (CrossRow.cpp).
  llvm::DenseMap<mlir::Operation *, std::pair<std::string, std::string>>
      normStats;
  /// The softmaxes and layer norms of normStats whose statistics are the
  /// current row's own (scalars a block or lane group computed for the row
  /// it holds, RowPlan::rowFirst), not arrays indexed by row.
  llvm::DenseSet<mlir::Operation *> rowStats;

  llvm::Error unsupported(const llvm::Twine &why) const override;
  bool narrowIndices() const override { return narrow; }
  /// The pooling whose input emitStagedRows stages as kb_stage from input
  /// index kb_stage_base.
  mlir::Operation *stagedPool = nullptr;
  std::pair<std::string, std::string>
  stagedPoolInput(mlir::Operation *op) const override {
    if (!op || op != stagedPool)
      return {};
    return {"kb_stage", "kb_stage_base"};
  }

  /// The C++ computing `v` at linear index `idx` (a variable name) of v's
  /// shape; lines it needs go to `os` at `indent`. Memoised per scope.
  llvm::Expected<std::string> valueAt(mlir::Value v, llvm::StringRef idx,
                                      llvm::raw_ostream &os,
                                      llvm::StringRef indent) override;
  /// Starts a new C++ scope for valueAt's memo (a loop body, a lambda).
  void newScope() override {
    memo.clear();
    coordinates.clear();
  }
  /// Block arguments passed to the code by value (pointwise kernels).
  llvm::DenseMap<mlir::Value, std::string> argNames;
  void seed(mlir::Value v, llvm::StringRef idx, llvm::StringRef name) {
    memo[{v.getAsOpaquePointer(), idx.str()}] = name.str();
  }
  /// Per-dim coordinates of linear index `idx` over `space` that the loop
  /// has in variables (coordinateOffset); broadcast operands of values of
  /// that shape at `idx` are then addressed from them. Cleared by newScope.
  void seedCoordinates(llvm::StringRef idx, llvm::ArrayRef<int64_t> space,
                       std::vector<std::string> coords) override {
    coordinates[idx.str()] = {std::vector<int64_t>(space.begin(), space.end()),
                              std::move(coords)};
  }

  /// In a cooperative kernel every thread of a block evaluates the same
  /// index; an earlier Reduce stage is then reduced by the whole block
  /// instead of serially by one thread (emitBlockStage).
  bool cooperative = false;
  AtenOp serialFinal; // the final stage: serial in every thread, uniformly
  /// The stage of `aten` where a cooperative kernel reduces it with the
  /// whole block: an earlier Reduce stage (emitBlockStage) or a pooling of
  /// large windows (emitBlockPoolStage); none otherwise.
  std::optional<StageInfo> blockStage(AtenOp aten);

  /// The region's ops as TorchScript IR text (what kb-verify runs with
  /// libtorch); `extraReturns` are block arguments an op updates in place.
  std::string referenceIR(YieldOp yield,
                          llvm::ArrayRef<unsigned> extraReturns = {});
  std::string provenance() const;
  /// Lambdas for earlier stages, defined at the top of the kernel after the
  /// preamble (shared memory they use).
  std::string preamble, stageDefs;
  mutable KernelOp kernel; // mlir op handles are non-const by design

protected:
  /// OpExpression.h's operandExpression and pointwiseExpression, their
  /// errors naming the kernel.
  llvm::Expected<std::string> render(AtenOp op, const ArgSpec &arg,
                                     mlir::Value v, const OperandNames &names);
  llvm::Expected<std::string> substitute(AtenOp op, const OperandNames &names);
  llvm::Expected<std::string> softmaxFromStatsAt(AtenOp op, llvm::StringRef idx,
                                                 llvm::raw_ostream &os,
                                                 llvm::StringRef indent);
  llvm::Expected<std::string> affineNormAt(AtenOp op, llvm::StringRef idx,
                                           llvm::raw_ostream &os,
                                           llvm::StringRef indent);
  using MemoKey = std::pair<const void *, std::string>;
  llvm::Expected<std::string> catAt(AtenOp op, llvm::StringRef idx,
                                    llvm::raw_ostream &os,
                                    llvm::StringRef indent, const MemoKey &key);
  std::string fresh(llvm::StringRef prefix) {
    return prefix.str() + std::to_string(tmp++);
  }
  /// Offset into a tensor of shape `in` broadcast to `space` of the
  /// element at `idx`: from the loop's coordinates of `idx` where it has
  /// them (seedCoordinates), else by divisions of `idx`.
  std::string operandOffset(llvm::ArrayRef<int64_t> in,
                            llvm::ArrayRef<int64_t> space, llvm::StringRef idx);

  std::map<MemoKey, std::string> memo;
  std::map<std::string,
           std::pair<std::vector<int64_t>, std::vector<std::string>>>
      coordinates;
  llvm::DenseMap<mlir::Operation *, std::string> stageFns;
  unsigned tmp = 0;
};

/// The kernel's source and tensor lists: inputs are the region's block
/// arguments, outputs its yielded values then `extraOutputs`.
llvm::Error assembleKernel(RegionEmitter &e, EmittedKernel &out, YieldOp yield,
                           llvm::StringRef comment, llvm::StringRef helpers,
                           llvm::StringRef body, int blockSize,
                           llvm::ArrayRef<EmittedTensor> extraOutputs = {},
                           llvm::ArrayRef<unsigned> updatedInputs = {});

/// Whether every reduction of the kernel gives the same bits in any order
/// (maxima, minima and their indices): with exact pointwise ops around them
/// the kernel's result is eager's.
bool reductionsOrderFree(KernelOp kernel);

/// Reductions over trailing dims, softmax over any dim, and the norms.
llvm::Expected<EmittedKernel> emitRowKernel(RegionEmitter &e,
                                            const StageInfo &f, YieldOp yield);

} // namespace kb::codegen

#endif

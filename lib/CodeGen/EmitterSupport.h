//===- EmitterSupport.h - Shared state of the region emitters ---*- C++ -*-===//
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
#ifndef KB_LIB_CODEGEN_EMITTERSUPPORT_H
#define KB_LIB_CODEGEN_EMITTERSUPPORT_H

#include "kb/CodeGen/IndexMath.h"
#include "kb/CodeGen/KernelEmitter.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/IR/KbDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kb::codegen {

std::string cString(llvm::StringRef s);
/// A static float32 tensor, row-major or with traced strides.
bool isF32Tensor(mlir::Type t);
/// How a float tensor is stored. Kernels compute in float (ATen's opmath
/// type for all three) and convert at loads and stores.
enum class Storage { F32, F16, BF16 };
/// The storage of a static float32, float16 or bfloat16 tensor (traced
/// strides allowed); none for anything else.
std::optional<Storage> floatStorage(mlir::Type t);
/// A static float16 or bfloat16 tensor.
bool isHalfTensor(mlir::Type t);
/// Whether any block argument, op result or output of `body` is one.
bool hasHalfValues(mlir::Block &body);
/// The kb-verify dtype name ("float32", "float16", "bfloat16").
const char *storageDtype(Storage s);
/// "f16" or "bf16": the suffix of the half prelude's helpers (kb::f_f16,
/// kb::ld4_bf16, ...) for a 16-bit storage.
const char *halfSuffix(Storage s);
/// `expr`, an element as stored, as a float; a float as stored; and a
/// float rounded to the storage type (eager stores each op's result).
std::string fromStorage(Storage s, llvm::StringRef expr);
std::string toStorage(Storage s, llvm::StringRef expr);
std::string roundToStorage(Storage s, llvm::StringRef expr);
/// A static bool tensor (a mask a region reads: `const bool*`, each element
/// read as 0.f or 1.f, never as float4s).
bool isBoolTensor(mlir::Type t);
/// The C type of a kernel argument's elements: "bool" or "float".
const char *argElementType(mlir::Value arg);
/// The traced strides of a value whose layout is not row-major (the
/// importer's encoding; a transposed view), empty for a row-major one.
/// Kernels read strided arguments through them and write strided outputs
/// through them (dense permutations only).
llvm::SmallVector<int64_t> tracedStrides(mlir::Value v);
/// A value without traced strides: float4 and raw-offset reads apply.
bool isContiguousArg(mlir::Value v);
/// A static int64 tensor (argmax / argmin results).
bool isI64Tensor(mlir::Type t);
/// The int64 index an argmax / argmin stage yields: the one non-float
/// value a region's kernel writes (nothing in the region reads it).
bool isArgIndex(mlir::Value v);
/// The C++ element type of a region value: long long for an index.
const char *valueCType(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

/// `text` with every `key` replaced by `value` (recipe templates' {x}).
std::string replaceAll(std::string text, llvm::StringRef key,
                       llvm::StringRef value);

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
std::string softmaxElement(llvm::StringRef x, llvm::StringRef m,
                           llvm::StringRef acc, bool log, bool fast = false);
/// Softmax's exp of `arg` (x - max), expf in both modes (Prelude.cpp says why).
std::string softmaxExp(llvm::StringRef arg);

/// What one reduction-like op computes, read from its operands and its row
/// of OpSemantics.def (the CUDA column names the recipe).
struct StageInfo {
  AtenOp op;
  std::string recipe; // sum, mean, amax, ..., max_pool, layer_norm
  mlir::Value input;  // the tensor reduced or pooled
  // The second tensor of a two-input reduction (cosine: {y} in the steps
  // of its ReduceProgram); null for the others.
  mlir::Value input2;
  double eps = 0; // cosine: the lower bound of each norm
  llvm::SmallVector<int64_t> inShape, outShape;
  llvm::SmallVector<int64_t> reduced; // reduced dims (Reduce, Softmax)
  double correction = 1;              // var / std
  double ord = 2;                     // pnorm: p, or +-inf
  // Pooling: the number of spatial (trailing) dims, then per spatial dim.
  int64_t spatial = 0;
  llvm::SmallVector<int64_t> kernel, stride, padding, dilation;
  bool countIncludePad = true;
  std::optional<int64_t> divisor;
  // A reduce recipe whose keepdim result the region's outputs broadcast
  // back over its rows (`x - x.mean(1, keepdim=True)`): the row kernel
  // writes every element of the input's shape, as a norm's does.
  bool rebroadcast = false;
  // Rows gathered from a larger input (KernelEmitter: an adaptive pooling
  // of equal windows that are not contiguous runs, or poolings of equal
  // windows folded into the reduction after them): inShape is then
  // [rows, row elements], `poolIn` the real input's shape, `window` the
  // window's extent per dim of it (1 where nothing is pooled) and
  // `rowDims` the dims (of the pooled shape) reduced whole; the row plan
  // maps (r, c) into the input (RowPlans.cpp, gatherIndex).
  llvm::SmallVector<int64_t> poolIn, window, rowDims;
  // A sum over averages of equal windows: the sum of the window elements
  // divided by the window size (0: none).
  int64_t sumDivisor = 0;
};

llvm::Expected<StageInfo> analyzeStage(KernelOp kernel, AtenOp op);

/// True for reductions whose per-element value the serial lambda computes
/// (Reduce and Pool recipes); softmax and norms are only final stages.
bool isSerialRecipe(llvm::StringRef recipe);
/// True for final stages that write one value per input element (softmax,
/// log_softmax and the norms); the other recipes write one per output row.
bool isPerElementRecipe(llvm::StringRef recipe);
/// argmax / argmin: one int64 index per row (the final stage only).
bool isArgRecipe(llvm::StringRef recipe);
/// The C++ type of a stage's result: long long for the arg recipes.
const char *resultType(const StageInfo &s);
/// Elements per row an arg recipe indexes exactly (kb::arg_key).
constexpr int64_t kArgMaxElements = int64_t(1) << 21;

struct ReducePass;

class RegionEmitter {
public:
  explicit RegionEmitter(KernelOp k);
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
  /// The softmaxes of normStats whose statistics are the current row's own
  /// (scalars a block computed for the row it holds, RowPlan::rowSoftmax),
  /// not arrays indexed by row.
  llvm::DenseSet<mlir::Operation *> rowStats;

  llvm::Error unsupported(const llvm::Twine &why) const;

  /// The C++ computing `v` at linear index `idx` (a variable name) of v's
  /// shape; lines it needs go to `os` at `indent`. Memoised per scope.
  llvm::Expected<std::string> valueAt(mlir::Value v, llvm::StringRef idx,
                                      llvm::raw_ostream &os,
                                      llvm::StringRef indent);
  /// Starts a new C++ scope for valueAt's memo (a loop body, a lambda).
  void newScope() {
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
                       std::vector<std::string> coords) {
    coordinates[idx.str()] = {std::vector<int64_t>(space.begin(), space.end()),
                              std::move(coords)};
  }

  /// The body of a serial evaluation of a Reduce or Pool stage at output
  /// index `o`, ending in `return <value>;`.
  llvm::Error emitSerialStage(const StageInfo &s, llvm::raw_ostream &os,
                              llvm::StringRef indent);
  /// A pass's step at input index `i`: {x} (and a two-input reduction's
  /// {y}) replaced by the inputs' values there, their loads emitted first.
  llvm::Expected<std::string> stepAt(const StageInfo &s, const ReducePass &pass,
                                     llvm::raw_ostream &os,
                                     llvm::StringRef indent);

  /// The region's ops as TorchScript IR text (what kb-verify runs with
  /// libtorch); `extraReturns` are block arguments an op updates in place.
  /// In a cooperative kernel every thread of a block evaluates the same
  /// index; an earlier Reduce stage is then reduced by the whole block
  /// instead of serially by one thread (emitBlockStage).
  bool cooperative = false;
  AtenOp serialFinal; // the final stage: serial in every thread, uniformly
  llvm::Error emitBlockStage(const StageInfo &s, llvm::StringRef idx,
                             llvm::StringRef result, llvm::raw_ostream &os,
                             llvm::StringRef indent);

  std::string referenceIR(YieldOp yield,
                          llvm::ArrayRef<unsigned> extraReturns = {});
  std::string provenance() const;
  /// Lambdas for earlier stages, defined at the top of the kernel after the
  /// preamble (shared memory they use).
  std::string preamble, stageDefs;
  mutable KernelOp kernel; // mlir op handles are non-const by design

protected:
  using OperandNames = llvm::DenseMap<mlir::Value, std::string>;
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

  std::map<MemoKey, std::string> memo;
  std::map<std::string,
           std::pair<std::vector<int64_t>, std::vector<std::string>>>
      coordinates;
  llvm::DenseMap<mlir::Operation *, std::string> stageFns;
  unsigned tmp = 0;
};

/// Per-recipe accumulation for Reduce stages, shared by the serial lambda and
/// the warp/block row kernels.
struct Accumulator {
  // combine: Sum | Max | Min | CSum | KeyMax (arg recipes' double keys)
  std::string name, type, init, combine;
};
struct ReducePass {
  llvm::SmallVector<Accumulator, 2> accs;
  std::string step;  // statement(s); {x} is the element value ({y} the
                     // element of StageInfo::input2)
  std::string after; // statements once the pass is combined
  // accs are an online softmax pair (running max, rescaled sum) combined
  // together with kb::online_merge (split rows with lanes; one thread per
  // row needs no combine).
  bool online = false;
  // An expression of {x} the step reads as {h}. Rows held in registers
  // keep its value per slot (hs[k]) for the output pass
  // (RowPlan::heldElement): softmax's exp(x - max) is computed once per
  // element instead of twice. Elsewhere {h} is the expression itself.
  std::string hold = {};
};
struct ReduceProgram {
  llvm::SmallVector<ReducePass, 2> passes;
  std::string result; // expression of the reduced value
};
ReduceProgram reduceProgram(const StageInfo &s, int64_t count);
/// A pass's step with {x} replaced by the element `x`, {c} by the
/// element's index within its row `c` (the arg recipes), and, for a
/// two-input reduction (StageInfo::input2), {y} by the second input's
/// element `y`.
std::string stepText(const StageInfo &s, const ReducePass &pass,
                     llvm::StringRef x, llvm::StringRef y,
                     llvm::StringRef c = "c");
/// The declaration of an accumulator (a CSum one has a compensation term
/// <name>c next to it).
std::string declareAcc(const Accumulator &a);
/// The statement combining an accumulator across a lane group of `lanes`
/// (<= 32), or across the block (lanes == 0); CSum needs `smemc[66]`,
/// others `smem[33]` / `smemd[33]`.
std::string combineAcc(const Accumulator &a, int64_t lanes);
/// The statements combining an online pass's pair (running max, rescaled
/// sum) across the block: the block's max, each thread's sum rescaled to
/// it, then the sum.
std::string combineOnlineBlock(const ReducePass &pass, llvm::StringRef indent);
/// The statements combining accumulator `a` over the `warps` warps of a
/// block lane by lane, in warp order, once every thread has stored its
/// value at buf[threadIdx.x] (a CSum's compensation at cbuf[threadIdx.x])
/// and the block has synchronised: each thread ends with its lane's
/// combined value.
/// `width`: lanes per warp (the split kernel's lanes over 4 rows group
/// fewer lanes into virtual warps where rows are few).
std::string combineWarpsInOrder(const Accumulator &a, llvm::StringRef buf,
                                llvm::StringRef cbuf, int64_t warps,
                                llvm::StringRef indent, int64_t width = 32);

/// The kernel's source and tensor lists: inputs are the region's block
/// arguments, outputs its yielded values then `extraOutputs`.
llvm::Error assembleKernel(RegionEmitter &e, EmittedKernel &out, YieldOp yield,
                           llvm::StringRef comment, llvm::StringRef helpers,
                           llvm::StringRef body, int blockSize,
                           llvm::ArrayRef<EmittedTensor> extraOutputs = {},
                           llvm::ArrayRef<unsigned> updatedInputs = {});

/// Lanes per row in warp mode (and per channel row in tile mode): about 8
/// elements per lane, a power of two (so xor shuffles stay inside the
/// group), at most 32. Each lane keeps its ceil(cols / lanes) <= 32
/// elements in registers.
int64_t lanesPerRow(int64_t cols);

/// Tile mode's slab pitch for C channels and rows of W: C floats padded to
/// C = R (mod 32), R = 32 / lanesPerRow(W) channel rows per warp. Lane
/// (g, l) of a warp reads element l + L j of row g, bank (l R + g + const)
/// mod 32: all 32 lanes in different banks.
int64_t tilePitch(int64_t C, int64_t W);

/// Reductions over trailing dims, softmax over any dim, and the norms.
llvm::Expected<EmittedKernel> emitRowKernel(RegionEmitter &e,
                                            const StageInfo &f, YieldOp yield);

} // namespace kb::codegen

#endif

//===- Stages.h - Reductions and poolings of a region -----------*- C++ -*-===//
//
// A stage is a reduction-like op of a region (a reduction, softmax, norm
// or pooling): what it computes (StageInfo, read from its operands the way
// ATen reads them), how a Reduce recipe accumulates (ReduceProgram), and the
// code that evaluates one of its outputs serially or across a block. The
// stage code reads its input's elements through an ElementSource (the
// region emitter), so this layer does not depend on the emitter that
// calls it.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_STAGES_H
#define KB_LIB_CODEGEN_STAGES_H

#include "ValueTypes.h"

#include "kb/IR/KbDialect.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace kb::codegen {

/// What one reduction-like op computes, read from its operands and its row
/// of OpSemantics.def (the CUDA column names the recipe).
struct StageInfo {
  AtenOp op;
  Recipe recipe = Recipe::None; // sum, mean, amax, ..., max_pool, layer_norm
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

/// The input dim each dim of a stage's output comes from: itself where the
/// ranks agree (poolings, keepdim reductions), else the dims not reduced;
/// each its own where the input was recast as rows.
llvm::SmallVector<int64_t> outputOrigins(const StageInfo &s);

/// Max, average and adaptive poolings.
bool isPoolRecipe(Recipe recipe);
/// Adaptive average and max poolings (windows from the output's size).
bool isAdaptivePoolRecipe(Recipe recipe);
/// True for reductions whose per-element value the serial lambda computes
/// (Reduce and Pool recipes); softmax and norms are only final stages.
bool isSerialRecipe(Recipe recipe);
/// True for final stages that write one value per input element (softmax,
/// log_softmax and the norms); the other recipes write one per output row.
bool isPerElementRecipe(Recipe recipe);
/// argmax / argmin: one int64 index per row (the final stage only).
bool isArgRecipe(Recipe recipe);
/// The C++ type of a stage's result: long long for the arg recipes.
const char *resultType(const StageInfo &s);
/// Elements per row an arg recipe indexes exactly (kb::arg_key).
constexpr int64_t kArgMaxElements = int64_t(1) << 21;

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

/// The int64 index an argmax / argmin stage yields: the one non-float
/// value a region's kernel writes (nothing in the region reads it).
bool isArgIndex(mlir::Value v);
/// The C++ element type of a region value: long long for an index.
const char *valueCType(mlir::Value v);

/// Per dim, the window of a pooling from `in` to `out` whose every dim is
/// a multiple of its output (adaptive pooling's windows are then equal;
/// 1 where the dim is kept); none where one is not.
std::optional<llvm::SmallVector<int64_t>>
equalWindows(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out);

// Poolings read as rows (PoolRows.cpp).

/// A final adaptive pooling of equal windows of at least 64 elements
/// becomes a reduction over rows of the window's elements (s.poolIn and
/// s.window gather them); no channels-last read.
void windowsAsRows(StageInfo &s, bool channelsLastRead);
/// A final sum or mean of average poolings (amax or amin of max poolings)
/// whose windows tile their input reads the poolings' input as its rows:
/// s.input becomes it, each row element a window's element.
void poolsIntoRows(KernelOp kernel, StageInfo &s, bool channelsLastRead);

/// What stage code needs of the region around it: the C++ computing a
/// value at a linear index (its loads written to `os`), scopes of that
/// memo, coordinates a loop already holds, and whether index math fits in
/// 32 bits.
class ElementSource {
public:
  virtual ~ElementSource() = default;
  virtual llvm::Expected<std::string> valueAt(mlir::Value v,
                                              llvm::StringRef idx,
                                              llvm::raw_ostream &os,
                                              llvm::StringRef indent) = 0;
  virtual void newScope() = 0;
  virtual void seedCoordinates(llvm::StringRef idx,
                               llvm::ArrayRef<int64_t> space,
                               std::vector<std::string> coords) = 0;
  virtual bool narrowIndices() const = 0;
  virtual llvm::Error unsupported(const llvm::Twine &why) const = 0;
  /// A pooling whose input the kernel staged in shared memory: the array
  /// and the input index of its first element (emitStagedRows), else "".
  virtual std::pair<std::string, std::string>
  stagedPoolInput(mlir::Operation *) const {
    return {};
  }
};

/// A pass's step at input index `i`: {x} (and a two-input reduction's {y})
/// replaced by the inputs' values there, their loads emitted first.
llvm::Expected<std::string> stepAt(ElementSource &e, const StageInfo &s,
                                   const ReducePass &pass,
                                   llvm::raw_ostream &os,
                                   llvm::StringRef indent);
/// The body of a serial evaluation of a Reduce or Pool stage at output
/// index `o`, ending in `return <value>;`.
llvm::Error emitSerialStage(ElementSource &e, const StageInfo &s,
                            llvm::raw_ostream &os, llvm::StringRef indent);
/// A Reduce stage at output index `idx` reduced by the whole block (every
/// thread evaluates the same index), its value assigned to `result`.
llvm::Error emitBlockStage(ElementSource &e, const StageInfo &s,
                           llvm::StringRef idx, llvm::StringRef result,
                           llvm::raw_ostream &os, llvm::StringRef indent);

/// Per spatial dim of pooling stage `s`, its widest window: adaptive
/// windows vary in size by one at most; fixed ones are the kernel.
llvm::SmallVector<int64_t> widestWindow(const StageInfo &s);
/// Emits the window of pooling stage `s` at the output coordinates
/// `<pre>p<d>`: `<pre>b<d>` and `<pre>e<d>` per spatial dim (adaptive
/// windows [floor(p*I/O), ceil((p+1)*I/O)), else ATen's windows clipped to
/// the input) and, with `poolSize`, an average's pool size counting padding
/// `<pre>n<d>`. Returns the expressions of the window's element count and
/// of that pool size.
std::pair<std::string, std::string>
emitWindowBounds(const StageInfo &s, llvm::StringRef pre, bool poolSize,
                 llvm::raw_ostream &os, llvm::StringRef indent);
/// Pooling windows of at least this many elements are reduced by a whole
/// block where a cooperative kernel evaluates them (emitBlockPoolStage),
/// not serially by one thread.
constexpr int64_t kBlockPoolWindowMin = 256;
/// The elements of pooling stage `s`'s widest window; 0 where the block
/// form does not apply (a dilated window).
int64_t poolWindowElements(const StageInfo &s);
/// Whether pooling stage `s` is reduced block-wide where a cooperative
/// kernel evaluates it: windows of kBlockPoolWindowMin elements or more,
/// and at most 65536 outputs (more fill the GPU one thread a window, and a
/// block per window would spend its barriers on each of them).
bool blockWidePool(const StageInfo &s);
/// A final pooling stage of windows too large for one thread each that no
/// row form took (windowsAsRows): a block per output reduces each window.
bool blockWideFinalPool(const StageInfo &s);
/// A pooling stage at output index `idx` reduced by the whole block (every
/// thread evaluates the same index): the window's elements split over the
/// threads and combined block-wide, its value assigned to `result`. An
/// average then sums in another order than ATen's serial window (not
/// exact); a maximum is the same (NaN wins either way).
llvm::Error emitBlockPoolStage(ElementSource &e, const StageInfo &s,
                               llvm::StringRef idx, llvm::StringRef result,
                               llvm::raw_ostream &os, llvm::StringRef indent);

} // namespace kb::codegen

#endif // KB_LIB_CODEGEN_STAGES_H

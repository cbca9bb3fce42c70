//===- RowPlan.h - One row-shaped final stage and its writers ---*- C++ -*-===//
//
// A row plan describes a reduction, softmax or norm as `rows` independent
// rows of `cols` elements (element (r, c) at an input index the plan gives)
// and the accumulation passes over each row. RowKernels.cpp picks a layout
// of threads over rows and emits the per-row kernels; SplitRows.cpp emits
// the split form, where one row is spread over many blocks.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_ROWPLAN_H
#define KB_LIB_CODEGEN_ROWPLAN_H

#include "RegionEmitter.h"

#include <functional>

namespace kb::codegen {

enum class RowMode {
  Thread,
  Warp,
  Block,
  Columns,
  Tile,
  Split,
  AtenOrder,
  AtenSoftmax,
  AtenSpatial,
  AtenStrided,
  AtenReduce
};

struct RowPlan {
  int64_t rows = 1, cols = 1;
  RowMode mode = RowMode::Block;
  std::function<std::string(llvm::StringRef r, llvm::StringRef c)> index;
  /// The input's shape and, for row r, the coordinate of each dim that
  /// is the same for every element of the row ("" for the others; null:
  /// none known). A broadcast operand constant along the row (a conv bias
  /// before a batch norm over its channels) is then read at the row's
  /// coordinates, loop-invariant, instead of through divisions of each
  /// element's index (seedRowCoordinates).
  std::vector<int64_t> space;
  std::function<std::vector<std::string>(llvm::StringRef r)> rowCoords;
  ReduceProgram prog;
  bool shiftFirst = false; // norms: k0 = the row's first element
  std::function<llvm::Expected<std::string>(llvm::StringRef x,
                                            llvm::raw_ostream &os,
                                            llvm::StringRef indent)>
      element; // null: one output per row
  std::string leaderExtra;
  std::string what;
  // Tile mode: the input is [N, C, M..., W] read channels-last; rows are
  // (n, c, m) and each block stages the [W, C] slab of one (n, m).
  int64_t tileN = 0, tileC = 0, tileM = 0, tileW = 0;
  // Columns mode: rows are (n, c, m) of an [N, C, M..., W...] input read
  // channels-last; lanes take neighbouring channels (row (n, c, m) is
  // enumerated as ((n * M + m) * C + c)), so a warp load reads 32
  // neighbouring floats. colM = 1: rows (n, c), already channel-fastest.
  int64_t colC = 0, colM = 1;
  // Split mode: rows per block item (1: the block walks one row; 32: lane
  // l takes row r0 + l and the warps split the elements, for rows whose
  // elements are strided by the row count) and chunks per row.
  int64_t splitRows = 1, chunks = 1;
  // AtenSpatial: the threads along the dim (ATen's blockDim.x) and the
  // rows a block takes (its blockDim.y: the inner size, at most 64).
  int64_t spatialThreads = 0, spatialInner = 0;
  /// Split mode's threads per block, resident blocks per SM and unrolling
  /// (0: the layout's measured default, SplitRows.cpp); set only by probes.
  int splitBlock = 0, splitPerSM = 0, splitUnroll = 0;
  /// Lanes over 4 rows: float4s loaded ahead of their use per trip
  /// (EmitOptions::splitAhead; 0 or 1: as the loop comes).
  int splitAhead = 0;
  /// Lanes over 4 rows: the chunks' partials a thread of the finalize or
  /// of an item's combine folds per unrolled trip (EmitOptions::
  /// splitFoldUnroll; 0: one trip at a time, `live` in the loop's test).
  int splitFoldUnroll = 0;
  /// Lanes over rows: the chunks from which each row's partials are
  /// combined once (a finalize phase and a second barrier) rather than by
  /// every item (EmitOptions::splitCombineOnceMin; 0: 64).
  int splitCombineOnceMin = 0;
  /// Lanes over 4 rows: the item's block combines one row and accumulator
  /// at a time (EmitOptions::splitSerialCombine), not batched.
  bool splitSerialCombine = false;
  /// Lanes over rows in whole items: elements held in registers across the
  /// passes (EmitOptions::splitItemRegisters).
  bool splitItemRegisters = false;
  /// Lanes over 4 rows: the rows' k0 and finalized statistics read as one
  /// vector a lane (EmitOptions::splitRowVectors).
  bool splitRowVectors = false;
  /// Block mode's threads per block for rows not held in registers (0: the
  /// default, rowBlockSize); set only by probes.
  int rowBlock = 0;
  /// Block mode's longest rows held in registers (0: registerRowDefault;
  /// rowBlock threads hold them when set); set only by probes.
  int registerRowMax = 0;
  /// The plan's own limit for rows held in registers (0: 2048;
  /// kLayerNormRegisterRowMax for layer norms of a kernel argument).
  int64_t registerRowDefault = 0;
  /// Thread mode's longest rows held in registers (0: threadRowDefault,
  /// else kThreadRegisterRowMax); set only by probes.
  int threadRowMax = 0;
  /// The plan's own limit for them (0: kThreadRegisterRowMax;
  /// kThreadLogsumexpRowMax for a logsumexp over strided rows).
  int64_t threadRowDefault = 0;
  /// Block mode's longest rows staged in shared memory when too long for
  /// registers (0: none; layer norms by default, probes set any).
  int sharedRowMax = 0;
  /// Strided rows: how many consecutive rows sit next to each other in
  /// memory (the kept inner size; C for BatchNorm1d), 0 if unknown.
  int64_t rowRun = 0;
  /// Lanes over rows, 4 each (norms and softmax over 128 rows or more;
  /// anywhere it applies with `kb-rewrite codegen --split-quad`): lane l of
  /// an item of 128 rows owns rows 4l..4l+3 and reads them as one float4 per
  /// element, so a warp load reads 512 contiguous bytes.
  bool quad = false;
  /// Lanes over at most 32 rows that are one run (the input [cols,
  /// rows], contiguous), one pass and one output per row (any passes and
  /// outputs with `--split-flat-outputs`): each item's elements read as
  /// flat float4s, a thread's 4 accumulators on rows (4t + j) mod rows
  /// (SplitFlat.cpp); by default since session 58 (`kb-rewrite codegen
  /// --split-lane-rows`, a probe, keeps the lanes).
  bool flat = false;
  // Elements (r, 4k..4k+3) are four consecutive, 16-byte aligned floats of
  // the input, which is a kernel argument: loops over one row may read it
  // as float4.
  bool vec4 = false;
  /// Split items of one row whose input is computed by a pointwise
  /// prologue (a loss's `|x - y|`, a chain ending in a mean): the kernel
  /// arguments of the input's shape the prologue reads, each loaded as an
  /// aligned float4 (the rows are runs of a multiple of 4), the prologue
  /// evaluated per element of the four. Empty where vec4 applies or the
  /// prologue holds anything but pointwise ops.
  llvm::SmallVector<unsigned, 4> vecArgs;
  /// Warp mode, rows of at most kStagedSoftmaxRowMax contiguous scalars: each
  /// block's 256 rows are one contiguous tile, computed into shared memory
  /// by coalesced loads (the pointwise prologue evaluated once per
  /// element), then one thread a row; per-element outputs go back through
  /// the tile to coalesced stores.
  bool stagedTile = false;
  /// Softmax: the output from a register slot's held exp(x - max)
  /// (ReducePass::hold), where the rows are held in registers.
  std::function<std::string(llvm::StringRef held)> heldElement;
  /// Warp mode: row groups a warp takes per unrolled trip (the grid divided
  /// as much); 1 unless a probe sets it.
  int groupUnroll = 1;
  /// Warp mode with float4 loads: lanes per row (0: rowLanes' default, one
  /// float4 a lane up to 32, up to four over many rows of 61-256); set only
  /// by probes.
  int vectorLanes = 0;
  /// AtenOrder's RowwiseMoments block: elements a thread loads before
  /// folding them, and outputs it computes before storing (AtenRows.cpp).
  int momentsBatch = 1;
  /// Split mode: bytes of the workspace before this plan's partials (a
  /// cross-row kernel's statistics phase holds them; CrossRow.cpp).
  int64_t wsBase = 0;
  /// One "output" per row that is no output: the row's leader runs
  /// leaderExtra alone (a cross-row kernel's statistics phase stores the
  /// row's statistics to the workspace there).
  bool statsOnly = false;
  /// Block modes and Warp register rows: a softmax earlier in the region
  /// over these same rows (contiguous runs of `cols`), or in Warp register
  /// rows a layer norm over them: the block or lane group holding a row
  /// computes the row's max and sum of exponentials (the norm's mean and
  /// rstd) itself before the passes, instead of a cross-row kernel's first
  /// phase and grid barrier (CrossRow.cpp).
  AtenOp rowFirst;
};

/// Writes a row plan's outputs: one value per row, or one per element.
class RowWriter {
public:
  RowWriter(RegionEmitter &e, const StageInfo &f, YieldOp y)
      : e(e), f(f), yield(y) {}

protected:
  /// The row's leader (the block opened by `leader`) writes the reduction's
  /// result and the recipe's extra outputs.
  llvm::Error writeRowResult(const RowPlan &p, llvm::StringRef leader,
                             llvm::raw_ostream &os);
  /// Per-element outputs at index `i`, the input's element being `x`. With
  /// `toSlots`, output k's value goes to slot j of `ov<k>` (the caller
  /// stores the slots as a float4) instead of out<k>[i].
  /// `held`: the register slot holding the plan's held value for this
  /// element (RowPlan::heldElement), if any.
  llvm::Error writeElement(const RowPlan &p, llvm::StringRef x,
                           llvm::raw_ostream &os, llvm::StringRef indent,
                           bool toSlots = false, llvm::StringRef held = "");
  llvm::Error writeOutputs(llvm::StringRef idx, llvm::raw_ostream &os,
                           llvm::StringRef indent, bool toSlots = false);
  /// The output pass re-reading row r: `head` opens the loop over its
  /// elements c (four-space indent), each element's value and outputs
  /// (with `toSlots`, into slot j of `ov<k>`, as writeElement).
  llvm::Error writeElementPass(const RowPlan &p, llvm::StringRef head,
                               llvm::raw_ostream &os, bool toSlots = false);
  /// A pass over row r's elements: `head` opens the loop over c (four-space
  /// indent), `step` is the statement(s) for each, {x} its value.
  llvm::Error writeStepPass(const RowPlan &p, llvm::StringRef head,
                            llvm::StringRef step, llvm::raw_ostream &os);
  /// `lhs = ` the shift k0 of row r's statistics (its first element, 0 if
  /// that is not finite).
  llvm::Error writeShift(const RowPlan &p, llvm::StringRef lhs,
                         llvm::raw_ostream &os, llvm::StringRef indent);
  /// `ib` and `float xv[4]`: the input's elements cb..cb+3 of row r, read
  /// as one float4 where the input is an argument (or each argument its
  /// pointwise prologue reads, RowPlan::vecArgs), the prologue evaluated
  /// per element (AtenRows.cpp).
  llvm::Error loadFour(const RowPlan &p, llvm::raw_ostream &os);

  RegionEmitter &e;
  const StageInfo &f;
  YieldOp yield;
};

/// The shared scratch of the block-wide combines (kb::block_reduce,
/// kb::block_csum) a program's accumulators use.
std::string blockScratch(const ReduceProgram &prog);

// Element indices and row coordinates (RowIndex.cpp).

/// Seeds `e` with the coordinates row `r` fixes of the element at `idx`
/// (RowPlan::rowCoords); call after the loop body's newScope.
void seedRowCoordinates(ElementSource &e, const RowPlan &p, llvm::StringRef r,
                        llvm::StringRef idx = "i");
/// Row r's coordinates when rows enumerate the dims `kept` of `shape`
/// row-major (the rows of a reduction over the other dims).
std::function<std::vector<std::string>(llvm::StringRef)>
keptCoordinates(llvm::ArrayRef<int64_t> shape, std::vector<int64_t> kept);
/// The dims of a rank-`rank` tensor outside [first, last].
std::vector<int64_t> outsideRun(int64_t rank, int64_t first, int64_t last);
/// The index of element (r, c) when the input is [outer, cols, inner] and
/// rows run over the middle dim.
std::function<std::string(llvm::StringRef, llvm::StringRef)>
overMiddleDim(int64_t cols, int64_t inner);
/// The input index of element c of gathered row r (StageInfo::poolIn),
/// for windows `window` over `in` whose dims `rowDims` a row takes whole.
std::function<std::string(llvm::StringRef, llvm::StringRef)>
gatherIndex(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> window,
            llvm::ArrayRef<int64_t> rowDims);

/// Threads per block of a plan's kernel; columns mode's warps per block;
/// tile mode's shared slab (floats) for C channels and rows of W.
int rowBlockSize(const RowPlan &p);
/// Whether rows of `cols` floats, read by blocks of `blockThreads` resident
/// on every SM at once (132 SMs x ~1536 threads), fit in half the H200's L2,
/// so that a pass re-reading its row finds it there.
bool rowsFitL2(int64_t cols, int64_t blockThreads);
/// Warp mode's lanes per row: lanesPerRow(cols) for scalar loads; with
/// float4 loads, enough lanes for one float4 each (up to 32), so a warp's
/// load reads consecutive bytes even for rows of 8.
int64_t rowLanes(const RowPlan &p);
/// Block mode: the elements each thread keeps in registers (the row read
/// from memory once), or 0 where the row is too long and every pass
/// re-reads it.
int64_t blockRegisterSlots(const RowPlan &p);
/// Thread mode: whether the thread holds its row in registers (rows of at
/// most kThreadRegisterRowMax elements read more than once).
bool threadRegisterRow(const RowPlan &p);
/// Measured on the H200 (codegen_knobs.py, session 32; ms at most 16 /
/// 64 / 128): softmax over 1.13M strided rows of 55 0.376 / 0.169 / 0.169
/// (the passes re-read the rows from DRAM: 224 B a thread outgrow L1),
/// log_softmax over rows of 33 0.028 / 0.021 / 0.021, logsumexp over rows
/// of 24 0.041 / 0.035 / 0.035, softmax over rows of 100 0.113 / 0.114 /
/// 0.108.
constexpr int64_t kThreadRegisterRowMax = 128;
/// A logsumexp over strided rows longer than this takes one online pass
/// (kb::online_add) instead of holding the row: it reads the row once
/// either way, and 128 registers a thread cost occupancy. Measured on the
/// H100 (codegen_knobs.py, run119; registers / online): rows of 128 0.244
/// / 0.208 ms ([35119, 128, 32] over dim 1) and 0.224 / 0.190 ([8000,
/// 128, 128]), rows of 100 0.100 / 0.108; run124: rows of 112 0.072 /
/// 0.083 ([12000, 112, 32]), of 120 0.092 / 0.088 ([12000, 120, 32]).
constexpr int64_t kThreadLogsumexpRowMax = 112;
/// Thread-mode register rows launched with two blocks an SM as their bound
/// (RowDispatch.cpp).
constexpr int64_t kThreadRowBoundMin = 32;
constexpr int64_t kThreadRowBoundMax = 96;
/// Block mode: whether the block stages its row in shared memory (rows
/// too long for registers, read more than once, at most sharedRowMax and
/// kSharedRowMax elements).
bool blockSharedRow(const RowPlan &p);
/// The longest row a block can stage in its 48 KB of static shared memory
/// beside the combines' scratch.
constexpr int64_t kSharedRowMax = 11776;
/// Layer norms' longest rows a block of 256 holds in registers (RowPlans.cpp).
constexpr int64_t kLayerNormRegisterRowMax = 3584;
/// Softmax rows staged as a block's tile (RowPlan::stagedTile), at most
/// kStagedSoftmaxRowMax (kb/Transforms/OpUtils.h: region formation reads
/// it too). Measured
/// on the H200 (bench/probes/short_rows.cu, session 36; softmax over 352
/// MB, ms): rows of 14 0.473 by lane groups from global memory, 0.214
/// staged one thread a row (a copy 0.188); rows of 10 0.415 / 0.245; 7
/// 0.361 / 0.258; 5 0.306 / 0.291. In the code generator
/// (codegen_knobs.py, `--lane-short-rows` the old form): softmax over 14
/// 0.467 -> 0.228, over 5 after a scale 0.291 -> 0.239, log_softmax over 7
/// 0.237 -> 0.227; a layer norm over 10 0.033 -> 0.040 and over 14 0.065 ->
/// 0.083 and a sum over 14 (one thread per output) 0.102 -> 0.107 lost, so
/// only softmax and log_softmax stage.
/// Static shared memory a staged-rows kernel may spend on its tiles and a
/// pooling's staged input planes (of the 48 KB a block may declare).
constexpr int64_t kStagedPoolBytes = 47 * 1024;
/// Fewer rows keep lane groups: one thread a row would leave fewer than
/// four blocks of 256 per SM (and such inputs stay in the L2).
constexpr int64_t kStagedMinRows = 132 * 4 * 256;
/// Static shared memory of a lane-group row kernel's tile of a transposed
/// output (TransposedStores.cpp): the block's rows of it, at an odd pitch.
constexpr int64_t kStagedTransposedBytes = 40 * 1024;

/// Lane-group rows (L lanes a row) with a per-element output stored
/// transposed (consecutive rows adjacent, a row's elements at least 8
/// floats apart), staged through shared memory
/// (EmitOptions::stageTransposedStores): the output's index, else -1.
int transposedOutput(const RegionEmitter &e, const RowPlan &p, YieldOp yield,
                     int64_t L);
/// The row loop for such a kernel (the rows per thread of openGroupRows,
/// each trip uniform over the block); RegionEmitter::store then writes
/// output k at the loops' `i` into the tile.
void openTransposedStoreRows(RegionEmitter &e, const RowPlan &p, int64_t L,
                             int k, llvm::raw_ostream &os);
/// The end of each trip: the tile stored, consecutive threads on
/// consecutive rows of one column (the staging left as it was).
std::string transposedStoreFlush(RegionEmitter &e, const RowPlan &p, int64_t L,
                                 int k);
int64_t columnWarps(int64_t cols);
int64_t tileFloats(int64_t C, int64_t W);

/// Plans `f` as rows into `p` (RowPlans.cpp): the recipe's extra outputs
/// (a batch norm's running statistics) are appended to out.outputs and
/// the inputs they update to `updated`. With `forceSplit` the rows become
/// split items whatever their count (a statistics phase shares its grid of
/// resident blocks with the phase after it).
llvm::Error planRows(RegionEmitter &e, const StageInfo &f, YieldOp yield,
                     RowPlan &p, EmittedKernel &out,
                     llvm::SmallVectorImpl<unsigned> &updated,
                     bool forceSplit = false);

/// A cross-row kernel's first phase (CrossRow.cpp): the statistics of a
/// training batch norm whose result reaches the final stage, a reduction
/// over other rows. It computes them alone (one read of its input), stores
/// each channel's mean and rstd in the workspace, updates the running
/// statistics, and ends in a grid barrier; the final stage then evaluates
/// the norm per element from them (RegionEmitter::normStats).
struct CrossRowStats {
  StageInfo stage;
  RowPlan plan;
  std::string comment;
  // The two per-row statistics the element expression reads (mean, rstd
  // doubles of a batch norm; m, acc floats of a softmax) and their type.
  std::string first, second, type;
  int64_t firstOffset = 0, secondOffset = 0; // their [R] arrays in ws
  int64_t workspaceBytes = 0; // the phase's partials and the statistics
  int blocksPerSM = 1;        // of the kernel, the final stage's shape
};
/// The training batch norm or softmax whose statistics a cross-row kernel
/// computes first, or the layer norm whose statistics the final stage's
/// lane groups take from their held rows (kb::sameRowFirstRow), if
/// `final`'s input reaches one through pointwise ops.
AtenOp crossRowNorm(AtenOp final);
llvm::Expected<CrossRowStats>
planCrossRowStats(RegionEmitter &e, AtenOp norm, YieldOp yield,
                  EmittedKernel &out, llvm::SmallVectorImpl<unsigned> &updated);
/// Resident blocks per SM of a cross-row kernel whose final stage is `p`.
int crossRowBlocksPerSM(const RowPlan &p);
/// The statistics phase in the final stage's block shape (`block` threads,
/// s.blocksPerSM resident), in its own scope, then the grid barrier.
llvm::Error emitCrossRowStats(RegionEmitter &e, CrossRowStats &s, YieldOp yield,
                              int block, llvm::raw_ostream &os);
/// The longest row the final stage of a cross-row kernel stages in shared
/// memory, given the one it would stage alone.
int crossRowSharedRowMax(int sharedRowMax);
/// Whether softmax `pre` (crossRowNorm's) runs over exactly the rows of
/// final stage `f`'s plan: contiguous runs of its cols in a Block mode or
/// Warp register rows, or the same elements of rows a thread owns (Thread
/// mode); a layer norm `pre` only over Warp register rows (its statistics
/// come from the held row, RowKernels.cpp). Its statistics are then the
/// row's own (RowPlan::rowFirst).
bool sameRowFirst(RegionEmitter &e, AtenOp pre, const StageInfo &f,
                  const RowPlan &final, bool rowMajorIndex);
/// In a row loop (row `r`: a block's, with `lanes` > 1 a group's of that
/// many lanes, `lane` and `live` in scope, or with 1 a thread's, in one
/// online pass), the row's max and sum of
/// exponentials of p.rowFirst, as the first phase's split kernel computes
/// them, into scalars valueAt then reads (RegionEmitter::rowStats).
llvm::Error emitRowFirstStats(RegionEmitter &e, const RowPlan &p, int64_t lanes,
                              llvm::raw_ostream &os);
/// A norm's statistics over rows of `cols` from the double moments sx and
/// sq of x - k0 (each name after `prefix`): the statements defining mean
/// and rstd (the layer, group, instance and batch norm programs, and a
/// held layer norm's, rowNormStats: the same rounding).
std::string normMoments(int64_t cols, double eps, bool divisionStats,
                        llvm::StringRef prefix);
/// Layer norm `ln`'s mean and rstd over rows of `cols` from the double
/// moments kbs_sx and kbs_sq of x - kbs_k0 in scope, as RowPlans.cpp's
/// layer norm program computes them (--division-stats included), so its
/// elements round as in the norm's own kernel: kbs_mean and kbs_rstd,
/// the row's own statistics for valueAt (RegionEmitter::rowStats).
llvm::Error rowNormStats(RegionEmitter &e, AtenOp ln, int64_t cols,
                         llvm::raw_ostream &os);

/// The kernel body of a plan in any mode but Split (RowKernels.cpp), or
/// Split (emitSplitRows).
llvm::Error emitRowPlan(RegionEmitter &e, const StageInfo &f, YieldOp yield,
                        const RowPlan &p, llvm::raw_ostream &os);

/// Split mode: rows * chunks work items spread over a grid of resident
/// blocks, each pass accumulated per item into the workspace, a grid
/// barrier, and the outputs written once every row's partials are combined.
llvm::Error emitSplitRows(RegionEmitter &e, const StageInfo &f, YieldOp yield,
                          const RowPlan &p, llvm::raw_ostream &os);

/// AtenOrder mode: a layer norm whose statistics and output round as
/// ATen's vectorized kernel's do (AtenRows.cpp).
llvm::Error emitAtenOrderRows(RegionEmitter &e, const StageInfo &f,
                              YieldOp yield, const RowPlan &p,
                              llvm::raw_ostream &os);
/// AtenOrder mode: lanes per row (128: ATen's block; 32: its four warps
/// played by one; fewer: its warp 0 alone, for rows of at most 32 float4s;
/// 512: its RowwiseMoments block, rows not a multiple of 4 longer than
/// kAtenMomentsWarpMax) and rows per block for rows of `cols` elements.
int64_t atenLanes(int64_t cols);
int64_t atenRowsPerBlock(int64_t cols);
/// AtenOrder mode: the longest rows held in registers (8 float4s a
/// thread); longer rows are re-read for the output, as ATen's kernel does.
constexpr int64_t kAtenHeldMax = 4096;
/// Rows not a multiple of 4 up to this length: one warp plays ATen's 512
/// RowwiseMoments threads; longer rows get ATen's block of 512.
constexpr int64_t kAtenMomentsWarpMax = 8192;
/// Elements a thread of that block of 512 loads before folding them in
/// order, and outputs it computes before storing: with one row a block and
/// fewer rows than SMs, only the loads in flight in each thread hide the
/// memory's latency (Welford's division branches, so nvcc does not hoist
/// the next elements' loads above the fold by itself). Measured on the H200
/// (bench/NOTES.md, session 26; kb-verify, 0 bits from eager in every
/// variant): 92 rows of 65535 0.098 ms one at a time, 0.070 with 8, 0.060
/// with 16; gen-20261209 task 5's two regions 0.201 / 0.124 -> 0.168 /
/// 0.090 with 16 (8: 0.169 / 0.093).
constexpr int kMomentsBatch = 16;

/// AtenSoftmax mode: a softmax or log_softmax over the last dim (at most
/// 1024 elements) whose output rounds as ATen's persistent warp softmax's
/// (AtenSoftmax.cpp), and its lanes per row: min(next power of two, 32).
llvm::Error emitAtenSoftmaxRows(RegionEmitter &e, const StageInfo &f,
                                YieldOp yield, const RowPlan &p,
                                llvm::raw_ostream &os);
int64_t atenSoftmaxLanes(int64_t cols);
/// AtenSoftmax mode: rows a lane group takes per trip unless --group-unroll
/// says otherwise, so that each lane has about 8 loads in flight (ATen's
/// WARP_BATCH is 2 for rows of at most 128).
int64_t atenSoftmaxBatch(int64_t cols);
/// AtenSpatial mode: a softmax or log_softmax over a dim of `cols`
/// elements strided by an inner size of at most 64, computed as ATen's
/// cunn_SpatialSoftMaxForward does with more than one thread along the
/// dim (AtenSoftmax.cpp), and those threads (SpatialSoftMax_getBlockSize).
llvm::Error emitAtenSpatialRows(RegionEmitter &e, const StageInfo &f,
                                YieldOp yield, const RowPlan &p,
                                llvm::raw_ostream &os);
int64_t atenSpatialThreads(int64_t cols, int64_t inner);
/// AtenStrided mode: ATen's spatial softmax with one thread per strided
/// row (atenSpatialThreads 1), played by items of 32 rows whose loads
/// kAtenStridedWarps warps share (AtenSoftmax.cpp); rows of at least
/// kAtenStridedMinCols (shorter ones stay in L1 between one thread's
/// passes), each of the stagers kStagedPerWarp columns a chunk.
llvm::Error emitAtenStridedRows(RegionEmitter &e, const StageInfo &f,
                                YieldOp yield, const RowPlan &p,
                                llvm::raw_ostream &os);
constexpr int64_t kAtenStridedWarps = 16, kStagedPerWarp = 4,
                  kAtenStridedMinCols = 64;
/// AtenStrided mode: blocks resident per SM: 4 (the hardware's limit for
/// 512 threads: an uncapped grid, one item a block) unless a probe's
/// splitPerSM caps it (the grid sm_count times as many, items in turn).
int atenStridedBlocksPerSM(const RowPlan &p);

/// AtenReduce mode: a sum or mean over trailing contiguous rows whose
/// result rounds as ATen's reduce kernel's (AtenReduce.cpp; where it
/// applies: kb::isAtenOrderSum), its rows per block of 512, and a mean's
/// float factor as a literal.
llvm::Error emitAtenReduceRows(RegionEmitter &e, const StageInfo &f,
                               YieldOp yield, const RowPlan &p,
                               llvm::raw_ostream &os);
int64_t atenReduceRowsPerBlock(int64_t cols);
/// `v` as a float literal with exactly its bits (AtenRows.cpp).
std::string floatBits(float v);
std::string atenMeanFactor(int64_t rows, int64_t cols);

/// Opens the loop of groups of L lanes per row (a power of two up to 32,
/// 256 / L rows a block of 256): r is the group's row, `live` whether it
/// exists; the loop runs per warp, so all 32 lanes reach every shuffle.
void openGroupRows(const RowPlan &p, int64_t L, llvm::raw_ostream &os);

/// Split mode's block size, workspace bytes for a plan, and the device
/// functions its kernels call (the grid barrier).
int splitBlockSize(const RowPlan &p);
int splitBlocksPerSM(const RowPlan &p);
int64_t splitWorkspaceBytes(const RowPlan &p);
const char *splitHelpers(bool barrierStore);

/// RowPlan::flat set, with its block, blocks an SM and chunks, where a
/// split plan's rows can be read as flat float4s (at most 32 rows that are
/// one run of a contiguous float32 input or of a pointwise prologue's
/// arguments `args`; one pass and one output a row unless `outputs`,
/// EmitOptions::splitFlatOutputs; SplitFlat.cpp). The chunks are cut to
/// 8 float4s a thread an item unless `fixedChunks` (a probe's).
void planFlat(RowPlan &p, const StageInfo &f, llvm::ArrayRef<unsigned> args,
              bool fixedChunks, bool outputs);
/// Rows per split item: 1, 32 (lanes over rows), or 4 per lane of a quad
/// plan's virtual warp.
int64_t splitItemRows(const RowPlan &p);
/// Lanes per virtual warp of a plan with lanes over rows (32, or fewer
/// where the rows are fewer: SplitRows.cpp).
int splitLaneWidth(const RowPlan &p);

/// The row groups a split plan's items take (rows over splitItemRows): an
/// item is a group's chunk.
int64_t splitGroups(const RowPlan &p);

/// The items of a split plan with chunks (its item loops' bound): the
/// grid need not be larger.
int64_t splitItems(const RowPlan &p);

/// Chunks per row for a split plan of `rows` rows of `cols` elements taken
/// `rowsPerItem` (1 or 32) at a time: enough items for every SM to take
/// several, none smaller than a block's unrolled trip. `gather` is the
/// elements the pointwise prologue reads per row element (a pooling window
/// reads several): an item's minimum counts bytes read, not elements.
/// `quad`: lanes over rows holding 4 rows each (items of 128 rows, two
/// blocks an SM).
int64_t splitChunks(int64_t rows, int64_t cols, int64_t rowsPerItem,
                    int64_t gather = 1, bool quad = false);

/// The index of element (r, c) of contiguous rows of `cols` elements.
inline std::string rowMajor(llvm::StringRef r, llvm::StringRef c,
                            int64_t cols) {
  return "(" + r.str() + ") * " + std::to_string(cols) + "LL + " + c.str();
}

} // namespace kb::codegen

#endif

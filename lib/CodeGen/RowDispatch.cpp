//===- RowDispatch.cpp - A final stage's row kernel, from plan to family
//---===//
//
// emitRowKernel: the row plan of a reduction, softmax or norm
// (RowPlans.cpp), the statistics phase of a cross-row first stage
// (CrossRow.cpp), and the family of kernels that writes the plan
// (RowKernels.cpp, SplitRows.cpp, the Aten* kernels in ATen's own order).
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"
#include "kb/Transforms/OpUtils.h"
#include <functional>
using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using Mode = RowMode;

llvm::Expected<EmittedKernel>
codegen::emitRowKernel(RegionEmitter &e, const StageInfo &f, YieldOp yield) {
  EmittedKernel out;
  RowPlan p;
  const Recipe recipe = f.recipe;
  SmallVector<unsigned> updated; // inputs an op updates in place
  // A training batch norm or softmax before the final stage, over other
  // rows: its statistics come first, in a phase of their own
  // (CrossRow.cpp).
  std::optional<CrossRowStats> stats;
  AtenOp rowFirst;
  if (AtenOp pre = crossRowNorm(f.op)) {
    // A softmax over the final stage's own rows (softmax -> layer_norm of
    // a [rows, 4096] tensor): the block holding a row computes its
    // statistics first, no phase or grid barrier (a cross-row kernel read
    // the 150 MB input three times: 0.258 ms, seed 20261234 task 2).
    // The final stage is planned once more for that (a batch norm's rows
    // are channels, never the final stage's).
    if (pre.getInfo()->recipe != Recipe::BatchNorm) {
      RowPlan trial;
      EmittedKernel trialOut;
      SmallVector<unsigned> trialUpdated;
      if (llvm::Error err =
              planRows(e, f, yield, trial, trialOut, trialUpdated))
        llvm::consumeError(std::move(err));
      else if (sameRowFirst(e, pre, f, trial,
                            trial.index && trial.index("r", "c") ==
                                               rowMajor("r", "c", trial.cols)))
        rowFirst = pre;
    }
    if (!rowFirst && sameRowFirstRow(pre))
      return e.unsupported("'" + displayName(pre) +
                           "' before a final stage whose rows no lane group, "
                           "block or thread holds whole");
    if (!rowFirst) {
      auto s = planCrossRowStats(e, pre, yield, out, updated);
      if (!s)
        return s.takeError();
      stats = std::move(*s);
    }
  }
  size_t statsExtras = out.outputs.size();
  if (auto err = planRows(e, f, yield, p, out, updated))
    return std::move(err);
  p.rowFirst = rowFirst;
  // Its lane groups hold the rows a staged tile would stage (rows of at
  // most 16): the softmax's statistics come from the held row, where a
  // staged final stage left them to a statistics phase and a grid barrier
  // (softmax -> log_softmax over 140000 rows of 16).
  if (rowFirst)
    p.stagedTile = false;
  if (stats && out.outputs.size() != statsExtras)
    return e.unsupported("a second reduction updating running statistics "
                         "after a batch norm's");
  std::string body;
  llvm::raw_string_ostream os(body);
  if (stats) {
    p.stagedTile = false; // the statistics phase's grid, not the tile's
    if (p.mode == Mode::Split && p.chunks > 1)
      p.wsBase = stats->workspaceBytes;
    p.sharedRowMax = crossRowSharedRowMax(p.sharedRowMax);
    stats->blocksPerSM = crossRowBlocksPerSM(p);
    if (auto err = emitCrossRowStats(e, *stats, yield, rowBlockSize(p), os))
      return std::move(err);
  }
  if (auto err = emitRowPlan(e, f, yield, p, os))
    return std::move(err);
  SmallVector<EmittedTensor> extra(out.outputs.begin(), out.outputs.end());
  out.outputs.clear();
  std::string modeName[] = {
      "thread",
      std::to_string(rowLanes(p)) + "-lane group" +
          (p.vec4 ? std::string(" (float4 loads)") : std::string()),
      "block",
      "lane (32 channels-last rows per block, " +
          std::to_string(columnWarps(p.cols)) + " warps splitting each)",
      std::to_string(lanesPerRow(p.tileW)) +
          "-lane group, the block staging a channels-last [" +
          std::to_string(p.tileW) + ", " + std::to_string(p.tileC) +
          "] slab in shared memory",
      "block per item of " +
          (p.splitRows == 32
               ? (p.quad ? std::to_string(splitItemRows(p)) +
                               " rows (4 per lane, read as "
                               "float4)"
                  : p.flat ? std::to_string(p.rows) +
                                 " rows (read as flat float4s, 4 "
                                 "accumulators a thread on rows (4t + j) "
                                 "mod " +
                                 std::to_string(p.rows) + ")"
                  : splitLaneWidth(p) < 32
                      ? std::to_string(p.rows) + " rows (one per lane of " +
                            std::to_string(splitLaneWidth(p)) +
                            ", a warp reading " +
                            std::to_string(32 / splitLaneWidth(p)) +
                            " neighbouring elements of each)"
                      : std::string("32 rows (one per lane)"))
               : std::string("one row")) +
          (p.chunks == 1
               ? std::string(" and all its elements, its passes one after "
                             "another")
               : " x 1/" + std::to_string(p.chunks) +
                     " of its elements, a grid barrier after each pass"),
      std::to_string(atenLanes(p.cols)) +
          (p.cols % 4 ? "-lane group (ATen's RowwiseMoments layer norm's "
                        "order: WelfordOps over its 512 threads, "
                        "bit-identical to eager)"
                      : "-lane group (ATen's vectorized layer norm's order: "
                        "float Welford statistics over its 128 threads, "
                        "bit-identical to eager)"),
      std::to_string(atenSoftmaxLanes(p.cols)) +
          "-lane group (ATen's warp softmax's order, bit-identical to eager)",
      std::to_string(p.spatialThreads) +
          "-thread group (ATen's spatial softmax's order: each thread's "
          "elements in order, then its shared-memory tree)",
      "thread (ATen's spatial softmax's order; items of 32 rows whose "
      "loads " +
          std::to_string(kAtenStridedWarps) + " warps share)",
      p.cols <= kAtenReduceWarpMax
          ? std::string("warp (ATen's reduce order: float4s into four float "
                        "accumulators, then its shuffle tree; 16 rows a "
                        "block, bit-identical to eager)")
          : std::string("block of 512 (ATen's block form of its reduce: "
                        "float4s into four float accumulators, each warp's "
                        "shuffle tree, then the tree over its 16 warps; "
                        "bit-identical to eager)")};
  std::string comment =
      p.what + " of " + std::to_string(p.rows) + " rows x " +
      std::to_string(p.cols) + " elements, one " +
      (p.stagedTile ? "thread per row, each block's 256 rows staged as one "
                      "tile in shared memory; "
                    : modeName[(int)p.mode] +
                          (p.mode == Mode::Split ? "; " : " per row; ")) +
      (p.mode == Mode::AtenSoftmax
           ? std::string("the row is held in registers (the pointwise "
                         "prologue evaluated once per element).")
       : p.mode == Mode::AtenSpatial
           ? std::string("the row is re-read on each pass, as ATen's "
                         "kernel does.")
       : p.mode == Mode::AtenStrided
           ? std::string("the row is re-read on each pass (the sum's pass "
                         "through shared memory).")
       : p.mode == Mode::AtenReduce
           ? std::string("the pointwise prologue is evaluated once per "
                         "element.")
       : p.mode == Mode::AtenOrder
           ? std::string(p.cols <= kAtenHeldMax && p.cols % 4 == 0
                             ? "the row is held in registers (the "
                               "pointwise prologue evaluated once per "
                               "element)."
                             : "the row is re-read for the output, as "
                               "ATen's kernel does.")
       : p.mode == Mode::Warp || blockRegisterSlots(p) || threadRegisterRow(p)
           ? "the row is held in registers (the pointwise "
             "prologue evaluated once per element)."
       : blockSharedRow(p)
           ? "the row is staged in shared memory (the pointwise prologue "
             "evaluated once per element)."
       : p.mode == Mode::Tile
           ? "the pointwise prologue is evaluated once per element, into "
             "the slab."
           : "the pointwise prologue is recomputed on each pass instead of "
             "stored.");
  int block = rowBlockSize(p);
  std::string R = std::to_string(p.rows);
  // Uncapped grids: every warp, block or thread takes its rows in one
  // iteration (a grid capped at a multiple of the SM count measured 8% below
  // copy bandwidth on pointwise kernels; the loops stay for safety).
  std::string grid =
      p.stagedTile ? "ceil_div(" + R + ", 256)"
      : p.mode == Mode::Warp
          ? "ceil_div(" + R + ", " +
                std::to_string(256 / rowLanes(p) *
                               (p.vec4 ? p.groupUnroll : 1)) +
                ")"
      : p.mode == Mode::Columns ? "ceil_div(" + R + ", 32)"
      : p.mode == Mode::AtenSoftmax
          ? "ceil_div(" + R + ", " +
                std::to_string(256 / atenSoftmaxLanes(p.cols) * p.groupUnroll) +
                ")"
      : p.mode == Mode::AtenOrder
          ? "ceil_div(" + R + ", " + std::to_string(atenRowsPerBlock(p.cols)) +
                ")"
      : p.mode == Mode::AtenReduce
          ? "ceil_div(" + R + ", " +
                std::to_string(atenReduceRowsPerBlock(p.cols)) + ")"
      : p.mode == Mode::AtenSpatial
          ? std::to_string(p.rows / std::max<int64_t>(p.spatialInner, 1))
      : p.mode == Mode::AtenStrided
          ? (atenStridedBlocksPerSM(p) >= 4
                 ? "ceil_div(" + R + ", 32)"
                 : "sm_count * " + std::to_string(atenStridedBlocksPerSM(p)))
      : p.mode == Mode::Tile ? std::to_string(p.tileN * p.tileM)
      : p.mode == Mode::Block
          ? R
          : "ceil_div(" + R + ", " + std::to_string(block) + ")";
  bool split = p.mode == Mode::Split && p.chunks > 1;
  if (p.mode == Mode::Split && p.chunks == 1) // whole items, no barrier
    grid = p.splitRows == 32
               ? "ceil_div(" + R + ", " + std::to_string(splitItemRows(p)) + ")"
               : R;
  if (split) {
    out.blocksPerSM = splitBlocksPerSM(p);
    grid = out.blocksPerSM == 1
               ? "sm_count"
               : "sm_count * " + std::to_string(out.blocksPerSM);
    // Blocks past the items only wait at the grid barriers: cut to the
    // items, levit's BatchNorm1d -> hardswish took 37.3 us instead of 45.0
    // (98 items), 23.3 instead of 28.4 (48) and 15.6 instead of 23.0 (24;
    // H100, back-to-back launches, bench/probes/split_phases.py).
    grid = "min(" + grid + ", " + std::to_string(splitItems(p)) + ")";
    out.workspaceBytes = splitWorkspaceBytes(p);
    out.gridSync = true;
  }
  if (stats) {
    out.blocksPerSM = stats->blocksPerSM;
    grid = "sm_count * " + std::to_string(out.blocksPerSM);
    out.workspaceBytes = split ? splitWorkspaceBytes(p) : stats->workspaceBytes;
    out.gridSync = true;
    comment = stats->comment + "\n" + comment;
  }
  // A thread holding a row of 32-96 floats: left alone, ptxas spent 152
  // registers on rows of 64 (one block of 256 an SM, 0.549 ms); capped
  // at 128 by two blocks an SM, 0.318 ms without a spill (three: 0.333,
  // four: 0.352; H100, bench/next-gpu/ab94, seed 20261307 task 2's norm
  // over dim 0). Longer rows would spill under that cap.
  if (!out.gridSync && threadRegisterRow(p) && p.cols >= kThreadRowBoundMin &&
      p.cols <= kThreadRowBoundMax)
    out.minBlocksPerSM = 2;
  if (auto err = assembleKernel(
          e, out, yield, comment,
          split || stats ? splitHelpers(e.splitBarrierStore) : "", body, block,
          extra, updated))
    return std::move(err);
  out.kind = isSoftmaxRecipe(recipe) ? "softmax"
             : isNormRecipe(recipe)  ? "norm"
                                     : "reduction";
  out.grid = {grid, "1", "1"};
  out.block = {std::to_string(block), "1", "1"};
  return out;
}

//===- SplitEmitter.h - The split row kernels' emitter ----------*- C++ -*-===//
//
// The emitter of SplitRows.cpp (rows of any layout, one row or 32 rows an
// item) and SplitQuad.cpp (lanes over 4 strided rows each), which share its
// item heads, partials, barriers and block combines.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CODEGEN_SPLITEMITTER_H
#define KB_CODEGEN_SPLITEMITTER_H

#include "SplitLayout.h"

namespace kb::codegen::split {

class SplitEmitter : RowWriter {
public:
  SplitEmitter(RegionEmitter &e, const StageInfo &f, YieldOp y,
               const RowPlan &p)
      : RowWriter(e, f, y), p(p), layout(p), lanes(p.splitRows == 32),
        quad(lanes && p.quad), vec(!lanes && (p.vec4 || !p.vecArgs.empty())),
        shape(shapeFor(p)), kBlock(shape.block), kLanes(splitLaneWidth(p)),
        kWarps(shape.block / kLanes), groups(splitGroups(p)) {}

  llvm::Error emit(llvm::raw_ostream &os);

private:
  /// The workspace's arrays (partials and finals) as typed pointers.
  void declareSlots(llvm::raw_ostream &os);
  /// Each argument in `args` read as the float4 at `at` (v4_<k>) and its
  /// elements (xs<k>[4]).
  void loadFloat4s(llvm::ArrayRef<unsigned> args, llvm::StringRef at,
                   llvm::raw_ostream &os);
  /// valueAt(argument, "i") of each of `args` is its loaded xs<k>[j].
  void seedFloat4s(llvm::ArrayRef<unsigned> args);
  /// One chunk per row: each item is whole, so its passes and outputs
  /// follow one another in the same block, with no workspace and no grid
  /// barrier; the item's later passes re-read what its first one brought
  /// into L2 moments before, instead of after every other item's pass
  /// (softmax over dim 0 of 1024 x 65536: 0.329 ms split by barriers).
  llvm::Error emitWhole(llvm::raw_ostream &os);
  /// emitWhole's element loop where each thread's elements of the item
  /// stay in registers (RowPlan::splitItemRegisters): the first call loads
  /// them into kb_xs, later ones read kb_xs.
  llvm::Expected<std::string> registerLoop(llvm::raw_ostream &os);
  /// Each thread's elements of a whole item (0: not held in registers).
  int64_t itemRegisters = 0;
  bool registersFilled = false;

  /// Lanes over rows: each row's partials of pass k combined once, by one
  /// block per group of 32 rows, into f<k><acc>[r], and a grid barrier.
  /// Every item of the row used to combine all of them itself: rows x
  /// chunks^2 partials read, which at 528 chunks took 0.25 of BatchNorm1d's
  /// 0.36 ms (bench/NOTES.md, session 18). The combine's code and order are
  /// the ones each item ran, so the statistics keep their bits.
  void finalizePass(size_t k, llvm::raw_ostream &os);

  // ---- Lanes over 4 rows each (RowPlan::quad) ------------------------
  // Per-row state lives in arrays of 4 (`acc_[j]`), bound by reference to
  // the usual names inside fully unrolled `j` loops, so every recipe's
  // step, combine and writer text is used as it is; a pass's `after`
  // statements are re-emitted in each `j` body that needs them (they only
  // read the row's accumulators, so they are loop-invariant there).

  void declareArrays(const ReducePass &pass, llvm::raw_ostream &os,
                     llvm::StringRef in);
  /// The arrays of declareArrays set to the accumulators' initial values.
  void initArrays(const ReducePass &pass, llvm::raw_ostream &os);
  void bind(const ReducePass &pass, llvm::raw_ostream &os, llvm::StringRef in);
  /// Binds passes [0, k) and emits their `after` statements, and k0.
  void bindStats(size_t k, llvm::raw_ostream &os, llvm::StringRef in);
  /// Opens an unrolled loop over the lane's 4 rows, `r` the row.
  static std::string openRows(llvm::StringRef in);

  llvm::Error quadHead(llvm::raw_ostream &os, int64_t T, bool range);

  /// Opens the float4 loop over the item's elements of its 4 rows (the
  /// caller closes it): the input's float4 (xs), or, for a computed input,
  /// those of the arguments its pointwise prologue reads (xs<k>).
  void quadLoop(llvm::raw_ostream &os);
  /// Closes quadLoop's loop (two with --split-ahead).
  void quadLoopEnd(llvm::raw_ostream &os);
  /// Inside the loop over the lane's 4 rows: row j's element at i, read
  /// from the float4s, its pointwise prologue evaluated (a new scope).
  llvm::Expected<std::string> quadElement(llvm::raw_ostream &os,
                                          llvm::StringRef indent);

  /// Pass k over the item: its accumulators per row, then combined over
  /// the block row by row.
  llvm::Error quadPass(size_t k, llvm::raw_ostream &os);

  /// The batched combine's shared arrays (unless
  /// RowPlan::splitSerialCombine): per pass and accumulator, each thread's
  /// value for each of its 4 rows. Only for whole warps of lanes, a block
  /// with 128 threads per accumulator (an online pair is one), and arrays
  /// that fit kBatchedCombineBytes. Measured on the H100 (run108,
  /// codegen_knobs.py, levit_128's seven batch norms): every region 10-19%
  /// faster (0.0449 -> 0.0396 ms at 128 x 12544, 0.0214 -> 0.0173 at 384 x
  /// 1024).
  void declareBatchedCombine(llvm::raw_ostream &os);
  static std::string batchName(size_t k, llvm::StringRef acc);

  /// Pass k's accumulators of the thread's 4 rows (acc_[j]) combined over
  /// the block at once: every value to shared memory, one barrier, then
  /// thread (accumulator a, row j, lane l) folds lane l's values over the
  /// warps in warp order, as combinePassInBlock does row by row (the same
  /// bits); a barrier, every thread reads its rows' results, and a barrier
  /// before the arrays are filled again. Three barriers where the serial
  /// form takes two per row and accumulator.
  void quadCombine(size_t k, llvm::raw_ostream &os);

  /// The item's rows' statistics of passes [0, k): from f<j> where
  /// finalizePass combined them, else from the partials.
  void quadStatistics(size_t k, llvm::raw_ostream &os);

  /// --split-row-vectors: pass j's finalized statistics of the lane's 4
  /// (contiguous, 16-byte aligned) rows as a float4 or two double2s each.
  void quadVectorStatistics(size_t j, llvm::raw_ostream &os);
  /// A lane's 4 contiguous rows of a float or double array at `addr`
  /// (16-byte aligned) loaded from L2 into `dst[0..3]`.
  void rowVector(llvm::raw_ostream &os, llvm::StringRef in,
                 llvm::StringRef type, llvm::StringRef addr,
                 llvm::StringRef dst);

  /// The item's outputs: per element (float4 stores of the 4 rows'
  /// values) or, by its leader, per row; then the per-row extras.
  llvm::Error quadOutputs(llvm::raw_ostream &os, bool firstChunkOnly);

  llvm::Error emitQuad(llvm::raw_ostream &os);

  void quadFinalize(size_t k, llvm::raw_ostream &os);

  /// Whether pass k's partials are combined once per row (finalizePass):
  /// with lanes over rows in many chunks, where every item reads the statistics
  /// (a later pass or per-element outputs); one output per row after the last
  /// pass is written by one item per row group, which combines them itself.
  bool finalized(size_t k) const;

  /// Pass j's accumulators declared and set to row r's statistics: read
  /// from f<j> where finalizePass combined them, else combined from the
  /// partials.
  void loadStatistics(size_t j, llvm::raw_ostream &os);

  /// Pass j's accumulators declared and combined from its partials over
  /// the item's row, across the block.
  void combinePartials(size_t j, llvm::raw_ostream &os);

  /// Partial t of row r of pass j folded into the pass's accumulators.
  /// With `fromVectors`, from `<slot>_v[j]`, the lane's 4 rows' partials
  /// quadFoldPartials loaded as vectors.
  void foldPartials(size_t j, llvm::raw_ostream &os, llvm::StringRef in,
                    bool fromVectors = false);

  /// Where row r's partial of chunk `chunk` lies in a pass's slot. With
  /// lanes over rows, chunk-major: a warp's lanes (its rows) write and
  /// read neighbouring partials; row-major, the finalize's uncoalesced
  /// loads of 4-row quads took 7 of levit's 24 us batch norm on one block
  /// (run112's timeline). One row an item: row-major, so the block's
  /// threads (its chunks) read neighbours.
  std::string partial(llvm::StringRef chunk) const;

  /// Batched: the partials of pass j's rows folded into acc_[j] (declared
  /// by the caller), the 4 rows in one loop over the chunks: each row's in
  /// the order combinePartials folds it, four loads a trip.
  void quadFoldPartials(size_t j, llvm::raw_ostream &os);

  // ---- Few rows read as flat float4s (RowPlan::flat; SplitFlat.cpp) ---
  /// The block's slots of each accumulator (4 a thread), and the rows'
  /// statistics handed to every thread (flatRows).
  void declareFlatScratch(llvm::raw_ostream &os);
  /// The shift and the statistics of passes [0, k) of the thread's 4 rows
  /// ((4t + j) mod rows) as arrays k0_[j], <acc>_[j]: lane r of warp 0,
  /// which holds row r's (rowStatistics), writes them to shared memory.
  void flatRows(size_t k, llvm::raw_ostream &os);
  /// The body of a flat loop: the arguments `loaded` read as xs<k>[4] at
  /// `fb` (none: the tail, elements read one by one up to n).
  using FlatBody = llvm::function_ref<llvm::Error(llvm::ArrayRef<unsigned>,
                                                  llvm::raw_ostream &)>;
  /// The item's elements as flat float4s at fb = f0 + 4q, thread t taking
  /// q = t, t + block, ...; then the tail's thread.
  llvm::Error flatLoop(int64_t T, llvm::raw_ostream &os, const FlatBody &body);
  /// Opens the unrolled loop over element j of the float4 at fb: its index
  /// i, column c and row r, passes [0, k) bound to row r's statistics.
  void flatElementHead(size_t k, llvm::ArrayRef<unsigned> loaded,
                       llvm::raw_ostream &os);
  /// Pass k over the item's flat run of elements, then each row's slots
  /// folded into the accumulators of lane r (as combinePassInBlock leaves
  /// them).
  llvm::Error flatPass(size_t k, int64_t T, llvm::raw_ostream &os);
  /// The item's per-element outputs over its flat run (float4 stores), and
  /// the per-row extras by chunk 0's leader; closes the item loop.
  llvm::Error flatOutputs(int64_t T, llvm::raw_ostream &os);
  /// Row r's slots r + R k folded in slot order.
  void flatCombine(const ReducePass &pass, llvm::raw_ostream &os);

  /// The test that selects the thread writing an item's per-row values.
  const char *leaderTest() const;

  /// k0, the shift of a norm's or variance's moments, for the item's row.
  llvm::Error itemShift(llvm::raw_ostream &os);

  /// One pass over the item's elements into the pass's accumulators,
  /// combined over the block.
  llvm::Error accumulatePass(const ReducePass &pass, llvm::raw_ostream &os);

  /// The item's outputs once its row's statistics are known, and the end
  /// of the item loop: the row's result (by its leader) or every element
  /// of the item, then the recipe's extra per-row outputs, written once
  /// per row (with `firstChunkOnly`, by chunk 0's item).
  llvm::Error writeItemOutputs(llvm::raw_ostream &os, bool firstChunkOnly);

  /// The item's row r (with lanes: the lane's row) and chunk s. Items
  /// with lanes are taken chunk-major: the blocks running at once read the
  /// 128-byte strips of neighbouring row groups over the same elements,
  /// so together they stream whole rows of memory (group-major, each
  /// block alone in a strip 384 bytes apart from the next, ran BatchNorm1d
  /// at a third of copy bandwidth).
  void itemHead(llvm::raw_ostream &os, int64_t S, int64_t T, bool range = true);

  /// Chunk s's elements [c0, c1). A lane past the last row gets an empty
  /// range, so the element loops test `c < c1` alone: with `live && c <
  /// c1` nvcc could not count the trips and branched after every unrolled
  /// load, one load in flight per warp (a column sum of [256260, 999] ran
  /// at 2.4 TB/s, ATen's at 3.7).
  void chunkRange(llvm::raw_ostream &os, int64_t T, bool lanes);

  /// The loop over the item's elements, opened (loopEnd closes it);
  /// returns the element value. Rows of contiguous runs of 4 read their
  /// input as float4 (a quarter of the load instructions, four times the
  /// bytes in flight per load); unrolling as Shape says.
  llvm::Expected<std::string> elementLoop(llvm::raw_ostream &os);

  /// The shift k0 and the combined statistics of the passes before `k`,
  /// each with its `after` statements, for the item's row.
  llvm::Error rowStatistics(size_t k, llvm::raw_ostream &os);

  /// Combines a pass's accumulators over the block; an online pair is
  /// merged together, lane by lane in warp order (lanes over rows only).
  void combinePassInBlock(const ReducePass &pass, llvm::raw_ostream &os);

  /// Combines an accumulator over the block: every thread, or with lanes
  /// over rows every warp's value of the same lane, in warp order; all
  /// threads reach this (the loops above are uniform per block).
  void combineInBlock(const Accumulator &a, llvm::raw_ostream &os);

  const RowPlan &p;
  Layout layout;
  bool lanes, quad, vec;
  // Quad items' block combines batched (declareBatchedCombine).
  bool batched = false;
  Shape shape;
  int kBlock, kLanes, kWarps;
  // Row groups of an item (splitGroups; the item loops' bound per chunk).
  int64_t groups;
  std::string loopEnd;
};

} // namespace kb::codegen::split

#endif // KB_CODEGEN_SPLITEMITTER_H

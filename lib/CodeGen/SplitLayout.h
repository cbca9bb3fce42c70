//===- SplitLayout.h - A split row plan's shape and workspace ---*- C++ -*-===//
//
// What SplitRows.cpp's emitter and the planner's sizing functions share:
// the block shape per layout, the workspace's arrays, the grid barrier.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CODEGEN_SPLITLAYOUT_H
#define KB_CODEGEN_SPLITLAYOUT_H

#include "RowPlan.h"

namespace kb::codegen::split {

/// Threads per block, resident blocks per SM, and unrolling, per layout
/// (bench/NOTES.md, session 14: kb-verify timings of each variant on an
/// H200). One row per item: 1024 threads, one block per SM, float4 reads
/// unrolled twice (BatchNorm2d over 48 channels 0.374 ms; unrolled four
/// times 0.607, scalar 0.449). Lanes over rows: scalar loads need more
/// threads in flight: 512 threads, four blocks per SM (BatchNorm1d 0.602
/// ms; 1024 x 1: 0.865; softmax over dim 0 0.337 vs 0.541).
struct Shape {
  int block, perSM, unroll, vunroll;
};
Shape shapeFor(int64_t rowsPerItem);
Shape shapeFor(const RowPlan &p);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Lanes over rows in 64 chunks or more (RowPlan::splitCombineOnceMin
/// where a probe sets it) combine each row's partials once per pass
/// (SplitEmitter::finalizePass); with fewer, every item combining its
/// row's partials (coalesced, chunk-major) costs less than the finalize
/// phase and the second grid barrier (levit's batch norms over 49 chunks
/// 8-16% faster so, run114; 16 was measured with row-major partials).
bool combinesOnce(const RowPlan &p);

/// The workspace: the barrier's two counters, then one array per
/// accumulator of each pass (and its compensation term), each 16-byte
/// aligned: chunk * rows + row with lanes over rows (a warp's rows are
/// neighbours), row * chunks + chunk with one row an item.
struct Layout {
  struct Slot {
    std::string name, type;
    int64_t offset;
    std::string acc; // the accumulator (or its compensation) it holds
  };
  std::vector<std::vector<Slot>> passes; // per pass: per accumulator (+ c)
  // Lanes over rows: each pass's combined value per row (f<k><acc>).
  std::vector<std::vector<Slot>> finals;
  int64_t bytes;

  explicit Layout(const RowPlan &p);
};

/// Static shared memory a quad plan's batched block combine may spend on
/// its arrays (of the 48 KB a block may declare).
constexpr int64_t kBatchedCombineBytes = 44 * 1024;

} // namespace kb::codegen::split

#endif // KB_CODEGEN_SPLITLAYOUT_H

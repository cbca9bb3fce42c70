//===- RowLayout.cpp - How row kernels lay rows over lanes and blocks ----===//
//
// The layout rules of a row plan (RowPlan.h): lanes per row, tile pitches,
// registers and shared memory per row, block sizes. RowPlans.cpp chooses
// with them and RowKernels.cpp writes what they describe.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int64_t codegen::lanesPerRow(int64_t cols) {
  int64_t l = 2;
  while (l < 32 && l * 8 < cols)
    l *= 2;
  return l;
}

std::string codegen::blockScratch(const ReduceProgram &prog) {
  bool dbl = false, flt = false, csum = false;
  for (const ReducePass &pass : prog.passes)
    for (const Accumulator &a : pass.accs)
      (a.combine == "CSum" ? csum : a.type == "double" ? dbl : flt) = true;
  std::string s;
  if (flt)
    s += "  __shared__ float smem[33];\n";
  if (dbl)
    s += "  __shared__ double smemd[33];\n";
  if (csum)
    s += "  __shared__ float smemc[66];\n";
  return s;
}

int64_t codegen::tilePitch(int64_t C, int64_t W) {
  int64_t R = 32 / lanesPerRow(W);
  return C + ((R - C % 32) % 32 + 32) % 32;
}

/// Columns mode (channels-last reads): warps per block. Long rows get a
/// 1024-thread block so each SM keeps enough loads in flight with one or
/// two blocks.
int64_t codegen::columnWarps(int64_t cols) { return cols >= 4096 ? 32 : 8; }

/// Tile mode's shared slab: W rows of tilePitch floats.
int64_t codegen::tileFloats(int64_t C, int64_t W) {
  return W * tilePitch(C, W);
}

/// Block rows in registers: 256 threads with at most 8 elements each, so
/// rows of up to 2K. Measured on the H200 (bench/NOTES.md, session 15): a
/// variance over rows of 2048 went from 0.102 to 0.082 ms; a logsumexp
/// over rows of 4096 was slower in registers with 256 threads x 16 (0.117
/// ms) and 512 x 8 (0.121) than re-reading the row from L2 (0.099), and an
/// instance norm over rows of 16K with 512 x 32 (0.180 vs 0.162).
constexpr int64_t kRegisterRowMax = 2048;
constexpr int kRegisterRowThreads = 256;

/// Threads of a block holding its row in registers: --row-block's count
/// only in a --register-row-max probe (alone it sizes streamed rows).
static int registerRowThreads(const RowPlan &p) {
  return p.registerRowMax > 0 && p.rowBlock > 0 ? p.rowBlock
                                                : kRegisterRowThreads;
}

/// A row read more than once (several passes, or per-element outputs after
/// the statistics): only those gain from registers or shared memory; a
/// single pass streams as well from the unrolled loop (L2-10's mean over
/// pooled rows of 16K).
static bool rereadsRow(const RowPlan &p) {
  return p.element || p.prog.passes.size() > 1;
}

int64_t codegen::blockRegisterSlots(const RowPlan &p) {
  int64_t most = p.registerRowMax > 0       ? p.registerRowMax
                 : p.registerRowDefault > 0 ? p.registerRowDefault
                                            : kRegisterRowMax;
  if (p.mode != RowMode::Block || p.cols > most || !rereadsRow(p))
    return 0;
  int64_t b = registerRowThreads(p);
  return (p.cols + b - 1) / b;
}

bool codegen::threadRegisterRow(const RowPlan &p) {
  int64_t most = p.threadRowMax > 0       ? p.threadRowMax
                 : p.threadRowDefault > 0 ? p.threadRowDefault
                                          : kThreadRegisterRowMax;
  return p.mode == RowMode::Thread && p.cols <= most && rereadsRow(p);
}

bool codegen::blockSharedRow(const RowPlan &p) {
  return p.mode == RowMode::Block && rereadsRow(p) && !blockRegisterSlots(p) &&
         p.cols <= std::min<int64_t>(p.sharedRowMax, kSharedRowMax);
}

/// Rows from which rows of 61-256 scalars take four float4s a lane: twice
/// the rows an H200 holds resident at 8 lanes a row (132 SMs x 2048 threads).
constexpr int64_t kWideLaneRowsMin = 2 * 132 * 2048 / 8;

int64_t codegen::rowLanes(const RowPlan &p) {
  if (!p.vec4)
    return lanesPerRow(p.cols);
  if (p.vectorLanes > 0)
    return p.vectorLanes;
  int64_t n4 = (p.cols + 3) / 4, l = 1;
  // Many rows of 61-256 scalars: up to four float4s a lane, not one or
  // two, so a row's statistics cross fewer shuffle levels and each lane has
  // more loads in flight (layer norm over 128 0.159 -> 0.133 ms, softmax
  // over 256 0.143 -> 0.132, bench/NOTES.md "Session 37"; a logsumexp over
  // 12.2M rows of 64 1.171 -> 1.047 ms at 4 lanes, run114, where a sum
  // over 64 had gained nothing in session 37). Few rows keep every lane:
  // there the launch is too small to fill the GPU and a lane's serial
  // loads are its latency. Rows read once (sum, max, L1 norm) keep one
  // float4 a lane: four lost them 4-8% of occupancy with no second read
  // to save (run117).
  bool wide =
      n4 >= 16 && n4 <= 64 && p.rows >= kWideLaneRowsMin && rereadsRow(p);
  int64_t want = wide ? (n4 + 3) / 4 : n4;
  while (l < 32 && l < want)
    l *= 2;
  return l;
}

bool codegen::rowsFitL2(int64_t cols, int64_t blockThreads) {
  constexpr int64_t residentThreads = 132 * 1536, budget = 24 << 20;
  return residentThreads / blockThreads * cols * 4 <= budget;
}

int codegen::rowBlockSize(const RowPlan &p) {
  if (p.mode == RowMode::Split)
    return splitBlockSize(p);
  if (p.mode == RowMode::AtenOrder)
    return atenLanes(p.cols) * atenRowsPerBlock(p.cols);
  if (p.mode == RowMode::AtenReduce)
    return 512;
  if (p.mode == RowMode::AtenSpatial)
    return int(p.spatialThreads * p.spatialInner);
  if (p.mode == RowMode::AtenStrided)
    return int(32 * kAtenStridedWarps);
  if (p.mode == RowMode::Tile)
    return 256;
  if (p.mode == RowMode::Columns)
    return 32 * columnWarps(p.cols);
  if (blockRegisterSlots(p))
    return registerRowThreads(p);
  if (p.mode != RowMode::Block)
    return 256;
  if (p.rowBlock > 0)
    return p.rowBlock;
  // The fewest threads per row for which the rows resident at once (132
  // SMs x ~1536 threads) fit in half the H200's L2, so a pass that re-reads
  // its row finds it there (rows of 14784: 256 threads 0.396 ms, 512 0.309;
  // rows of 16384 with 1024 threads 0.163, 512 0.201; session 19). Single
  // passes over rows under 8K stay at 256 (a mean over rows of 4096 took
  // 0.075 ms with 256, 0.107 with 1024).
  for (int b : {256, 512, 1024})
    if (rowsFitL2(p.cols, b))
      return b;
  // Rows no block keeps in L2 re-read DRAM whatever its size: 512 threads
  // measured 12% faster than 1024 (a group norm over 2048 rows of 114688:
  // 0.776 vs 0.884 ms, session 25; 4 chunks a row 0.787, 16 chunks 1.22).
  // Rows too few to give each SM four such blocks keep 1024 threads, the
  // most bytes in flight per row.
  return p.rows >= 4 * 132 ? 512 : 1024;
}

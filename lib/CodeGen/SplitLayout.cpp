//===- SplitLayout.cpp - A split row plan's shape, chunks and workspace ---===//
//
// How a split plan (SplitRows.cpp) is sized: threads and resident blocks
// per layout, chunks per row, items, lanes per row group, the workspace's
// arrays, and the grid barrier its kernels call.
//
//===----------------------------------------------------------------------===//

#include "SplitLayout.h"

using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

namespace {

/// Items spread over the grid: about 8 per SM of a 132-SM part, so the
/// last wave is short on any other SM count too.
constexpr int64_t kTargetItems = 132 * 8;

int64_t typeBytes(const Accumulator &a) { return a.type == "double" ? 8 : 4; }

/// Lanes over 4 rows each hold four rows of state: 64 registers, two
/// blocks of 512 an SM (at 32, BatchNorm1d's quad kernel spilled 544 bytes
/// a thread). Not measured yet.
constexpr int kQuadBlocksPerSM = 2;

} // namespace

Shape split::shapeFor(int64_t rowsPerItem) {
  return rowsPerItem == 32 ? Shape{512, 4, 8, 0} : Shape{1024, 1, 8, 2};
}
Shape split::shapeFor(const RowPlan &p) {
  Shape s = shapeFor(p.splitRows);
  if (p.quad && p.splitRows == 32)
    s.perSM = kQuadBlocksPerSM;
  if (p.splitBlock > 0)
    s.block = p.splitBlock;
  if (p.splitPerSM > 0)
    s.perSM = p.splitPerSM;
  if (p.splitUnroll > 0) {
    s.unroll = p.splitUnroll;
    if (s.vunroll > 0)
      s.vunroll = std::max(1, p.splitUnroll / 4);
  }
  return s;
}

bool split::combinesOnce(const RowPlan &p) {
  return p.splitRows == 32 &&
         p.chunks >= (p.splitCombineOnceMin > 0 ? p.splitCombineOnceMin : 64);
}

Layout::Layout(const RowPlan &p) : bytes(16 + p.wsBase) {
  auto arrays = [&](std::vector<std::vector<Slot>> &into, char prefix,
                    int64_t n) {
    for (auto [k, pass] : llvm::enumerate(p.prog.passes)) {
      into.emplace_back();
      for (const Accumulator &a : pass.accs) {
        auto add = [&](std::string acc, std::string type, int64_t size) {
          into.back().push_back(
              {prefix + std::to_string(k) + acc, type, bytes, acc});
          bytes += ceilDiv(n * size, 16) * 16;
        };
        add(a.name, a.type, typeBytes(a));
        if (a.combine == "CSum")
          add(a.name + "c", "float", 4);
      }
    }
  };
  arrays(passes, 'p', p.rows * p.chunks);
  if (combinesOnce(p) && (p.element || p.prog.passes.size() > 1))
    arrays(finals, 'f', p.rows);
}

/// The grid barrier's device function on the workspace's (count,
/// generation), zeroed once; `release` is what the last arrival runs, and
/// leaves the count at 0 for the next barrier and launch.
static std::string gridSync(llvm::StringRef release) {
  return (llvm::Twine(R"(
// A grid barrier on the zeroed workspace (count, generation). The launch is
// cooperative, so every block is resident and reaches it.
__device__ __forceinline__ void kb_grid_sync(unsigned int* bar) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned int* gen = bar + 1;
    const unsigned int g = *gen;
    __threadfence();
    if (atomicAdd(bar, 1u) == gridDim.x - 1) {
)") + release +
          R"(    } else {
      while (*gen == g) __nanosleep(64);
    }
    __threadfence();
  }
  __syncthreads();
}
)")
      .str();
}

const char *codegen::splitHelpers(bool barrierStore) {
  static const std::string exchange = gridSync(R"(      atomicExch(bar, 0u);
      __threadfence();
      atomicAdd(bar + 1, 1u);
)");
  // The count back to 0 and the next generation in one 8-byte store,
  // instead of waiting for an exchange's round trip and a fence before the
  // increment (run113's timeline: ~1.4 us from the last arrival to the
  // first block out; run114: 0.4-1 us less a barrier).
  // `--split-barrier-exchange` keeps the exchange (a probe).
  static const std::string store = gridSync(
      R"(      *reinterpret_cast<volatile unsigned long long*>(bar) =
          (unsigned long long)(g + 1u) << 32;
)");
  return (barrierStore ? store : exchange).c_str();
}

/// Lanes over rows: lanes per virtual warp, so that a warp's lanes
/// cover rows that exist. Lanes over 4 rows each: 64 rows take 16 lanes,
/// and each hardware warp reads two neighbouring elements of all 64.
/// Lanes over one row each, fewer rows than 32 (a softmax over dim 0 of
/// [N, 7]): the next power of two at least the rows, at least 4, so a
/// hardware warp load reads 32 / L neighbouring elements of every row
/// (seven rows on 32 lanes read 28 bytes a load, 25 lanes idle).
int codegen::splitLaneWidth(const RowPlan &p) {
  if (p.splitRows != 32)
    return 32;
  int L = p.quad ? 8 : 4;
  while (L < 32 && (p.quad ? 4 * L : L) < p.rows)
    L *= 2;
  return L;
}

int codegen::splitBlockSize(const RowPlan &p) { return shapeFor(p).block; }

int64_t codegen::splitGroups(const RowPlan &p) {
  return ceilDiv(p.rows, splitItemRows(p));
}

int64_t codegen::splitItems(const RowPlan &p) {
  return splitGroups(p) * p.chunks;
}

int codegen::splitBlocksPerSM(const RowPlan &p) { return shapeFor(p).perSM; }

int64_t codegen::splitWorkspaceBytes(const RowPlan &p) {
  return p.chunks == 1 ? 0 : Layout(p).bytes;
}

int64_t codegen::splitChunks(int64_t rows, int64_t cols, int64_t rowsPerItem,
                             int64_t gather, bool quad) {
  int64_t itemRows = quad ? 4 * rowsPerItem : rowsPerItem;
  int64_t perSM = quad ? kQuadBlocksPerSM : shapeFor(rowsPerItem).perSM;
  // 64 KB per item at least (16 loads per thread), so the per-item
  // combines and their block barriers stay a small part of the item.
  // gen-20261208 task 8 (a std over 900 rows of 2048 pooled elements, 54
  // loads each) got 4 chunks by elements: 116 blocks for 132 SMs, 1.5 TB/s.
  int64_t minChunk =
      std::max<int64_t>(16 * 1024 / itemRows / std::max<int64_t>(gather, 1), 1);
  // Quad items over long rows: twice that (128 KB, 16 float4 loads a
  // thread), each item's fixed chain of statistics loads, combines and
  // partial stores spread over twice the loads. Measured on the H100
  // (run111, codegen_knobs.py, levit_128's BatchNorm1d -> hardswish over
  // 12544 tokens, the combines batched): 128 channels 49 chunks 0.0314 ms,
  // 98 0.0390, 196 0.0599 (ATen 0.0279); 256 channels 0.0365 against
  // 0.0476; 384 channels 0.0471 against 0.0601 at 88. Shorter rows keep
  // 64 KB: over 3136 tokens 24 chunks 0.0256 against 49's 0.0301 (fewer
  // not measured).
  if (quad && cols / minChunk >= 64)
    minChunk *= 2;
  int64_t items = std::max<int64_t>(ceilDiv(rows, itemRows), 1);
  // Items of lanes over strided rows that nearly fill a 132-SM part once
  // (shapeFor: 4 blocks of 512 per SM) run whole: no grid barrier, no
  // partials. Measured (H200, session 17): softmax over dim 0 of 1024 x
  // 16384 (512 items) 0.083 ms whole, 0.102 ms in 2 chunks.
  if (rowsPerItem == 32 && items * 10 >= 9 * 132 * perSM)
    return 1;
  int64_t s = ceilDiv(kTargetItems, items);
  s = std::min(s, std::max<int64_t>(cols / minChunk, 1));
  s = std::clamp<int64_t>(s, 1, 1024);
  // Items go round the grid of resident blocks: a last round little filled
  // costs nearly a whole round. Down to half the chunks, the count whose
  // rounds are fullest (by 2% at least). Measured on the H200 (session 31,
  // codegen_knobs.py): BatchNorm2d over 64 channels of 4.4M, 17 chunks
  // (1088 items on 132 blocks: 8.2 rounds) 1.017 ms, 16 chunks 0.867, 4
  // 0.852; BatchNorm1d over 4095 channels, 9 chunks (1161 items on 528
  // blocks: 2.2 rounds) 0.253, 8 chunks 0.237.
  int64_t slots = 132 * perSM;
  auto fill = [&](int64_t c) {
    int64_t n = items * c;
    return double(n) / double(ceilDiv(n, slots) * slots);
  };
  int64_t best = s;
  for (int64_t c = s - 1; c >= std::max<int64_t>(1, (s + 1) / 2); --c)
    if (fill(c) > fill(best) + 0.02)
      best = c;
  return best;
}

int64_t codegen::splitItemRows(const RowPlan &p) {
  return p.quad && p.splitRows == 32 ? 4 * splitLaneWidth(p) : p.splitRows;
}

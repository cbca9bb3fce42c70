//===- TransposedStores.cpp - Per-element outputs stored transposed -------===//
//
// A lane-group row kernel (one row a group of L lanes, 256 / L rows a
// block) whose per-element output keeps a transposed layout (MLP-Mixer's
// residual stream, PatchEmbed's `flatten(2).transpose(1, 2)`: consecutive
// rows adjacent, a row's elements 196 floats apart) writes each element
// into its own 32-byte sector, and stores are not combined in L1: every
// float is one L2 write. Staged, the block's rows of that output go to a
// shared tile first, then to memory with consecutive threads on
// consecutive rows (the block's rows of one column, whole sectors).
// Loads of such operands need nothing of the kind: the block's warps read
// neighbouring rows, so their sectors hit in L1 (a staged load measured
// slower, bench/NOTES.md session 56).
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/CodeGen/IndexMath.h"

#include <utility>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int codegen::transposedOutput(const RegionEmitter &e, const RowPlan &p,
                              YieldOp yield, int64_t L) {
  int64_t rb = 256 / L;
  if (!e.stageTransposedStores || !p.element || p.stagedTile || p.vec4 ||
      rb < 8 || p.cols * (rb + 1) * 4 > kStagedTransposedBytes ||
      p.index("r", "c") != rowMajor("r", "c", p.cols))
    return -1;
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    if (k >= e.outputStrides.size())
      break;
    llvm::ArrayRef<int64_t> st = e.outputStrides[k], shape = shapeOf(v);
    size_t n = st.size();
    if (n < 2 || n != shape.size() || shape.back() != p.cols ||
        product(shape) != p.rows * p.cols || st[n - 2] != 1 || st[n - 1] < 8 ||
        e.storedAs(v) != Storage::F32)
      continue;
    return (int)k;
  }
  return -1;
}

void codegen::openTransposedStoreRows(RegionEmitter &e, const RowPlan &p,
                                      int64_t L, int k,
                                      llvm::raw_ostream &os) {
  int64_t rb = 256 / L, pitch = rb + 1;
  std::string R = std::to_string(p.rows) + "LL", RB = std::to_string(rb),
              Ls = std::to_string(L);
  os << "  // out" << k << " is stored transposed (its rows adjacent): each "
     << "trip writes the block's " << rb
     << " rows of it to shared memory, then to memory a column's rows "
        "at a time.\n"
     << "  __shared__ float kb_to[" << p.cols * pitch << "];\n"
     << "  const int lane = threadIdx.x & " << L - 1 << ";\n"
     << "  for (long long rb = (long long)blockIdx.x * " << RB << "; rb < "
     << R << "; rb += (long long)gridDim.x * " << RB << ") {\n"
     << "    const long long r = rb + threadIdx.x / " << Ls << ";\n"
     << "    const bool live = r < " << R << ";\n";
  e.stagedOut = k;
  e.stagedOutIdx = "i";
  e.stagedOutAt =
      "kb_to[c * " + std::to_string(pitch) + " + threadIdx.x / " + Ls + "]";
}

std::string codegen::transposedStoreFlush(RegionEmitter &e, const RowPlan &p,
                                          int64_t L, int k) {
  int64_t rb = 256 / L, pitch = rb + 1;
  std::string R = std::to_string(p.rows) + "LL", RB = std::to_string(rb);
  // The tile's stores go to memory: the staging is off for them.
  int staged = std::exchange(e.stagedOut, -1);
  std::string s;
  llvm::raw_string_ostream os(s);
  // Every thread's elements are in the tile before any is stored, and
  // every store is done before the next trip fills the tile.
  os << "    __syncthreads();\n"
     << "#pragma unroll 4\n    for (int t = threadIdx.x; t < " << rb * p.cols
     << "; t += 256) {\n"
     << "      const long long q = rb + t % " << RB << ", c = t / " << RB
     << ";\n"
     << "      if (q < " << R << ") {\n"
     << "        const long long i = " << p.index("q", "c") << ";\n"
     << "        "
     << e.store(k, "i",
                "kb_to[c * " + std::to_string(pitch) + " + t % " + RB + "]")
     << "\n      }\n    }\n    __syncthreads();\n";
  e.stagedOut = staged;
  return s;
}

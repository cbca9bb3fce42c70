//===- AtenReduce.cpp - Row sums and means in ATen's own order ------------===//
//
// A sum or mean over the trailing dims of a float tensor, whose result must
// round as eager's does: KernelBench compares against eager at 1e-4, and a
// sum of many values of both signs whose result is small beside them (the
// sum of a bmm's 32768 outputs a row, then `1.318 - s`, seed 20261234
// task 7) differs from eager's float sum by more than that, whatever the
// order or precision of any other sum (a double sum is off by eager's own
// rounding error). So the sum is computed as ATen's reduce kernel computes
// it (aten/src/ATen/native/cuda/Reduce.cuh: setReduceConfig for a
// reduction over the fastest-moving dim, vectorised input, one CTA per
// output):
//  - rows of 129-8160 elements (a multiple of 4), ATen's block of 32 x 16:
//    warp y takes row 16 * block + y; lane x adds float4 v = x, x + 32, ...
//    into four float accumulators, one per element of the float4;
//  - longer rows (up to 130560, or any length with more than 528 rows, so
//    that ATen splits no row over CTAs on the H200's 132 SMs), the block
//    of 32 x 16 takes one row: thread (x, y) adds float4s x + 32y, + 512,
//    ...;
// then the four accumulators in order ((a0 + a1) + a2) + a3, and
// block_x_reduce's shuffle-down tree with offsets 16, 8, 4, 2, 1, as CUDA
// builds of recent ATen take them (ROCm's keep 1, 2, ..., 16; the
// increasing order left 25-30% of outputs an ulp off eager's on torch
// 2.11, run68); a block's row then sums its 16 warps' results in a
// shared-memory tree halving from 8. A mean multiplies by ATen's float factor,
// rows / (rows * cols). The pointwise
// prologue rounds as ATen's own kernels (they write each value as a float
// before the sum reads it). kb-verify's eager_mismatches confirms each
// kernel's bits.
//
// Measured on torch 2.11 (bench/probes/aten_sum_order.py): the warp form
// is eager's bits on every row of 512-8160 (run70); on rows of 8192-65536
// the block form with the tree over y before the shuffle over x matched
// about a quarter of rows only (run70), and the order above, each warp's
// shuffle tree then the tree over the warps, every row (run76's
// `block_xy`: 300 x 8192 to 530 x 65536, and 64 x 16384).
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int64_t codegen::atenReduceRowsPerBlock(int64_t cols) {
  return cols <= kAtenReduceWarpMax ? 16 : 1;
}

std::string codegen::atenMeanFactor(int64_t rows, int64_t cols) {
  // ATen: static_cast<float>(num_output_elements) / numel, in float.
  return floatBits((float)rows / (float)(rows * cols));
}

namespace {

class AtenReduce : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    std::string R = std::to_string(p.rows) + "LL",
                N4 = std::to_string(p.cols / 4) + "LL";
    bool warpRows = p.cols <= kAtenReduceWarpMax;
    if (warpRows) {
      os << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
         << "  // r0 is uniform in the block; every lane of a warp shares "
            "its row.\n"
         << "  for (long long r0 = (long long)blockIdx.x * 16; r0 < " << R
         << "; r0 += (long long)gridDim.x * 16) {\n"
         << "    const long long r = r0 + warp;\n"
         << "    const bool live = r < " << R << ";\n"
         << "    float a[4] = {0.f, 0.f, 0.f, 0.f};\n"
         << "#pragma unroll 4\n"
         << "    for (long long v = lane; live && v < " << N4
         << "; v += 32) {\n";
    } else {
      os << "  __shared__ float ared[512];\n"
         << "  const int x = threadIdx.x & 31, y = threadIdx.x >> 5;\n"
         << "  for (long long r = blockIdx.x; r < " << R
         << "; r += gridDim.x) {\n"
         << "    float a[4] = {0.f, 0.f, 0.f, 0.f};\n"
         << "#pragma unroll 4\n"
         << "    for (long long v = threadIdx.x; v < " << N4
         << "; v += 512) {\n";
    }
    os << "      const long long cb = 4LL * v;\n      {\n";
    if (auto err = loadFour(p, os))
      return err;
    os << "#pragma unroll\n        for (int j = 0; j < 4; ++j)\n"
       << "          a[j] = __fadd_rn(a[j], xv[j]);\n      }\n    }\n"
       << "    float acc = __fadd_rn(__fadd_rn(__fadd_rn(a[0], a[1]), a[2]), "
          "a[3]);\n";
    os << "    for (int o = 16; o > 0; o >>= 1)\n"
       << "      acc = __fadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, "
          "o));\n";
    // A block a row: each warp's shuffle tree first (above), then the
    // tree over the 16 warps' sums, halving from 8 (eager's order, run76).
    if (!warpRows)
      os << "    __syncthreads(); // the previous row's readers of ared\n"
         << "    if (x == 0) ared[y] = acc;\n"
         << "    for (int o = 8; o > 0; o >>= 1) {\n"
         << "      __syncthreads();\n"
         << "      if (threadIdx.x < o) {\n"
         << "        acc = __fadd_rn(ared[threadIdx.x], ared[threadIdx.x + "
            "o]);\n"
         << "        ared[threadIdx.x] = acc;\n"
         << "      }\n    }\n";
    if (auto err = writeRowResult(p,
                                  warpRows ? "    if (live && lane == 0) {\n"
                                           : "    if (threadIdx.x == 0) {\n",
                                  os))
      return err;
    os << "  }\n";
    return llvm::Error::success();
  }
};

} // namespace

llvm::Error codegen::emitAtenReduceRows(RegionEmitter &e, const StageInfo &f,
                                        YieldOp yield, const RowPlan &p,
                                        llvm::raw_ostream &os) {
  return AtenReduce(e, f, yield).emit(p, os);
}

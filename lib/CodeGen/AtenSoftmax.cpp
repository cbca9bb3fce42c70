//===- AtenSoftmax.cpp - Softmax over short rows in ATen's own order -----===//
//
// A softmax or log_softmax over the last dim of at most 1024 elements that
// must round as eager's does (a step op after it) is computed as ATen's
// persistent warp softmax computes it (softmax_warp_forward in
// aten/src/ATen/native/cuda/PersistentSoftmax.cuh): W = min(next power of
// two of the row, 32) lanes a row, lane l holding elements l, l + W, ...
// of the row padded with -inf to that power of two; the lane's maximum in
// order, `m > x ? m : x`, then a butterfly over the W lanes with ATen's Max
// (`a < b ? b : a`); the lane's sum of expf(x - max) in order from 0, then
// the butterfly with `+`; out = e / sum, or x - max - logf(sum). The
// pointwise ops before and after the softmax round as ATen's already;
// kb-verify's eager_mismatches confirms each kernel.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

/// The row padded to a power of two, as ATen's warp softmax pads it.
static int64_t paddedRow(int64_t cols) { return llvm::PowerOf2Ceil(cols); }

int64_t codegen::atenSoftmaxBatch(int64_t cols) {
  int64_t it = paddedRow(cols) / atenSoftmaxLanes(cols);
  return it <= 2 ? 4 : it <= 4 ? 2 : 1;
}

int64_t codegen::atenSoftmaxLanes(int64_t cols) {
  return std::min<int64_t>(paddedRow(cols), 32);
}

namespace {

class AtenSoftmax : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t W = atenSoftmaxLanes(p.cols), pow2 = paddedRow(p.cols);
    int64_t B = std::max(p.groupUnroll, 1);
    std::string IT = std::to_string(pow2 / W), Ws = std::to_string(W),
                Bs = std::to_string(B), C = std::to_string(p.cols) + "LL",
                R = std::to_string(p.rows) + "LL";
    bool log = f.recipe == Recipe::LogSoftmax;
    // Lane group q takes rows qB .. qB + B - 1 (ATen's WARP_BATCH), all
    // their loads before the first shuffle; each row's arithmetic is its
    // own, so B changes no bit.
    os << "  const int lane = threadIdx.x & " << W - 1 << ";\n"
       << "  for (long long q0 = ((long long)blockIdx.x * 256 + (threadIdx.x & "
          "~31)) / "
       << Ws << "; q0 < " << (p.rows + B - 1) / B
       << "LL;\n       q0 += (long long)gridDim.x * " << 256 / W << ") {\n"
       << "    const long long q = q0 + (threadIdx.x & 31) / " << Ws << ";\n";
    // ATen's padding is part of its arithmetic: -inf joins the maximum
    // (after a NaN it wins `m > x ? m : x`) and adds expf(-inf - m).
    os << "    float xs[" << Bs << "][" << IT << "];\n"
       << "#pragma unroll\n    for (int b = 0; b < " << Bs << "; ++b) {\n"
       << "      const long long r = q * " << Bs << " + b;\n"
       << "#pragma unroll\n      for (int k = 0; k < " << IT << "; ++k) {\n"
       << "        const long long c = lane + k * " << Ws << ";\n"
       << "        xs[b][k] = -kb::inf();\n"
       << "        if (r < " << R << " && c < " << C << ") {\n"
       << "          const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    auto x = e.valueAt(f.input, "i", os, "          ");
    if (!x)
      return x.takeError();
    os << "          xs[b][k] = " << *x << ";\n        }\n      }\n    }\n";
    e.newScope();
    os << "    float mv[" << Bs << "], sv[" << Bs << "];\n"
       << "#pragma unroll\n    for (int b = 0; b < " << Bs << "; ++b) {\n"
       << "      mv[b] = xs[b][0];\n"
       << "#pragma unroll\n      for (int k = 1; k < " << IT << "; ++k)\n"
       << "        mv[b] = mv[b] > xs[b][k] ? mv[b] : xs[b][k];\n    }\n"
       << "    for (int o = " << W / 2 << "; o > 0; o >>= 1) {\n"
       << "#pragma unroll\n      for (int b = 0; b < " << Bs << "; ++b) {\n"
       << "        const float v = __shfl_xor_sync(0xffffffffu, mv[b], o);\n"
       << "        mv[b] = mv[b] < v ? v : mv[b]; // ATen's Max: a NaN partner "
          "is dropped\n"
       << "      }\n    }\n";
    // ATen's statement shapes, so that nvcc contracts (or not) the sum with
    // expf's last multiply as it does in ATen's kernel.
    if (!log)
      os << "    float exv[" << Bs << "][" << IT << "];\n";
    os << "#pragma unroll\n    for (int b = 0; b < " << Bs << "; ++b) {\n"
       << "      sv[b] = 0.f;\n"
       << "#pragma unroll\n      for (int k = 0; k < " << IT << "; ++k)";
    if (log)
      os << "\n        sv[b] += expf(__fsub_rn(xs[b][k], mv[b]));\n";
    else
      os << " {\n        exv[b][k] = expf(__fsub_rn(xs[b][k], mv[b]));\n"
         << "        sv[b] += exv[b][k];\n      }\n";
    os << "    }\n"
       << "    for (int o = " << W / 2 << "; o > 0; o >>= 1) {\n"
       << "#pragma unroll\n      for (int b = 0; b < " << Bs << "; ++b)\n"
       << "        sv[b] = sv[b] + __shfl_xor_sync(0xffffffffu, sv[b], o);\n"
       << "    }\n"
       << "#pragma unroll\n    for (int b = 0; b < " << Bs << "; ++b) {\n"
       << "      const long long r = q * " << Bs << " + b;\n"
       << "      const float m = mv[b], s = sv[b];\n";
    if (log)
      os << "      const float ls = logf(s);\n";
    else
      os << "      const float* ex = exv[b];\n";
    os << "#pragma unroll\n      for (int k = 0; k < " << IT << "; ++k) {\n"
       << "        const long long c = lane + k * " << Ws << ";\n"
       << "        if (r < " << R << " && c < " << C << ") {\n"
       << "          const long long i = " << p.index("r", "c") << ";\n";
    if (auto err = writeElement(p, "xs[b][k]", os, "          "))
      return err;
    e.newScope();
    os << "        }\n      }\n    }\n  }\n";
    return llvm::Error::success();
  }
};

/// ATen's spatial softmax with T threads along the dim: block (T, inner)
/// played as a 1-d block of T * inner threads (tx = threadIdx.x % T), one
/// block per outer index. Thread tx folds elements tx, tx + T, ... of its
/// row in order; spatialBlockReduceX combines the T partials through
/// shared memory, halving (sh[tx] = op(sh[tx], sh[tx + off])).
class AtenSpatial : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t T = p.spatialThreads, inner = p.spatialInner;
    std::string Ts = std::to_string(T), C = std::to_string(p.cols) + "LL";
    os << "  __shared__ float sdata[" << T * inner << "];\n"
       << "  const int tx = threadIdx.x % " << Ts << ", ty = threadIdx.x / "
       << Ts << ";\n"
       << "  float* sh = sdata + ty * " << Ts << ";\n"
       << "  for (long long o = blockIdx.x; o < " << p.rows / inner
       << "LL; o += gridDim.x) {\n"
       << "    const long long r = o * " << inner << "LL + ty;\n"
       << "    float m = (-3.40282347e+38f); // ATen's lowest()\n";
    if (auto err = loop(p, "      m = (m < {x}) ? {x} : m;\n", os))
      return err;
    tree("m", "(sh[tx] < sh[tx + off]) ? sh[tx + off] : sh[tx]", T, os);
    os << "    float acc = 0.f;\n";
    if (auto err = loop(p, "      acc += expf(__fsub_rn({x}, m));\n", os))
      return err;
    tree("acc", "sh[tx] + sh[tx + off]", T, os);
    if (auto err = writeElementPass(
            p, "    for (long long c = tx; c < " + C + "; c += " + Ts + ") {\n",
            os))
      return err;
    os << "  }\n";
    return llvm::Error::success();
  }

private:
  /// A pass over the thread's elements of its row, `step` with {x} the
  /// element's value.
  llvm::Error loop(const RowPlan &p, llvm::StringRef step,
                   llvm::raw_ostream &os) {
    return writeStepPass(
        p,
        "    for (long long c = tx; c < " + std::to_string(p.cols) +
            "LL; c += " + std::to_string(p.spatialThreads) + ") {\n",
        step, os);
  }

  /// spatialBlockReduceX: `v` of every thread into sh[0] of its row,
  /// `combined` being ATen's op on sh[tx] and sh[tx + off].
  void tree(llvm::StringRef v, llvm::StringRef combined, int64_t T,
            llvm::raw_ostream &os) {
    os << "    __syncthreads();\n"
       << "    sh[tx] = " << v << ";\n"
       << "    for (int off = " << T / 2 << "; off > 0; off >>= 1) {\n"
       << "      __syncthreads();\n"
       << "      if (tx < off)\n"
       << "        sh[tx] = " << combined << ";\n"
       << "    }\n"
       << "    __syncthreads();\n"
       << "    " << v << " = sh[0];\n";
  }
};

/// ATen's spatial softmax with one thread per row (inner > 64 or a dim
/// under 64): the thread folds its row's maximum and then its float sum of
/// expf(x - max) in order. Played by items of 32 neighbouring rows (one a
/// lane) whose loads all 16 warps of a block share: the maximum, exact in
/// any order, over each warp's columns and then the 16 partials; the sum in
/// ATen's order by warp 0 alone, from chunks of the rows the other warps
/// stage in shared memory (double-buffered, so staging chunk k overlaps
/// folding chunk k - 1); the outputs by every warp. One thread a row
/// re-reading it three times from memory ran at 1.3 TB/s (gen-20261214
/// task 1: softmax over dim 1 of 487 x 512 x 256, 0.40 ms; as items of 32
/// rows, 0.297). Every block the hardware keeps resident takes an item:
/// fewer blocks an SM, so that the items in flight stay in L2 between the
/// passes, measured slower (session 29, kb-verify with L2 flushed: 3, 2 and
/// 1 blocks 0.337, 0.387, 0.615 ms): the loads in flight, not L2 capacity,
/// bound it.
class AtenStrided : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    constexpr int64_t kStagers = kAtenStridedWarps - 1;
    int64_t chunk = kStagers * kStagedPerWarp,
            chunks = (p.cols + chunk - 1) / chunk;
    std::string C = std::to_string(p.cols) + "LL", CH = std::to_string(chunk),
                W = std::to_string(kAtenStridedWarps);
    os << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
       << "  __shared__ float part[" << 32 * kAtenStridedWarps << "];\n"
       << "  __shared__ float staged[2][" << CH << "][32];\n"
       << "  for (long long item = blockIdx.x; item < " << (p.rows + 31) / 32
       << "LL; item += gridDim.x) {\n"
       << "    const long long r = item * 32 + lane;\n"
       << "    const long long cEnd = r < " << p.rows << "LL ? " << C
       << " : 0;\n"
       << "    float m = (-3.40282347e+38f); // ATen's lowest()\n";
    if (auto err = writeStepPass(p,
                                 "#pragma unroll 8\n    for (long long c = "
                                 "warp; c < cEnd; c += " +
                                     W + ") {\n",
                                 "      m = (m < {x}) ? {x} : m;\n", os))
      return err;
    // A maximum is the same value whichever order finds it (a NaN never
    // replaces m, as in ATen's fold).
    os << "    part[threadIdx.x] = m;\n"
       << "    __syncthreads();\n"
       << "    m = part[lane];\n"
       << "    for (int w = 1; w < " << W << "; ++w) {\n"
       << "      const float v = part[w * 32 + lane];\n"
       << "      m = (m < v) ? v : m;\n"
       << "    }\n"
       << "    float acc = 0.f;\n"
       << "    for (int k = 0; k <= " << chunks << "; ++k) {\n"
       << "      if (warp > 0 && k < " << chunks << ") {\n"
       << "#pragma unroll\n"
       << "        for (int u = 0; u < " << kStagedPerWarp << "; ++u) {\n"
       << "          const int j = warp - 1 + u * " << kStagers << ";\n"
       << "          const long long c = (long long)k * " << CH << " + j;\n"
       << "          float v = 0.f;\n"
       << "          if (c < cEnd) {\n"
       << "            const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    auto x = e.valueAt(f.input, "i", os, "            ");
    if (!x)
      return x.takeError();
    os << "            v = " << *x << ";\n"
       << "          }\n"
       << "          staged[k & 1][j][lane] = v;\n"
       << "        }\n"
       << "      }\n";
    e.newScope();
    // ATen's statement, so that nvcc contracts the sum with expf's last
    // multiply as it does there.
    os << "      if (warp == 0 && k > 0) {\n"
       << "        const long long c0 = (long long)(k - 1) * " << CH << ";\n"
       << "        const int n = cEnd - c0 < " << CH
       << " ? (int)(cEnd - c0) : " << CH << ";\n"
       << "#pragma unroll 8\n"
       << "        for (int j = 0; j < n; ++j)\n"
       << "          acc += expf(__fsub_rn(staged[(k - 1) & 1][j][lane], m));\n"
       << "      }\n"
       << "      __syncthreads();\n"
       << "    }\n"
       << "    if (warp == 0)\n"
       << "      part[lane] = acc;\n"
       << "    __syncthreads();\n"
       << "    acc = part[lane];\n";
    if (auto err = writeElementPass(p,
                                    "#pragma unroll 4\n    for (long long c = "
                                    "warp; c < cEnd; c += " +
                                        W + ") {\n",
                                    os))
      return err;
    // part is rewritten by the next item's maximum.
    os << "    __syncthreads();\n  }\n";
    return llvm::Error::success();
  }
};

} // namespace

int codegen::atenStridedBlocksPerSM(const RowPlan &p) {
  return p.splitPerSM > 0 ? std::min(p.splitPerSM, 4) : 4;
}

int64_t codegen::atenSpatialThreads(int64_t cols, int64_t inner) {
  int64_t innerThreads = std::min<int64_t>(inner, 1024), t = 1;
  if (innerThreads <= 64 && cols >= 64) {
    while (innerThreads * t <= 1024 && t <= cols)
      t *= 2;
    t /= 2;
  }
  return t;
}

llvm::Error codegen::emitAtenSpatialRows(RegionEmitter &e, const StageInfo &f,
                                         YieldOp yield, const RowPlan &p,
                                         llvm::raw_ostream &os) {
  return AtenSpatial(e, f, yield).emit(p, os);
}

llvm::Error codegen::emitAtenStridedRows(RegionEmitter &e, const StageInfo &f,
                                         YieldOp yield, const RowPlan &p,
                                         llvm::raw_ostream &os) {
  return AtenStrided(e, f, yield).emit(p, os);
}

llvm::Error codegen::emitAtenSoftmaxRows(RegionEmitter &e, const StageInfo &f,
                                         YieldOp yield, const RowPlan &p,
                                         llvm::raw_ostream &os) {
  return AtenSoftmax(e, f, yield).emit(p, os);
}

//===- AtenRows.cpp - Layer norms in ATen's own order ---------------------===//
//
// A layer norm whose output must round as eager's does (a step or singular
// op after it, where rewrite's numerics policy would otherwise keep it in
// ATen) is computed as ATen's vectorized CUDA kernel computes it: the path
// ATen takes for float rows of a multiple of 4 elements, at most 2^24
// (aten/src/ATen/native/cuda/layer_norm_kernel.cu). Each row gets 128
// threads, as ATen's (32, 4) block; thread t folds float4s t, t + 128, ...
// into a float Welford (kb::ln_add), the lanes combine by shuffle-down in
// each warp and the four warps through shared memory in ATen's tree
// (kb::ln_row_stats); var = m2 / N and rstd = rsqrtf(var + eps). The same
// operations in the same order give the same bits, and the pointwise ops
// before and after the norm are ATen's to the bit already: kb-verify's
// eager_mismatches confirms each kernel. Several rows share a block when
// they are short (ATen's lone row of 64 leaves 112 of 128 threads idle).
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

#include "llvm/Support/Format.h"

#include <cstring>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int64_t codegen::atenLanes(int64_t cols) {
  if (cols % 4 && cols > kAtenMomentsWarpMax)
    return 512;   // RowwiseMoments as it is: ATen's 512 threads a row
  if (cols % 4) { // RowwiseMoments: a warp a row, fewer lanes for <= 32
    int64_t g = 1;
    while (g < cols && g < 32)
      g *= 2;
    return g;
  }
  int64_t n4 = cols / 4;
  if (n4 > 256)
    return 128; // ATen's block as it is
  if (n4 > 32)
    return 32; // its four warps in one
  int64_t g = 1; // its warp 0 alone, the rest empty
  while (g < n4)
    g *= 2;
  return g;
}

int64_t codegen::atenRowsPerBlock(int64_t cols) {
  int64_t lanes = atenLanes(cols);
  return lanes >= 128 ? 1 : 256 / lanes;
}

std::string codegen::floatBits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "__int_as_float(" << llvm::format_hex(u, 10) << ")";
  return s;
}

namespace {

class AtenRows : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    auto eps = getConstantNumber(AtenOp(f.op).getArg("eps"));
    if (!eps)
      return e.unsupported("a layer norm in ATen's order needs a constant "
                           "eps");
    std::string epsBits = floatBits((float)*eps);
    if (p.cols % 4 && p.cols > kAtenMomentsWarpMax)
      return emitMomentsBlock(p, epsBits, os);
    if (p.cols % 4)
      return emitMoments(p, atenLanes(p.cols), epsBits, os);
    if (int64_t lanes = atenLanes(p.cols); lanes < 128)
      return emitGroups(p, lanes, epsBits, os);
    int64_t n4 = p.cols / 4, k4 = (n4 + 127) / 128,
            rb = atenRowsPerBlock(p.cols);
    bool held = p.cols <= kAtenHeldMax;
    std::string R = std::to_string(p.rows) + "LL",
                C = std::to_string(p.cols) + "LL", RB = std::to_string(rb);
    os << "  __shared__ float lnb[" << 6 * rb << "];\n"
       << "  const int t = threadIdx.x & 127, sub = threadIdx.x >> 7;\n"
       << "  // r0 is uniform in the block: every thread reaches every "
          "barrier.\n"
       << "  for (long long r0 = (long long)blockIdx.x * " << RB << "; r0 < "
       << R << "; r0 += (long long)gridDim.x * " << RB << ") {\n"
       << "    const long long r = r0 + sub;\n"
       << "    const bool live = r < " << R << ";\n"
       << "    kb::LnWelford w = {0.f, 0.f, 0.f};\n";
    if (held)
      os << "    float xs[" << 4 * k4 << "];\n";
    // Thread t's float4s in ATen's order, each one's elements in order.
    std::string open =
        held ? "#pragma unroll\n    for (int k = 0; k < " +
                   std::to_string(k4) +
                   "; ++k) {\n      const long long cb = 4LL * (t + k * "
                   "128);\n      if (live && cb < " +
                   C + ") {\n"
             : "#pragma unroll 4\n    for (long long cb = 4LL * t; live && "
               "cb < " +
                   C + "; cb += 512) {\n      {\n";
    os << open;
    if (auto err = loadFour(p, os))
      return err;
    os << "#pragma unroll\n        for (int j = 0; j < 4; ++j) {\n";
    if (held)
      os << "          xs[4 * k + j] = xv[j];\n";
    os << "          kb::ln_add(w, xv[j]);\n        }\n      }\n    }\n";
    writeMeanRstd("kb::ln_row_stats(w, t, lnb + 6 * sub, " +
                      std::to_string(p.cols) + ".f)",
                  epsBits, os);

    os << open;
    if (held) {
      os << "        const long long ib = " << p.index("r", "cb") << ";\n";
    } else if (auto err = loadFour(p, os)) {
      return err;
    }
    return writeFour(p, held ? "xs[4 * k + j]" : "xv[j]", os);
  }

private:
  /// The row's mean and rstd from `stats` (a float2 of mean and m2 / N),
  /// as ATen: rsqrtf(var + eps) with eps as a float.
  void writeMeanRstd(llvm::StringRef stats, llvm::StringRef epsBits,
                     llvm::raw_ostream &os) {
    os << "    const float2 st = " << stats << ";\n"
       << "    const float mean = st.x, rstd = rsqrtf(st.y + " << epsBits
       << ");\n";
  }

  /// ATen's RowwiseMoments path (rows not a multiple of 4): its thread j of
  /// 512 folds elements j, j + 512, ... with WelfordOps. Rows of at most 32
  /// get a group of G lanes, one element each (kb::wf_group_stats);
  /// longer ones a warp, lane l playing thread 32v + l of each of ATen's
  /// warps v that hold elements (kb::wf_warp16_stats). The output pass
  /// re-reads the row, as ATen's second kernel does.
  llvm::Error emitMoments(const RowPlan &p, int64_t lanes,
                          llvm::StringRef epsBits, llvm::raw_ostream &os) {
    int64_t V = std::min<int64_t>((p.cols + 31) / 32, 16);
    bool group = p.cols <= 32;
    std::string C = std::to_string(p.cols) + "LL", G = std::to_string(lanes);
    openGroupRows(p, lanes, os);
    if (group)
      os << "    kb::WfState w = {0.f, 0.f, 0.f};\n"
         << "    {\n      const long long c = lane;\n"
         << "      if (live && c < " << C << ") {\n";
    else
      os << "    kb::WfState w[" << V << "] = {};\n"
         << "#pragma unroll\n    for (int v = 0; v < " << V << "; ++v)\n"
         << "      for (long long c = lane + 32 * v; live && c < " << C
         << "; c += 512) {\n      {\n";
    os << "        const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    auto x = e.valueAt(f.input, "i", os, "        ");
    if (!x)
      return x.takeError();
    os << "        kb::wf_add(" << (group ? "w" : "w[v]") << ", " << *x
       << ");\n      }\n    }\n";
    e.newScope();
    writeMeanRstd((group
                       ? "kb::wf_group_stats<" + G + ">(w, "
                       : "kb::wf_warp16_stats<" + std::to_string(V) + ">(w, ") +
                      std::to_string(p.cols) + ".f)",
                  epsBits, os);
    if (auto err =
            writeElementPass(p,
                             "    for (long long c = lane; live && c < " + C +
                                 "; c += " + G + ") {\n",
                             os))
      return err;
    os << "  }\n";
    return llvm::Error::success();
  }

  /// RowwiseMoments over rows longer than a warp plays well (one warp
  /// folding 16 threads' elements one after another): the block is ATen's,
  /// 512 threads a row, thread t folding elements t, t + 512, ... with
  /// kb::wf_add; cuda_utils::BlockReduce's order after it: each warp's
  /// shuffle-down tree, then warp 0's over the 16 partials (lanes 16-31
  /// empty). The output pass re-reads the row, as ATen's second kernel.
  llvm::Error emitMomentsBlock(const RowPlan &p, llvm::StringRef epsBits,
                               llvm::raw_ostream &os) {
    std::string C = std::to_string(p.cols) + "LL";
    int B = std::max(p.momentsBatch, 1);
    std::string Bs = std::to_string(B);
    // Batches of B elements a thread, t + 512 u for u < B, loaded at
    // clamped indices (every load is in the row, no branch) and folded in
    // u's order: the same order as one at a time.
    std::string batchHead = "    for (long long c0 = threadIdx.x; c0 < " + C +
                            "; c0 += " + std::to_string(512 * B) + "LL) {\n";
    std::string batchOpen = "#pragma unroll\n    for (int j = 0; j < " + Bs +
                            "; ++j) {\n      const long long c = min(c0 + "
                            "512LL * j, " +
                            C + " - 1);\n";
    os << "  __shared__ kb::WfState wfp[16];\n"
       << "  __shared__ float2 wfs;\n"
       << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
       << "  for (long long r = blockIdx.x; r < " << p.rows
       << "LL; r += gridDim.x) {\n"
       << "    kb::WfState w = {0.f, 0.f, 0.f};\n";
    if (B == 1) {
      if (auto err = writeStepPass(
              p,
              "#pragma unroll 4\n    for (long long c = threadIdx.x; c < " + C +
                  "; c += 512) {\n",
              "      kb::wf_add(w, {x});\n", os))
        return err;
    } else {
      os << batchHead << "    float xb[" << Bs << "];\n";
      if (auto err = writeStepPass(p, batchOpen, "      xb[j] = {x};\n", os))
        return err;
      os << "#pragma unroll\n    for (int j = 0; j < " << Bs << "; ++j)\n"
         << "      if (c0 + 512LL * j < " << C << ")\n"
         << "        kb::wf_add(w, xb[j]);\n"
         << "    }\n";
    }
    os << "    for (int o = 16; o > 0; o >>= 1)\n"
       << "      w = kb::wf_combine(w, kb::wf_down(w, o, 32));\n"
       << "    __syncthreads(); // the previous row's readers of wfp, wfs\n"
       << "    if (lane == 0)\n      wfp[warp] = w;\n"
       << "    __syncthreads();\n"
       << "    if (warp == 0) {\n"
       << "      w = lane < 16 ? wfp[lane] : kb::WfState{0.f, 0.f, 0.f};\n"
       << "      for (int o = 16; o > 0; o >>= 1)\n"
       << "        w = kb::wf_combine(w, kb::wf_down(w, o, 32));\n"
       << "      if (lane == 0)\n"
       << "        wfs = make_float2(w.mean, w.m2 / " << p.cols << ".f);\n"
       << "    }\n"
       << "    __syncthreads();\n";
    writeMeanRstd("wfs", epsBits, os);
    if (B == 1) {
      if (auto err =
              writeElementPass(p,
                               "    for (long long c = threadIdx.x; c < " + C +
                                   "; c += 512) {\n",
                               os))
        return err;
      os << "  }\n";
      return llvm::Error::success();
    }
    // The outputs of a batch into registers first (ov<k>[j]), then stored:
    // no store stands between one element's loads and the next one's.
    os << batchHead;
    for (auto [k, v] : llvm::enumerate(yield.getValues()))
      os << "    " << valueCType(v) << " ov" << k << "[" << Bs << "];\n";
    if (auto err = writeElementPass(p, batchOpen, os, /*toSlots=*/true))
      return err;
    os << "#pragma unroll\n    for (int j = 0; j < " << Bs
       << "; ++j) {\n      const long long c = c0 + 512LL * j;\n"
       << "      if (c < " << C
       << ") {\n        const long long i = " << p.index("r", "c") << ";\n";
    for (size_t k = 0; k < yield.getValues().size(); ++k)
      os << "        " << e.store(k, "i", "ov" + std::to_string(k) + "[j]")
         << "\n";
    os << "      }\n    }\n    }\n  }\n";
    return llvm::Error::success();
  }

  /// Rows of at most 1024 elements: a group of `lanes` lanes per row (a
  /// power of two up to 32), 256 / lanes rows a block of 256. Up to 32
  /// float4s, ATen's warp 0 alone holds the row (kb::ln_group_stats);
  /// longer rows, lane l plays thread 32v + l of each of ATen's four warps
  /// v (w[v], kb::ln_warp4_stats). The row is held in registers.
  llvm::Error emitGroups(const RowPlan &p, int64_t lanes,
                         llvm::StringRef epsBits, llvm::raw_ostream &os) {
    int64_t n4 = p.cols / 4;
    bool four = n4 > 32;
    int64_t k4 = four ? (n4 + 127) / 128 : 1, slots = four ? 4 * k4 : 1;
    std::string C = std::to_string(p.cols) + "LL", G = std::to_string(lanes);
    openGroupRows(p, lanes, os);
    os << (four ? "    kb::LnWelford w[4] = {};\n"
                : "    kb::LnWelford w = {0.f, 0.f, 0.f};\n")
       << "    float xs[" << 4 * slots << "];\n";
    // Slot s: ATen's warp v = s / k4, its thread's k-th float4 (in order).
    std::string open =
        "#pragma unroll\n    for (int s = 0; s < " + std::to_string(slots) +
        "; ++s) {\n" +
        (four ? "      const long long cb = 4LL * (lane + 32 * (s / " +
                    std::to_string(k4) + ") + 128 * (s % " +
                    std::to_string(k4) + "));\n"
              : std::string("      const long long cb = 4LL * lane;\n")) +
        "      if (live && cb < " + C + ") {\n";
    os << open;
    if (auto err = loadFour(p, os))
      return err;
    os << "#pragma unroll\n        for (int j = 0; j < 4; ++j) {\n"
       << "          xs[4 * s + j] = xv[j];\n"
       << "          kb::ln_add(" << (four ? "w[s / " + std::to_string(k4) + "]"
                                            : std::string("w"))
       << ", xv[j]);\n        }\n      }\n    }\n";
    writeMeanRstd((four ? std::string("kb::ln_warp4_stats(w, ")
                        : "kb::ln_group_stats<" + G + ">(w, ") +
                      std::to_string(p.cols) + ".f)",
                  epsBits, os);
    os << open << "        const long long ib = " << p.index("r", "cb")
       << ";\n";
    return writeFour(p, "xs[4 * s + j]", os);
  }

  /// The output pass's body: the norm of each element `x` of the float4 at
  /// cb and the region's outputs there, each stored as one float4 (outputs
  /// are indexed as the input is). Weight and bias arguments are read as
  /// float4s too, as ATen reads them.
  llvm::Error writeFour(const RowPlan &p, llvm::StringRef x,
                        llvm::raw_ostream &os) {
    std::string in = "        ";
    size_t n = yield.getValues().size();
    SmallVector<std::pair<Value, std::string>> affine;
    for (llvm::StringRef name : {"weight", "bias"}) {
      auto a = dyn_cast_or_null<BlockArgument>(AtenOp(f.op).getArg(name));
      if (!a || isNone(a) || product(shapeOf(a)) != p.cols)
        continue;
      std::string k = std::to_string(a.getArgNumber());
      os << in << "const float4 a4_" << k
         << " = *reinterpret_cast<const float4*>(in" << k << " + cb);\n"
         << in << "const float as" << k << "[4] = {a4_" << k << ".x, a4_" << k
         << ".y, a4_" << k << ".z, a4_" << k << ".w};\n";
      affine.push_back({a, "as" + k + "[j]"});
    }
    for (size_t k = 0; k < n; ++k)
      os << in << "float ov" << k << "[4];\n";
    os << "#pragma unroll\n"
       << in << "for (int j = 0; j < 4; ++j) {\n"
       << in << "  const long long c = cb + j, i = ib + j;\n"
       << in << "  (void)c; (void)i;\n";
    e.newScope();
    for (auto &[v, name] : affine)
      e.seed(v, "c", name);
    if (auto err = writeElement(p, x, os, in + "  ", /*toSlots=*/true))
      return err;
    os << in << "}\n";
    e.newScope();
    for (size_t k = 0; k < n; ++k)
      os << in << e.storeFour(k, "ib", "ov" + std::to_string(k)) << "\n";
    os << "      }\n    }\n  }\n";
    return llvm::Error::success();
  }
};

} // namespace

/// `ib` and `float xv[4]`: the input's elements cb..cb+3 of row r, read
/// as one float4 where the input is an argument (or each argument its
/// pointwise prologue reads), the prologue evaluated per element.
llvm::Error codegen::RowWriter::loadFour(const RowPlan &p,
                                         llvm::raw_ostream &os) {
  std::string in = "        ";
  os << in << "const long long ib = " << p.index("r", "cb") << ";\n";
  Block &body = e.kernel.getBody().front();
  if (p.vec4) {
    unsigned a = cast<BlockArgument>(f.input).getArgNumber();
    os << in << "const float4 v4 = *reinterpret_cast<const float4*>(in" << a
       << " + ib);\n"
       << in << "const float xv[4] = {v4.x, v4.y, v4.z, v4.w};\n";
    return llvm::Error::success();
  }
  for (unsigned a : p.vecArgs) {
    std::string k = std::to_string(a);
    os << in << "const float4 v4_" << k
       << " = *reinterpret_cast<const float4*>(in" << k << " + ib);\n"
       << in << "const float xs" << k << "[4] = {v4_" << k << ".x, v4_" << k
       << ".y, v4_" << k << ".z, v4_" << k << ".w};\n";
  }
  os << in << "float xv[4];\n"
     << "#pragma unroll\n"
     << in << "for (int j = 0; j < 4; ++j) {\n"
     << in << "  const long long c = cb + j, i = ib + j;\n"
     << in << "  (void)c; (void)i;\n";
  e.newScope();
  for (unsigned a : p.vecArgs)
    e.seed(body.getArgument(a), "i", "xs" + std::to_string(a) + "[j]");
  auto x = e.valueAt(f.input, "i", os, in + "  ");
  if (!x)
    return x.takeError();
  os << in << "  xv[j] = " << *x << ";\n" << in << "}\n";
  e.newScope();
  return llvm::Error::success();
}

llvm::Error codegen::emitAtenOrderRows(RegionEmitter &e, const StageInfo &f,
                                       YieldOp yield, const RowPlan &p,
                                       llvm::raw_ostream &os) {
  return AtenRows(e, f, yield).emit(p, os);
}

//===- CxxStages.cpp - C++ chains through a reduction, softmax or pool ----===//
//
// A C++ chain with a stage: pointwise ops on the input, one reduction over
// dims, softmax over a dim or 2-d pooling, and pointwise ops with numbers
// on its result. Sizes come at run time, so the kernels take the stage's
// geometry as parameters: rows (outer x len x inner) for reductions and
// softmax, planes and windows for pooling. The pointwise ops before the
// stage are evaluated where the stage reads an element (`<name>_at`), the
// ones after it where it writes one (`<name>_post`): nothing in between is
// stored. Each element rounds as in ATen: expressions from the op table,
// max and NaN rules of ATen's kernels, pooling sums in ATen's window order
// and its divisors; sums and means accumulate in double (ATen's float
// trees differ by a few ulps, which kb-verify --cxx bounds).
//
//===----------------------------------------------------------------------===//

#include "CxxKernelParts.h"

#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <regex>

using llvm::StringRef;

namespace kb::codegen::cxx {
namespace {

/// The kernel parameters' names (", a1, s2, inner, channels"), to pass
/// them on from a kernel to `<name>_at`.
std::string parameterNames(StringRef kparams) {
  llvm::SmallVector<StringRef> parts;
  kparams.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::string out;
  for (StringRef part : parts)
    out += ", " + part.trim().rsplit(' ').second.str();
  return out;
}

/// The operand index of the stage op's schema operand `name`, -1 when the
/// call left it out.
int stageArg(const CxxRewritePlan &p, StringRef name) {
  const CxxPlanOp &op = p.ops[p.stage];
  const OpInfo *row = rowOf(op);
  std::optional<unsigned> k = row ? row->argIndex(name) : std::nullopt;
  return k && *k >= 1 && *k - 1 < op.args.size() ? op.args[*k - 1] : -1;
}

/// The host expression of stage operand `name`, or `dflt` when absent.
std::string stageValue(const CxxRewritePlan &p, StringRef name,
                       StringRef dflt) {
  int idx = stageArg(p, name);
  return idx < 0 ? dflt.str() : operandName(p, idx);
}

/// How one reduction accumulates: its accumulator, step over `v`, combine
/// functor and result expression (of `acc` and the row length `len`).
struct Reduction {
  std::string type, init, step, combine, result;
};

Reduction reductionOf(CxxStage k) {
  switch (k) {
  case CxxStage::Amax:
    return {"float", "-INFINITY", "acc = kb_rewrite::detail::MaxNan{}(acc, v);",
            "kb_rewrite::detail::MaxNan{}", "acc"};
  case CxxStage::Amin:
    return {"float", "INFINITY", "acc = kb_rewrite::detail::MinNan{}(acc, v);",
            "kb_rewrite::detail::MinNan{}", "acc"};
  case CxxStage::Sum:
    return {"double", "0.0", "acc += (double)v;", "kb_rewrite::detail::Add{}",
            "(float)acc"};
  default: // Mean, and adaptive average pooling to 1x1 (ATen's mean)
    return {"double", "0.0", "acc += (double)v;", "kb_rewrite::detail::Add{}",
            "(float)(acc / (double)len)"};
  }
}

bool isSoftmax(CxxStage k) {
  return k == CxxStage::Softmax || k == CxxStage::LogSoftmax;
}

/// The softmax element of `v` from the row's max `m` and sum `s`, in
/// ATen's forms (its epilogues: exp(x - max) / sum, x - max - log(sum));
/// --fast-math divides approximately (the exp stays expf, as in the graph
/// kernels).
std::string softmaxElement(CxxStage k, bool fast) {
  if (k == CxxStage::LogSoftmax)
    return "v - m - logf(s)";
  return fast ? "kb_rewrite::fast::softmax_div(expf(v - m), s)"
              : "expf(v - m) / s";
}

/// The three kernels over rows of `len` elements `inner` apart: a warp per
/// contiguous row, a block per long contiguous row, a thread per strided
/// row. `rowBody(lanes, stride)` is the body over one row, with `base` the
/// row's first element; lanes "" means one thread walks the row.
struct RowKernelText {
  std::string warp, block, column;
};

/// The warp-per-row kernel `<name>_rows` (8 rows per block of 256
/// threads) and the block-per-row kernel `<name>_rowsb` (`shared` its
/// shared arrays) around their bodies over the row at `base`.
void rowShells(RowKernelText &t, const std::string &name, const ChainParts &c,
               const std::string &shared, const std::string &warpBody,
               const std::string &blockBody) {
  std::string params = "(const float* __restrict__ in, float* __restrict__ "
                       "out, long long rows, long long len" +
                       c.kparams + ")";
  t.warp = "__global__ void __launch_bounds__(256)\n" + name + "_rows" +
           params +
           " {\n  const long long row = (long long)blockIdx.x * 8 + "
           "(threadIdx.x >> 5);\n  const int lane = threadIdx.x & 31;\n"
           "  if (row >= rows)\n    return;\n  {\n"
           "    const long long base = row * len;\n" +
           warpBody + "  }\n}\n\n";
  t.block = "__global__ void __launch_bounds__(256)\n" + name + "_rowsb" +
            params + " {\n" + shared +
            "  const long long row = blockIdx.x;\n  {\n"
            "    const long long base = row * len;\n" +
            blockBody + "  }\n}\n\n";
}

std::string rowBody(CxxStage k, bool fast, const std::string &name,
                    const std::string &args, const std::string &post,
                    const std::string &first, const std::string &step,
                    const std::string &reduceAcc, const std::string &reduceMax,
                    const std::string &reduceSum, const std::string &store,
                    const std::string &at) {
  auto load = [&](const std::string &idx) {
    return name + "_at(in, " + idx + args + ")";
  };
  auto loop = [&](const std::string &inner) {
    return "    for (long long r = " + first + "; r < len; r += " + step +
           ") {\n" + inner + "    }\n";
  };
  std::string s;
  if (isSoftmax(k)) {
    s += "    float m = -INFINITY;\n";
    s += loop("      m = kb_rewrite::detail::MaxNan{}(m, " + load(at) + ");\n");
    s += reduceMax;
    s += "    float s = 0.f;\n";
    s += loop("      s += expf(" + load(at) + " - m);\n");
    s += reduceSum;
    s += loop("      const float v = " + load(at) + ";\n      out[" + at +
              "] = " + name + "_post(" + softmaxElement(k, fast) + post +
              ");\n");
    return s;
  }
  Reduction red = reductionOf(k);
  s += "    " + red.type + " acc = " + red.init + ";\n";
  s +=
      loop("      const float v = " + load(at) + ";\n      " + red.step + "\n");
  s += reduceAcc;
  s += store + name + "_post(" + red.result + post + ");\n";
  return s;
}

RowKernelText rowKernels(CxxStage k, bool fast, const std::string &name,
                         const ChainParts &c) {
  const std::string args = parameterNames(c.kparams), post = c.postArgs;
  Reduction red = reductionOf(k);
  std::string accType = isSoftmax(k) ? "float" : red.type;
  auto combine = [&](const std::string &var, const std::string &fn,
                     bool block) {
    return "    " + var + " = kb_rewrite::detail::" +
           (block ? "blockReduce(" + var + ", " + fn + ", sh" +
                        (var == "acc" ? "" : var) + ");\n"
                  : "warpReduce(" + var + ", " + fn + ");\n");
  };
  RowKernelText t;
  // A block per row for rows of 1024 elements or more.
  std::string shared = isSoftmax(k) ? "  __shared__ float shm[32], shs[32];\n"
                                    : "  __shared__ " + accType + " sh[32];\n";
  rowShells(
      t, name, c, shared,
      rowBody(k, fast, name, args, post, "lane", "32",
              combine("acc", red.combine, false),
              combine("m", "kb_rewrite::detail::MaxNan{}", false),
              combine("s", "kb_rewrite::detail::Add{}", false),
              "    if (lane == 0)\n      out[row] = ", "base + r"),
      rowBody(k, fast, name, args, post, "(long long)threadIdx.x",
              "(long long)blockDim.x", combine("acc", red.combine, true),
              combine("m", "kb_rewrite::detail::MaxNan{}", true),
              combine("s", "kb_rewrite::detail::Add{}", true),
              "    if (threadIdx.x == 0)\n      out[row] = ", "base + r"));
  // A thread per strided row (a dim other than the last): neighbouring
  // threads read neighbouring elements.
  t.column =
      "__global__ void __launch_bounds__(256)\n" + name +
      "_cols(const float* __restrict__ in, float* __restrict__ out, long "
      "long rows, long long len, long long span" +
      c.kparams +
      ") {\n  for (long long t = (long long)blockIdx.x * blockDim.x + "
      "threadIdx.x; t < rows * span;\n       t += (long long)gridDim.x * "
      "blockDim.x) {\n    const long long o = t / span, j = t - o * "
      "span;\n    const long long base = o * len * span + j;\n" +
      rowBody(k, fast, name, args, post, "0", "1", "", "", "",
              "    out[t] = ", "base + r * span") +
      "  }\n}\n\n";
  return t;
}

/// A layer norm's two kernels over contiguous rows of `len` (its trailing
/// dims): a warp per row and a block per long row. As ATen's kernels: float
/// statistics, the biased variance, rsqrtf(var + eps), then
/// weight * ((x - mean) * rstd) + bias per element. The statistics are
/// ATen's in its own order, of whichever kernel ATen would run: the
/// vectorized one (rows of a multiple of 4, weight and bias 16-byte
/// aligned: detail::atenVecStats, its NaN rows included) or
/// RowwiseMomentsCUDAKernel (detail::atenRowStats*, which skips empty
/// partitions). Any other order differs in the last bits of the mean, which
/// rstd magnifies on nearly constant rows (run86: rows of 8, run87: of 3).
RowKernelText normKernels(const std::string &name, const CxxRewritePlan &p,
                          const ChainParts &c) {
  const std::string args = parameterNames(c.kparams), post = c.postArgs;
  int w = stageArg(p, "weight"), b = stageArg(p, "bias");
  std::string eps = stageValue(p, "eps", "1e-05");
  const std::string load = name + "_at(in, base + r" + args + ")";
  const std::string at = "[&](long long r) { return " + load + "; }";
  // An absent weight is 1 and an absent bias 0, as in ATen's kernel.
  std::string y = "(v - mean) * rstd";
  std::string aligned;
  for (int k : {w, b})
    if (k >= 0)
      aligned += " && ((size_t)a" + std::to_string(k) + " & 15) == 0";
  if (w >= 0)
    y +=
        " * (a" + std::to_string(w) + " ? a" + std::to_string(w) + "[r] : 1.f)";
  if (b >= 0)
    y +=
        " + (a" + std::to_string(b) + " ? a" + std::to_string(b) + "[r] : 0.f)";
  auto body = [&](const std::string &stats, const std::string &first,
                  const std::string &step) {
    return "    float mean, var;\n" + stats +
           "    const float rstd = rsqrtf(var + " + eps + ");\n" +
           "    for (long long r = " + first + "; r < len; r += " + step +
           ") {\n      const float v = " + load +
           ";\n      out[base + r] = " + name + "_post(" + y + post +
           ");\n    }\n";
  };
  std::string warpStats =
      "    if ((len & 3) == 0 && len <= (1 << 24)" + aligned + ")\n" +
      "      kb_rewrite::detail::atenVecStats(len, lane, " + at +
      ", mean, var);\n    else\n" +
      "      kb_rewrite::detail::atenRowStatsWarp(len, lane, " + at +
      ", mean, var);\n";
  std::string blockStats = "    kb_rewrite::detail::atenRowStatsBlock(len, " +
                           at + ", sh, mean, var);\n";
  RowKernelText t;
  rowShells(
      t, name, c, "  __shared__ kb_rewrite::detail::AtenWelford sh[16];\n",
      body(warpStats, "lane", "32"),
      body(blockStats, "(long long)threadIdx.x", "(long long)blockDim.x"));
  return t;
}

/// The host statements launching the row kernels over `rows` x `len` x
/// `inner` (names g_rows, g_len, g_inner): a block per long contiguous row,
/// a warp per shorter one and, with `strided`, a thread per strided row
/// (the layer norm's rows are always contiguous: it has no column kernel).
std::string launchRows(const std::string &name, const ChainParts &c,
                       bool strided = true) {
  std::string block = name +
                      "_rowsb<<<(unsigned)g_rows, 256, 0, stream>>>(\n"
                      "        pin, pout, g_rows, g_len" +
                      c.kargs + ");\n";
  std::string warp = name +
                     "_rows<<<(unsigned)((g_rows + 7) / 8), 256, 0, "
                     "stream>>>(\n        pin, pout, g_rows, g_len" +
                     c.kargs + ");\n";
  // The layer norm's warp kernel also takes the long rows ATen vectorizes,
  // in ATen's order (normKernels).
  if (!strided)
    return "  if (g_len >= 1024 && (g_len & 3) != 0)\n    " + block +
           "  else\n    " + warp;
  return "  if (g_inner == 1 && g_len >= 1024)\n    " + block +
         "  else if (g_inner == 1)\n    " + warp + "  else\n    " + name +
         "_cols<<<kb_rewrite::detail::blocks(g_rows * g_inner), 256, 0, "
         "stream>>>(\n        pin, pout, g_rows, g_len, g_inner" +
         c.kargs + ");\n";
}

/// Before allocating: the rows must fill the GPU, a thread each when they
/// are strided (4096 or more) and a block each when they are long (256 or
/// more once the input reaches 2^20 elements: a sum of a whole large tensor
/// would otherwise stream through one block). ATen's kernels split long
/// rows across blocks, so it keeps the rest. Both thresholds are
/// estimates, not yet measured (bench/NOTES.md, session 46).
const char *kRowGuards =
    "  if (g_rows >= (1LL << 31) - 1 ||\n"
    "      (g_inner > 1 && g_rows * g_inner < 4096) ||\n"
    "      (g_inner == 1 && g_rows < 256 && g_rows * g_len >= (1LL << 20)))\n"
    "    return reference();\n";

/// The host part of a reduction over dims: which dims (a run of adjacent
/// ones, size-1 dims between them allowed), the result's shape.
std::string reduceGeometry(const CxxRewritePlan &p) {
  std::string dims = stageValue(p, "dim", "at::IntArrayRef()");
  std::string keep = stageValue(p, "keepdim", "false");
  return "  const int64_t rank = in.dim();\n"
         "  const at::IntArrayRef dims = " +
         dims +
         ";\n"
         "  bool reduced[8] = {false};\n"
         "  for (int64_t d = 0; d < rank; ++d)\n"
         "    reduced[d] = dims.empty(); // no dims: all of them\n"
         "  for (int64_t d : dims) {\n"
         "    const int64_t n = d < 0 ? d + rank : d;\n"
         "    if (n < 0 || n >= rank || reduced[n])\n"
         "      return reference(); // ATen's error\n"
         "    reduced[n] = true;\n  }\n"
         "  int64_t lo = rank, hi = -1;\n"
         "  for (int64_t d = 0; d < rank; ++d)\n"
         "    if (reduced[d]) {\n      lo = std::min(lo, d);\n"
         "      hi = std::max(hi, d);\n    }\n"
         "  long long g_rows = 1, g_len = 1, g_inner = 1;\n"
         "  std::vector<int64_t> shape;\n"
         "  for (int64_t d = 0; d < rank; ++d) {\n"
         "    if (d >= lo && d <= hi && !reduced[d] && in.size(d) != 1)\n"
         "      return reference(); // not one run of dims\n"
         "    (d < lo ? g_rows : d > hi ? g_inner : g_len) *= in.size(d);\n"
         "    if (!reduced[d])\n      shape.push_back(in.size(d));\n"
         "    else if (" +
         keep + ")\n      shape.push_back(1);\n  }\n" + kRowGuards +
         "  at::Tensor out = at::empty(shape, in.options());\n";
}

std::string softmaxGeometry(const CxxRewritePlan &p) {
  std::string dim = stageValue(p, "dim", "-1");
  return "  const int64_t rank = in.dim();\n"
         "  const int64_t dim = " +
         dim + " < 0 ? " + dim + " + rank : " + dim +
         ";\n"
         "  if (rank == 0 || dim < 0 || dim >= rank)\n"
         "    return reference();\n"
         "  long long g_rows = 1, g_len = in.size(dim), g_inner = 1;\n"
         "  for (int64_t d = 0; d < rank; ++d)\n"
         "    if (d != dim)\n      (d < dim ? g_rows : g_inner) *= "
         "in.size(d);\n" +
         kRowGuards + "  at::Tensor out = at::empty_like(in);\n";
}

/// The host part of a layer norm: its rows are the trailing dims that
/// normalized_shape names (a literal, or the module's option at run time),
/// the weight and bias (when defined) contiguous float32 tensors of that
/// shape on the input's device, as ATen requires; anything else is ATen's.
std::string normGeometry(const CxxRewritePlan &p) {
  std::string s =
      "  const int64_t rank = in.dim();\n"
      "  const at::IntArrayRef nshape = " +
      stageValue(p, "normalized_shape", "at::IntArrayRef()") +
      ";\n"
      "  const int64_t nrank = (int64_t)nshape.size();\n"
      "  if (nrank == 0 || nrank > rank)\n    return reference();\n"
      "  long long g_len = 1;\n"
      "  for (int64_t d = 0; d < nrank; ++d) {\n"
      "    if (in.size(rank - nrank + d) != nshape[d])\n"
      "      return reference();\n"
      "    g_len *= nshape[d];\n  }\n"
      "  const long long g_rows = in.numel() / g_len, g_inner = 1;\n" +
      std::string(kRowGuards);
  for (const char *which : {"weight", "bias"}) {
    int idx = stageArg(p, which);
    if (idx < 0)
      continue;
    std::string a = "a" + std::to_string(idx), ptr = "p" + std::to_string(idx);
    s += "  if (" + a + ".defined() && (!" + a + ".is_cuda() || " + a +
         ".get_device() != in.get_device() ||\n      " + a +
         ".scalar_type() != at::kFloat || !" + a + ".is_contiguous() || " + a +
         ".sizes() != nshape))\n    return reference();\n"
         "  const float* " +
         ptr + " = " + a + ".defined() ? " + a +
         ".data_ptr<float>() : nullptr;\n";
  }
  return s + "  at::Tensor out = at::empty_like(in);\n";
}

/// The pooling kernel: a thread per output element of planes H x W.
std::string poolKernel(CxxStage k, const std::string &name,
                       const ChainParts &c) {
  std::string args = parameterNames(c.kparams), post = c.postArgs;
  std::string load = name + "_at(in, plane + h * W + w" + args + ")";
  std::string s =
      "__global__ void __launch_bounds__(256)\n" + name +
      "_pool(const float* __restrict__ in, float* __restrict__ out, long "
      "long total, long long H, long long W, long long OH, long long OW, "
      "kb_rewrite::detail::Window win" +
      c.kparams +
      ") {\n  for (long long t = (long long)blockIdx.x * blockDim.x + "
      "threadIdx.x; t < total;\n       t += (long long)gridDim.x * "
      "blockDim.x) {\n    const long long ow = t % OW, oh = (t / OW) % OH;\n"
      "    const long long plane = t / (OW * OH) * H * W;\n";
  if (k == CxxStage::MaxPool2d) {
    // ATen's max_pool2d: -inf start, a NaN wins and stays.
    s += "    const long long hs = oh * win.sh - win.ph, ws = ow * win.sw - "
         "win.pw;\n    float m = -INFINITY;\n"
         "    for (int i = 0; i < win.kh; ++i) {\n"
         "      const long long h = hs + (long long)i * win.dh;\n"
         "      if (h < 0 || h >= H)\n        continue;\n"
         "      for (int j = 0; j < win.kw; ++j) {\n"
         "        const long long w = ws + (long long)j * win.dw;\n"
         "        if (w < 0 || w >= W)\n          continue;\n"
         "        const float v = " +
         load +
         ";\n        if (v > m || v != v)\n          m = v;\n      }\n    }\n"
         "    out[t] = " +
         name + "_post(m" + post + ");\n";
  } else if (k == CxxStage::AvgPool2d) {
    // ATen's avg_pool2d: the window clipped to the padded input gives the
    // padded count, then to the input; a float sum in row-major order.
    s += "    long long hs = oh * win.sh - win.ph, ws = ow * win.sw - win.pw;\n"
         "    long long he = hs + win.kh, we = ws + win.kw;\n"
         "    he = he < H + win.ph ? he : H + win.ph;\n"
         "    we = we < W + win.pw ? we : W + win.pw;\n"
         "    const long long pool = (he - hs) * (we - ws);\n"
         "    hs = hs > 0 ? hs : 0;\n    ws = ws > 0 ? ws : 0;\n"
         "    he = he < H ? he : H;\n    we = we < W ? we : W;\n"
         "    if (hs >= he || ws >= we) {\n      out[t] = " +
         name + "_post(0.f" + post +
         ");\n      continue;\n    }\n"
         "    float acc = 0.f;\n"
         "    for (long long h = hs; h < he; ++h)\n"
         "      for (long long w = ws; w < we; ++w)\n"
         "        acc += " +
         load +
         ";\n    const long long div = win.divisor ? win.divisor\n"
         "                          : win.countPad ? pool\n"
         "                                         : (he - hs) * (we - ws);\n"
         "    out[t] = " +
         name + "_post(acc / (float)div" + post + ");\n";
  } else {
    // ATen's adaptive_avg_pool2d: windows [floor(o*L/O), ceil((o+1)*L/O)),
    // a float sum divided by the window's height, then its width.
    s += "    const long long hs = oh * H / OH, he = ((oh + 1) * H + OH - 1) / "
         "OH;\n"
         "    const long long ws = ow * W / OW, we = ((ow + 1) * W + OW - 1) / "
         "OW;\n"
         "    float acc = 0.f;\n"
         "    for (long long h = hs; h < he; ++h)\n"
         "      for (long long w = ws; w < we; ++w)\n"
         "        acc += " +
         load + ";\n    out[t] = " + name +
         "_post(acc / (float)(he - hs) / (float)(we - ws)" + post + ");\n";
  }
  return s + "  }\n}\n\n";
}

/// The host part of a pooling: the window from the operands (one value
/// for both dims or one per dim; ATen's defaults), the output planes from
/// ATen's formula, everything ATen refuses left to it.
std::string poolGeometry(CxxStage k, const CxxRewritePlan &p) {
  std::string s = "  const int64_t rank = in.dim();\n"
                  "  if (rank != 3 && rank != 4)\n    return reference();\n"
                  "  const long long H = in.size(rank - 2), W = "
                  "in.size(rank - 1);\n";
  if (k == CxxStage::AdaptiveAvgPool2d) {
    s += "  const at::IntArrayRef osize = " + stageValue(p, "output_size", "") +
         ";\n  if (osize.size() != 2 || osize[0] <= 0 || osize[1] <= 0)\n"
         "    return reference();\n"
         "  const long long OH = osize[0], OW = osize[1];\n";
  } else {
    // Absent stride, padding and dilation: ATen's defaults (Window::set).
    s += "  kb_rewrite::detail::Window win;\n"
         "  if (!win.set(" +
         stageValue(p, "kernel_size", "") + ", " +
         stageValue(p, "stride", "at::IntArrayRef()") + ", " +
         stageValue(p, "padding", "at::IntArrayRef()") + ", " +
         (k == CxxStage::MaxPool2d
              ? stageValue(p, "dilation", "at::IntArrayRef()")
              : std::string("at::IntArrayRef()")) +
         "))\n    return reference();\n";
    std::string ceil = stageValue(p, "ceil_mode", "false");
    if (k == CxxStage::AvgPool2d) {
      s += "  win.countPad = " + stageValue(p, "count_include_pad", "true") +
           ";\n";
      if (stageArg(p, "divisor_override") >= 0)
        s += "  win.divisor = " + stageValue(p, "divisor_override", "0") +
             ";\n  if (win.divisor == 0)\n    return reference();\n";
    }
    s += "  const long long OH = kb_rewrite::detail::poolOut(H, win.kh, "
         "win.ph, win.sh, win.dh, " +
         ceil +
         ");\n  const long long OW = kb_rewrite::detail::poolOut(W, win.kw, "
         "win.pw, win.sw, win.dw, " +
         ceil + ");\n";
  }
  s += "  if (OH <= 0 || OW <= 0)\n    return reference();\n"
       "  std::vector<int64_t> shape(in.sizes().begin(), in.sizes().end());\n"
       "  shape[rank - 2] = OH;\n  shape[rank - 1] = OW;\n"
       "  at::Tensor out = at::empty(shape, in.options());\n";
  return s;
}

} // namespace

llvm::Expected<CxxFunction> emitStageFunction(const CxxRewritePlan &p,
                                              const ImportedChain &ir,
                                              const std::string &name,
                                              StringRef where, bool fast) {
  const size_t s = p.stage;
  bool approximate = fast && p.stageKind == CxxStage::Softmax;
  auto pre = elementOps(p, ir, 0, s, fast, approximate);
  if (!pre)
    return pre.takeError();
  auto postOps = elementOps(p, ir, s + 1, p.ops.size(), fast, approximate);
  if (!postOps)
    return postOps.takeError();
  const ChainParts c = chainParts(p);
  const CxxStage k = p.stageKind;
  std::string sig = "at::Tensor " + name + c.sig;
  CxxFunction fn;
  fn.approximate = approximate;
  fn.decl = "/// " + where.str() + "\n" + sig + ";\n";
  std::string &d = fn.def;
  d += "// " + where.str() + "\n";
  d += "// The ops before aten::" + p.ops[s].op +
       ", per element of its input.\n";
  d += "static __device__ __forceinline__ float " + name + "_pre(" + c.eparams +
       ") {\n" + *pre + "  return " +
       (s == 0 ? std::string("x") : "t" + std::to_string(s - 1)) + ";\n}\n\n";
  d += "// The ops after it, per element of its result.\n";
  d += "static __device__ __forceinline__ float " + name + "_post(float x" +
       c.postParams + ") {\n  const float t" + std::to_string(s) + " = x;\n" +
       *postOps + "  return t" + std::to_string(p.ops.size() - 1) + ";\n}\n\n";
  d += "// Element i of aten::" + p.ops[s].op + "'s input.\n";
  d += "static __device__ __forceinline__ float " + name +
       "_at(const float* __restrict__ in, long long i" + c.kparams + ") {\n" +
       StringRef(c.chLine).drop_front(2).str() + "  return " + name +
       "_pre(in[i]" + c.scalarArgs + ");\n}\n\n";

  std::string geometry, launch;
  bool pooled = k == CxxStage::MaxPool2d || k == CxxStage::AvgPool2d ||
                k == CxxStage::AdaptiveAvgPool2d;
  if (pooled)
    d += poolKernel(k, name, c);
  if (k == CxxStage::LayerNorm) {
    RowKernelText rows = normKernels(name, p, c);
    d += rows.warp + rows.block;
  } else if (!pooled || k == CxxStage::AdaptiveAvgPool2d) {
    // An adaptive pooling to 1x1 is ATen's mean over the planes.
    RowKernelText rows = rowKernels(
        k == CxxStage::AdaptiveAvgPool2d ? CxxStage::Mean : k, fast, name, c);
    d += rows.warp + rows.block + rows.column;
  }
  if (k == CxxStage::LayerNorm) {
    geometry = normGeometry(p);
    launch = launchRows(name, c, /*strided=*/false);
  } else if (isSoftmax(k)) {
    geometry = softmaxGeometry(p);
    launch = launchRows(name, c);
  } else if (!pooled) {
    geometry = reduceGeometry(p);
    launch = launchRows(name, c);
  } else {
    geometry = poolGeometry(k, p);
    std::string poolLaunch =
        name +
        "_pool<<<kb_rewrite::detail::blocks(out.numel()), 256, 0, "
        "stream>>>(\n        pin, pout, out.numel(), H, W, OH, OW, " +
        (k == CxxStage::AdaptiveAvgPool2d
             ? std::string("kb_rewrite::detail::Window{}")
             : std::string("win")) +
        c.kargs + ");\n";
    if (k == CxxStage::AdaptiveAvgPool2d)
      launch = "  if (OH == 1 && OW == 1) {\n"
               "  const long long g_rows = out.numel(), g_len = H * W, "
               "g_inner = 1;\n" +
               launchRows(name, c) + "  } else {\n  " + poolLaunch + "  }\n";
    else
      launch = "  " + poolLaunch;
  }
  // The stage's dims, window and flags are the source's literals (part of
  // the function's signature, so its test runs these very values).
  std::string literals;
  for (size_t i = 0; i < p.operands.size(); ++i) {
    const CxxOperand &o = p.operands[i];
    std::string n = operandName(p, i);
    if (o.kind == CxxOperand::Int)
      literals += "  const int64_t " + n + " = " + o.text + ";\n";
    else if (o.kind == CxxOperand::Bool)
      literals += "  const bool " + n + " = " + o.text + ";\n";
    else if (o.kind == CxxOperand::IntList)
      literals +=
          "  static const int64_t " + n + "_v[] = " +
          (StringRef(o.text).starts_with("{") ? o.text : "{" + o.text + "}") +
          ";\n  const at::IntArrayRef " + n + "(" + n + "_v);\n";
  }
  d += hostFunction(p, c, sig, literals, geometry, "", launch);
  return fn;
}

} // namespace kb::codegen::cxx

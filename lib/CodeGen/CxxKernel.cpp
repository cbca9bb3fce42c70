//===- CxxKernel.cpp - Fused functions for libtorch C++ chains ------------===//
//
// A rewritable C++ chain becomes one host function of kb_kernels.cu: a
// shape-generic kernel over the chain's input (scalar and float4 forms),
// guards, and the chain's own ATen ops as the fallback. The element
// expression of each op is the op table's CUDA template, expanded by the
// one expander the graph kernels use (OpTemplate.h).
//
//===----------------------------------------------------------------------===//

#include "CxxKernelParts.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/STLExtras.h"

using llvm::StringRef;

namespace kb::codegen::cxx {

std::string operandName(const CxxRewritePlan &p, int idx) {
  const CxxOperand &o = p.operands[idx];
  switch (o.kind) {
  case CxxOperand::Tensor:
  case CxxOperand::ModuleTensor:
    return "a" + std::to_string(idx);
  case CxxOperand::Scalar:
  case CxxOperand::ModuleOption:
  case CxxOperand::Int:
  case CxxOperand::Bool:
  case CxxOperand::IntList:
  case CxxOperand::ModuleIntList:
    return "s" + std::to_string(idx);
  case CxxOperand::String:
    return o.text;
  case CxxOperand::Module:
    return "m" + std::to_string(idx);
  case CxxOperand::Value: // named by its position (valueName)
    return "";
  }
  return "";
}

namespace {

/// A literal of the source's number text (a default of the op table) as
/// the graph path writes it; "" when it is not a number.
std::string floatLiteral(StringRef text) {
  double v = 0;
  if (text.getAsDouble(v))
    return "";
  return kb::codegen::floatLiteral(v);
}

} // namespace

bool isTensor(const CxxOperand &o) {
  return o.kind == CxxOperand::Tensor || o.kind == CxxOperand::ModuleTensor;
}

namespace {

/// The expression a module row substitutes for its op, or "".
StringRef moduleCuda(const CxxRewritePlan &p, const CxxPlanOp &op) {
  if (op.module < 0)
    return "";
  StringRef type = p.operands[op.module].type;
  const CxxModuleInfo *m = cxxModule(
      type.rsplit("::").second.empty() ? type : type.rsplit("::").second);
  return m ? m->cuda : "";
}

} // namespace

/// The result of op `j` under `prefix` ("t" in the element function, "r" in
/// the fallback), or the chain's input `in` when j < 0.
std::string valueName(int j, StringRef prefix, StringRef in) {
  return j < 0 ? in.str() : prefix.str() + std::to_string(j);
}

namespace {

/// Whether an op reads anything but the previous op's result as the
/// chain's value (`x * torch::sigmoid(x)`).
bool readsTwice(const CxxRewritePlan &p) {
  return llvm::any_of(p.ops,
                      [](const CxxPlanOp &o) { return o.selfBack != 1; }) ||
         llvm::any_of(p.operands, [](const CxxOperand &o) {
           return o.kind == CxxOperand::Value;
         });
}

} // namespace

/// One op (number k of the chain) as a device expression over `self`, from
/// its table row (or its module row's expression).
llvm::Expected<std::string> deviceExpr(const CxxRewritePlan &p,
                                       const CxxPlanOp &op, size_t pos,
                                       const std::string &self) {
  if (StringRef cuda = moduleCuda(p, op); !cuda.empty()) {
    std::vector<std::string> names = {"self"}, values = {self};
    for (const auto &[name, idx] : op.named) {
      names.push_back(name);
      values.push_back(isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                                 : operandName(p, idx));
    }
    auto expr = expandTemplate(
        cuda, names,
        [&](size_t k) -> llvm::Expected<std::string> { return values[k]; });
    if (!expr)
      return expr.takeError();
    if (expr->find('{') != std::string::npos)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "module expression '" + cuda.str() +
                                         "' names an unknown operand");
    return expr;
  }
  const OpInfo *row = rowOf(op);
  if (!row || row->cuda.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + op.op + "' has no CUDA expression");
  return expandTemplate(*row, [&](size_t k) -> llvm::Expected<std::string> {
    const ArgSpec &arg = row->args[k];
    std::string val;
    int idx = k == 0 ? -2 : op.args[k - 1];
    if (k == 0) {
      val = self;
    } else if (idx >= 0 && p.operands[idx].kind == CxxOperand::Value) {
      val = valueName((int)pos - p.operands[idx].back, "t", "x");
    } else if (idx >= 0 && p.operands[idx].kind == CxxOperand::String) {
      // A string literal of the source ("tanh"): its first character.
      val = deviceStringOption(StringRef(p.operands[idx].text).trim('"'));
    } else if (idx >= 0) {
      val = isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                      : operandName(p, idx);
    } else if (!arg.defaultValue.empty()) {
      // A string default ("none"): the helpers take its first character.
      val = arg.defaultValue.front() == '"'
                ? deviceStringOption(StringRef(arg.defaultValue).trim('"'))
                : floatLiteral(arg.defaultValue);
    } else if (arg.optional) {
      // An absent bound is no bound on that side.
      val = absentOperand(arg).value_or("");
    }
    if (val.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no value for operand '" + arg.name +
                                         "' of '" + op.op + "'");
    return val;
  });
}

namespace {

/// A schema default (OpSemantics.def spells them as TorchScript does) as a
/// C++ argument of the ATen call.
std::string cxxDefault(StringRef text) {
  if (text == "False" || text == "True")
    return text == "True" ? "true" : "false";
  if (text == "None")
    return "c10::nullopt";
  if (text == "[]")
    return "{}";
  return text.str();
}

/// Op k's arguments after `self` as the fallback's ATen call passes them:
/// C++ calls omit trailing operands only, so one left out before a given
/// one (set through an options object) passes the schema default; the
/// chain's value read again is the result `back` ops before (under
/// `prefix`, or the input `in`).
std::string fallbackArgs(const CxxRewritePlan &p, size_t k, StringRef prefix,
                         StringRef in) {
  const CxxPlanOp &op = p.ops[k];
  size_t given = 0;
  for (size_t a = 0; a < op.args.size(); ++a)
    if (op.args[a] >= 0)
      given = a + 1;
  const OpInfo *row = rowOf(op);
  std::string args;
  for (size_t a = 0; a < given; ++a) {
    int idx = op.args[a];
    // A number where the schema takes float (a layer norm's eps): ATen's
    // C++ signature takes a double, which at::Scalar does not convert to.
    bool toDouble = idx >= 0 && row &&
                    row->args[a + 1].type == ArgType::Float &&
                    p.operands[idx].kind == CxxOperand::Scalar;
    args += (args.empty() ? "" : ", ") +
            (idx < 0 ? (row ? cxxDefault(row->args[a + 1].defaultValue)
                            : std::string())
             : p.operands[idx].kind == CxxOperand::Value
                 ? valueName((int)k - p.operands[idx].back, prefix, in)
                 : operandName(p, idx) + (toDouble ? ".to<double>()" : ""));
  }
  return args;
}

} // namespace

/// The chain through ATen, exactly as written (in-place ops stay in place):
/// the guard and autograd fallback.
std::string referenceBody(const CxxRewritePlan &p) {
  if (readsTwice(p)) {
    // The chain's values are read twice: each op's result is kept (no
    // in-place ops: the plan refuses those here).
    std::string s;
    for (size_t k = 0; k < p.ops.size(); ++k) {
      const CxxPlanOp &op = p.ops[k];
      std::string self = valueName((int)k - op.selfBack, "r", "in");
      std::string r = "    at::Tensor r" + std::to_string(k) + " = ";
      if (op.module >= 0) {
        s += r + operandName(p, op.module) + ".forward(" + self + ");\n";
        continue;
      }
      std::string args = fallbackArgs(p, k, "r", "in");
      s += r + "at::" + op.op + "(" + self + (args.empty() ? "" : ", ") + args +
           ");\n";
    }
    return s + "    return r" + std::to_string(p.ops.size() - 1) + ";\n";
  }
  std::string s = "    at::Tensor t = in;\n";
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const CxxPlanOp &op = p.ops[k];
    if (op.module >= 0) { // the module itself, options and all
      s += "    t = " + operandName(p, op.module) + ".forward(t);\n";
      continue;
    }
    std::string args = fallbackArgs(p, k, "r", "in");
    if (op.inPlace)
      s += "    t." + op.op + "_(" + args + ");\n";
    else
      s += "    t = at::" + op.op + "(t" + (args.empty() ? "" : ", " + args) +
           ");\n";
  }
  return s + "    return t;\n";
}

std::string params(const CxxRewritePlan &p) {
  std::string s = "const at::Tensor& in";
  for (size_t i = 0; i < p.operands.size(); ++i)
    if (p.operands[i].kind == CxxOperand::Tensor)
      s += ", const at::Tensor& a" + std::to_string(i);
    else if (p.operands[i].kind == CxxOperand::Scalar)
      s += ", const at::Scalar& s" + std::to_string(i);
    else if (p.operands[i].kind == CxxOperand::Module)
      s += ", " + p.operands[i].type + "& m" + std::to_string(i);
  return s;
}

namespace {

const char *kSupport = R"(namespace kb_rewrite {
namespace detail {

// How a tensor operand broadcasts against the chain's input (a contiguous
// float32 tensor): mode 0 same layout, 1 one value, 2 one varying dim of
// stride 1 (a per-channel bias), 3 general strides.
struct Operand {
  const float* p;
  int mode, rank;
  bool narrow; // every index fits 32 bits: cheaper division
  long long inner, count;
  long long size[8], stride[8];
  __device__ __forceinline__ float load(long long i) const {
    switch (mode) {
    case 0: return p[i];
    case 1: return p[0];
    case 2:
      return narrow ? p[((unsigned)i / (unsigned)inner) % (unsigned)count]
                    : p[(i / inner) % count];
    default: {
      long long off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        off += (i % size[d]) * stride[d];
        i /= size[d];
      }
      return p[off];
    }
    }
  }
  // The operand at the 4 elements of float4 q (vec4() below holds).
  __device__ __forceinline__ float4 load4(long long q) const {
    if (mode == 0)
      return reinterpret_cast<const float4*>(p)[q];
    const float v = load(4 * q);
    return make_float4(v, v, v, v);
  }
};

// Whether the float4 kernel may run: 16-byte aligned whole float4s, and
// every operand the same over each float4 or read as float4s.
inline bool vec4(const at::Tensor& t) {
  return t.numel() % 4 == 0 &&
         reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}
inline bool vec4(const Operand& o) {
  return o.mode == 1 || (o.mode == 2 && o.inner % 4 == 0) ||
         (o.mode == 0 && reinterpret_cast<uintptr_t>(o.p) % 16 == 0);
}

// The fused kernel runs only on what it was written for; anything else runs
// the original ATen ops.
inline bool usable(const at::Tensor& in) {
  return in.defined() && in.is_cuda() && in.scalar_type() == at::kFloat &&
         in.is_contiguous() && in.numel() > 0 && in.dim() <= 8;
}

inline bool needsGrad(std::initializer_list<const at::Tensor*> ts) {
  if (!c10::GradMode::is_enabled())
    return false;
  for (const at::Tensor* t : ts)
    if (t->defined() && t->requires_grad())
      return true;
  return false;
}

// False when the op's result would not have `in`'s shape, dtype and device.
inline bool operand(const at::Tensor& o, const at::Tensor& in, Operand& out) {
  if (!o.defined() || !o.is_cuda() || o.get_device() != in.get_device() ||
      o.scalar_type() != at::kFloat || o.dim() > in.dim())
    return false;
  const int rank = (int)in.dim(), lead = rank - (int)o.dim();
  out = Operand{};
  out.p = o.data_ptr<float>();
  out.rank = rank;
  out.narrow = in.numel() < (1LL << 32);
  bool full = true, zero = true;
  int varying = 0, dim = -1;
  long long expect = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const long long size = in.size(d);
    long long stride = 0;
    if (d >= lead) {
      const long long os = o.size(d - lead);
      if (os != size && os != 1)
        return false;
      stride = os == 1 ? 0 : o.stride(d - lead);
    }
    out.size[d] = size;
    out.stride[d] = stride;
    if (size != 1) {
      full = full && stride == expect;
      if (stride != 0) {
        zero = false;
        ++varying;
        dim = d;
      }
    }
    expect *= size;
  }
  if (full) {
    out.mode = 0;
  } else if (zero) {
    out.mode = 1;
  } else if (varying == 1 && out.stride[dim] == 1) {
    out.mode = 2;
    out.count = in.size(dim);
    out.inner = 1;
    for (int d = dim + 1; d < rank; ++d)
      out.inner *= in.size(d);
  } else {
    out.mode = 3;
  }
  return true;
}

// A module's per-channel tensor (batch norm statistics): one float32 value
// per channel (dim 1) of `in`, contiguous on its device.
inline bool perChannel(const at::Tensor& v, const at::Tensor& in) {
  return v.defined() && v.dim() == 1 && in.dim() >= 2 &&
         v.size(0) == in.size(1) && v.is_cuda() &&
         v.get_device() == in.get_device() && v.scalar_type() == at::kFloat &&
         v.is_contiguous();
}

// The channel (dim 1) of element i of a contiguous tensor; one division
// per element for all per-channel operands, in 32 bits when it fits.
__device__ __forceinline__ long long channelOf(long long i, long long inner,
                                               long long channels) {
  return i < (1LL << 32) && inner < (1LL << 32)
             ? (long long)(((unsigned)i / (unsigned)inner) % (unsigned)channels)
             : (i / inner) % channels;
}

inline unsigned blocks(long long n) {
  long long b = (n + 255) / 256;
  return (unsigned)(b < (1LL << 30) ? b : (1LL << 30));
}

} // namespace detail
} // namespace kb_rewrite
)";

/// The stage kernels' helpers (CxxStages.cpp), and the approximate forms
/// of --fast-math: the prelude's KB_FAST_MATH variants of sigmoid, silu,
/// mish and softmax's division (Prelude.cpp has why each is so), under
/// their own names since one kb_kernels.cu may hold exact functions too.
const char *kStageSupport = R"(namespace kb_rewrite {
namespace fast {
__device__ __forceinline__ float sigmoid(float x) { return __fdividef(1.f, 1.f + __expf(-x)); }
__device__ __forceinline__ float silu(float x) { return __fdividef(x, 1.f + __expf(-x)); }
__device__ __forceinline__ float mish(float x) {
  if (x > 20.f) return x;
  const float e = __expf(x), n = e * (e + 2.f);
  return x * __fdividef(n, n + 2.f);
}
__device__ __forceinline__ float softmax_div(float a, float s) { return __fdividef(a, s); }
} // namespace fast

namespace detail {

// Combines of the stage kernels: sums, and maxima and minima where a NaN
// wins whatever the order (ATen's amax, amin and max pooling).
struct Add {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct MaxNan {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return (b > a || b != b) ? b : a;
  }
};
struct MinNan {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return (b < a || b != b) ? b : a;
  }
};

template <class T, class Op>
__device__ __forceinline__ T warpReduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Every thread of a block of whole warps gets the block's value; `sh`
// holds one value per warp (32).
template <class T, class Op>
__device__ __forceinline__ T blockReduce(T v, Op op, T* sh) {
  v = warpReduce(v, op);
  __syncthreads(); // a previous call may still read sh
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sh[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w)
    v = op(v, sh[w]);
  return v;
}

// ATen's vectorized layer norm statistics (layer_norm_kernel.cu:
// compute_stats, rows of a multiple of 4 with 16-byte aligned tensors) in
// its own order and float operations: 128 threads (4 warps) each fold the
// 4-element vectors t, t + 128, ... one element at a time, warps combine
// by shuffle-down, then warps 2, 3 into 0, 1 and 1 into 0. One warp plays
// the four (lane + 32 y). Rows of nearly equal elements magnify any other
// order's last bits by rstd (up to 1/sqrt(eps)). Its combine of an empty
// partition with a mean past 1.8e19 gives inf * 0: ATen's NaN rows.
struct Welford {
  float mean = 0.f, m2 = 0.f, count = 0.f;
  __device__ __forceinline__ void add(float v) {
    const float delta = v - mean;
    const float n = count + 1.f;
    const float nm = mean + delta * (1.f / n);
    m2 = m2 + delta * (v - nm);
    mean = nm;
    count = n;
  }
  // `o` is the other partition (ATen's dataA), this one its dataB.
  __device__ __forceinline__ void combine(const Welford& o) {
    const float delta = mean - o.mean;
    const float n = o.count + count;
    if (n > 0.f) {
      const float coef = 1.f / n;
      const float na = o.count * coef, nb = count * coef;
      mean = na * o.mean + nb * mean;
      m2 = o.m2 + m2 + delta * delta * o.count * nb;
    } else {
      mean = 0.f;
      m2 = 0.f;
    }
    count = n;
  }
};

// The row's mean and biased variance as ATen's vectorized kernel gives
// them, on every lane of the calling warp; `at(i)` reads element i.
template <class At>
__device__ __forceinline__ void atenVecStats(long long len, int lane, At at,
                                             float& mean, float& var) {
  Welford w[4];
  for (int y = 0; y < 4; ++y)
    for (long long i = lane + 32 * y; i < len / 4; i += 128)
      for (int k = 0; k < 4; ++k)
        w[y].add(at(4 * i + k));
  for (int o = 16; o > 0; o >>= 1)
    for (int y = 0; y < 4; ++y) {
      Welford b;
      b.mean = __shfl_down_sync(0xffffffffu, w[y].mean, o);
      b.m2 = __shfl_down_sync(0xffffffffu, w[y].m2, o);
      b.count = __shfl_down_sync(0xffffffffu, w[y].count, o);
      w[y].combine(b);
    }
  w[0].combine(w[2]);
  w[1].combine(w[3]);
  w[0].combine(w[1]);
  mean = __shfl_sync(0xffffffffu, w[0].mean, 0);
  var = __shfl_sync(0xffffffffu, w[0].m2, 0) / (float)len;
}

// ATen's other layer norm statistics (RowwiseMomentsCUDAKernel: rows
// it does not vectorize) in its order and float operations: 512 threads
// fold elements j, j + 512, ... (WelfordOps::reduce, a true division),
// each warp combines by shuffle-down (WelfordOps::combine, which skips an
// empty partition), then warp 0 combines the 16 warps' results the same
// way (cuda_utils::BlockReduce). Nearly constant rows magnify any other
// order's last bits by rstd (run87: rows of 3, 4.8e-5).
struct AtenWelford {
  float mean = 0.f, m2 = 0.f, nf = 0.f;
  __device__ __forceinline__ void add(float v) {
    const float n = nf + 1.f;
    const float delta = v - mean;
    const float nm = mean + delta / n;
    m2 = m2 + delta * (v - nm);
    mean = nm;
    nf = n;
  }
  __device__ __forceinline__ static AtenWelford combine(const AtenWelford& a,
                                                        const AtenWelford& b) {
    if (a.nf == 0.f)
      return b;
    if (b.nf == 0.f)
      return a;
    const float delta = b.mean - a.mean;
    const float n = a.nf + b.nf;
    const float nb = b.nf / n;
    AtenWelford r;
    r.mean = a.mean + delta * nb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.nf * nb;
    r.nf = n;
    return r;
  }
  __device__ __forceinline__ AtenWelford shfl(int src, bool down) const {
    AtenWelford r;
    r.mean = down ? __shfl_down_sync(0xffffffffu, mean, src)
                  : __shfl_sync(0xffffffffu, mean, src);
    r.m2 = down ? __shfl_down_sync(0xffffffffu, m2, src)
                : __shfl_sync(0xffffffffu, m2, src);
    r.nf = down ? __shfl_down_sync(0xffffffffu, nf, src)
                : __shfl_sync(0xffffffffu, nf, src);
    return r;
  }
  __device__ __forceinline__ AtenWelford warpReduce() const {
    AtenWelford v = *this;
    for (int o = 16; o > 0; o >>= 1)
      v = combine(v, v.shfl(o, true));
    return v;
  }
  // Lane 0's partition on every lane: mean and the biased variance.
  __device__ __forceinline__ void project(float& mean_, float& var) const {
    const AtenWelford v = shfl(0, false);
    mean_ = v.mean;
    var = v.m2 / v.nf;
  }
};

// One warp plays the 512 threads: lane l is thread 32 p + l of warp p.
template <class At>
__device__ __forceinline__ void atenRowStatsWarp(long long len, int lane, At at,
                                                 float& mean, float& var) {
  AtenWelford w[16];
#pragma unroll
  for (int p = 0; p < 16; ++p)
    for (long long j = 32 * p + lane; j < len; j += 512)
      w[p].add(at(j));
  AtenWelford v;
#pragma unroll
  for (int p = 0; p < 16; ++p) {
    const AtenWelford s = w[p].warpReduce().shfl(0, false);
    if (lane == p)
      v = s;
  }
  v.warpReduce().project(mean, var);
}

// A block of 256 plays the 512 threads: thread t is threads t and t + 256;
// `sh` holds 16 partitions.
template <class At>
__device__ __forceinline__ void atenRowStatsBlock(long long len, At at,
                                                  AtenWelford* sh, float& mean,
                                                  float& var) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  AtenWelford w[2];
#pragma unroll
  for (int p = 0; p < 2; ++p)
    for (long long j = 32 * (warp + 8 * p) + lane; j < len; j += 512)
      w[p].add(at(j));
  const AtenWelford a = w[0].warpReduce(), b = w[1].warpReduce();
  __syncthreads(); // a previous row may still read sh
  if (lane == 0) {
    sh[warp] = a;
    sh[warp + 8] = b;
  }
  __syncthreads();
  // Every warp folds the 16 partitions as ATen's warp 0 does.
  const AtenWelford v = lane < 16 ? sh[lane] : AtenWelford();
  v.warpReduce().project(mean, var);
}

// A 2-d pooling window from ATen's int[] operands: one value for both dims
// or one per dim; an empty stride is the kernel size, an empty padding 0
// and an empty dilation 1. False for what ATen refuses (it then reports).
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool countPad = true;
  long long divisor = 0;
  static bool pick(at::IntArrayRef v, size_t i, int dflt, int& out) {
    if (v.empty()) {
      out = dflt;
      return true;
    }
    if (v.size() > 2 || v[v.size() == 1 ? 0 : i] > (1 << 30) ||
        v[v.size() == 1 ? 0 : i] < -(1 << 30))
      return false;
    out = (int)v[v.size() == 1 ? 0 : i];
    return true;
  }
  bool set(at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
           at::IntArrayRef d) {
    if (k.empty() || !pick(k, 0, 1, kh) || !pick(k, 1, 1, kw) ||
        !pick(s, 0, kh, sh) || !pick(s, 1, kw, sw) || !pick(p, 0, 0, ph) ||
        !pick(p, 1, 0, pw) || !pick(d, 0, 1, dh) || !pick(d, 1, 1, dw))
      return false;
    return kh > 0 && kw > 0 && sh > 0 && sw > 0 && dh > 0 && dw > 0 &&
           ph >= 0 && pw >= 0 && kh / 2 >= ph && kw / 2 >= pw;
  }
};

// ATen's pooling_output_shape: floor (or ceil) division, and a last
// window that would start in the right padding dropped.
inline long long poolOut(long long in, long long k, long long pad,
                         long long stride, long long dil, bool ceil) {
  const long long num =
      in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  long long out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

} // namespace detail
} // namespace kb_rewrite
)";

} // namespace

llvm::Expected<std::string> elementOps(const CxxRewritePlan &p, size_t begin,
                                       size_t end, bool fast,
                                       bool &approximate) {
  std::string body;
  for (size_t k = begin; k < end; ++k) {
    auto e = deviceExpr(p, p.ops[k], k,
                        valueName((int)k - p.ops[k].selfBack, "t", "x"));
    if (!e)
      return e.takeError();
    // The prelude's exact helpers have approximate twins in
    // kb_rewrite::fast (cxxKernelSupport), so exact and --fast-math
    // functions can share one kb_kernels.cu.
    if (fast)
      for (const char *helper : {"sigmoid(", "silu(", "mish("}) {
        std::string from = std::string("kb::") + helper;
        for (size_t at = e->find(from); at != std::string::npos;
             at = e->find(from, at)) {
          e->replace(at, from.size(),
                     "kb_rewrite::fast::" + std::string(helper));
          approximate = true;
        }
      }
    body += "  const float t" + std::to_string(k) + " = " + *e +
            "; // aten::" + p.ops[k].op + "\n";
  }
  return body;
}

ChainParts chainParts(const CxxRewritePlan &p) {
  ChainParts c;
  std::string &postParams = c.postParams, &postArgs = c.postArgs;
  std::string &kparams = c.kparams, &kargs = c.kargs, &eparams = c.eparams;
  eparams = "float x";
  // Per operand: its element-function argument in the scalar kernel, in
  // lane L of the float4 kernel, and the float4 kernel's loads.
  std::string &scalarArgs = c.scalarArgs, &loads4 = c.loads4,
              &vecGuards = c.vecGuards;
  std::vector<std::string> &laneArgs = c.laneArgs;
  laneArgs.resize(4);
  std::string &guards = c.guards, &tensors = c.tensors,
              &moduleGuards = c.moduleGuards, &derived = c.derived;
  tensors = "&in";
  bool &perChannel = c.perChannel;
  const char *lanes[] = {"x", "y", "z", "w"};
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const CxxPlanOp &op = p.ops[k];
    if (op.module < 0)
      continue;
    std::string m = operandName(p, op.module);
    if (op.evalOnly)
      moduleGuards +=
          "  if (" + m + ".is_training())\n    return reference();\n";
    for (const auto &[name, val] : op.pinned)
      moduleGuards += "  if (" + m + ".options." + name + "() != " + val +
                      ")\n    return reference();\n";
    // Only the first op's input can be seen by others: a module that
    // would write it runs as written.
    if (op.inplaceOpt && k == 0)
      moduleGuards +=
          "  if (" + m + ".options.inplace())\n    return reference();\n";
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    std::string I = std::to_string(i);
    const CxxOperand &o = p.operands[i];
    if (o.kind == CxxOperand::ModuleOption)
      derived += std::string("  const ") +
                 (o.optionType == ArgType::Int    ? "int64_t"
                  : o.optionType == ArgType::Bool ? "bool"
                                                  : "at::Scalar") +
                 " s" + I + " = " + operandName(p, o.owner) + ".options." +
                 o.text + "();\n";
    else if (o.kind == CxxOperand::ModuleTensor)
      derived += "  const at::Tensor& a" + I + " = " + operandName(p, o.owner) +
                 "." + o.text + ";\n";
    else if (o.kind == CxxOperand::ModuleIntList)
      derived += "  const at::IntArrayRef s" + I + " = " +
                 operandName(p, o.owner) + ".options." + o.text + "();\n";
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    std::string I = std::to_string(i);
    // A stage module's int and bool options: host values of its geometry.
    if (p.operands[i].kind == CxxOperand::ModuleOption &&
        (p.operands[i].optionType == ArgType::Int ||
         p.operands[i].optionType == ArgType::Bool))
      continue;
    if (isStageTensor(p, i)) {
      // Read along the stage's rows (a layer norm's weight, bias): a
      // pointer, null where the tensor is undefined; the stage's geometry
      // checks its size against the rows (normGeometry).
      kparams += ", const float* __restrict__ a" + I;
      kargs += ", p" + I;
      tensors += ", &a" + I;
      continue;
    }
    if (isTensor(p.operands[i]) || p.operands[i].kind == CxxOperand::Scalar ||
        p.operands[i].kind == CxxOperand::ModuleOption)
      eparams += isTensor(p.operands[i]) ? ", float v" + I : ", float s" + I;
    if (p.operands[i].kind == CxxOperand::ModuleTensor) {
      scalarArgs += ", a" + I + "[ch]";
      loads4 += "    const float v" + I + " = a" + I + "[ch];\n";
      for (int l = 0; l < 4; ++l)
        laneArgs[l] += ", v" + I;
    } else if (isTensor(p.operands[i])) {
      scalarArgs += ", a" + I + ".load(i)";
      loads4 += "    const float4 v" + I + " = a" + I + ".load4(q);\n";
      for (int l = 0; l < 4; ++l)
        laneArgs[l] += ", v" + I + "." + lanes[l];
      vecGuards += " && kb_rewrite::detail::vec4(o" + I + ")";
    } else if (p.operands[i].kind == CxxOperand::Scalar ||
               p.operands[i].kind == CxxOperand::ModuleOption) {
      scalarArgs += ", s" + I;
      for (int l = 0; l < 4; ++l)
        laneArgs[l] += ", s" + I;
    }
    if (p.operands[i].kind == CxxOperand::ModuleTensor) {
      kparams += ", const float* __restrict__ a" + I;
      kargs += ", a" + I + ".data_ptr<float>()";
      tensors += ", &a" + I;
      guards += "  if (!kb_rewrite::detail::perChannel(a" + I +
                ", in))\n    return reference();\n";
      perChannel = true;
    } else if (isTensor(p.operands[i])) {
      kparams += ", kb_rewrite::detail::Operand a" + I;
      kargs += ", o" + I;
      tensors += ", &a" + I;
      guards += "  kb_rewrite::detail::Operand o" + I +
                ";\n  if (!kb_rewrite::detail::operand(a" + I + ", in, o" + I +
                "))\n    return reference();\n";
    } else if (p.operands[i].kind == CxxOperand::Scalar ||
               p.operands[i].kind == CxxOperand::ModuleOption) {
      kparams += ", float s" + I;
      kargs += ", s" + I + ".to<float>()";
      postParams += ", float s" + I;
      postArgs += ", s" + I;
    }
  }
  std::string &chLine = c.chLine, &chLine4 = c.chLine4;
  if (perChannel) {
    kparams += ", long long inner, long long channels";
    kargs += ", inner, in.size(1)";
    chLine = "    const long long ch = kb_rewrite::detail::channelOf(i, "
             "inner, channels);\n";
    chLine4 = "    const long long ch = kb_rewrite::detail::channelOf(4 * "
              "q, inner, channels);\n";
    vecGuards += " && inner % 4 == 0";
  }
  c.sig = "(" + params(p) + ")";
  return c;
}

std::string hostFunction(const CxxRewritePlan &p, const ChainParts &c,
                         StringRef sig, StringRef literals,
                         StringRef beforeDevice, StringRef afterDevice,
                         StringRef launch) {
  return sig.str() + " {\n" + literals.str() + "  auto reference = [&]() {\n" +
         referenceBody(p) +
         "  };\n  if (kb_rewrite::testing::forceReference() ||\n"
         "      !kb_rewrite::detail::usable(in))\n    return reference();\n" +
         c.moduleGuards + c.derived + "  if (kb_rewrite::detail::needsGrad({" +
         c.tensors + "}))\n    return reference();\n" + c.guards +
         beforeDevice.str() + "  c10::cuda::CUDAGuard device(in.device());\n" +
         afterDevice.str() +
         (c.perChannel ? "  const long long inner = in.numel() / (in.size(0) * "
                         "in.size(1));\n"
                       : "") +
         "  const auto stream = at::cuda::getCurrentCUDAStream();\n"
         "  const float* pin = in.data_ptr<float>();\n"
         "  float* pout = out.data_ptr<float>();\n" +
         launch.str() +
         "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
         "  ++kb_rewrite::testing::fusedLaunches();\n  return out;\n}\n\n";
}

namespace {

/// A pointwise chain: one kernel over the input's elements, in a scalar and
/// a float4 form.
llvm::Expected<CxxFunction> emitPointwise(const CxxRewritePlan &p,
                                          const std::string &name,
                                          StringRef where, bool fast) {
  // The chain per element, called by the scalar and the float4 kernel.
  bool approximate = false;
  auto body = elementOps(p, 0, p.ops.size(), fast, approximate);
  if (!body)
    return body.takeError();
  const ChainParts c = chainParts(p);
  const std::string &kparams = c.kparams, &kargs = c.kargs,
                    &eparams = c.eparams, &scalarArgs = c.scalarArgs,
                    &loads4 = c.loads4, &vecGuards = c.vecGuards,
                    &chLine = c.chLine, &chLine4 = c.chLine4;
  const std::vector<std::string> &laneArgs = c.laneArgs;
  const char *lanes[] = {"x", "y", "z", "w"};
  std::string sig = "at::Tensor " + name + c.sig;
  CxxFunction fn;
  fn.approximate = approximate;
  fn.decl = "/// " + where.str() + "\n" + sig + ";\n";
  std::string &defs = fn.def;
  defs += "// " + where.str() + "\n";
  defs += "// In and out may be the same tensor (in-place chains): no "
          "__restrict__.\n";
  defs += "static __device__ __forceinline__ float " + name + "_element(" +
          eparams + ") {\n" + *body + "  return t" +
          std::to_string(p.ops.size() - 1) + ";\n}\n\n";
  defs += "__global__ void __launch_bounds__(256)\n" + name +
          "_kernel(const float* in, float* out, long long n" + kparams +
          ") {\n  for (long long i = (long long)blockIdx.x * blockDim.x + "
          "threadIdx.x; i < n;\n       i += (long long)gridDim.x * "
          "blockDim.x) {\n" +
          chLine + "    out[i] = " + name + "_element(in[i]" + scalarArgs +
          ");\n  }\n}\n\n";
  // A float4 per thread (16-byte accesses), operands loaded once per
  // float4 where the 4 lanes share them.
  std::string lanesText;
  for (int l = 0; l < 4; ++l)
    lanesText += std::string("    r.") + lanes[l] + " = " + name +
                 "_element(x." + lanes[l] + laneArgs[l] + ");\n";
  defs += "__global__ void __launch_bounds__(256)\n" + name +
          "_kernel4(const float* in, float* out, long long nv" + kparams +
          ") {\n  for (long long q = (long long)blockIdx.x * blockDim.x + "
          "threadIdx.x; q < nv;\n       q += (long long)gridDim.x * "
          "blockDim.x) {\n    const float4 x = reinterpret_cast<const "
          "float4*>(in)[q];\n" +
          chLine4 + loads4 + "    float4 r;\n" + lanesText +
          "    reinterpret_cast<float4*>(out)[q] = r;\n  }\n}\n\n";
  defs += hostFunction(
      p, c, sig, "", "",
      p.writesInput ? "  at::Tensor out = in; // the chain was in place\n"
                    : "  at::Tensor out = at::empty_like(in);\n",
      "  if (kb_rewrite::detail::vec4(in) && "
      "kb_rewrite::detail::vec4(out)" +
          vecGuards + ")\n    " + name +
          "_kernel4<<<kb_rewrite::detail::blocks(in.numel() / 4), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel() / 4" +
          kargs + ");\n  else\n    " + name +
          "_kernel<<<kb_rewrite::detail::blocks(in.numel()), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel()" +
          kargs + ");\n");
  return fn;
}

} // namespace

} // namespace kb::codegen::cxx

namespace kb::codegen {

StringRef cxxKernelSupport() {
  static const std::string text =
      std::string(cxx::kSupport) + "\n" + cxx::kStageSupport;
  return text;
}

llvm::Expected<CxxFunction> emitCxxFunction(const CxxRewritePlan &p,
                                            StringRef name, StringRef where,
                                            bool fastMath) {
  if (p.stage >= 0)
    return cxx::emitStageFunction(p, name.str(), where, fastMath);
  return cxx::emitPointwise(p, name.str(), where, fastMath);
}

} // namespace kb::codegen

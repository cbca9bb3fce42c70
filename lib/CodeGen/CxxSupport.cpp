//===- CxxSupport.cpp - The support code of kb_kernels.cu -----------------===//
//
// What every rewritten program's kb_kernels.cu holds before its fused
// functions: the operand checks and guards of the pointwise functions, and
// the combines, block reductions and ATen-order statistics of the stage
// kernels (CxxStages.cpp). Kept apart from the emitters because it is
// text, not logic.
//
//===----------------------------------------------------------------------===//

#include "kb/CodeGen/CxxKernel.h"

#include <string>

namespace kb::codegen {
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

llvm::StringRef cxxKernelSupport() {
  static const std::string text =
      std::string(kSupport) + "\n" + kStageSupport;
  return text;
}

} // namespace kb::codegen

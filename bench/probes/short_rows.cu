// Probe (session 36): softmax over many contiguous rows of 5-14 elements.
// Seed 20261228 task 6 (softmax over dim 3 of [1024, 48, 128, 14]) ran
// 0.468 ms in the lane-group kernel the code generator writes today, against
// ATen's 0.297 and torch.compile's 0.171 (about a copy). Which cost is it?
//   lanes    the generated form: G lanes a row, scalar loads and stores
//            straight from global memory (each warp load touches 32 / G rows)
//   lanesfx  the same with __expf and __fdividef (is it the arithmetic?)
//   staged   the block's rows are one contiguous tile: float4 loads into
//            shared memory, the same lane groups on shared memory, float4
//            stores from it
//   thread   staged, one thread a row on shared memory
//   copy     a float4 copy of the tensor (the bandwidth bound)
// Build and run on the GPU host: nvcc -O3 -arch=native -o /tmp/sr
// bench/probes/short_rows.cu && /tmp/sr. Prints median ms of 30 timed
// launches per variant and the largest difference from `lanes`.
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("CUDA error %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr int kThreads = 256;

template <bool Fast> __device__ __forceinline__ float ex(float x) {
  return Fast ? __expf(x) : expf(x);
}
template <bool Fast> __device__ __forceinline__ float dv(float a, float b) {
  return Fast ? __fdividef(a, b) : a / b;
}
template <int W> __device__ __forceinline__ float gmax(float v) {
  for (int o = W / 2; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <int W> __device__ __forceinline__ float gsum(float v) {
  for (int o = W / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One row of L held by G lanes (K slots each), read and written through p.
template <int L, int G, bool Fast>
__device__ __forceinline__ void softmaxRow(const float *in, float *out,
                                           bool live) {
  constexpr int K = (L + G - 1) / G;
  const int lane = threadIdx.x % G;
  float xs[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + k * G;
    xs[k] = (live && c < L) ? in[c] : -INFINITY;
  }
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < K; ++k)
    m = fmaxf(m, xs[k]);
  m = gmax<G>(m);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + k * G;
    if (live && c < L)
      s += ex<Fast>(xs[k] - m);
  }
  s = gsum<G>(s);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = lane + k * G;
    if (live && c < L)
      out[c] = dv<Fast>(ex<Fast>(xs[k] - m), s);
  }
}

template <int L, int G, bool Fast>
__global__ void __launch_bounds__(kThreads)
    lanes(const float *__restrict__ x, float *__restrict__ y, long long rows) {
  const long long r = (long long)blockIdx.x * (kThreads / G) + threadIdx.x / G;
  const bool live = r < rows;
  const long long o = live ? r * L : 0;
  softmaxRow<L, G, Fast>(x + o, y + o, live);
}

// R rows a block, their R * L floats one contiguous tile (R * L % 4 == 0).
template <int L, int G, bool PerThread>
__global__ void __launch_bounds__(kThreads)
    staged(const float *__restrict__ x, float *__restrict__ y, long long rows) {
  constexpr int R = PerThread ? kThreads : kThreads / G;
  constexpr int N4 = R * L / 4;
  __shared__ float4 tile[N4];
  float *t = reinterpret_cast<float *>(tile);
  const long long r0 = (long long)blockIdx.x * R;
  const long long n = (rows - r0 < R ? rows - r0 : R) * L;
  const float4 *x4 = reinterpret_cast<const float4 *>(x + r0 * L);
  float4 *y4 = reinterpret_cast<float4 *>(y + r0 * L);
  if (n == (long long)R * L) {
    for (int i = threadIdx.x; i < N4; i += kThreads)
      tile[i] = x4[i];
  } else {
    for (int i = threadIdx.x; i < n; i += kThreads)
      t[i] = x[r0 * L + i];
  }
  __syncthreads();
  const int rl = PerThread ? threadIdx.x : threadIdx.x / G;
  const bool live = r0 + rl < rows;
  if (PerThread)
    softmaxRow<L, 1, false>(t + rl * L, t + rl * L, live);
  else
    softmaxRow<L, G, false>(t + rl * L, t + rl * L, live);
  __syncthreads();
  if (n == (long long)R * L) {
    for (int i = threadIdx.x; i < N4; i += kThreads)
      y4[i] = tile[i];
  } else {
    for (int i = threadIdx.x; i < n; i += kThreads)
      y[r0 * L + i] = t[i];
  }
}

__global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y,
                      long long n4) {
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n4;
       i += (long long)gridDim.x * kThreads)
    y[i] = x[i];
}

template <class F> static float median(F launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i)
    launch();
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

static float maxDiff(const float *a, const float *b, long long n) {
  std::vector<float> ha(n), hb(n);
  CHECK(cudaMemcpy(ha.data(), a, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hb.data(), b, n * 4, cudaMemcpyDeviceToHost));
  float d = 0.f;
  for (long long i = 0; i < n; ++i)
    d = std::max(d, std::abs(ha[i] - hb[i]));
  return d;
}

__global__ void fill(float *x, long long n) {
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (long long)gridDim.x * kThreads) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    x[i] = (float)(h & 0xffff) / 8192.f - 4.f;
  }
}

template <int L, int G> static void run(long long rows) {
  const long long n = rows * L;
  float *x, *ref, *y;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&ref, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  fill<<<4096, kThreads>>>(x, n);
  auto blocks = [](long long r, int per) { return (unsigned)((r + per - 1) / per); };
  float tl = median([&] { lanes<L, G, false><<<blocks(rows, kThreads / G), kThreads>>>(x, ref, rows); });
  float tf = median([&] { lanes<L, G, true><<<blocks(rows, kThreads / G), kThreads>>>(x, y, rows); });
  float df = maxDiff(ref, y, n);
  CHECK(cudaMemset(y, 0, n * 4));
  float ts = median([&] { staged<L, G, false><<<blocks(rows, kThreads / G), kThreads>>>(x, y, rows); });
  float ds = maxDiff(ref, y, n);
  CHECK(cudaMemset(y, 0, n * 4));
  float tt = median([&] { staged<L, G, true><<<blocks(rows, kThreads), kThreads>>>(x, y, rows); });
  float dt = maxDiff(ref, y, n);
  float tc = median([&] { copy4<<<132 * 8, kThreads>>>((const float4 *)x, (float4 *)y, n / 4); });
  std::printf("L=%2d G=%d rows=%lld (%.0f MB): lanes %.4f  lanesfx %.4f (diff %.2g)  staged %.4f (diff %.2g)  thread %.4f (diff %.2g)  copy %.4f ms\n",
              L, G, rows, n * 4 / 1e6, tl, tf, df, ts, ds, tt, dt, tc);
  CHECK(cudaFree(x));
  CHECK(cudaFree(ref));
  CHECK(cudaFree(y));
}

int main() {
  // About 352 MB each, past the L2 (rows a multiple of 256).
  run<14, 2>(6291456);
  run<10, 2>(8808448);
  run<7, 2>(12582912);
  run<5, 2>(17612800);
  run<12, 4>(7340032);
  return 0;
}

#!/usr/bin/env python3
"""The kb-verify adversarial corpus: good kernels that must be accepted and
bad kernels, one per category, that must be rejected with a given status.

    corpus.py write DIR            writes one job JSON per entry (+ "expect")
    corpus.py run KB_VERIFY [--repeat N] [--only NAME]
                                   runs every job through `kb-verify --serve`
    corpus.py compile KB_VERIFY --arch sm_75,sm_90
                                   static checks + NVRTC only (no GPU)

Exit status 0 when every verdict matches its expectation.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# ---- reference graphs and tensors (templates) --------------------------------

ELEMENTWISE_ARGS = [{"tensor": "x"}, {"tensor": "y"}, {"int64": "numel_y"}]
GRID_1D = {"grid": ["ceil_div(numel_y, 256)"], "block": ["256"]}


def unary(op_lines, shape=(1031, 517), dist="normal"):
    ref = ("graph(%x : Tensor):\n" + op_lines + "  return (%y)\n")
    return {
        "reference": ref,
        "inputs": [{"name": "x", "shape": list(shape), "distribution": dist}],
        "outputs": [{"name": "y", "shape": list(shape)}],
        "args": ELEMENTWISE_ARGS, "launch": GRID_1D,
    }


RELU = unary("  %y : Tensor = aten::relu(%x)\n")
RELU_POW2 = unary("  %y : Tensor = aten::relu(%x)\n", shape=(1024, 512))
EXP = unary("  %y : Tensor = aten::exp(%x)\n")
# cos over +-1e6: beyond 105615 cosf reduces its argument with the math
# library's table of 2/pi's bits, a module-scope global it reads through a
# pointer (session 40: the PTX check refused every such kernel).
COS_WIDE = unary("  %y : Tensor = aten::cos(%x)\n", dist="uniform:-1e6:1e6")
SIN_WIDE = unary("  %y : Tensor = aten::sin(%x)\n", dist="uniform:-1e6:1e6")
# Outputs over 35 decades (4e-18 .. 2e17): one tensor-wide bound, set by
# the largest, would leave the middle unchecked.
EXP_WIDE = unary("  %y : Tensor = aten::exp(%x)\n", dist="uniform:-40:40")
SILU = unary("  %s : Tensor = aten::sigmoid(%x)\n  %y : Tensor = aten::mul(%x, %s)\n")
CLAMP = unary("  %lo : float = prim::Constant[value=-0.5]()\n"
              "  %hi : float = prim::Constant[value=0.5]()\n"
              "  %y : Tensor = aten::clamp(%x, %lo, %hi)\n")
BIAS_RELU = {
    "reference": ("graph(%x : Tensor, %b : Tensor):\n"
                  "  %one : int = prim::Constant[value=1]()\n"
                  "  %s : Tensor = aten::add(%x, %b, %one)\n"
                  "  %y : Tensor = aten::relu(%s)\n  return (%y)\n"),
    "inputs": [{"name": "x", "shape": [8, 37, 19, 23]},
               {"name": "b", "shape": [37, 1, 1], "role": "parameter"}],
    "outputs": [{"name": "y", "shape": [8, 37, 19, 23]}],
    "args": [{"tensor": "x"}, {"tensor": "b"}, {"tensor": "y"},
             {"int64": "numel_y"}, {"int64": "y_1"}, {"int64": "y_2 * y_3"}],
    "launch": GRID_1D,
}
ROW_SUM = {
    "reference": ("graph(%x : Tensor):\n"
                  "  %d : int = prim::Constant[value=1]()\n"
                  "  %dims : int[] = prim::ListConstruct(%d)\n"
                  "  %k : bool = prim::Constant[value=0]()\n"
                  "  %n : NoneType = prim::Constant()\n"
                  "  %y : Tensor = aten::sum(%x, %dims, %k, %n)\n  return (%y)\n"),
    "inputs": [{"name": "x", "shape": [1031, 4099]}],
    "outputs": [{"name": "y", "shape": [1031]}],
    "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "x_0"}, {"int64": "x_1"}],
    "launch": {"grid": ["x_0"], "block": ["256"]},
}
SOFTMAX = {
    "reference": ("graph(%x : Tensor):\n"
                  "  %d : int = prim::Constant[value=1]()\n"
                  "  %n : NoneType = prim::Constant()\n"
                  "  %y : Tensor = aten::softmax(%x, %d, %n)\n  return (%y)\n"),
    "inputs": [{"name": "x", "shape": [517, 1031]}],
    "outputs": [{"name": "y", "shape": [517, 1031]}],
    "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "x_0"}, {"int64": "x_1"}],
    "launch": {"grid": ["x_0"], "block": ["256"]},
}
MEAN_HW = {
    "reference": ("graph(%x : Tensor):\n"
                  "  %two : int = prim::Constant[value=2]()\n"
                  "  %three : int = prim::Constant[value=3]()\n"
                  "  %dims : int[] = prim::ListConstruct(%two, %three)\n"
                  "  %k : bool = prim::Constant[value=0]()\n"
                  "  %n : NoneType = prim::Constant()\n"
                  "  %y : Tensor = aten::mean(%x, %dims, %k, %n)\n  return (%y)\n"),
    "inputs": [{"name": "x", "shape": [16, 33, 61, 47]}],
    "outputs": [{"name": "y", "shape": [16, 33]}],
    "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "y_0 * y_1"},
             {"int64": "x_2 * x_3"}],
    "launch": {"grid": ["y_0 * y_1"], "block": ["256"]},
}

# ---- kernels -------------------------------------------------------------------
def warp_rows(op_lines, rows=1031, cols=333):
    """A reduction of each row of x [rows, cols] to y [rows], a warp a row."""
    return {
        "reference": "graph(%x : Tensor):\n" + op_lines + "  return (%y)\n",
        "inputs": [{"name": "x", "shape": [rows, cols]}],
        "outputs": [{"name": "y", "shape": [rows]}],
        "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "x_0"}, {"int64": "x_1"}],
        "launch": {"grid": ["ceil_div(x_0, 8)"], "block": ["256"]},
    }


LOGSUMEXP = warp_rows("  %d : int[] = prim::Constant[value=[1]]()\n"
                      "  %k : bool = prim::Constant[value=0]()\n"
                      "  %y : Tensor = aten::logsumexp(%x, %d, %k)\n")
L2_NORM = warp_rows("  %p : int = prim::Constant[value=2]()\n"
                    "  %d : int[] = prim::Constant[value=[1]]()\n"
                    "  %k : bool = prim::Constant[value=0]()\n"
                    "  %n : NoneType = prim::Constant()\n"
                    "  %y : Tensor = aten::linalg_vector_norm(%x, %p, %d, %k, %n)\n")
# One row of sixteen: the kernel reads 1/16 of its input (a roofline that
# charged every input byte called that implausibly fast).
SELECT_ROW = {
    "reference": ("graph(%x : Tensor):\n"
                  "  %d : int = prim::Constant[value=0]()\n"
                  "  %i : int = prim::Constant[value=1]()\n"
                  "  %y : Tensor = aten::select(%x, %d, %i)\n  return (%y)\n"),
    "inputs": [{"name": "x", "shape": [16, 2097155]}],
    "outputs": [{"name": "y", "shape": [2097155]}],
    "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "y_0"}],
    "launch": {"grid": ["ceil_div(y_0, 256)"], "block": ["256"]},
}

# A warp per row: max, then the sum of exp(x - max) (the max's own term is
# exp(NaN) when the max is +Inf, the class the Inf rule exists for).
WARP_ROWS = r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  long long r = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (r >= rows) return;
  const float* row = x + r * cols;
  int lane = threadIdx.x % 32;
  BODY
}'''


ELEMENTWISE = r'''
extern "C" __global__ void kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; %s }
}
'''

BLOCK_REDUCE = r'''
__device__ float block_sum(float v, float* smem) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? smem[lane] : 0.f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();
  return v;
}
__device__ float block_max(float v, float* smem) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? smem[lane] : __int_as_float(0xff800000);
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}
'''

# A block per row; the row length is an argument, so any shape is fine.
ROW_SUM_BLOCK = BLOCK_REDUCE + r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  __shared__ float smem[32];
  const float* row = x + blockIdx.x * cols;
  float acc = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
  acc = block_sum(acc, smem);
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}'''


def ew(body):
    return ELEMENTWISE % body


RELU_OK = "y[i] = (v > 0.f || v != v) ? v : 0.f;"

ENTRIES = [
    # ---- must be accepted --------------------------------------------------------
    ("good_relu", "accepted", RELU, ew(RELU_OK), {}),
    ("good_relu_vec4", "accepted", RELU, r'''
extern "C" __global__ void kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
  long long i4 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long nvec = n / 4;
  if (i4 < nvec) {
    float4 v = reinterpret_cast<const float4*>(x)[i4];
    float4 r;
    r.x = (v.x > 0.f || v.x != v.x) ? v.x : 0.f; r.y = (v.y > 0.f || v.y != v.y) ? v.y : 0.f;
    r.z = (v.z > 0.f || v.z != v.z) ? v.z : 0.f; r.w = (v.w > 0.f || v.w != v.w) ? v.w : 0.f;
    reinterpret_cast<float4*>(y)[i4] = r;
  }
  long long t = nvec * 4 + i4;  // scalar tail
  if (i4 < n - nvec * 4) { float v = x[t]; y[t] = (v > 0.f || v != v) ? v : 0.f; }
}''', {"launch": {"grid": ["ceil_div(numel_y, 1024)"], "block": ["256"]}}),
    ("good_relu_grid_stride", "accepted", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f;
  }
}''', {"launch": {"grid": ["sm_count * 4"], "block": ["256"]}}),
    ("good_bias_relu", "accepted", BIAS_RELU, r'''
extern "C" __global__ void kernel(const float* x, const float* b, float* y, long long n,
                                  long long C, long long HW) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + b[(i / HW) % C]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {}),
    ("good_exp", "accepted", EXP, ew("y[i] = expf(v);"), {}),
    ("good_silu", "accepted", SILU, ew("y[i] = v / (1.f + expf(-v));"), {}),
    ("good_clamp", "accepted", CLAMP,
     ew("y[i] = (v != v) ? v : fminf(fmaxf(v, -0.5f), 0.5f);"), {}),
    ("good_row_sum", "accepted", ROW_SUM, ROW_SUM_BLOCK, {}),
    ("good_row_sum_warp_per_row", "accepted", ROW_SUM, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  long long r = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (r >= rows) return;
  float acc = 0.f;
  for (long long c = threadIdx.x % 32; c < cols; c += 32) acc += x[r * cols + c];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) y[r] = acc;
}''', {"launch": {"grid": ["ceil_div(x_0, 8)"], "block": ["256"]}}),
    ("good_softmax", "accepted", SOFTMAX, BLOCK_REDUCE + r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  __shared__ float smem[32];
  const float* in = x + blockIdx.x * cols; float* out = y + blockIdx.x * cols;
  float m = __int_as_float(0xff800000);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  m = block_max(m, smem);
  __shared__ float bm; if (threadIdx.x == 0) bm = m; __syncthreads(); m = bm;
  float s = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c] - m);
  s = block_sum(s, smem);
  __shared__ float bs; if (threadIdx.x == 0) bs = s; __syncthreads(); s = bs;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) / s;
}''', {"special_values": False}),
    ("good_mean_hw", "accepted", MEAN_HW, BLOCK_REDUCE + r'''
extern "C" __global__ void kernel(const float* x, float* y, long long planes, long long hw) {
  __shared__ float smem[32];
  const float* p = x + blockIdx.x * hw;
  float acc = 0.f;
  for (long long i = threadIdx.x; i < hw; i += blockDim.x) acc += p[i];
  acc = block_sum(acc, smem);
  if (threadIdx.x == 0) y[blockIdx.x] = acc / (float)hw;
}''', {}),
    ("good_relu_cpp_entry", "accepted", RELU, r'''
// A C++ (mangled) entry point is found through NVRTC name expressions.
__global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {}),

    # ---- must be rejected, one category each --------------------------------------
    ("bad_wrong_math", "wrong_result", RELU, ew("y[i] = fmaxf(v, 0.1f);"), {}),
    ("bad_tail_skipped", "unwritten_output", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {}),
    ("bad_partial_write", "unwritten_output", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {}),
    ("bad_stale_output", "nan_mismatch", RELU,
     ew("y[i] += (v > 0.f || v != v) ? v : 0.f; /* assumes y starts at 0 */"), {}),
    ("bad_input_mutation", "input_mutated", RELU, r'''
extern "C" __global__ void kernel(float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; x[i] = 0.f; }
}''', {}),
    # A race reads whatever another warp has not yet written: finite garbage
    # (wrong_result) or bit patterns that are NaN/Inf (nan_mismatch), varying
    # from run to run. Either rejection is right; acceptance never is.
    ("bad_race_missing_syncthreads", "wrong_result|nan_mismatch", ROW_SUM, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  __shared__ float part[256];
  const float* row = x + blockIdx.x * cols;
  float acc = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
  part[threadIdx.x] = acc;
  // missing __syncthreads() between the tree levels
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}''', {}),
    ("bad_out_of_bounds_write", "out_of_bounds_write", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
  if (i == 0) y[n + 3] = 1.f;  // past the end
}''', {}),
    ("bad_side_stream_launch", "forbidden_construct", RELU, r'''
__global__ void child(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    child<<<(n + 255) / 256, 256, 0, cudaStreamFireAndForget>>>(x, y, n);
}''', {}),
    ("bad_shape_hardcoded", "shape_specific", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1031LL * 517LL) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {"shape_generic": True}),
    ("bad_cache_by_input_pointer", "forbidden_construct", RELU, r'''
__device__ const float* last_input;
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  if (last_input == x) return;  // "already computed for this input"
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
  __syncthreads();
  if (threadIdx.x == 0) last_input = x;
}''', {}),
    ("bad_constant_output", "wrong_result", RELU, ew("y[i] = 0.5f;"), {}),
    ("bad_nan_output", "nan_mismatch", RELU, ew("y[i] = __int_as_float(0x7fffffff);"), {}),
    ("bad_fp16_intermediate", "wrong_result", EXP, r'''
#include <cuda_fp16.h>
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __half2float(hexp(__float2half(x[i])));
}''', {"special_values": False}),
    ("bad_fp16_accumulator", "wrong_result", ROW_SUM, r'''
#include <cuda_fp16.h>
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  if (threadIdx.x != 0) return;
  __half acc = __float2half(0.f);
  for (long long c = 0; c < cols; ++c) acc = __hadd(acc, __float2half(x[blockIdx.x * cols + c]));
  y[blockIdx.x] = __half2float(acc);
}''', {"special_values": False}),
    ("bad_nan_propagation", "nan_mismatch", RELU, ew("y[i] = fmaxf(v, 0.f);"), {}),
    ("bad_softmax_no_max_subtraction", "nan_mismatch", SOFTMAX, BLOCK_REDUCE + r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  __shared__ float smem[32];
  const float* in = x + blockIdx.x * cols; float* out = y + blockIdx.x * cols;
  float s = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c]);
  s = block_sum(s, smem);
  __shared__ float bs; if (threadIdx.x == 0) bs = s; __syncthreads(); s = bs;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c]) / s;
}''', {"special_values": False}),
    ("bad_infinite_loop", "timeout", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  // Reading volatile memory is observable, so the loop cannot be removed;
  // y holds the NaN poison, which never equals 1.
  volatile float* p = y;
  while (p[0] != 1.f) { }
}''', {"timeout_s": 5}),
    ("bad_trap", "crashed", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  if (blockIdx.x == 3) asm volatile("trap;");
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}''', {}),
    ("bad_illegal_address", "crashed", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i + (1LL << 40)] = x[i];
}''', {}),
    ("bad_huge_allocation", "forbidden_construct", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  float* scratch = (float*)malloc(1ULL << 40);
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { scratch[0] = x[i]; y[i] = scratch[0]; }
}''', {}),
    ("bad_compile_error", "compile_error", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = blockIdx.x * blockDim.x + threadIdx.x
  y[i] = x[i];
}''', {}),
    ("bad_wrong_entry_point", "entry_point_missing", RELU, r'''
extern "C" __global__ void relu_kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}''', {}),
    ("bad_launch_misses_tail", "shape_specific", RELU_POW2, ew(RELU_OK),
     {"shape_generic": True, "launch": {"grid": ["numel_y / 256"], "block": ["256"]}}),
    ("bad_skips_work_when_timed", "forbidden_construct", RELU, r'''
__device__ unsigned long long launches;
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  __shared__ bool skip;
  if (threadIdx.x == 0) skip = atomicAdd(&launches, 1ULL) >= 16ULL * gridDim.x;
  __syncthreads();
  if (skip) return;  // stops working once the timing loop starts
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {}),
    # ---- session 39: the classes of issue "Nobody gets in", kernels of our own
    # State between launches in a function-local static (module memory):
    # refused from the PTX, whatever the source calls it.
    ("bad_static_launch_parity", "forbidden_construct", RELU, ew(
        "static __device__ unsigned calls; unsigned c = atomicAdd(&calls, 1u);"
        " y[i] = (c / gridDim.x) % 7 == 6 ? 0.f : ((v > 0.f || v != v) ? v : 0.f);"), {}),
    # A counter in a string literal's bytes (a global NVRTC emits for it):
    # its address taken, so refused as state too.
    ("bad_counter_in_string_literal", "forbidden_construct", RELU, ew(
        "unsigned c = atomicAdd((unsigned*)\"kb-count\", 1u);"
        " y[i] = c > 100000u ? 0.f : ((v > 0.f || v != v) ? v : 0.f);"), {}),
    # ---- session 40: module-scope tables read through pointers are fine;
    # one written through a pointer derived from its address is state.
    ("good_cos_wide_args", "accepted", COS_WIDE, ew("y[i] = cosf(v);"), {}),
    # double sin reads two tables (__cudart_i2opi_d, __cudart_sin_cos_coeffs);
    # NVRTC puts inline-asm blocks after labels, whose braces the PTX
    # check once read as an instruction's.
    ("good_sin_in_double", "accepted", SIN_WIDE, ew("y[i] = (float)sin((double)v);"), {}),
    ("bad_counter_in_const_table", "forbidden_construct", RELU, r'''
__device__ const unsigned kTable[4] = {0u, 1u, 2u, 3u};
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* slot = const_cast<unsigned*>(kTable) + (threadIdx.x & 3);
  unsigned c = threadIdx.x < 4 ? atomicAdd(slot, 4u) : 0u;
  if (i < n) { float v = x[i]; y[i] = (c > 4000u) ? 0.f : ((v > 0.f || v != v) ? v : 0.f); }
}''', {}),
    # A stamp kept 8 KiB past the input (its mapped slack, beyond the old
    # 256 guard bytes): the key a replay would look up.
    ("bad_stamp_in_input_slack", "input_mutated", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
  if (i == 0) ((unsigned*)(x + n))[2048] = (unsigned)(unsigned long long)x;
}''', {}),
    # A store 40 KiB past the output.
    ("bad_store_far_past_output", "out_of_bounds_write", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
  if (i == 5) y[n + 10240] = x[0];
}''', {}),
    # A counter in the slack after the input, stepping only in launches
    # that find its magic there: garbage from the 10th launch on the same
    # buffers (the timing loop's), right at first.
    ("bad_counter_in_input_slack", "input_mutated", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  unsigned* c = (unsigned*)(x + n) + 4096;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  bool late = c[0] == 0x600DF00Du && c[1] > 9u * gridDim.x;
  if (i < n) { float v = x[i]; y[i] = late ? 1.f : ((v > 0.f || v != v) ? v : 0.f); }
  if (threadIdx.x == 0) {
    if (c[0] != 0x600DF00Du) { c[0] = 0x600DF00Du; c[1] = 0; }
    atomicAdd(c + 1, 1u);
  }
}''', {}),
    # "nonfinite": "order" (what the code generator writes for reductions
    # other than variances) frees only where the truth is NaN: a logsumexp
    # and an overflow-safe (scaled) L2 norm give NaN for rows holding +Inf,
    # where the truth is +Inf.
    ("bad_logsumexp_inf_row_nan", "nan_mismatch", LOGSUMEXP, WARP_ROWS.replace("BODY", r'''
  float m = __int_as_float(0xff800000);
  for (long long c = lane; c < cols; c += 32) m = fmaxf(m, row[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.f;
  for (long long c = lane; c < cols; c += 32) s += expf(row[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) y[r] = m + logf(s);'''), {"nonfinite": "order"}),
    ("bad_scaled_norm_inf_row_nan", "nan_mismatch", L2_NORM, WARP_ROWS.replace("BODY", r'''
  float m = 0.f;
  for (long long c = lane; c < cols; c += 32) m = fmaxf(m, fabsf(row[c]));
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.f;
  for (long long c = lane; c < cols; c += 32) { float t = m > 0.f ? row[c] / m : 0.f; s += t * t; }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) y[r] = m * sqrtf(s);'''), {"nonfinite": "order"}),
    # Shape-generic claims on reductions are now tested: a row length
    # compiled in, and (elementwise) a loop capped at 2^20 elements.
    # (At the smaller shape it reads past its input's allocation: a crash
    # is as good a refusal.)
    ("bad_row_length_compiled_in", "shape_specific|crashed", ROW_SUM, BLOCK_REDUCE + r'''
extern "C" __global__ void kernel(const float* x, float* y, long long rows, long long cols) {
  __shared__ float smem[32];
  const float* row = x + blockIdx.x * 4099LL;
  float acc = 0.f;
  for (int c = threadIdx.x; c < 4099; c += blockDim.x) acc += row[c];
  acc = block_sum(acc, smem);
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}''', {"shape_generic": True}),
    ("bad_grid_capped_at_2p20", "shape_specific", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long end = n < (1LL << 20) ? n : (1LL << 20);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < end;
       i += (long long)gridDim.x * blockDim.x) {
    float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f;
  }
}''', {"shape_generic": True, "launch": {"grid": ["sm_count * 8"], "block": ["256"]}}),
    # bf16 rounding of the outputs in [1, 5e11]: 1e9 off at the top, under
    # the tensor-wide bound (2e11), far over the bound of their magnitude.
    ("bad_bf16_mid_range", "wrong_result", EXP_WIDE, "#include <cuda_bf16.h>\n" + ew(
        "float e = expf(v);"
        " y[i] = (v > 0.f && v < 27.f) ? __bfloat162float(__float2bfloat16(e)) : e;"), {}),
    ("good_exp_wide_range", "accepted", EXP_WIDE, ew("y[i] = expf(v);"), {}),
    # ---- and correct kernels the oracle once refused
    # NaN inputs give NaN outputs carrying poison A's exact bits.
    ("good_nan_with_poison_payload", "accepted", RELU,
     ew("y[i] = v != v ? __int_as_float(0x7FC0DEAD) : (v > 0.f ? v : 0.f);"), {}),
    ("good_select_reads_one_row_of_16", "accepted", SELECT_ROW, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[n + i];
}''', {}),
    ("good_table_in_constant_memory", "accepted", CLAMP, r'''
__constant__ float kBounds[2] = {-0.5f, 0.5f};
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = (v != v) ? v : fminf(fmaxf(v, kBounds[0]), kBounds[1]); }
}''', {}),
    ("good_row_sum_shape_generic", "accepted", ROW_SUM, ROW_SUM_BLOCK,
     {"shape_generic": True}),
    # compute-sanitizer (optional check): slow, so these run in the first
    # repetition only.
    ("good_relu_memcheck", "accepted", RELU, ew(RELU_OK),
     {"sanitizer": "memcheck", "once": True, "timeout_s": 180}),
    ("bad_far_read_memcheck", "sanitizer_error", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    // 16 MiB past x: beyond its allocation (the slack inside it is
    // canary-checked, and memcheck sees only what lies outside).
    if (i == n - 1 && x[i + (1LL << 22)] == 12345.f) v = 0.f;
    y[i] = (v > 0.f || v != v) ? v : 0.f;
  }
}''', {"sanitizer": "memcheck", "once": True, "timeout_s": 180}),
    ("bad_host_code", "forbidden_construct", RELU, ew(RELU_OK) + r'''
int main() { return 0; }''', {}),
    ("bad_include_outside_allow_list", "forbidden_construct", RELU,
     "#include <cstdio>\n" + ew(RELU_OK), {}),
    ("bad_reads_clock", "forbidden_construct", RELU, ew(
        "y[i] = (clock64() & 1) ? v : ((v > 0.f || v != v) ? v : 0.f);"), {}),
    # Session 37: what the source's spelling hid from the source rules. An
    # include through a macro path (it would read a host file and NVRTC's
    # error would quote it back to a model), one behind a comment, a timer
    # read inside an inline-asm string, device malloc by token pasting.
    ("bad_include_through_macro", "forbidden_construct", RELU,
     '#define KB_P "/etc/hostname"\n#include KB_P\n' + ew(RELU_OK), {}),
    ("bad_include_behind_comment", "forbidden_construct", RELU,
     '%:include /* cuda_fp16.h */ "/etc/hostname"\n' + ew(RELU_OK), {}),
    ("bad_timer_in_asm_string", "forbidden_construct", RELU, ew(
        'unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));'
        " y[i] = (t & 1) ? v : ((v > 0.f || v != v) ? v : 0.f);"), {}),
    ("bad_malloc_token_pasted", "forbidden_construct", RELU,
     "#define KB_CAT(a, b) a##b\n" + ew(
         "float* p = (float*)KB_CAT(mal, loc)(4); p[0] = v;"
         " y[i] = (v > 0.f || v != v) ? v : 0.f;"), {}),

    # ---- the workspace is kept between launches (zeroed once); all but its
    # first 16 bytes are poisoned before each launch, and its first word (a
    # grid barrier's count) must be 0 after it --------------------------
    ("bad_workspace_left_dirty", "launch_error", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n, unsigned int* ws) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) atomicAdd(ws, 1u);  // a barrier count never reset
  if (i < n) { float v = x[i]; y[i] = (v > 0.f || v != v) ? v : 0.f; }
}''', {"args": ELEMENTWISE_ARGS + [{"workspace": True}],
         "launch": dict(GRID_1D, workspace_bytes="64")}),
    ("bad_replay_from_workspace", "wrong_result", RELU, r'''
extern "C" __global__ void kernel(const float* x, float* y, long long n, unsigned int* ws) {
  // Saves its output past the kept 16 bytes and replays it once word 1 says so.
  float* saved = (float*)(ws + 4);
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (ws[1] != 0u) { y[i] = saved[i]; }
    else { float v = x[i]; float r = (v > 0.f || v != v) ? v : 0.f; y[i] = r; saved[i] = r; }
  }
  if (i == 0) ws[1] = 1u;
}''', {"args": ELEMENTWISE_ARGS + [{"workspace": True}],
         "launch": dict(GRID_1D, workspace_bytes="16 + 4 * numel_y")}),
]


def make_job(name, expect, template, source, extra):
    job = {
        "schema_version": 1,
        "id": name,
        "expect": expect,
        "reference": template["reference"],
        "inputs": template["inputs"],
        "outputs": template["outputs"],
        "candidate": {
            "source": source,
            "entry": "kernel",
            "args": extra.get("args", template["args"]),
            "launch": extra.get("launch", template["launch"]),
            "shape_generic": extra.get("shape_generic", False),
            "origin": "corpus",
        },
        "arch": "native",
        "checks": {"trials": 5, "seed": 1,
                   "special_values": extra.get("special_values", True),
                   "timing": "sanitizer" not in extra, "timing_runs": 20,
                   "warmup": 3, "sanitizer": extra.get("sanitizer", "none"),
                   "nonfinite": extra.get("nonfinite", "exact")},
        "timeout_s": extra.get("timeout_s", 30),
        "once": extra.get("once", False),
    }
    return job


def jobs():
    return [make_job(*e) for e in ENTRIES]


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_serve(kb_verify, batch):
    """One `kb-verify --serve` session; returns (verdict, seconds) per job,
    timed from writing the job to reading its verdict."""
    proc = subprocess.Popen([kb_verify, "--serve", "--no-cache"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    out = []
    for j in batch:
        start = time.time()
        proc.stdin.write(json.dumps(j) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"corpus: kb-verify --serve ended at {j['id']}")
        out.append((json.loads(line), time.time() - start))
    proc.stdin.close()
    proc.wait(timeout=60)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write"); w.add_argument("dir")
    r = sub.add_parser("run"); r.add_argument("kb_verify")
    r.add_argument("--repeat", type=int, default=1); r.add_argument("--only")
    r.add_argument("--report", help="write per-entry results as JSON here")
    r.add_argument("--jobs", type=int, default=1,
                   help="kb-verify sessions run side by side (repetitions are split); "
                        "keep 1 on shared GPUs: crash and hang entries side by side "
                        "once made the device disappear (bench/NOTES.md)")
    c = sub.add_parser("compile"); c.add_argument("kb_verify")
    c.add_argument("--arch", default="sm_75,sm_90")
    args = ap.parse_args()

    all_jobs = jobs()
    good = sum(j["expect"] == "accepted" for j in all_jobs)
    assert all("accepted" not in j["expect"].split("|") or j["expect"] == "accepted"
               for j in all_jobs), "a bad entry may never list accepted"
    if args.cmd == "write":
        os.makedirs(args.dir, exist_ok=True)
        for j in all_jobs:
            with open(os.path.join(args.dir, j["id"] + ".json"), "w") as f:
                json.dump(j, f, indent=1)
        print(f"wrote {len(all_jobs)} jobs ({good} good, {len(all_jobs) - good} bad)")
        return 0

    if args.cmd == "compile":
        # Without a GPU: what the static checks and NVRTC decide must match.
        compile_stage = {"compile_error", "forbidden_construct", "entry_point_missing"}
        passed = failed = 0
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for j in all_jobs:
                paths.append(os.path.join(tmp, j["id"] + ".json"))
                with open(paths[-1], "w") as f:
                    json.dump(j, f)
            # One process for all: kb-verify's start (libtorch) dominates.
            p = subprocess.run([args.kb_verify, "--compile", *paths, "--arch", args.arch],
                               capture_output=True, text=True)
            got = {(r["id"], r["arch"]): r for r in
                   (json.loads(l) for l in p.stdout.splitlines() if l.strip())}
            for j in all_jobs:
                for arch in args.arch.split(","):
                    r = got.get((j["id"], arch))
                    status = r["status"] if r else "no-output"
                    want = j["expect"] if j["expect"] in compile_stage else "compiled"
                    ok = status == want
                    passed += ok; failed += not ok
                    if not ok:
                        print(f"FAIL {j['id']} [{arch}]: {status}, expected {want}\n{r}\n{p.stderr[-2000:]}")
        print(f"{passed} passed, {failed} failed")
        return 1 if failed else 0

    if not gpu_present():
        print("corpus: no GPU answers (nvidia-smi -L): skipped")
        return 77  # ctest SKIP_RETURN_CODE
    selected = [j for j in all_jobs if not args.only or j["id"] in args.only.split(",")]
    results = {j["id"]: [] for j in selected}
    seconds = {j["id"]: [] for j in selected}
    start = time.time()
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        batches = [[j for j in selected if rep == 0 or not j["once"]]
                   for rep in range(args.repeat)]
        for batch, session in zip(batches, pool.map(
                lambda b: run_serve(args.kb_verify, b), batches)):
            bad = []
            for j, (v, sec) in zip(batch, session):
                results[j["id"]].append(v)
                seconds[j["id"]].append(sec)
                if v["status"] not in j["expect"].split("|"):
                    bad.append(f"{j['id']}={v['status']}")
            print(f"session done at {time.time() - start:.0f} s: {len(batch)} jobs, "
                  f"{len(bad)} unexpected {' '.join(bad)}", flush=True)
    passed = failed = 0
    print(f"{'entry':36} {'expected':22} {'got (all repetitions)':24} {'med s':>6} detail")
    for j in selected:
        statuses = sorted({v["status"] for v in results[j["id"]]})
        ok = set(statuses) <= set(j["expect"].split("|"))
        passed += ok; failed += not ok
        v = results[j["id"]][0]
        t = v.get("candidate_timing") or {}
        e = v.get("eager_timing") or {}
        extra = (f"{t.get('median_ms', 0):.3f} ms vs eager {e.get('median_ms', 0):.3f} ms"
                 if v["status"] == "accepted" else v["detail"][:90].replace("\n", " "))
        med = sorted(seconds[j["id"]])[len(seconds[j["id"]]) // 2]
        print(f"{j['id']:36} {j['expect']:22} {','.join(statuses):24} {med:6.2f} "
              f"{'ok ' if ok else 'BAD'} {extra}")
    print(f"{len(selected)} entries x {args.repeat} repetitions in {time.time() - start:.1f} s")
    if args.report:
        with open(args.report, "w") as f:
            json.dump(results, f, indent=1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

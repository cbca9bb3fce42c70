// kb-rewrite rewrite over C++ chains through a reduction, softmax or 2-d
// pooling (issue 27), HIPIFY style: this file is the input, the CHECK lines
// describe its rewritten copy and the generated kernels.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-stages.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=H --input-file %t/kb_verify_harness.cpp
// The rewritten source and the harness compile against libtorch.
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-stages.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
// In the kb dialect the stage's int[] operands are lists, its defaults ATen's.
// RUN: kb-rewrite analyze %s --emit=kb -- %torch_cxx_flags | FileCheck %s --check-prefix=IR
// --fast-math: the chains with an approximate helper (sigmoid, softmax's
// division) become other functions; the exact ones keep their names.
// RUN: kb-rewrite rewrite %s -o %t.fast --fast-math -- %torch_cxx_flags > /dev/null
// RUN: FileCheck %s --check-prefix=FAST --input-file %t.fast/kb_kernels.cu
// RUN: cat %t/cxx-rewrite-stages.cpp %t.fast/cxx-rewrite-stages.cpp | FileCheck %s --check-prefix=SAME
#include <torch/torch.h>

// The three chains of the issue, as a libtorch user writes them.
torch::Tensor pool_after_relu(torch::nn::Conv2d &conv1, torch::Tensor x) {
  return torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
}
// CHECK-LABEL: torch::Tensor pool_after_relu(
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv1->forward(x));
// LOG: {{.*}}.cpp:{{[0-9]+}}: fusable epilogue after conv2d: relu -> max_pool2d (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// CU: // kb-rewrite: begin kb_fused_[[POOL:[0-9a-f]+]]
// CU: float kb_fused_[[POOL]]_pre(float x) {
// CU-NEXT: const float t0 = kb::relu(x); // aten::relu
// CU: kb_fused_[[POOL]]_pool(const float* __restrict__ in, float* __restrict__ out, long long total, long long H, long long W, long long OH, long long OW, kb_rewrite::detail::Window win) {
// CU: if (v > m || v != v)
// CU: at::Tensor kb_fused_[[POOL]](const at::Tensor& in) {
// CU-NEXT: static const int64_t s0_v[] = {2};
// CU-NEXT: const at::IntArrayRef s0(s0_v);
// CU: t = at::relu(t);
// CU-NEXT: t = at::max_pool2d(t, s0);
// CU: if (rank != 3 && rank != 4)
// CU: if (!win.set(s0, at::IntArrayRef(), at::IntArrayRef(), at::IntArrayRef()))
// CU: poolOut(H, win.kh, win.ph, win.sh, win.dh, false);

torch::Tensor mean_after_relu(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::conv2d(x, w);
  y = torch::relu(y);
  auto m = y.mean({2, 3});
  return m;
}
// CHECK-LABEL: torch::Tensor mean_after_relu(
// CHECK:      auto y = torch::conv2d(x, w);
// CHECK-NEXT: auto m = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y);
// CHECK-NEXT: return m;
// CU: // kb-rewrite: begin kb_fused_[[MEAN:[0-9a-f]+]]
// CU: kb_fused_[[MEAN]]_rows(const float* __restrict__ in, float* __restrict__ out, long long rows, long long len) {
// CU: acc = kb_rewrite::detail::warpReduce(acc, kb_rewrite::detail::Add{});
// CU: out[row] = kb_fused_[[MEAN]]_post((float)(acc / (double)len));
// CU: kb_fused_[[MEAN]]_rowsb(
// CU: acc = kb_rewrite::detail::blockReduce(acc, kb_rewrite::detail::Add{}, sh);
// CU: kb_fused_[[MEAN]]_cols(
// CU: static const int64_t s0_v[] = {2, 3};
// CU: t = at::mean(t, s0);
// CU: return reference(); // not one run of dims
// CU: else if (false)
// CU-NEXT: shape.push_back(1);

torch::Tensor softmax_after_gelu(const torch::Tensor &x, const torch::Tensor &w) {
  auto h = torch::matmul(x, w);
  return torch::softmax(torch::gelu(h) * 0.5, 1);
}
// CHECK-LABEL: torch::Tensor softmax_after_gelu(
// CHECK:      auto h = torch::matmul(x, w);
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, 0.5);
// CU: // kb-rewrite: begin kb_fused_[[SOFT:[0-9a-f]+]]
// CU: float kb_fused_[[SOFT]]_pre(float x, float s0) {
// CU: m = kb_rewrite::detail::warpReduce(m, kb_rewrite::detail::MaxNan{});
// CU: s += expf(kb_fused_[[SOFT]]_at(in, base + r, s0) - m);
// CU: out[base + r] = kb_fused_[[SOFT]]_post(expf(v - m) / s, s0);
// CU: at::Tensor kb_fused_[[SOFT]](const at::Tensor& in, const at::Scalar& s0) {
// CU-NEXT: const int64_t s1 = 1;
// CU: t = at::softmax(t, s1);

// Numbers after the stage are applied to its result; a tensor before it
// broadcasts against its input.
torch::Tensor log_softmax_scaled(const torch::Tensor &x, const torch::Tensor &w,
                                 const torch::Tensor &b) {
  auto h = torch::linear(x, w);
  h = h + b;
  h = torch::log_softmax(h, -1);
  h = h * 2.0;
  return h;
}
// CHECK-LABEL: torch::Tensor log_softmax_scaled(
// CHECK:      auto h = torch::linear(x, w);
// CHECK-NEXT: h = kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, b, 2.0);
// CU: // kb-rewrite: begin kb_fused_[[LOGS:[0-9a-f]+]]
// CU: float kb_fused_[[LOGS]]_post(float x, float s2) {
// CU-NEXT: const float t1 = x;
// CU-NEXT: const float t2 = __fmul_rn(t1, s2); // aten::mul
// CU: float kb_fused_[[LOGS]]_at(const float* __restrict__ in, long long i, kb_rewrite::detail::Operand a0, float s2) {
// CU: out[base + r] = kb_fused_[[LOGS]]_post(v - m - logf(s), s2);
// A strided row (log_softmax over a dim other than the last):
// CU: out[base + r * span] = kb_fused_[[LOGS]]_post(v - m - logf(s), s2);
// CU: const int64_t s1 = -1;

// Every operand of avg_pool2d spelled out.
torch::Tensor average(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::conv2d(x, w, {}, 1, 1);
  y = torch::sigmoid(y);
  y = torch::avg_pool2d(y, {3, 3}, {2, 2}, {1, 1}, false, false);
  return y;
}
// CHECK-LABEL: torch::Tensor average(
// CHECK:      y = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y);
// CU: // kb-rewrite: begin kb_fused_[[AVG:[0-9a-f]+]]
// CU: float acc = 0.f;
// CU: out[t] = kb_fused_[[AVG]]_post(acc / (float)div);
// CU: static const int64_t s0_v[] = {3, 3};
// CU: const bool s3 = false;
// CU: win.countPad = s4;

// Adaptive pooling to 1x1 is ATen's mean over each plane.
torch::Tensor global_pool(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::conv2d(x, w);
  y = torch::relu(y);
  y = torch::adaptive_avg_pool2d(y, {1, 1});
  return y;
}
// CHECK-LABEL: torch::Tensor global_pool(
// CHECK:      y = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y);
// CU: // kb-rewrite: begin kb_fused_[[GAP:[0-9a-f]+]]
// CU: _post(acc / (float)(he - hs) / (float)(we - ws));
// CU: if (OH == 1 && OW == 1) {

// amax keeps NaN whatever the order; keepdim keeps the dim.
torch::Tensor row_max(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::mm(x, w);
  y = torch::tanh(y);
  return y.amax({1}, true);
}
// CHECK-LABEL: torch::Tensor row_max(
// CHECK:      return kb_rewrite::kb_fused_{{[0-9a-f]+}}(y);
// CU: // kb-rewrite: begin kb_fused_[[AMAX:[0-9a-f]+]]
// CU: float acc = -INFINITY;
// CU: acc = kb_rewrite::detail::MaxNan{}(acc, v);
// CU: const bool s1 = true;

// Left alone, with the reason: a tensor after the stage.
torch::Tensor tensor_after(const torch::Tensor &x, const torch::Tensor &w,
                           const torch::Tensor &b) {
  auto y = torch::mm(x, w);
  y = torch::relu(y);
  y = y.sum({1});
  y = y + b;
  return y;
}
// CHECK-LABEL: torch::Tensor tensor_after(
// CHECK:      y = torch::relu(y);
// CHECK-NEXT: y = y.sum({1});
// LOG: {{.*}}.cpp:{{[0-9]+}}: fusable epilogue after mm: relu -> sum -> add (3 ops)
// LOG-NEXT: left as is: 'add' after 'sum' takes a tensor (only numbers there)

// Two stages.
torch::Tensor two_stages(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::mm(x, w);
  y = torch::softmax(y, 1);
  y = y.mean({1});
  return y;
}
// LOG: {{.*}}.cpp:{{[0-9]+}}: fusable epilogue after mm: softmax -> mean (2 ops)
// LOG-NEXT: left as is: 'mean' is a second reduction or pooling after 'softmax': one per chain

// A dim the source computes: the kernel's test could not run its value.
torch::Tensor runtime_dim(const torch::Tensor &x, const torch::Tensor &w,
                          int64_t d) {
  auto y = torch::mm(x, w);
  return torch::softmax(torch::relu(y), d);
}
// LOG: {{.*}}.cpp:{{[0-9]+}}: fusable epilogue after mm: relu -> softmax (2 ops)
// LOG-NEXT: left as is: operand 'd' (dim) of 'softmax' is not a literal of its type

// LOG: 7 of 10 chains rewritten

// The harness runs the stage functions over larger shapes too.
// H: const std::vector<std::vector<int64_t>> kStageShapes = {
// H: r.name = "kb_fused_{{[0-9a-f]+}}";
// H-NEXT: for (size_t si = 0; si < kShapes.size() + kStageShapes.size(); ++si)

// IR-LABEL: func.func @mean_after_relu_0(
// IR: %[[D2:.*]] = kb.constant {value = 2 : i64} : i64
// IR-NEXT: %[[D3:.*]] = kb.constant {value = 3 : i64} : i64
// IR-NEXT: %[[DIMS:.*]] = kb.list(%[[D2]], %[[D3]]) : (i64, i64) -> !kb.list<i64>
// IR-NEXT: %[[KEEP:.*]] = kb.constant {value = false} : i1
// IR: kb.aten "mean"(%{{.*}}, %[[DIMS]], %[[KEEP]], %{{.*}}) {overload = "dim"}

// FAST: out[base + r] = kb_fused_{{[0-9a-f]+}}_post(kb_rewrite::fast::softmax_div(expf(v - m), s), s0);
// FAST: const float t0 = kb_rewrite::fast::sigmoid(x); // aten::sigmoid
// SAME: auto m = kb_rewrite::kb_fused_[[M:[0-9a-f]+]](y);
// SAME: return kb_rewrite::kb_fused_[[S:[0-9a-f]+]](h, 0.5);
// SAME: auto m = kb_rewrite::kb_fused_[[M]](y);
// SAME-NOT: kb_fused_[[S]](
// SAME: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, 0.5);

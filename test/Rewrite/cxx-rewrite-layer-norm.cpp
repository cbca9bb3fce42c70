// kb-rewrite rewrite over C++ chains through a layer norm (issue 27):
// torch::layer_norm with a literal normalized_shape, and a
// torch::nn::LayerNorm module whose shape, eps, weight and bias are read
// from the module when the fused function runs. HIPIFY style: this file is
// the input, the CHECK lines describe its rewritten copy and the kernels.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-layer-norm.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=H --input-file %t/kb_verify_harness.cpp
// The rewritten source and the harness compile against libtorch.
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-layer-norm.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

// A transformer's feed-forward output: GELU, then the norm with its
// weight, bias and eps given, then a scale.
torch::Tensor norm_after_gelu(const torch::Tensor &x, const torch::Tensor &w,
                              const torch::Tensor &g, const torch::Tensor &b) {
  auto h = torch::linear(x, w);
  h = torch::gelu(h);
  return torch::layer_norm(h, {256}, g, b, 1e-5) * 2.0;
}
// CHECK-LABEL: torch::Tensor norm_after_gelu(
// CHECK:      auto h = torch::linear(x, w);
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, g, b, 1e-5, 2.0);
// LOG: {{.*}}.cpp:{{[0-9]+}}: fusable epilogue after linear: gelu -> layer_norm -> mul (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// CU: // kb-rewrite: begin kb_fused_[[GELU:[0-9a-f]+]]
// The weight and bias are read along the row, not per element of the
// input: they are no parameters of the element function.
// CU: float kb_fused_[[GELU]]_pre(float x, float s3, float s4) {
// CU-NEXT: const float t0 = kb::gelu(x, 'n'); // aten::gelu
// The statistics are ATen's, in the order of the kernel ATen would run:
// its vectorized one (rows of a multiple of 4, aligned weights) or
// RowwiseMomentsCUDAKernel's 512 threads.
// CU: kb_fused_[[GELU]]_rows(const float* __restrict__ in, float* __restrict__ out, long long rows, long long len, const float* __restrict__ a1, const float* __restrict__ a2, float s3, float s4) {
// CU: if ((len & 3) == 0 && len <= (1 << 24) && ((size_t)a1 & 15) == 0 && ((size_t)a2 & 15) == 0)
// CU-NEXT: kb_rewrite::detail::atenVecStats(len, lane, [&](long long r) { return kb_fused_[[GELU]]_at(in, base + r, a1, a2, s3, s4); }, mean, var);
// CU-NEXT: else
// CU-NEXT: kb_rewrite::detail::atenRowStatsWarp(len, lane, [&](long long r) { return kb_fused_[[GELU]]_at(in, base + r, a1, a2, s3, s4); }, mean, var);
// CU-NEXT: const float rstd = rsqrtf(var + s3);
// CU: out[base + r] = kb_fused_[[GELU]]_post((v - mean) * rstd * (a1 ? a1[r] : 1.f) + (a2 ? a2[r] : 0.f), s3, s4);
// CU: kb_fused_[[GELU]]_rowsb(
// CU: __shared__ kb_rewrite::detail::AtenWelford sh[16];
// CU: kb_rewrite::detail::atenRowStatsBlock(len, [&](long long r) { return kb_fused_[[GELU]]_at(in, base + r, a1, a2, s3, s4); }, sh, mean, var);
// CU: at::Tensor kb_fused_[[GELU]](const at::Tensor& in, const at::Tensor& a1, const at::Tensor& a2, const at::Scalar& s3, const at::Scalar& s4) {
// CU-NEXT: static const int64_t s0_v[] = {256};
// The fallback passes eps as ATen's C++ signature takes it (a double).
// CU: t = at::layer_norm(t, s0, a1, a2, s3.to<double>());
// CU: if (kb_rewrite::detail::needsGrad({&in, &a1, &a2}))
// CU: if (in.size(rank - nrank + d) != nshape[d])
// CU: if (a1.defined() && (!a1.is_cuda() || a1.get_device() != in.get_device() ||
// CU-NEXT: a1.scalar_type() != at::kFloat || !a1.is_contiguous() || a1.sizes() != nshape))
// CU-NEXT: return reference();
// CU-NEXT: const float* p1 = a1.defined() ? a1.data_ptr<float>() : nullptr;
// CU: if (g_len >= 1024 && (g_len & 3) != 0)
// CU-NEXT: kb_fused_[[GELU]]_rowsb<<<(unsigned)g_rows, 256, 0, stream>>>(
// CU-NEXT: pin, pout, g_rows, g_len, p1, p2, s3.to<float>(), s4.to<float>());
// H: r.name = "kb_fused_{{[0-9a-f]+}}";
// H-NEXT: const auto cases = normShapes({256});
// H: at::Tensor a1 = rowOperand(shape, 1, form);
// H-NEXT: at::Tensor a2 = rowOperand(shape, 1, form);

// No weight, bias or eps: ATen's defaults (1e-05); the two trailing dims.
torch::Tensor norm_plain(const torch::Tensor &x, const torch::Tensor &w) {
  auto h = torch::matmul(x, w);
  h = torch::relu(h);
  return torch::layer_norm(h, {4, 16});
}
// CHECK-LABEL: torch::Tensor norm_plain(
// CHECK:      return kb_rewrite::kb_fused_{{[0-9a-f]+}}(h);
// CU: // kb-rewrite: begin kb_fused_[[PLAIN:[0-9a-f]+]]
// CU: if ((len & 3) == 0 && len <= (1 << 24))
// CU: const float rstd = rsqrtf(var + 1e-05);
// CU: out[base + r] = kb_fused_[[PLAIN]]_post((v - mean) * rstd);
// CU: static const int64_t s0_v[] = {4, 16};
// CU: t = at::layer_norm(t, s0);
// H: r.name = "kb_fused_{{[0-9a-f]+}}";
// H-NEXT: const auto cases = normShapes({4, 16});

// The module form: its normalized_shape, eps, weight and bias (undefined
// without elementwise_affine) are the module's, read at each call.
struct BlockImpl : torch::nn::Module {
  torch::nn::Linear fc{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  BlockImpl() {
    fc = register_module("fc", torch::nn::Linear(256, 256));
    norm = register_module(
        "norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({256})));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto h = torch::relu(fc->forward(x));
    return norm(h + 1.0);
  }
};
// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 1.0, (*norm));
// LOG: fusable epilogue after linear: relu -> add -> layer_norm (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: 3 of 3 chains rewritten
// CU: // kb-rewrite: begin kb_fused_[[MOD:[0-9a-f]+]]
// CU: float kb_fused_[[MOD]]_pre(float x, float s0, float s5) {
// CU: at::Tensor kb_fused_[[MOD]](const at::Tensor& in, const at::Scalar& s0, torch::nn::LayerNormImpl& m1) {
// CU: t = m1.forward(t);
// CU: const at::IntArrayRef s2 = m1.options.normalized_shape();
// CU-NEXT: const at::Tensor& a3 = m1.weight;
// CU-NEXT: const at::Tensor& a4 = m1.bias;
// CU-NEXT: const at::Scalar s5 = m1.options.eps();
// CU-NEXT: if (kb_rewrite::detail::needsGrad({&in, &a3, &a4}))
// CU: const at::IntArrayRef nshape = s2;
// CU: pin, pout, g_rows, g_len, s0.to<float>(), p3, p4, s5.to<float>());
// H: r.name = "kb_fused_{{[0-9a-f]+}}";
// H-NEXT: for (size_t si = 0; si < kShapes.size() + kStageShapes.size(); ++si)
// H: auto m1 = std::make_shared<torch::nn::LayerNormImpl>(std::vector<int64_t>{x.size(-1)});
// H-NEXT: m1->weight.uniform_(0.5, 2.0);
// H-NEXT: m1->bias.uniform_(0.5, 2.0);

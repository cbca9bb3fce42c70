// kb-rewrite rewrite over C++ chains through a stage computed by a
// torch::nn module (issue 27): MaxPool2d, AvgPool2d, Softmax, LogSoftmax.
// Their window, dim and flags are the module's options, read by the fused
// function at each call (the op table names them in the module's row), so
// the function is right whatever the module was built with; an option the
// kernels do not take (divisor_override) must be unset. The harness builds
// each module with options of its own. HIPIFY style: this file is the
// input, the CHECK lines describe its rewritten copy and the kernels.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-stage-modules.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=H --input-file %t/kb_verify_harness.cpp
// The rewritten source and the harness compile against libtorch.
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-stage-modules.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::MaxPool2d pool{nullptr};
  torch::nn::AvgPool2d avg{nullptr};
  torch::nn::AdaptiveAvgPool2d gap{nullptr};
  torch::nn::Linear fc{nullptr};
  torch::nn::Softmax softmax{nullptr};
  torch::nn::LogSoftmax logsm{nullptr};
  NetImpl() {
    conv = register_module(
        "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).padding(1)));
    pool = register_module("pool", torch::nn::MaxPool2d(2));
    avg = register_module(
        "avg", torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(3).stride(2)));
    gap = register_module("gap", torch::nn::AdaptiveAvgPool2d(1));
    fc = register_module("fc", torch::nn::Linear(64, 10));
    softmax = register_module("softmax", torch::nn::Softmax(1));
    logsm = register_module("logsm", torch::nn::LogSoftmax(-1));
  }
  torch::Tensor features(torch::Tensor x) {
    return pool(torch::relu(conv(x)));
  }
  torch::Tensor smooth(torch::Tensor x) {
    return avg->forward(torch::relu(conv->forward(x)));
  }
  torch::Tensor probs(torch::Tensor x) {
    return softmax(torch::gelu(fc(x)) * 0.5);
  }
  torch::Tensor logprobs(torch::Tensor x) {
    auto h = fc->forward(x);
    h = torch::tanh(h);
    return logsm->forward(h) * 2.0;
  }
  // An adaptive pool's output_size is not in the module's row: left.
  torch::Tensor pooled(torch::Tensor x) {
    return gap(torch::relu(conv(x)));
  }
  // A module built in the expression, as tutorials write it: building a
  // pooling module from literals (a braced list too) has no side effect, so
  // the expression moves into the fused call; one whose options come from
  // a call stays.
  torch::Tensor inline_pool(torch::Tensor x) {
    return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions({2, 2}))
        ->forward(torch::relu(conv->forward(x)));
  }
  int64_t window();
  torch::Tensor called_pool(torch::Tensor x) {
    return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(window()))
        ->forward(torch::relu(conv->forward(x)));
  }
};
// CHECK-LABEL: torch::Tensor features(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv(x), (*pool));
// CHECK-LABEL: torch::Tensor smooth(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv->forward(x), (*avg));
// CHECK-LABEL: torch::Tensor probs(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc(x), 0.5, (*softmax));
// CHECK-LABEL: torch::Tensor logprobs(torch::Tensor x) {
// CHECK:      return kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, (*logsm), 2.0);
// CHECK-LABEL: torch::Tensor pooled(torch::Tensor x) {
// CHECK-NEXT: return gap(torch::relu(conv(x)));
// CHECK-LABEL: torch::Tensor inline_pool(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv->forward(x), (*torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions({2, 2}))));
// CHECK-LABEL: torch::Tensor called_pool(torch::Tensor x) {
// CHECK-NEXT: return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(window()))
// LOG: fusable epilogue after conv2d: relu -> max_pool2d (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: relu -> avg_pool2d (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: gelu -> mul -> softmax (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: tanh -> log_softmax -> mul (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: relu -> adaptive_avg_pool2d (2 ops)
// LOG-NEXT: left as is: 'adaptive_avg_pool2d' (module AdaptiveAvgPool2dImpl) keeps its 'output_size' where the op-semantics table does not say
// LOG: fusable epilogue after conv2d: relu -> max_pool2d (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: relu -> max_pool2d (2 ops)
// LOG-NEXT: left as is: the module expression of 'max_pool2d' may have side effects: it is not moved
// LOG: 5 of 7 chains rewritten

// The max pool's window and ceil_mode from the module, at run time.
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, torch::nn::MaxPool2dImpl& m0) {
// CU: t = m0.forward(t);
// CU: const at::IntArrayRef s1 = m0.options.kernel_size();
// CU-NEXT: const at::IntArrayRef s2 = m0.options.stride();
// CU-NEXT: const at::IntArrayRef s3 = m0.options.padding();
// CU-NEXT: const at::IntArrayRef s4 = m0.options.dilation();
// CU-NEXT: const bool s5 = m0.options.ceil_mode();
// CU: if (!win.set(s1, s2, s3, s4))
// CU: poolOut(H, win.kh, win.ph, win.sh, win.dh, s5);
// The average pool: divisor_override must be unset.
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, torch::nn::AvgPool2dImpl& m0) {
// CU: if (m0.options.divisor_override() != c10::nullopt)
// CU-NEXT: return reference();
// CU: win.countPad = s5;
// The softmax's dim: a host value of the geometry, no kernel parameter.
// CU: kb_fused_{{[0-9a-f]+}}_rows(const float* __restrict__ in, float* __restrict__ out, long long rows, long long len, float s0) {
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, const at::Scalar& s0, torch::nn::SoftmaxImpl& m1) {
// CU: const int64_t s2 = m1.options.dim();
// CU: const int64_t dim = s2 < 0 ? s2 + rank : s2;
// H: auto m0 = std::make_shared<torch::nn::MaxPool2dImpl>(torch::nn::MaxPool2dOptions(3).stride(2).padding(1));
// H: auto m0 = std::make_shared<torch::nn::AvgPool2dImpl>(torch::nn::AvgPool2dOptions(3).stride(2).padding(1));
// H: auto m1 = std::make_shared<torch::nn::SoftmaxImpl>(1);
// H: auto m0 = std::make_shared<torch::nn::LogSoftmaxImpl>(1);

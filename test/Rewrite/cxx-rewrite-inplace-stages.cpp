// kb-rewrite rewrite over C++ chains of in-place ops followed by
// out-of-place ones (`y.relu_(); y.mul_(2.0); return y.mean({2, 3});`).
// Where the variable is a local declared from the anchor's call (a fresh
// tensor) that nothing reads outside the chain, no one can see the in-place
// writes: the chain computes them out of place and the statements become
// one call. A parameter, a copy of the local or a later read keeps the
// chain as written, with the reason.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-inplace-stages.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-inplace-stages.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear fc{nullptr};
  NetImpl() {
    conv = register_module("conv", torch::nn::Conv2d(3, 8, 3));
    fc = register_module("fc", torch::nn::Linear(64, 64));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto y = conv->forward(x);
    y.relu_();
    y.mul_(2.0);
    return y.mean({2, 3});
  }
  torch::Tensor head(torch::Tensor x) {
    auto h = fc->forward(x);
    h.add_(1.0);
    return torch::softmax(h * 2.0, 1);
  }
  torch::Tensor copied(torch::Tensor x) {
    auto y = conv->forward(x);
    auto z = y;
    y.relu_();
    y.mul_(2.0);
    return y.mean({2, 3}) + z.sum();
  }
  torch::Tensor param(torch::Tensor y) {
    y = conv->forward(y);
    y.relu_();
    y.mul_(2.0);
    return y.mean({2, 3});
  }
};
// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT: auto y = conv->forward(x);
// CHECK-NEXT: return kb_rewrite::kb_fused_[[MEAN:[0-9a-f]+]](y, 2.0);
// CHECK-LABEL: torch::Tensor head(torch::Tensor x) {
// CHECK-NEXT: auto h = fc->forward(x);
// CHECK-NEXT: return kb_rewrite::kb_fused_[[SOFT:[0-9a-f]+]](h, 1.0, 2.0);
// CHECK-LABEL: torch::Tensor copied(torch::Tensor x) {
// CHECK: y.relu_();
// CHECK-NEXT: y.mul_(2.0);
// CHECK-LABEL: torch::Tensor param(torch::Tensor y) {
// CHECK-NEXT: y = conv->forward(y);
// CHECK-NEXT: y.relu_();

// The fallback runs the ops out of place too: `in` is never written.
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, const at::Scalar& s0) {
// CU: t = at::relu(t);
// CU-NEXT: t = at::mul(t, s0);
// CU-NEXT: t = at::mean(t, s1);
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, const at::Scalar& s0, const at::Scalar& s1) {
// CU: t = at::add(t, s0);

// LOG: fusable epilogue after conv2d: relu_ -> mul_ -> mean (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: add_ -> mul -> softmax (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// A copy of the local: its chain is the copy's, not rewritten.
// LOG: fusable epilogue after conv2d: sum -> add (2 ops)
// LOG-NEXT: left as is:
// A parameter stays as written, though it holds the anchor's result here.
// LOG: fusable epilogue after conv2d: relu_ -> mul_ -> mean (3 ops)
// LOG-NEXT: left as is: it mixes in-place ops on a variable with out-of-place ops, and the variable is not only the anchor's result (read elsewhere, or a parameter)
// LOG: 2 of 4 chains rewritten

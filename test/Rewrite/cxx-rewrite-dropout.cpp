// kb-rewrite rewrite over C++ chains through torch::nn::Dropout modules: in
// eval mode a dropout is the identity (the graph path's rule for
// `dropout(x, p, train=False)`), so the chain fuses through it and the fused
// function runs only while the module is not training (its own forward, a
// random mask, otherwise). The harness runs the module in eval mode.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-dropout.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=H --input-file %t/kb_verify_harness.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-dropout.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

struct HeadImpl : torch::nn::Module {
  torch::nn::Linear fc{nullptr};
  torch::nn::Dropout drop{nullptr};
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Dropout2d drop2d{nullptr};
  HeadImpl() {
    fc = register_module("fc", torch::nn::Linear(64, 64));
    drop = register_module("drop", torch::nn::Dropout(0.1));
    conv = register_module("conv", torch::nn::Conv2d(3, 8, 3));
    drop2d = register_module("drop2d", torch::nn::Dropout2d(0.2));
  }
  torch::Tensor forward(torch::Tensor x) {
    return drop(torch::gelu(fc->forward(x))) * 2.0;
  }
  torch::Tensor features(torch::Tensor x) {
    return torch::relu(drop2d->forward(torch::sigmoid(conv->forward(x))));
  }
};
// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), (*drop), 2.0);
// CHECK-LABEL: torch::Tensor features(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv->forward(x), (*drop2d));
// LOG: fusable epilogue after linear: gelu -> dropout -> mul (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: sigmoid -> feature_dropout -> relu (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: 2 of 2 chains rewritten

// The dropout's element expression is its input; the module's own forward
// is the fallback, taken while it trains.
// CU: // kb-rewrite: begin kb_fused_[[DROP:[0-9a-f]+]]
// CU: const float t1 = t0; // aten::dropout
// CU: at::Tensor kb_fused_[[DROP]](const at::Tensor& in, torch::nn::DropoutImpl& m0, const at::Scalar& s1) {
// CU: t = m0.forward(t);
// CU: if (m0.is_training())
// CU-NEXT: return reference();
// CU: // kb-rewrite: begin kb_fused_[[DROP2:[0-9a-f]+]]
// CU: const float t1 = t0; // aten::feature_dropout
// CU: at::Tensor kb_fused_[[DROP2]](const at::Tensor& in, torch::nn::Dropout2dImpl& m0) {
// CU: if (m0.is_training())
// CU-NEXT: return reference();

// H: auto m0 = std::make_shared<torch::nn::DropoutImpl>();
// H-NEXT: m0->eval();
// H: auto m0 = std::make_shared<torch::nn::Dropout2dImpl>();
// H-NEXT: m0->eval();

// kb-rewrite rewrite over chains through torch::nn::Functional members, as
// tutorials write activations (`torch::nn::Functional relu{torch::relu};`,
// then `relu->forward(out)` or `act(x)`). The call says nothing of the op:
// the places that set the member do (its in-class initializer, the
// constructors' initializers, assignments in the class's methods). When
// they all build it from one torch:: function of one tensor, the call is
// that function's op; otherwise (two functions, arguments bound to it) the
// chain ends there. An empty holder (`Functional late{nullptr};`, the idiom
// for a member the constructor sets) is not one of those places: a call
// through it would throw. HIPIFY style: the CHECK lines describe the rewritten
// copy of this file and its kernels.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-functional.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-functional.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

struct BlockImpl : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Functional relu{torch::relu};
  torch::nn::Functional act;
  torch::nn::Functional leaky{torch::leaky_relu, 0.2};
  torch::nn::Functional swapped{torch::relu};
  torch::nn::Functional late{nullptr};
  torch::nn::Functional never{nullptr};
  BlockImpl() : act(torch::sigmoid) {
    conv1 = register_module(
        "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 8, 3).padding(1)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(8));
    register_module("relu", relu);
    late = torch::nn::Functional(torch::relu);
  }
  void swap() { swapped = torch::nn::Functional(torch::tanh); }
  // The residual block's statements: batch norm module, then the member.
  torch::Tensor forward(torch::Tensor x) {
    auto out = conv1->forward(x);
    out = bn1->forward(out);
    out = relu->forward(out);
    return out;
  }
  torch::Tensor gate(torch::Tensor x) { return act(conv1(x)) * 2.0; }
  // leaky_relu with its slope bound: not the one-tensor op.
  torch::Tensor leaky_path(torch::Tensor x) { return leaky(conv1(x)) * 2.0; }
  // Set to relu here and to tanh in swap(): which one runs is not known.
  torch::Tensor swapped_path(torch::Tensor x) {
    return swapped(conv1(x)) * 2.0;
  }
  torch::Tensor late_path(torch::Tensor x) { return late(conv1(x)) * 3.0; }
  // Never set: no op (the original throws at the call; so must the copy).
  torch::Tensor never_path(torch::Tensor x) { return never(conv1(x)) * 3.0; }
};
// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT: auto out = conv1->forward(x);
// CHECK-NEXT: out = kb_rewrite::kb_fused_[[BN:[0-9a-f]+]](out, (*bn1));
// CHECK-NEXT: return out;
// CHECK: torch::Tensor gate(torch::Tensor x) { return kb_rewrite::kb_fused_[[GATE:[0-9a-f]+]](conv1(x), 2.0); }
// CHECK: torch::Tensor leaky_path(torch::Tensor x) { return leaky(conv1(x)) * 2.0; }
// CHECK: return swapped(conv1(x)) * 2.0;
// CHECK: torch::Tensor late_path(torch::Tensor x) { return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv1(x), 3.0); }
// CHECK: torch::Tensor never_path(torch::Tensor x) { return never(conv1(x)) * 3.0; }

// LOG: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: sigmoid -> mul (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: relu -> mul (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: 3 of 3 chains rewritten

// The member's op is the function's, with ATen's own call as the fallback.
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, torch::nn::BatchNorm2dImpl& m0) {
// CU: t = m0.forward(t);
// CU-NEXT: t = at::relu(t);
// CU: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, const at::Scalar& s0) {
// CU: t = at::sigmoid(t);

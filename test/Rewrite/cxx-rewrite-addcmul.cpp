// kb-rewrite rewrite over a C++ chain through addcmul and addcdiv (the op
// table's rows, as the graph path uses them): the chain's value is their
// `self`, the other operands tensors read by the kernel. The kernels'
// translation unit includes torch/version.h where the include path has it,
// so kb::addcmul rounds as the torch it is built against (value 1 is one
// fma from torch 2.11 on).
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-addcmul.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-addcmul.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

struct AffineNetImpl : torch::nn::Module {
  torch::nn::Linear fc{nullptr};
  torch::Tensor alpha, beta, gamma;
  AffineNetImpl() {
    fc = register_module("fc", torch::nn::Linear(64, 64));
    alpha = register_parameter("alpha", torch::ones({64}));
    beta = register_parameter("beta", torch::zeros({64}));
    gamma = register_parameter("gamma", torch::full({64}, 2.0));
  }
  torch::Tensor forward(torch::Tensor x) {
    return torch::addcdiv(torch::addcmul(torch::relu(fc->forward(x)), alpha, beta, 0.5),
                          alpha, gamma);
  }
};
TORCH_MODULE(AffineNet);

// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT:    return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), alpha, beta, 0.5, alpha, gamma);
// LOG: fusable epilogue after linear: relu -> addcmul -> addcdiv (3 ops)
// LOG: 1 of 1 chains rewritten
// CU:      #if __has_include(<torch/version.h>)
// CU-NEXT: #include <torch/version.h>
// CU-NEXT: #endif
// CU:      __device__ __forceinline__ float addcmul(float s, float a, float b, float v) {
// CU:      = kb::addcmul({{t[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{s[0-9]+}}); // aten::addcmul
// CU:      = __fmaf_rn(1.0f, {{v[0-9]+}} / {{v[0-9]+}}, {{t[0-9]+}}); // aten::addcdiv

// kb-rewrite rewrite over C++ chains whose value is the second operand of
// torch::add or torch::mul (`torch::add(bias, y)`): x + y == y + x and
// x * y == y * x to the bit, so the chain continues as through `bias + y`,
// the first operand passed as the other. Not through sub, nor through an
// add with an alpha (it would scale the other operand).
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-commuted.cpp
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-commuted.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
#include <torch/torch.h>

torch::Tensor bias_first(torch::nn::Linear &fc, torch::Tensor x,
                         torch::Tensor bias, torch::Tensor scale) {
  return torch::mul(scale, torch::add(bias, torch::relu(fc->forward(x))));
}
// CHECK-LABEL: torch::Tensor bias_first(
// CHECK:         return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), bias, scale);
// LOG: fusable epilogue after linear: relu -> add -> mul (3 ops)

torch::Tensor subtracted(torch::nn::Linear &fc, torch::Tensor x,
                         torch::Tensor bias) {
  return torch::sub(bias, torch::relu(fc->forward(x)) * 0.5);
}
// CHECK-LABEL: torch::Tensor subtracted(
// CHECK:         return torch::sub(bias, kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 0.5));
// LOG: fusable epilogue after linear: relu -> mul (2 ops)

torch::Tensor scaled_add(torch::nn::Linear &fc, torch::Tensor x,
                         torch::Tensor bias) {
  return torch::add(bias, torch::relu(fc->forward(x)) * 0.5, 2.0);
}
// CHECK-LABEL: torch::Tensor scaled_add(
// CHECK:         return torch::add(bias, kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 0.5), 2.0);
// LOG: fusable epilogue after linear: relu -> mul (2 ops)
// LOG: 3 of 3 chains rewritten
// CU: // aten::add
// CU: // aten::mul

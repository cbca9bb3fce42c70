// kb-rewrite rewrite over C++ chains whose value is a later operand of a
// pointwise call. torch::add and torch::mul (`torch::add(bias, y)`, alpha
// the default): x + y == y + x and x * y == y * x to the bit, so the chain
// continues as through `bias + y`, the first operand passed as the other.
// Any other pointwise op (sub, an add with an alpha, div, addcmul, their
// operators and methods) keeps the chain's value at its schema position
// (CxxPlanOp::chainArg): the kernel computes `bias - y`, the fallback calls
// at::sub(bias, t). An in-place op writes its first operand: the chain ends
// before it.
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
// CHECK:         return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 0.5, bias);
// LOG: fusable epilogue after linear: relu -> mul -> sub (3 ops)

torch::Tensor scaled_add(torch::nn::Linear &fc, torch::Tensor x,
                         torch::Tensor bias) {
  return torch::add(bias, torch::relu(fc->forward(x)) * 0.5, 2.0);
}
// CHECK-LABEL: torch::Tensor scaled_add(
// CHECK:         return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 0.5, bias, 2.0);
// LOG: fusable epilogue after linear: relu -> mul -> add (3 ops)

torch::Tensor operators(torch::nn::Linear &fc, torch::Tensor x,
                        torch::Tensor bias, torch::Tensor num) {
  auto y = torch::sigmoid(fc->forward(x));
  return num / (bias - y);
}
// CHECK-LABEL: torch::Tensor operators(
// CHECK-NEXT:  {
// CHECK-NEXT:    return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), bias, num);
// LOG: fusable epilogue after linear: sigmoid -> sub -> div (3 ops)

torch::Tensor affine(torch::nn::Linear &fc, torch::Tensor x,
                     torch::Tensor beta, torch::Tensor alpha) {
  return torch::addcmul(beta, alpha, torch::gelu(fc->forward(x)));
}
// CHECK-LABEL: torch::Tensor affine(
// CHECK:         return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), beta, alpha);
// LOG: fusable epilogue after linear: gelu -> addcmul (2 ops)

torch::Tensor method_form(torch::nn::Linear &fc, torch::Tensor x,
                          torch::Tensor bias) {
  return bias.div(torch::tanh(fc->forward(x)));
}
// CHECK-LABEL: torch::Tensor method_form(
// CHECK:         return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), bias);
// LOG: fusable epilogue after linear: tanh -> div (2 ops)

torch::Tensor in_place(torch::nn::Linear &fc, torch::Tensor x,
                       torch::Tensor bias) {
  return bias.sub_(torch::relu(fc->forward(x)) * 0.5);
}
// CHECK-LABEL: torch::Tensor in_place(
// CHECK:         return bias.sub_(kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc->forward(x), 0.5));
// LOG: fusable epilogue after linear: relu -> mul (2 ops)
// LOG: 7 of 7 chains rewritten

// The kernels in each op's own order of operands; the fallbacks call ATen
// with the chain's value where the source passed it.
// CU: // aten::add
// CU: // aten::mul
// CU:   const float [[S:t[0-9]+]] = __fmaf_rn(-1.0f, {{t[0-9]+}}, v1); // aten::sub
// CU:   t = at::sub(a1, t);
// CU:   const float {{t[0-9]+}} = __fmaf_rn(s2, {{t[0-9]+}}, v1); // aten::add
// CU:   t = at::add(a1, t, s2);
// CU:   const float [[D:t[0-9]+]] = __fmaf_rn(-1.0f, {{t[0-9]+}}, v0); // aten::sub
// CU:   {{t[0-9]+}} = ({{v[0-9]+}} / [[D]]); // aten::div
// CU:   t = at::sub(a0, t);
// CU:   t = at::div(a1, t);
// CU:   // aten::addcmul
// CU:   t = at::addcmul(a0, a1, t);
// CU:   t = at::div(a0, t);

// kb-rewrite rewrite over chains nested in a statement whose value is no
// chain of its own: the operand of a call the kernels do not take
// (torch::cumsum), of a dropout whose flag is known only at run time, of
// an anchor (`fc2(torch::relu(fc1(x)))`) or of a list (torch::cat). Each
// largest chain that starts at an anchor is rewritten where it stands; the
// call around it stays as written.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-nested.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-nested.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
// RUN: kb-rewrite analyze %s -- %torch_cxx_flags | FileCheck %s --check-prefix=ENDS
#include <torch/torch.h>

struct NestedImpl : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Conv2d c1{nullptr}, c2{nullptr};
  NestedImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(64, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 64));
    c1 = register_module("c1", torch::nn::Conv2d(3, 8, 3));
    c2 = register_module("c2", torch::nn::Conv2d(3, 8, 3));
  }
  torch::Tensor scan(torch::Tensor x) {
    return torch::cumsum(torch::gelu(fc1->forward(x)) * 2.0, 1);
  }
  torch::Tensor scanned(torch::Tensor x) {
    auto y = torch::cumsum(torch::sigmoid(fc1->forward(x)) + 1.0, 1);
    return y * y;
  }
  torch::Tensor forward(torch::Tensor x) {
    return torch::dropout(torch::relu(fc1->forward(x)) * 0.5, 0.1,
                          is_training());
  }
  torch::Tensor mlp(torch::Tensor x) {
    return fc2->forward(torch::silu(fc1->forward(x)) - 1.0);
  }
  torch::Tensor both(torch::Tensor x) {
    return torch::cat({torch::relu(c1->forward(x)) * 2.0,
                       torch::tanh(c2->forward(x)) + 1.0},
                      1);
  }
  // One op: nothing to fuse, left as written.
  torch::Tensor single(torch::Tensor x) {
    return torch::cumsum(torch::relu(fc1->forward(x)), 1);
  }
};
// CHECK-LABEL: torch::Tensor scan(torch::Tensor x) {
// CHECK-NEXT: return torch::cumsum(kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc1->forward(x), 2.0), 1);
// CHECK-LABEL: torch::Tensor scanned(torch::Tensor x) {
// CHECK-NEXT: auto y = torch::cumsum(kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc1->forward(x), 1.0), 1);
// CHECK-NEXT: return y * y;
// CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
// CHECK-NEXT: return torch::dropout(kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc1->forward(x), 0.5), 0.1,
// CHECK-NEXT: is_training());
// CHECK-LABEL: torch::Tensor mlp(torch::Tensor x) {
// CHECK-NEXT: return fc2->forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc1->forward(x), 1.0));
// CHECK-LABEL: torch::Tensor both(torch::Tensor x) {
// CHECK-NEXT: return torch::cat({kb_rewrite::kb_fused_{{[0-9a-f]+}}(c1->forward(x), 2.0),
// CHECK-NEXT: kb_rewrite::kb_fused_{{[0-9a-f]+}}(c2->forward(x), 1.0)},
// CHECK-LABEL: torch::Tensor single(torch::Tensor x) {
// CHECK-NEXT: return torch::cumsum(torch::relu(fc1->forward(x)), 1);

// LOG: fusable epilogue after linear: gelu -> mul (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: sigmoid -> add (2 ops)
// LOG: fusable epilogue after linear: relu -> mul (2 ops)
// LOG: fusable epilogue after linear: silu -> sub (2 ops)
// LOG: fusable epilogue after conv2d: relu -> mul (2 ops)
// LOG: fusable epilogue after conv2d: tanh -> add (2 ops)
// LOG: fusable epilogue after linear: relu (1 op)
// LOG-NEXT: left as is: a single op
// LOG: 6 of 7 chains rewritten

// Where each chain ends says what holds it.
// ENDS: in NestedImpl::scan: fusable epilogue after linear: gelu -> mul (2 ops)
// ENDS: ends: an operand of 'at::cumsum' at line 25
// ENDS: in NestedImpl::forward: fusable epilogue after linear: relu -> mul (2 ops)
// ENDS: ends: an operand of 'dropout' at line 32
// ENDS: in NestedImpl::mlp: fusable epilogue after linear: silu -> sub (2 ops)
// ENDS: ends: an operand of 'linear' at line 36
// ENDS: in NestedImpl::both: fusable epilogue after conv2d: relu -> mul (2 ops)
// ENDS: ends: an operand of 'cat' at line 39

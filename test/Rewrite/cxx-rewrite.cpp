// kb-rewrite rewrite over libtorch C++ (issue 7), HIPIFY style: this file is
// the input, and the CHECK lines describe its rewritten copy.
// REQUIRES: libtorch
// RUN: rm -rf %t && cp %s %t.orig
// RUN: kb-rewrite rewrite %s -o %t -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite.cpp
// RUN: FileCheck %s --check-prefix=HDR --input-file %t/kb_kernels.h
// RUN: FileCheck %s --check-prefix=CU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=RSUB --input-file %t/kb_kernels.cu
// The rewritten source compiles against libtorch with the generated header.
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite.cpp
// The input is untouched (-o DIR).
// RUN: cmp %s %t.orig
// RUN: FileCheck %s --check-prefix=BNCU --input-file %t/kb_kernels.cu
// RUN: FileCheck %s --check-prefix=DAG --input-file %t/kb_kernels.cu
#include <torch/torch.h>
// CHECK: #include <torch/torch.h>
// CHECK-NEXT: #include "kb_kernels.h" // kb-rewrite: fused kernels

// A chain across statements through one local: the three statements become
// one assignment; the convolution stays a cuDNN call.
torch::Tensor across(torch::nn::Conv2d &conv, torch::Tensor x,
                     torch::Tensor bias) {
  auto y = conv->forward(x);
  y = torch::relu(y);
  y = y + bias;
  y = y * 0.5;
  return y;
}
// CHECK-LABEL: torch::Tensor across(
// CHECK:      auto y = conv->forward(x);
// CHECK-NEXT: y = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y, bias, 0.5);
// CHECK-NEXT: return y;

// One expression: only the outermost op's expression changes.
torch::Tensor one_expression(torch::Tensor a, torch::Tensor w) {
  return torch::sigmoid(torch::matmul(a, w)) * 2;
}
// CHECK-LABEL: torch::Tensor one_expression(
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(torch::matmul(a, w), 2);

// Methods, a string operand and default operands; the intermediate locals
// disappear with their statements, and the return's op joins the chain.
torch::Tensor methods(torch::Tensor a, torch::Tensor w) {
  auto z = torch::linear(a, w);
  auto r = z.clamp(-1.0, 1.0);
  auto g = torch::gelu(r, "tanh");
  return g.add(1);
}
// CHECK-LABEL: torch::Tensor methods(
// CHECK:      auto z = torch::linear(a, w);
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(z, -1.0, 1.0, 1);

// In place on a local: the fused call writes the tensor in place too.
void in_place(torch::Tensor a, torch::Tensor w, torch::Tensor &out) {
  auto h = torch::mm(a, w);
  h.relu_();
  h.mul_(3);
  out = h;
}
// CHECK-LABEL: void in_place(
// CHECK:      auto h = torch::mm(a, w);
// CHECK-NEXT: kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, 3);
// CHECK-NEXT: out = h;

// Omitted (defaulted) arguments take the op table's defaults, as ATen's
// own calls do: leaky_relu's slope 0.01, gelu's "none".
torch::Tensor defaults(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto l = torch::leaky_relu(m);
  auto g = torch::nn::functional::gelu(l);
  return g;
}
// CHECK-LABEL: torch::Tensor defaults(
// CHECK:      auto m = torch::matmul(a, w);
// CHECK-NEXT: auto g = kb_rewrite::kb_fused_{{[0-9a-f]+}}(m);
// CHECK-NEXT: return g;

// The chain's value on the right of '-' after a number: ATen's operator
// fills a tensor with 1 and subtracts, float(1) - x in one rounding, as
// rsub(x, 1) computes it (`2 / x` has no such row: left alone, below).
torch::Tensor right_operand(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = 1 - torch::relu(m);
  return r;
}
// CHECK-LABEL: torch::Tensor right_operand(
// CHECK:      auto r = kb_rewrite::kb_fused_{{[0-9a-f]+}}(m, 1);
// RSUB: __fmaf_rn(-1.0f, t0, s0); // aten::rsub
// RSUB: t = at::rsub(t, s0);

// Left alone, with the reason: the chain's value on the right of '/' after
// a number.
torch::Tensor reciprocal_of(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = 2.0 / torch::relu(m);
  return r;
}
// CHECK-LABEL: torch::Tensor reciprocal_of(
// CHECK:      auto r = 2.0 / torch::relu(m);

// Left alone: an operand with side effects would move.
torch::Tensor side_effects(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = torch::relu(m) + torch::randn({4});
  return r;
}
// CHECK-LABEL: torch::Tensor side_effects(
// CHECK:      auto r = torch::relu(m) + torch::randn({4});

// A use after the chain ends it: `r` stays in memory, and a chain of one op
// is left alone (nothing to fuse).
torch::Tensor used_after(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = torch::relu(m);
  auto s = r * 2;
  return s + r;
}
// CHECK-LABEL: torch::Tensor used_after(
// CHECK:      auto r = torch::relu(m);
// CHECK-NEXT: auto s = r * 2;

// Macros and templates are not rewritten (a note says so).
#define RELU_OF(t) torch::relu(t)
torch::Tensor in_macro(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = RELU_OF(m);
  return r;
}
// CHECK-LABEL: torch::Tensor in_macro(
// CHECK:      auto r = RELU_OF(m);
template <typename T> torch::Tensor templated(T a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto r = torch::relu(m);
  return r;
}
// CHECK-LABEL: template <typename T> torch::Tensor templated(
// CHECK:      auto r = torch::relu(m);

// An alias of the anchor's result stops the chain.
torch::Tensor aliased(torch::Tensor a, torch::Tensor w) {
  auto m = torch::matmul(a, w);
  auto &alias = m;
  m = torch::relu(m);
  return alias;
}
// CHECK-LABEL: torch::Tensor aliased(
// CHECK:      m = torch::relu(m);

// Activation and norm modules: the modules go to the fused call by
// reference. Batch norm reads its running statistics and eps from the
// module and is fused only in eval mode; leaky_relu reads its slope from its options; a GELU module must keep
// approximate == "none" (the kernel's choice); otherwise each falls back to
// calling the module.
struct BlockImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::LeakyReLU leaky{nullptr};
  torch::nn::GELU gelu{nullptr};
  torch::Tensor forward(torch::Tensor x) {
    x = conv->forward(x);
    x = bn->forward(x);
    x = relu->forward(x);
    return x;
  }
  torch::Tensor holder_calls(torch::Tensor x) {
    return leaky(bn(conv(x)));
  }
  torch::Tensor object_call(torch::nn::GELUImpl &g, torch::Tensor x) {
    auto y = conv(x);
    y = g.forward(y);
    y = y * 2;
    return y;
  }
};
// CHECK-LABEL: struct BlockImpl
// CHECK:      x = conv->forward(x);
// CHECK-NEXT: x = kb_rewrite::kb_fused_{{[0-9a-f]+}}(x, (*bn), (*relu));
// CHECK-NEXT: return x;
// CHECK:      return kb_rewrite::kb_fused_{{[0-9a-f]+}}(conv(x), (*bn), (*leaky));
// CHECK:      auto y = conv(x);
// CHECK-NEXT: y = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y, g, 2);
// CHECK-NEXT: return y;

// Functional options objects name the op's operands (an operand left out
// before a given one takes its default in the fallback; inplace(true) on a
// temporary changes nothing); the return's op joins the chain.
torch::Tensor options(torch::nn::Linear &fc, torch::Tensor x) {
  auto y = torch::nn::functional::softplus(
      fc(x), torch::nn::functional::SoftplusFuncOptions().threshold(10.0));
  y = torch::nn::functional::leaky_relu(
      y, torch::nn::functional::LeakyReLUFuncOptions().negative_slope(0.2).inplace(true));
  return torch::nn::functional::gelu(
      y, torch::nn::functional::GELUFuncOptions().approximate("tanh"));
}
// CHECK-LABEL: torch::Tensor options(
// CHECK-NEXT:  return kb_rewrite::kb_fused_{{[0-9a-f]+}}(fc(x), 10.0, 0.2);
// CHECK-NEXT:  }

// In place on the chain's input variable: aliases would see it; left alone.
torch::Tensor options_inplace_input(torch::Tensor w, torch::Tensor x) {
  auto y = torch::mm(x, w);
  y = torch::nn::functional::relu(
      y, torch::nn::functional::ReLUFuncOptions().inplace(true));
  return y * 2;
}
// CHECK-LABEL: torch::Tensor options_inplace_input(
// CHECK-NEXT:  auto y = torch::mm(x, w);
// CHECK-NEXT:  y = torch::nn::functional::relu(

// The chain's value read twice (swish, then mish written out): the element
// function and the fallback keep each op's result.
torch::Tensor swish_mish(torch::nn::Conv2d &conv, torch::Tensor x) {
  x = conv(x);
  x = x * torch::sigmoid(x);
  return x * torch::tanh(torch::softplus(x));
}
// CHECK-LABEL: torch::Tensor swish_mish(
// CHECK-NEXT:  x = conv(x);
// CHECK-NEXT:  return kb_rewrite::kb_fused_{{[0-9a-f]+}}(x);
// DAG:      const float t1 = __fmul_rn(x, t0); // aten::mul
// DAG-NEXT: const float t2 = kb::softplus(t1, 1.0f, 20.0f); // aten::softplus
// DAG-NEXT: const float t3 = tanhf(t2); // aten::tanh
// DAG-NEXT: const float t4 = __fmul_rn(t1, t3); // aten::mul
// DAG:      at::Tensor r0 = at::sigmoid(in);
// DAG-NEXT: at::Tensor r1 = at::mul(in, r0);
// DAG-NEXT: at::Tensor r2 = at::softplus(r1);
// DAG-NEXT: at::Tensor r3 = at::tanh(r2);
// DAG-NEXT: at::Tensor r4 = at::mul(r1, r3);
// DAG-NEXT: return r4;

// A method's argument may read the value too; a reduction read a second
// time ends the chain before it.
torch::Tensor method_twice(torch::nn::Linear &fc, torch::Tensor x) {
  auto y = fc(x);
  y = y.mul(torch::sigmoid(y)).add(1.0);
  y = y + y.mean();
  return y;
}
// CHECK-LABEL: torch::Tensor method_twice(
// CHECK-NEXT:  auto y = fc(x);
// CHECK-NEXT:  y = kb_rewrite::kb_fused_{{[0-9a-f]+}}(y, 1.0);
// CHECK-NEXT:  y = y + y.mean();

// LOG: cxx-rewrite.cpp:{{[0-9]+}}: fusable epilogue after conv2d: relu -> add -> mul (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after matmul: relu -> sub (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after matmul: relu -> div (2 ops)
// LOG-NEXT: left as is: the chain's value is the right operand of 'div' after a number: no row of the op-semantics table takes a number first
// LOG: fusable epilogue after matmul: relu -> add (2 ops)
// LOG-NEXT: left as is: operand 'torch::randn({4})' may have side effects: it is not moved
// LOG: fusable epilogue after matmul: relu (1 op)
// LOG-NEXT: left as is: a single op: nothing to fuse
// LOG: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after conv2d: batch_norm -> leaky_relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after conv2d: gelu -> mul (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after linear: softplus -> leaky_relu -> gelu (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after mm: relu -> mul (2 ops)
// LOG-NEXT: left as is: 'relu' with inplace(true) writes the chain's input
// LOG: fusable epilogue after conv2d: sigmoid -> mul -> softplus -> tanh -> mul (5 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: fusable epilogue after linear: sigmoid -> mul -> add (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_
// LOG: skipped: statement in a macro expansion: not rewritten
// LOG: skipped: template: not rewritten
// LOG: skipped: 'm' is aliased by the reference 'alias'
// LOG: 12 of 16 chains rewritten
// HDR: #include <torch/nn.h>
// HDR: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, const at::Tensor& a0, const at::Scalar& s1);
// CU: __global__ void __launch_bounds__(256)
// CU: t = at::relu(t);
// CU: t.relu_();
// CU: kb::leaky_relu(x, 0.01f)
// CU-NEXT: kb::gelu(t0, 'n')
// HDR: at::Tensor kb_fused_{{[0-9a-f]+}}(const at::Tensor& in, torch::nn::BatchNorm2dImpl& m0, torch::nn::ReLUImpl& m6);
// The element function, the scalar kernel (one channel division per
// element) and the float4 kernel (one per float4, the statistics loaded
// once for its 4 lanes).
// BNCU: kb::bn_eval(x, v1, v2, s5, v3, v4); // aten::batch_norm
// BNCU: const long long ch = kb_rewrite::detail::channelOf(i, inner, channels);
// BNCU-NEXT: out[i] = kb_fused_{{[0-9a-f]+}}_element(in[i], a1[ch], a2[ch], a3[ch], a4[ch], s5);
// BNCU: const long long ch = kb_rewrite::detail::channelOf(4 * q, inner, channels);
// BNCU-NEXT: const float v1 = a1[ch];
// BNCU: r.w = kb_fused_{{[0-9a-f]+}}_element(x.w, v1, v2, v3, v4, s5);
// The module's own forward is the fallback; eval mode, statistics per
// channel and the relu's inplace option are checked first.
// BNCU: t = m0.forward(t);
// BNCU-NEXT: t = m6.forward(t);
// BNCU: if (m0.is_training())
// BNCU-NEXT: return reference();
// BNCU-NEXT: const at::Tensor& a1 = m0.running_mean;
// BNCU: const at::Scalar s5 = m0.options.eps();
// BNCU: if (kb_rewrite::detail::needsGrad({&in, &a1, &a2, &a3, &a4}))
// BNCU: if (!kb_rewrite::detail::perChannel(a1, in))
// BNCU: if (kb_rewrite::detail::vec4(in) && kb_rewrite::detail::vec4(out) && inner % 4 == 0)
// BNCU-NEXT: _kernel4<<<
// BNCU-NEXT: pin, pout, in.numel() / 4, a1.data_ptr<float>(), a2.data_ptr<float>(), a3.data_ptr<float>(), a4.data_ptr<float>(), s5.to<float>(), inner, in.size(1));
// BNCU: const at::Scalar s7 = m6.options.negative_slope();
// CU: if (m0.options.approximate() != "none")
// CU-NEXT: return reference();
// CU: t = at::softplus(t, 1, s0);
// CU: t = at::leaky_relu(t, s1);
// CU: t = at::gelu(t, "tanh");

// kb-rewrite rewrite: chains whose statements have others between them
// (the ResNet residual block of public libtorch examples computes the
// shortcut between bn2 and `out += residual`). The chain's earlier ops move
// down to its last statement when the statements between cannot observe
// that; otherwise the chain is left with the reason.
// REQUIRES: libtorch
// RUN: rm -rf %t
// RUN: kb-rewrite rewrite %s -o %t -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-deferred.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-deferred.cpp
#include <torch/torch.h>

namespace nn = torch::nn;

struct ResidualBlockImpl : nn::Module {
  ResidualBlockImpl(int64_t c, nn::Sequential downsample = nullptr)
      : conv1(nn::Conv2dOptions(c, c, 3).padding(1).bias(false)), bn1(c),
        relu(nn::ReLUOptions().inplace(true)),
        conv2(nn::Conv2dOptions(c, c, 3).padding(1).bias(false)), bn2(c),
        downsampler(downsample) {}

  torch::Tensor forward(torch::Tensor x) {
    auto out = conv1->forward(x);
    out = bn1->forward(out);
    out = relu->forward(out);
    out = conv2->forward(out);
    out = bn2->forward(out); // normalise

    auto residual = downsampler ? downsampler->forward(x) : x;
    out += residual;
    out = relu->forward(out);
    return out;
  }
  // CHECK-LABEL: torch::Tensor forward(torch::Tensor x) {
  // CHECK-NEXT:    auto out = conv1->forward(x);
  // CHECK-NEXT:    out = kb_rewrite::kb_fused_{{[0-9a-f]+}}(out, (*bn1), (*relu));
  // CHECK-NEXT:    out = conv2->forward(out);
  // CHECK-EMPTY:
  // CHECK-NEXT:    auto residual = downsampler ? downsampler->forward(x) : x;
  // CHECK-NEXT:    out = kb_rewrite::kb_fused_{{[0-9a-f]+}}(out, (*bn2), residual, (*relu));
  // CHECK-NEXT:    return out;

  // A member function between the ops may reach bn2: only the ops after it
  // are fused.
  torch::Tensor helper_between(torch::Tensor x) {
    auto out = conv2->forward(x);
    out = bn2->forward(out);
    auto r = shortcut(x);
    out = out + r;
    out = torch::relu(out);
    return out;
  }
  // CHECK-LABEL: torch::Tensor helper_between(torch::Tensor x) {
  // CHECK-NEXT:    auto out = conv2->forward(x);
  // CHECK-NEXT:    out = bn2->forward(out);
  // CHECK-NEXT:    auto r = shortcut(x);
  // CHECK-NEXT:    out = kb_rewrite::kb_fused_{{[0-9a-f]+}}(out, r);

  torch::Tensor shortcut(torch::Tensor x) { return x; }

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::ReLU relu;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Sequential downsampler;
};

// The statement between reads the module the earlier op uses (here and
// below, the ops after the statements between are fused on their own).
torch::Tensor names_module(nn::Linear &fc, nn::BatchNorm1d &bn,
                           torch::Tensor x) {
  auto h = fc(x);
  h = bn(h);
  auto m = bn->running_mean.sum();
  h = torch::relu(h) + m;
  return h;
}
// CHECK-LABEL: torch::Tensor names_module(
// CHECK:         auto h = fc(x);
// CHECK-NEXT:    h = bn(h);
// CHECK-NEXT:    auto m = bn->running_mean.sum();
// CHECK-NEXT:    h = kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, m);

// The earlier op reads a tensor the statement between writes through an alias.
torch::Tensor reads_tensor(nn::Linear &fc, torch::Tensor x, torch::Tensor b) {
  auto h = fc(x);
  h = h * b;
  auto alias = b;
  alias.add_(1);
  h = torch::sigmoid(h);
  h = h - 1.0;
  return h;
}
// CHECK-LABEL: torch::Tensor reads_tensor(
// CHECK:         auto h = fc(x);
// CHECK-NEXT:    h = h * b;
// CHECK-NEXT:    auto alias = b;
// CHECK-NEXT:    alias.add_(1);
// CHECK-NEXT:    h = kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, 1.0);

// Control flow between: the later ops may not run at all.
torch::Tensor control_between(nn::Linear &fc, nn::BatchNorm1d &bn,
                              torch::Tensor x, bool stop) {
  auto h = fc(x);
  h = bn(h);
  if (stop)
    throw std::runtime_error("stop");
  h = torch::relu(h);
  h = h * 2.0;
  return h;
}
// CHECK-LABEL: torch::Tensor control_between(
// CHECK:         h = bn(h);
// CHECK-NEXT:    if (stop)
// CHECK-NEXT:      throw std::runtime_error("stop");
// CHECK-NEXT:    h = kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, 2.0);

// The anchor and its first op share a statement: the anchor would move.
torch::Tensor anchor_moves(nn::Linear &fc, torch::Tensor x, double s) {
  auto h = torch::relu(fc(x));
  auto scale = s * 2.0;
  h = h * scale;
  h = torch::tanh(h);
  return h;
}
// CHECK-LABEL: torch::Tensor anchor_moves(
// CHECK:         auto h = torch::relu(fc(x));
// CHECK-NEXT:    auto scale = s * 2.0;
// CHECK-NEXT:    h = kb_rewrite::kb_fused_{{[0-9a-f]+}}(h, scale);

// LOG:      deferred.cpp:[[#L1:]]: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT:   rewritten: kb_rewrite::kb_fused_
// LOG-NEXT: deferred.cpp:[[#L1+3]]: fusable epilogue after conv2d: batch_norm -> add_ -> relu (3 ops)
// LOG-NEXT:   rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]{{$}}
// LOG-NEXT: fusable epilogue after conv2d: batch_norm -> add -> relu (3 ops)
// LOG-NEXT:   rewritten: {{.*}} (only its ops from line {{[0-9]+}} on: other statements stand between its ops (line {{[0-9]+}}): it calls a member function)
// LOG-NEXT: fusable epilogue after linear: batch_norm -> relu -> add (3 ops)
// LOG-NEXT:   it names 'bn', which the chain's earlier ops use)
// LOG-NEXT: fusable epilogue after linear: mul -> sigmoid -> sub (3 ops)
// LOG-NEXT:   and 'mul' reads tensor 'b' before them)
// LOG-NEXT: fusable epilogue after linear: batch_norm -> relu -> mul (3 ops)
// LOG-NEXT:   not a plain declaration or expression)
// LOG-NEXT: fusable epilogue after linear: relu -> mul -> tanh (3 ops)
// LOG-NEXT:   and its anchor would move past them)
// LOG-NEXT: 7 of 7 chains rewritten

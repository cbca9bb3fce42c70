// libtorch C++ inputs for cxx-chains.test: one function per case.
#include <torch/torch.h>

#define KB_TEST_ACT(t) torch::relu(t)

struct NetImpl : torch::nn::Module {
  NetImpl() {
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(16));
    fc = register_module("fc", torch::nn::Linear(16, 10));
    act = register_module("act", torch::nn::ReLU());
    bias = register_parameter("bias", torch::zeros({16, 1, 1}));
  }
  // Module calls, functional calls, operators, methods and in-place ops,
  // across statements; the mean feeds the next anchor.
  torch::Tensor forward(torch::Tensor x) {
    x = conv1->forward(x);
    x = bn1->forward(x);
    x = torch::relu(x);
    x = x + bias;
    x = x.sigmoid() * 2;
    auto y = fc(x.mean({2, 3}));
    y = act->forward(y);
    y += 1.0;
    return y;
  }
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Linear fc{nullptr};
  torch::nn::ReLU act{nullptr};
  torch::Tensor bias;
};

// One expression.
torch::Tensor one_expression(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  return torch::sigmoid(torch::conv2d(x, w, b)) * 0.5;
}

// A chain moves to a new variable when the old one is not read again.
torch::Tensor new_variable(torch::Tensor a, torch::Tensor b) {
  auto y = torch::matmul(a, b);
  auto z = y.relu();
  auto out = torch::nn::functional::gelu(z);
  return out;
}

// An intermediate read again later ends the chain there.
torch::Tensor used_again(torch::Tensor x, torch::Tensor w) {
  auto y = torch::linear(x, w);
  auto z = torch::tanh(y);
  auto u = z.exp();
  return u + z;
}

// A reference to the anchor's result: nothing is rewritten.
torch::Tensor aliased(torch::Tensor x, torch::Tensor w) {
  auto y = torch::mm(x, w);
  auto &r = y;
  y = y.relu();
  return r;
}

// A macro in the chain stops it (and is left alone).
torch::Tensor in_macro(torch::Tensor x, torch::Tensor w) {
  auto y = at::addmm(x, x, w);
  y = y * 3;
  y = KB_TEST_ACT(y);
  return y;
}

// Templates are not rewritten.
template <class T> torch::Tensor templated(T x, torch::Tensor w) {
  auto y = torch::matmul(x, w);
  return y.relu();
}

// Dropout is random: not fusable; blocks under if have their own chains.
torch::Tensor dropout_and_blocks(torch::Tensor x, torch::Tensor w, bool train) {
  auto y = torch::matmul(x, w);
  y = y.clamp(0, 6);
  y = torch::dropout(y, 0.5, train);
  if (train) {
    auto z = torch::matmul(y, w);
    z.relu_();
    return z;
  }
  return y;
}

torch::Tensor use_templated(torch::Tensor x, torch::Tensor w) { return templated(x, w); }

// A literal train=false dropout is the identity (the graph path's rule,
// kb::refinedKind), which C++ kernels have no form for: the chain ends
// there too, and says why.
torch::Tensor eval_dropout(torch::Tensor x, torch::Tensor w) {
  auto y = torch::matmul(x, w);
  y = torch::gelu(y);
  y = torch::dropout(y, 0.5, false);
  return y * 2;
}

// A small libtorch model file of the kind kb-rewrite rewrites: convolution
// and GEMM anchors (kept in cuDNN/cuBLAS) followed by memory-bound chains.
#include <torch/torch.h>

#include "block.h"

// conv -> relu -> + per-channel bias -> * 0.5 -> tanh-GELU
torch::Tensor conv_block(const torch::Tensor &x, const torch::Tensor &w,
                         const torch::Tensor &bias) {
  auto y = torch::conv2d(x, w, {}, 1, 1);
  y = torch::relu(y);
  y = y + bias;
  y = y * 0.5;
  y = torch::gelu(y, "tanh");
  return y;
}

// matmul -> + row bias -> tanh -> clamp
torch::Tensor mlp_head(const torch::Tensor &x, const torch::Tensor &w,
                       const torch::Tensor &b) {
  auto h = torch::matmul(x, w);
  h = h + b;
  h = torch::tanh(h);
  h = h.clamp(-0.5, 0.5);
  return h;
}

// In place after a GEMM: the fused call writes h in place as well.
torch::Tensor scaled_relu(const torch::Tensor &x, const torch::Tensor &w) {
  auto h = torch::mm(x, w);
  h.relu_();
  h.mul_(2.0);
  return h;
}

// conv -> swish -> mish, written out: the chain's value is read twice.
torch::Tensor conv_swish(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::conv2d(x, w, {}, 1, 1);
  y = y * torch::sigmoid(y);
  y = y * torch::tanh(torch::softplus(y));
  return y;
}

// conv -> relu -> 2x2 max pool (a VGG stage): the pooling reads the relu's
// values in the fused kernel, so the full-size activation is never stored.
torch::Tensor conv_pool(const torch::Tensor &x, const torch::Tensor &w) {
  auto y = torch::conv2d(x, w, {}, 1, 1);
  y = torch::relu(y);
  y = torch::max_pool2d(y, 2);
  return y;
}

// A classifier head: matmul -> tanh-GELU -> * 0.5 -> softmax over classes.
torch::Tensor classifier(const torch::Tensor &x, const torch::Tensor &w) {
  auto h = torch::matmul(x, w);
  return torch::softmax(torch::gelu(h, "tanh") * 0.5, 1);
}

ConvBnReluImpl::ConvBnReluImpl(int64_t channels)
    : conv(torch::nn::Conv2dOptions(channels, channels, 3)
               .padding(1)
               .bias(false)),
      bn(channels), relu(torch::nn::ReLUOptions().inplace(true)) {
  register_module("conv", conv);
  register_module("bn", bn);
  register_module("relu", relu);
}

torch::Tensor ConvBnReluImpl::forward(torch::Tensor x) {
  x = conv->forward(x);
  x = bn->forward(x);
  x = relu->forward(x);
  return x;
}

ResidualBlockImpl::ResidualBlockImpl(int64_t channels)
    : conv1(torch::nn::Conv2dOptions(channels, channels, 3)
                .padding(1)
                .bias(false)),
      conv2(torch::nn::Conv2dOptions(channels, channels, 3)
                .padding(1)
                .bias(false)),
      bn1(channels), bn2(channels),
      relu(torch::nn::ReLUOptions().inplace(true)) {
  register_module("conv1", conv1);
  register_module("bn1", bn1);
  register_module("conv2", conv2);
  register_module("bn2", bn2);
  register_module("relu", relu);
}

torch::Tensor ResidualBlockImpl::forward(torch::Tensor x) {
  auto out = conv1->forward(x);
  out = bn1->forward(out);
  out = relu->forward(out);
  out = conv2->forward(out);
  out = bn2->forward(out);

  auto residual = downsampler ? downsampler->forward(x) : x;
  out += residual;
  out = relu->forward(out);
  return out;
}

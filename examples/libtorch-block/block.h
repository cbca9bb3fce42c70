#pragma once
#include <torch/torch.h>

torch::Tensor conv_block(const torch::Tensor &x, const torch::Tensor &w,
                         const torch::Tensor &bias);
torch::Tensor mlp_head(const torch::Tensor &x, const torch::Tensor &w,
                       const torch::Tensor &b);
torch::Tensor scaled_relu(const torch::Tensor &x, const torch::Tensor &w);
torch::Tensor conv_swish(const torch::Tensor &x, const torch::Tensor &w);
torch::Tensor conv_pool(const torch::Tensor &x, const torch::Tensor &w);
torch::Tensor classifier(const torch::Tensor &x, const torch::Tensor &w);

// conv -> batch norm -> relu as modules (a ResNet stem): the rewrite passes
// the modules to the fused call, which reads the running statistics in
// eval mode and calls the modules themselves in training mode.
struct ConvBnReluImpl : torch::nn::Module {
  explicit ConvBnReluImpl(int64_t channels);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::ReLU relu{nullptr};
};
TORCH_MODULE(ConvBnRelu);

// The residual block of the public ResNet examples: the shortcut is
// computed between bn2 and the add, and the rewrite moves bn2 past it into
// one fused call (bn2 -> + shortcut -> relu).
struct ResidualBlockImpl : torch::nn::Module {
  explicit ResidualBlockImpl(int64_t channels);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::Sequential downsampler{nullptr};
};
TORCH_MODULE(ResidualBlock);

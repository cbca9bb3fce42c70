// Runs the (rewritten) functions of block.cpp once and prints checksums, so
// that the original and the rewritten builds can be compared.
#include <cstdio>

#include "block.h"

int main() {
  torch::manual_seed(0);
  auto opt = torch::TensorOptions().device(torch::kCUDA);
  torch::NoGradGuard noGrad;
  auto x = torch::randn({8, 32, 28, 28}, opt);
  auto w = torch::randn({32, 32, 3, 3}, opt) * 0.05;
  auto bias = torch::randn({32, 1, 1}, opt);
  auto a = torch::randn({256, 128}, opt);
  auto wm = torch::randn({128, 512}, opt) * 0.05;
  auto b = torch::randn({512}, opt);
  std::printf("conv_block %.6f\n", conv_block(x, w, bias).sum().item<double>());
  std::printf("mlp_head %.6f\n", mlp_head(a, wm, b).sum().item<double>());
  std::printf("scaled_relu %.6f\n", scaled_relu(a, wm).sum().item<double>());
  std::printf("conv_pool %.6f\n", conv_pool(x, w).sum().item<double>());
  std::printf("classifier %.6f\n",
              classifier(a, wm).max(1).values.sum().item<double>());
  ConvBnRelu block(32);
  block->to(torch::kCUDA);
  block->eval();
  std::printf("conv_bn_relu %.6f\n", block->forward(x).sum().item<double>());
  return 0;
}

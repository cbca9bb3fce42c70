// Python bindings for the GPU test and the benchmark (scripts/gpu-cxx-rewrite).
#include <torch/extension.h>

#include "block.h"

// One ConvBnRelu with the same parameters in every build (seeded), and
// non-trivial running statistics so that eval mode tests them.
static ConvBnRelu block{nullptr};

void make_block(int64_t channels, int64_t seed) {
  torch::manual_seed(seed);
  block = ConvBnRelu(channels);
  torch::NoGradGuard noGrad;
  block->bn->running_mean.uniform_(-0.5, 0.5);
  block->bn->running_var.uniform_(0.5, 1.5);
  block->bn->weight.uniform_(0.5, 1.5);
  block->bn->bias.uniform_(-0.5, 0.5);
  block->to(torch::kCUDA);
}

torch::Tensor block_forward(const torch::Tensor &x, bool training) {
  block->train(training);
  return block->forward(x);
}

torch::Tensor block_running_mean() { return block->bn->running_mean.clone(); }

static ResidualBlock residual{nullptr};

void make_residual(int64_t channels, int64_t seed) {
  torch::manual_seed(seed);
  residual = ResidualBlock(channels);
  torch::NoGradGuard noGrad;
  for (auto *bn : {&residual->bn1, &residual->bn2}) {
    (*bn)->running_mean.uniform_(-0.5, 0.5);
    (*bn)->running_var.uniform_(0.5, 1.5);
    (*bn)->weight.uniform_(0.5, 1.5);
    (*bn)->bias.uniform_(-0.5, 0.5);
  }
  residual->to(torch::kCUDA);
}

torch::Tensor residual_forward(const torch::Tensor &x, bool training) {
  residual->train(training);
  return residual->forward(x);
}

torch::Tensor residual_running_mean() {
  return residual->bn2->running_mean.clone();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("conv_block", &conv_block);
  m.def("mlp_head", &mlp_head);
  m.def("scaled_relu", &scaled_relu);
  m.def("conv_swish", &conv_swish);
  m.def("conv_pool", &conv_pool);
  m.def("classifier", &classifier);
  m.def("make_block", &make_block);
  m.def("block_forward", &block_forward);
  m.def("block_running_mean", &block_running_mean);
  m.def("make_residual", &make_residual);
  m.def("residual_forward", &residual_forward);
  m.def("residual_running_mean", &residual_running_mean);
}

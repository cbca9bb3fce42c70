#pragma once
#include <torch/torch.h>

torch::Tensor conv_block(const torch::Tensor &x, const torch::Tensor &w,
                         const torch::Tensor &bias);
torch::Tensor mlp_head(const torch::Tensor &x, const torch::Tensor &w,
                       const torch::Tensor &b);
torch::Tensor scaled_relu(const torch::Tensor &x, const torch::Tensor &w);

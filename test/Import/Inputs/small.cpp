#include "fake_torch.h"

torch::Tensor block(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto y = torch::matmul(x, w);
  y = torch::relu(y + b);
  y = y.sigmoid() * 2.0;
  return y;
}

// A VGG-style network of ours for bench/cxx_programs.py (not a public
// program: those build their bodies with push_back, which the analysis
// cannot follow): two stages of conv + batch norm + ReLU twice, then a
// max pool, all items of one torch::nn::Sequential. Each conv has a chain
// after it; three sit between two of the body's anchors (issue 27).
#include <torch/torch.h>

struct VggBlockImpl : torch::nn::Module {
  torch::nn::Sequential features{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 3).padding(1)),
      torch::nn::BatchNorm2d(64), torch::nn::ReLU(),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 64, 3).padding(1)),
      torch::nn::BatchNorm2d(64), torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 3).padding(1)),
      torch::nn::BatchNorm2d(128), torch::nn::ReLU(),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(128, 128, 3).padding(1)),
      torch::nn::BatchNorm2d(128), torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2))};
  torch::nn::Linear fc{128 * 8 * 8, 10};
  VggBlockImpl() {
    register_module("features", features);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = features->forward(x);
    x = x.view({x.size(0), -1});
    return torch::log_softmax(fc->forward(x), 1);
  }
};

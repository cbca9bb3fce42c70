// kb_rewrite::kb_item at run time (on the CPU): the item a rewrite names,
// and the errors when the Sequential changed after the rewrite.
#include "kb_kernels.h"
#include <cstdio>
#include <torch/torch.h>

int main() {
  torch::nn::Sequential s{torch::nn::Conv2d(1, 16, 5),
                          torch::nn::BatchNorm2d(16),
                          torch::nn::Functional(torch::relu),
                          torch::nn::MaxPool2d(2)};
  auto &bn = kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(s, 1, 4);
  std::printf("item 1: BatchNorm2d(%ld)\n", (long)bn.options.num_features());
  try {
    kb_rewrite::kb_item<torch::nn::ReLUImpl>(s, 1, 4);
    std::printf("another class: not stopped\n");
  } catch (const c10::Error &e) {
    std::printf("another class: %s\n", e.what_without_backtrace());
  }
  s->push_back(torch::nn::Tanh());
  try {
    kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(s, 1, 4);
    std::printf("a longer list: not stopped\n");
  } catch (const c10::Error &e) {
    std::printf("a longer list: %s\n", e.what_without_backtrace());
  }
}

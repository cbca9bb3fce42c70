// Written for kb-rewrite's tests in the style of public libtorch examples
// (a DCGAN, a VAE, an MNIST classifier and its training loop): the rewrite
// must find their chains, keep everything else byte for byte, and compile.
#include <torch/torch.h>

#include <cstdio>

namespace nn = torch::nn;

struct GeneratorImpl : nn::Module {
  explicit GeneratorImpl(int noise)
      : conv1(nn::ConvTranspose2dOptions(noise, 64, 4).bias(false)),
        bn1(64),
        conv2(nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1(conv1(x)));
    x = torch::tanh(conv2(x)) * 0.5 + 0.5; // images in [0, 1]
    return x;
  }
  nn::ConvTranspose2d conv1, conv2;
  nn::BatchNorm2d bn1;
};
TORCH_MODULE(Generator);

struct DiscriminatorImpl : nn::Module {
  DiscriminatorImpl()
      : conv1(nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
        conv2(nn::Conv2dOptions(64, 1, 3).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::leaky_relu(conv1(x), 0.2);
    x = torch::sigmoid(conv2(x));
    return x;
  }
  nn::Conv2d conv1, conv2;
};
TORCH_MODULE(Discriminator);

struct VAEImpl : nn::Module {
  VAEImpl() : fc1(784, 400), fc21(400, 20), fc22(400, 20), fc3(20, 400), fc4(400, 784) {
    register_module("fc1", fc1);
    register_module("fc21", fc21);
    register_module("fc22", fc22);
    register_module("fc3", fc3);
    register_module("fc4", fc4);
  }
  std::pair<torch::Tensor, torch::Tensor> encode(torch::Tensor x) {
    auto h1 = torch::relu(fc1->forward(x));
    return {fc21->forward(h1), fc22->forward(h1)};
  }
  torch::Tensor reparameterize(torch::Tensor mu, torch::Tensor logvar) {
    auto std = torch::exp(0.5 * logvar);
    auto eps = torch::randn_like(std);
    return mu + eps * std;
  }
  torch::Tensor decode(torch::Tensor z) {
    auto h3 = torch::relu(fc3->forward(z));
    return torch::sigmoid(fc4->forward(h3));
  }
  nn::Linear fc1, fc21, fc22, fc3, fc4;
};
TORCH_MODULE(VAE);

struct NetImpl : nn::Module {
  NetImpl() : conv1(nn::Conv2dOptions(1, 10, 5)), fc1(320, 50), fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*train=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }
  nn::Conv2d conv1;
  nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

template <typename Loader>
void train(Net &model, Loader &loader, torch::optim::Optimizer &optimizer) {
  model->train();
  for (auto &batch : loader) {
    optimizer.zero_grad();
    auto output = model->forward(batch.data);
    auto loss = torch::nll_loss(output, batch.target);
    loss.backward();
    optimizer.step();
  }
}

int main() {
  Generator g(16);
  Discriminator d;
  auto fake = g->forward(torch::randn({2, 16, 1, 1}));
  std::printf("%f\n", d->forward(fake).mean().item<float>());
  return 0;
}

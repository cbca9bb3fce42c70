//===- Reference.cpp - The region's original ops, run by libtorch ---------===//
//
// The interpreter runs the graph as written (torch::jit::Code +
// InterpreterState): no graph-executor optimisation or fusion, so the
// reference is eager ATen op by op.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TorchCompat.h"

#include <cuda_runtime.h>

using namespace kb::verify;

struct Reference::Impl {
  std::shared_ptr<torch::jit::Graph> graph;
  std::unique_ptr<torch::jit::Code> code;

  std::vector<at::Tensor> runWith(const std::vector<at::Tensor> &inputs) const {
    torch::jit::InterpreterState state(*code);
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    state.run(stack);
    std::vector<at::Tensor> out;
    for (const c10::IValue &v : stack) {
      if (v.isTensor()) {
        out.push_back(v.toTensor());
      } else if (v.isTuple()) {
        for (const c10::IValue &e : v.toTupleRef().elements())
          out.push_back(e.toTensor());
      } else {
        throw std::runtime_error("the reference graph returned a non-tensor");
      }
    }
    return out;
  }

  std::vector<at::Tensor> toTorch(const std::vector<HostTensor> &inputs,
                                  at::ScalarType type) const {
    at::Device dev = Reference::usesCuda() ? at::Device(at::kCUDA, 0)
                                           : at::Device(at::kCPU);
    std::vector<at::Tensor> out;
    for (const HostTensor &t : inputs) {
      at::Tensor host = torch::from_blob(const_cast<float *>(t.data.data()),
                                         t.shape, torch::kFloat32)
                            .clone();
      out.push_back(host.to(dev).to(type));
    }
    return out;
  }
};

Reference::Reference(const std::string &irText) : impl(new Impl) {
  impl->graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(irText, impl->graph.get());
  impl->code = std::make_unique<torch::jit::Code>(impl->graph, "reference");
}

Reference::~Reference() = default;

ReferenceOutputs Reference::run(const std::vector<HostTensor> &inputs) const {
  torch::NoGradGuard noGrad;
  ReferenceOutputs r;
  auto out64 = impl->runWith(impl->toTorch(inputs, torch::kFloat64));
  auto out32 = impl->runWith(impl->toTorch(inputs, torch::kFloat32));
  if (out64.size() != out32.size())
    throw std::runtime_error("reference returned different output counts");
  for (size_t i = 0; i < out64.size(); ++i) {
    at::Tensor a = out64[i].to(torch::kCPU, torch::kFloat64).contiguous();
    at::Tensor b = out32[i].to(torch::kCPU, torch::kFloat32).contiguous();
    r.truth64.emplace_back(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
    r.eager32.emplace_back(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
    r.shapes.emplace_back(a.sizes().begin(), a.sizes().end());
  }
  return r;
}

std::vector<double> Reference::timeEager(const std::vector<HostTensor> &inputs,
                                         void *stream, int device, int warmup,
                                         int runs, void (*flush)(void *),
                                         void *flushArg) const {
  std::vector<double> times;
  if (!usesCuda())
    return times;
  torch::NoGradGuard noGrad;
  auto in = impl->toTorch(inputs, torch::kFloat32);
  cudaDeviceSynchronize();
  compat::StreamScope scope(stream, device);
  auto s = static_cast<cudaStream_t>(stream);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < warmup + runs; ++i) {
    flush(flushArg);
    cudaEventRecord(start, s);
    auto out = impl->runWith(in);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= warmup)
      times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return times;
}

std::string Reference::torchVersion() { return TORCH_VERSION; }

bool Reference::usesCuda() { return compat::torchHasCuda(); }

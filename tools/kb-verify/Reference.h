//===- Reference.h - The region's original ops, run by libtorch -*- C++ -*-===//
//
// Torch-free interface so that only Reference.cpp includes libtorch headers
// (they cost ~1 minute of compile time per translation unit).
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_REFERENCE_H
#define KB_VERIFY_REFERENCE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kb::verify {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct ReferenceOutputs {
  std::vector<std::vector<double>> truth64; // float64 reference
  std::vector<std::vector<float>> eager32;  // eager fp32 (the error budget)
  std::vector<std::vector<int64_t>> shapes;
};

class Reference {
public:
  /// Parses the TorchScript IR; throws std::runtime_error with torch's
  /// message on malformed IR.
  explicit Reference(const std::string &irText);
  ~Reference();

  /// Runs the graph in float64 and in float32, on the GPU when libtorch has
  /// CUDA (else on the CPU).
  ReferenceOutputs run(const std::vector<HostTensor> &inputs) const;

  /// Eager fp32 time of the graph on `stream` (CUDA events, L2 flushed
  /// before each run by `flush`); empty when libtorch has no CUDA.
  std::vector<double> timeEager(const std::vector<HostTensor> &inputs,
                                void *stream, int device, int warmup,
                                int runs, void (*flush)(void *),
                                void *flushArg) const;

  static std::string torchVersion();
  static bool usesCuda();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kb::verify

#endif // KB_VERIFY_REFERENCE_H

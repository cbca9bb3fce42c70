//===- Reference.h - The region's original ops, run by libtorch -*- C++ -*-===//
//
// The interface needs only ATen's tensor type; the TorchScript headers
// (the costly ones) stay inside Reference.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_REFERENCE_H
#define KB_VERIFY_REFERENCE_H

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kb::verify {

struct ReferenceOutputs {
  std::vector<at::Tensor> truth64; // float64 reference, contiguous
  std::vector<at::Tensor> eager32; // eager fp32 (the error budget), contiguous
  /// |float64 run on inputs perturbed by one fp32 ulp - truth64| (0 where
  /// either is non-finite); only for special-value trials, else empty.
  std::vector<at::Tensor> sens64;
  /// The graph op by op, each op's result correctly rounded to float32;
  /// only for special-value trials (with sens64), else empty; an undefined
  /// tensor for an int64 output.
  std::vector<at::Tensor> step32;
  /// Eager's own output types (eager32 holds them widened to float32, exact
  /// for float16 / bfloat16; int64 indices stay int64).
  std::vector<at::ScalarType> outTypes;
};

class Reference {
public:
  /// Parses the TorchScript IR; throws std::runtime_error with torch's
  /// message on malformed IR.
  explicit Reference(const std::string &irText);
  ~Reference();

  /// Runs the graph in float64 and in float32 on the inputs' device (float32
  /// tensors; the graph gets copies, so in-place ops cannot change them).
  /// With `sensitivity`, also runs the float64 graph on inputs perturbed by
  /// a random relative 2^-23 (one fp32 ulp): how much an output moves when
  /// its inputs are only known to fp32 precision. Ill-conditioned outputs
  /// (a row holding +3e38 and -3e38 next to ordinary values) move by much
  /// more than any fp32 algorithm's summation-order differences. It also
  /// runs the graph op by op with each op's result rounded to float32
  /// (step32).
  ReferenceOutputs run(const std::vector<at::Tensor> &inputs,
                       bool sensitivity = false) const;

  /// Eager fp32 time of the graph on `stream` (CUDA events, L2 flushed
  /// before each run by `flush`); empty when libtorch has no CUDA.
  std::vector<double> timeEager(const std::vector<at::Tensor> &inputs,
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

//===- DeviceBuffers.h - Device memory the worker checks around -*- C++ -*-===//
//
// The worker's CUDA calls go through check(), which turns a failure into
// the verdict it means (out of memory, a launch error, or a sticky error
// that poisons the context); every tensor a candidate touches lives in a
// GuardedBuffer, canaries around its data.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_DEVICEBUFFERS_H
#define KB_VERIFY_DEVICEBUFFERS_H

#include "kb/Verify/Checks.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace kb::verify {

/// Throws CudaFailure for anything but cudaSuccess, naming `what`.
void check(cudaError_t e, const char *what);

/// A device buffer in an allocation of its own, canaries all around the
/// data (guardLayout: at least kGuardBytes each side and the mapped slack
/// up to the allocation's end), checked on the device.
struct GuardedBuffer {
  uint8_t *base = nullptr;
  size_t bytes = 0;
  GuardLayout layout;
  GuardedBuffer() = default;
  explicit GuardedBuffer(size_t n) : bytes(n), layout(guardLayout(n)) {
    check(cudaMalloc(&base, layout.total), "cudaMalloc");
    check(cudaMemset(base, kCanaryByte, layout.total), "cudaMemset");
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  GuardedBuffer(GuardedBuffer &&o) noexcept { *this = std::move(o); }
  GuardedBuffer &operator=(GuardedBuffer &&o) noexcept {
    std::swap(base, o.base);
    std::swap(bytes, o.bytes);
    std::swap(layout, o.layout);
    return *this;
  }
  ~GuardedBuffer() {
    if (base)
      cudaFree(base);
  }
  void *data() const { return base + layout.front; }
  /// Call after the device is synchronised (the check runs on ATen's stream).
  bool guardsIntact() const;
};

} // namespace kb::verify

#endif // KB_VERIFY_DEVICEBUFFERS_H

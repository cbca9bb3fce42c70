//===- DeviceBuffers.cpp - Device memory the worker checks around --------===//

#include "DeviceBuffers.h"
#include "CudaCompat.h"
#include "TensorChecks.h"
#include "Worker.h"

#include <string>

using namespace kb::verify;

void kb::verify::check(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return;
  std::string msg = std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation)
    throw CudaFailure(VerdictStatus::Oom, msg, false);
  throw CudaFailure(compat::isStickyError(e) ? VerdictStatus::Crashed
                                             : VerdictStatus::LaunchError,
                    msg, compat::isStickyError(e));
}

bool GuardedBuffer::guardsIntact() const {
  return kb::verify::guardsIntact(
      at::from_blob(base, {static_cast<int64_t>(layout.total)},
                    at::TensorOptions().dtype(at::kByte).device(at::kCUDA, 0)),
      layout);
}

//===- CudaCompat.h - CUDA version shims ------------------------*- C++ -*-===//
//
// The one place for CUDA-version differences. kb-verify builds with CUDA 12
// (V100, sm_70) and CUDA 13 (sm_75+). It uses the runtime API only
// (cudaLibraryLoadData and cudaKernel_t need CUDA >= 12.0): libcudart loads
// the driver lazily, so kb-verify starts, and --compile works, on machines
// without a GPU driver.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_CUDACOMPAT_H
#define KB_VERIFY_CUDACOMPAT_H

#include <cuda_runtime.h>

#if CUDART_VERSION < 12000
#error "kb-verify needs CUDA 12.0 or newer (cudaLibraryLoadData)"
#endif

#ifndef KB_CUDA_INCLUDE_DIR
#define KB_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace kb::verify::compat {

/// Errors after which the CUDA context is unusable: the worker must exit.
inline bool isStickyError(cudaError_t e) {
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorAssert:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorHardwareStackError:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable:
    return true;
  default:
    return false;
  }
}

} // namespace kb::verify::compat

#endif

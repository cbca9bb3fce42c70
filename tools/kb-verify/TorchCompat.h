//===- TorchCompat.h - libtorch version shims -------------------*- C++ -*-===//
//
// The one place that knows which libtorch kb-verify was built against:
// Debian's 1.13 (CPU only) in CI, the torch 2.x wheel (with CUDA) on GPU
// hosts. KB_HAVE_TORCH_CUDA is set by CMake when libtorch links CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_TORCHCOMPAT_H
#define KB_VERIFY_TORCHCOMPAT_H

#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>
#include <torch/version.h>

#include <string>

#if KB_HAVE_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#endif

namespace kb::verify::compat {

/// The NVRTC option naming this libtorch's version to the kernels' prelude
/// (major * 100 + minor): helpers whose ATen kernel changed rounding between
/// releases (kb::addcmul) follow the torch they are compared against.
inline std::string torchVersionDefine() {
  return "-DKB_TORCH_VERSION=" +
         std::to_string(TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR);
}

inline bool torchHasCuda() {
#if KB_HAVE_TORCH_CUDA
  return torch::cuda::is_available();
#else
  return false;
#endif
}

/// Makes `stream` torch's current stream on `device` for the scope.
class StreamScope {
public:
  StreamScope(void *stream, int device) {
#if KB_HAVE_TORCH_CUDA
    prev = c10::cuda::getCurrentCUDAStream(device);
    c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromExternal(
        static_cast<cudaStream_t>(stream), device));
#else
    (void)stream;
    (void)device;
#endif
  }
  ~StreamScope() {
#if KB_HAVE_TORCH_CUDA
    if (prev)
      c10::cuda::setCurrentCUDAStream(*prev);
#endif
  }

private:
#if KB_HAVE_TORCH_CUDA
  std::optional<c10::cuda::CUDAStream> prev;
#endif
};

} // namespace kb::verify::compat

#endif // KB_VERIFY_TORCHCOMPAT_H

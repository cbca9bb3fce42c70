// Python bindings for the GPU test and the benchmark (scripts/gpu-cxx-rewrite).
#include <torch/extension.h>

#include "block.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("conv_block", &conv_block);
  m.def("mlp_head", &mlp_head);
  m.def("scaled_relu", &scaled_relu);
}

# Finds what kb-verify needs (CUDA toolkit >= 12, libtorch) and sets
# KB_VERIFY_FOUND. Debian: CUDA in /usr/local/cuda, libtorch-dev's TorchConfig.
# GPU host: pass -DCMAKE_PREFIX_PATH=<torch.utils.cmake_prefix_path>.
if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
find_package(CUDAToolkit 12 QUIET)
find_package(Torch QUIET)
if(CUDAToolkit_FOUND AND Torch_FOUND)
  set(KB_VERIFY_FOUND TRUE)
elseif(KB_BUILD_VERIFY STREQUAL "ON")
  message(FATAL_ERROR "kb-verify needs the CUDA toolkit (>= 12) and libtorch "
                      "(CUDA found: ${CUDAToolkit_FOUND}, Torch found: ${Torch_FOUND})")
else()
  message(WARNING "kb-verify is not built: CUDA toolkit found: "
                  "${CUDAToolkit_FOUND}, libtorch found: ${Torch_FOUND}")
endif()

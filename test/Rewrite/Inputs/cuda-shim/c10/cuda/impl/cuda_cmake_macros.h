// Debian's libtorch-dev is CPU-only and omits this header, which CUDA builds
// of libtorch generate at configure time; c10's CUDA headers only need it to
// exist, so the nvcc syntax test of the generated kb_kernels.cu supplies an
// empty one. Real builds use their libtorch's own.
#pragma once

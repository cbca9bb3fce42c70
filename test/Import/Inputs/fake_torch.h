// The few libtorch names the C++ frontend keys on, for fast tests (the real
// headers take ~15 s to parse).
#pragma once
namespace c10 { struct Scalar { Scalar(double) {} Scalar(int) {} }; }
namespace at {
struct Tensor {
  Tensor relu() const;
  Tensor &relu_();
  Tensor sigmoid() const;
  Tensor &operator+=(const Tensor &);
};
Tensor operator+(const Tensor &, const Tensor &);
Tensor operator*(const Tensor &, const c10::Scalar &);
Tensor matmul(const Tensor &, const Tensor &);
Tensor relu(const Tensor &);
Tensor gelu(const Tensor &);
} // namespace at
namespace torch {
using at::Tensor;
using at::matmul;
using at::relu;
} // namespace torch

// isin (ops/membership_ops.cc): generate()'s special-token checks use it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace torch_tpu::ops {

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test_elements, bool assume_unique,
                bool invert);
at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test_elements,
                     bool assume_unique, bool invert, at::Tensor& out);
at::Tensor isin_tensor_scalar(const at::Tensor& elements, const at::Scalar& test_element,
                              bool assume_unique, bool invert);
at::Tensor& isin_tensor_scalar_out(const at::Tensor& elements, const at::Scalar& test_element,
                                   bool assume_unique, bool invert, at::Tensor& out);
at::Tensor isin_scalar_tensor(const at::Scalar& element, const at::Tensor& test_elements,
                              bool assume_unique, bool invert);
at::Tensor& isin_scalar_tensor_out(const at::Scalar& element, const at::Tensor& test_elements,
                                   bool assume_unique, bool invert, at::Tensor& out);

}  // namespace torch_tpu::ops

// Python's shift operators (ops/shift_operators.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace torch_tpu::ops {

at::Tensor lshift_tensor(const at::Tensor& self, const at::Tensor& other);
at::Tensor lshift_scalar(const at::Tensor& self, const at::Scalar& other);
at::Tensor& ilshift_tensor(at::Tensor& self, const at::Tensor& other);
at::Tensor& ilshift_scalar(at::Tensor& self, const at::Scalar& other);
at::Tensor rshift_tensor(const at::Tensor& self, const at::Tensor& other);
at::Tensor rshift_scalar(const at::Tensor& self, const at::Scalar& other);
at::Tensor& irshift_tensor(at::Tensor& self, const at::Tensor& other);
at::Tensor& irshift_scalar(at::Tensor& self, const at::Scalar& other);

}  // namespace torch_tpu::ops

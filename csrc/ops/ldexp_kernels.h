// ldexp (ops/ldexp_ops.cc) and its inverse frexp (ops/frexp.cc).
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_tpu::ops {

at::Tensor ldexp(const at::Tensor& self, const at::Tensor& other);
at::Tensor& ldexp_(at::Tensor& self, const at::Tensor& other);
at::Tensor& ldexp_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);

std::tuple<at::Tensor, at::Tensor> frexp(const at::Tensor& self);
std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& self, at::Tensor& mantissa,
                                               at::Tensor& exponent);

}  // namespace torch_tpu::ops

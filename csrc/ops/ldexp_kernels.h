// ldexp (ops/ldexp_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

at::Tensor ldexp(const at::Tensor& self, const at::Tensor& other);
at::Tensor& ldexp_(at::Tensor& self, const at::Tensor& other);
at::Tensor& ldexp_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);

}  // namespace torch_tpu::ops

// histc (ops/histogram_ops.cc): mixture-of-experts routing counts tokens
// per expert with it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace torch_tpu::ops {

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                 const at::Scalar& max);
at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                      const at::Scalar& max, at::Tensor& out);

}  // namespace torch_tpu::ops

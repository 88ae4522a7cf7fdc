// index_copy, index_fill and masked_scatter (ops/index_write_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace torch_tpu::ops {

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out);
at::Tensor& index_fill_scalar_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Scalar& value);
at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value);
at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source);

}  // namespace torch_tpu::ops

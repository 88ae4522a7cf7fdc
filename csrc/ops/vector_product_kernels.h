// Products written with other tpu kernels (ops/vector_products.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace torch_tpu::ops {

at::Tensor vdot(const at::Tensor& self, const at::Tensor& other);
at::Tensor& vdot_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);
at::Tensor linalg_cross(const at::Tensor& self, const at::Tensor& other, int64_t dim);
at::Tensor& linalg_cross_out(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                             at::Tensor& out);
at::Tensor addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                  const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                    const at::Scalar& beta, const at::Scalar& alpha);

}  // namespace torch_tpu::ops

// Sparse COO tensors on tpu (ops/sparse_coo.cc): the kernels whose CPU
// versions walk the indices on the host.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor sparse_coalesce(const at::Tensor& self);
at::Tensor sparse_to_dense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                           std::optional<bool> masked_grad);
at::Tensor& sparse_add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                           at::Tensor& out);
at::Tensor sparse_add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor& sparse_add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor& sparse_mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);
at::Tensor sparse_mul(const at::Tensor& self, const at::Tensor& other);
at::Tensor& sparse_mul_(at::Tensor& self, const at::Tensor& other);
// beta * self + alpha * product, as addmm adds them (beta == 0 ignores self,
// NaN included); shared with the compressed layouts' addmm.
at::Tensor addmm_combine(const at::Tensor& self, const at::Tensor& product, const at::Scalar& beta,
                         const at::Scalar& alpha);
at::Tensor& sparse_addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
at::Tensor sparse_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                        const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& sparse_addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor sparse_mm(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& sparse_mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
at::Tensor sparse_mask(const at::Tensor& self, const at::Tensor& mask);
at::Tensor sparse_mask_projection(const at::Tensor& self, const at::Tensor& mask,
                                  bool accumulate_matches);
at::Tensor sparse_index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index);
at::Tensor sparse_sparse_matmul(const at::Tensor& self, const at::Tensor& other);
at::Tensor& sparse_bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
at::Tensor sparse_bmm(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor sparse_sum_backward(const at::Tensor& grad, const at::Tensor& self,
                               at::IntArrayRef dims);
at::Tensor sparse_softmax(const at::Tensor& self, int64_t dim, bool half_to_float);
at::Tensor sparse_log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float);
at::Tensor sparse_softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                   const at::Tensor& self);
at::Tensor sparse_log_softmax_backward(const at::Tensor& grad, const at::Tensor& output,
                                       int64_t dim, const at::Tensor& self);

}  // namespace torch_tpu::ops

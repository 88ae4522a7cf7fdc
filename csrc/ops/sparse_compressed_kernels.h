// Sparse CSR tensors on tpu (ops/sparse_compressed.cc): the conversions
// between compressed and coordinate indices, and the CSR kernels built on
// them.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor convert_indices_from_coo_to_csr(const at::Tensor& rows, int64_t size, bool out_int32);
at::Tensor& convert_indices_from_coo_to_csr_out(const at::Tensor& rows, int64_t size,
                                                bool out_int32, at::Tensor& out);
at::Tensor convert_indices_from_csr_to_coo(const at::Tensor& crow_indices,
                                           const at::Tensor& col_indices, bool out_int32,
                                           bool transpose);
at::Tensor& convert_indices_from_csr_to_coo_out(const at::Tensor& crow_indices,
                                                const at::Tensor& col_indices, bool out_int32,
                                                bool transpose, at::Tensor& out);

}  // namespace torch_tpu::ops

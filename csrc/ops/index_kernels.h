// Indexing kernels (ops/index_ops.cc): gather/scatter families, advanced
// indexing, take/put, embedding backward; and nonzero
// (ops/data_dependent_ops.cc), which advanced indexing uses for masks.
#pragma once

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>

#include "exec/async_errors.h"

namespace torch_tpu::ops {

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index);
at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out);
// index_select reporting an out-of-range index as `op`'s, with the
// exception class CPU raises for `op` (embedding and embedding_bag read
// through it).
at::Tensor& index_select_as(const char* op, IndexErrorClass error_class, const at::Tensor& self,
                            int64_t dim, const at::Tensor& index, at::Tensor& out);
at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool sparse_grad, at::Tensor& out);
at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out);
at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Scalar& value, at::Tensor& out);
// scatter (of src, or of value when src is null) reporting an out-of-range
// index as `op`'s, with the exception class CPU raises for `op`
// (index_copy and index_fill are scatters).
at::Tensor& scatter_as(const char* op, IndexErrorClass error_class, const at::Tensor& self,
                       int64_t dim, const at::Tensor& index, const at::Tensor* src,
                       const at::Scalar* value, at::Tensor& out);
at::Tensor& scatter_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& src, c10::string_view reduce, at::Tensor& out);
at::Tensor& scatter_value_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                     const at::Scalar& value, c10::string_view reduce,
                                     at::Tensor& out);
at::Tensor& scatter_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out);
at::Tensor& scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce,
                                   bool include_self, at::Tensor& out);
at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const at::Scalar& alpha, at::Tensor& out);
at::Tensor embedding(const at::Tensor& weight, const at::Tensor& indices, int64_t padding_idx,
                     bool scale_grad_by_freq, bool sparse);
at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    int64_t num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq);
at::Tensor& index_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      at::Tensor& out);
at::Tensor index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices);
at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool unsafe);
at::Tensor take(const at::Tensor& self, const at::Tensor& index);
at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out);
at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                 bool accumulate);
at::Tensor nonzero(const at::Tensor& self);
at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out);

}  // namespace torch_tpu::ops

// Index producers and reducers written with other tpu kernels
// (ops/index_composites.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> device, std::optional<bool> pin_memory);
at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> device, std::optional<bool> pin_memory);
at::Tensor nonzero_static(const at::Tensor& self, int64_t size, int64_t fill_value);
at::Tensor& nonzero_static_out(const at::Tensor& self, int64_t size, int64_t fill_value,
                               at::Tensor& out);
at::Tensor index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source, c10::string_view reduce, bool include_self);
at::Tensor& index_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, c10::string_view reduce, bool include_self);
at::Tensor& index_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source, c10::string_view reduce, bool include_self,
                             at::Tensor& out);

at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm,
                              double norm_type);

}  // namespace torch_tpu::ops

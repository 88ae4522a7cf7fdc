// Ops whose output size depends on the data (ops/data_dependent_ops.cc):
// everything is computed on the device and the host reads back only the size
// (one small blocking download). nonzero itself is declared in
// ops/index_kernels.h, where advanced indexing uses it.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask);
at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out);
at::Tensor repeat_interleave_counts(const at::Tensor& repeats, std::optional<int64_t> output_size);
at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights,
                    int64_t minlength);

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool sorted,
                                                       bool return_inverse, bool return_counts);
std::tuple<at::Tensor, at::Tensor> unique(const at::Tensor& self, bool sorted, bool return_inverse);
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self,
                                                                  bool return_inverse,
                                                                  bool return_counts,
                                                                  std::optional<int64_t> dim);
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim(const at::Tensor& self, int64_t dim,
                                                          bool sorted, bool return_inverse,
                                                          bool return_counts);
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim_consecutive(const at::Tensor& self,
                                                                      int64_t dim,
                                                                      bool return_inverse,
                                                                      bool return_counts);

}  // namespace torch_tpu::ops

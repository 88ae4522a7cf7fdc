// median, nanmedian, kthvalue and mode (ops/order_stat_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_tpu::ops {

at::Tensor median(const at::Tensor& self);
at::Tensor nanmedian(const at::Tensor& self);
std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, at::Tensor& values,
                                                    at::Tensor& indices);
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices);
std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k, int64_t dim,
                                                  bool keepdim, at::Tensor& values,
                                                  at::Tensor& indices);
std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                              at::Tensor& values, at::Tensor& indices);

}  // namespace torch_tpu::ops

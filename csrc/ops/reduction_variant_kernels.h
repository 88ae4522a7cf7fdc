// aminmax, nansum, var_mean/std_mean, equal and logcumsumexp
// (ops/reduction_variants.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim,
                                                 bool keepdim, at::Tensor& min, at::Tensor& max);
at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype);
at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim);
std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim);
bool equal(const at::Tensor& self, const at::Tensor& other);
at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim);
at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out);

}  // namespace torch_tpu::ops

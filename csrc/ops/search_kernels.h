// searchsorted and bucketize (ops/search_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/string_view.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor searchsorted(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32,
                        bool right, std::optional<c10::string_view> side,
                        const std::optional<at::Tensor>& sorter);
at::Tensor& searchsorted_out(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32,
                             bool right, std::optional<c10::string_view> side,
                             const std::optional<at::Tensor>& sorter, at::Tensor& out);
at::Tensor searchsorted_scalar(const at::Tensor& boundaries, const at::Scalar& value,
                               bool out_int32, bool right, std::optional<c10::string_view> side,
                               const std::optional<at::Tensor>& sorter);
at::Tensor& searchsorted_scalar_out(const at::Tensor& boundaries, const at::Scalar& value,
                                    bool out_int32, bool right,
                                    std::optional<c10::string_view> side,
                                    const std::optional<at::Tensor>& sorter, at::Tensor& out);
at::Tensor bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                     bool right);
at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                          bool right, at::Tensor& out);
at::Tensor bucketize_scalar(const at::Scalar& value, const at::Tensor& boundaries, bool out_int32,
                            bool right);

}  // namespace torch_tpu::ops

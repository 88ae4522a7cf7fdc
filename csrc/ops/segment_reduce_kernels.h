// torch.segment_reduce on tpu (ops/segment_reduce.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/string_view.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor segment_reduce(const at::Tensor& data, c10::string_view reduce,
                          const std::optional<at::Tensor>& lengths,
                          const std::optional<at::Tensor>& indices,
                          const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                          const std::optional<at::Scalar>& initial);
at::Tensor segment_reduce_backward(const at::Tensor& grad, const at::Tensor& output,
                                   const at::Tensor& data, c10::string_view reduce,
                                   const std::optional<at::Tensor>& lengths,
                                   const std::optional<at::Tensor>& offsets, int64_t axis,
                                   const std::optional<at::Scalar>& initial);

}  // namespace torch_tpu::ops

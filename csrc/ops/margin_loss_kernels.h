// nn.MultiMarginLoss and nn.MultiLabelMarginLoss (ops/margin_losses.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

at::Tensor multi_margin_loss(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                             const at::Scalar& margin, const std::optional<at::Tensor>& weight,
                             int64_t reduction);
at::Tensor multi_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& target, const at::Scalar& p,
                                      const at::Scalar& margin,
                                      const std::optional<at::Tensor>& weight, int64_t reduction);
std::tuple<at::Tensor, at::Tensor> multilabel_margin_loss_forward(const at::Tensor& self,
                                                                  const at::Tensor& target,
                                                                  int64_t reduction);
at::Tensor multilabel_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                           const at::Tensor& target, int64_t reduction,
                                           const at::Tensor& is_target);

}  // namespace torch_tpu::ops

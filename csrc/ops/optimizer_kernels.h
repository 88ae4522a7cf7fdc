// Fused optimizer kernels (ops/optimizer_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                 at::TensorList state_steps, double lr, double beta1, double beta2,
                 double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale,
                 const std::optional<at::Tensor>& found_inf);
void fused_adam_tensor_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                           at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                           at::TensorList state_steps, const at::Tensor& lr, double beta1,
                           double beta2, double weight_decay, double eps, bool amsgrad,
                           bool maximize, const std::optional<at::Tensor>& grad_scale,
                           const std::optional<at::Tensor>& found_inf);
void fused_adamw_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                  at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                  at::TensorList state_steps, double lr, double beta1, double beta2,
                  double weight_decay, double eps, bool amsgrad, bool maximize,
                  const std::optional<at::Tensor>& grad_scale,
                  const std::optional<at::Tensor>& found_inf);
void fused_adamw_tensor_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                            at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                            at::TensorList state_steps, const at::Tensor& lr, double beta1,
                            double beta2, double weight_decay, double eps, bool amsgrad,
                            bool maximize, const std::optional<at::Tensor>& grad_scale,
                            const std::optional<at::Tensor>& found_inf);
void fused_sgd_(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
                double weight_decay, double momentum, double lr, double dampening, bool nesterov,
                bool maximize, bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf);
void fused_sgd_tensor_lr_(at::TensorList params, at::TensorList grads,
                          at::TensorList momentum_buffers, double weight_decay, double momentum,
                          const at::Tensor& lr, double dampening, bool nesterov, bool maximize,
                          bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf);
void fused_adagrad_(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                    at::TensorList state_steps, double lr, double lr_decay, double weight_decay,
                    double eps, bool maximize, const std::optional<at::Tensor>& grad_scale,
                    const std::optional<at::Tensor>& found_inf);
void fused_adagrad_tensor_lr_(at::TensorList params, at::TensorList grads,
                              at::TensorList state_sums, at::TensorList state_steps,
                              const at::Tensor& lr, double lr_decay, double weight_decay,
                              double eps, bool maximize,
                              const std::optional<at::Tensor>& grad_scale,
                              const std::optional<at::Tensor>& found_inf);

}  // namespace torch_tpu::ops

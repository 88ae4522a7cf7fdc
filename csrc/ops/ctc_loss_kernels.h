// CTC loss (ops/ctc_loss.cc): nn.CTCLoss / F.ctc_loss, which speech models
// (wav2vec2, HuBERT, WavLM with labels) train with.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <tuple>

namespace torch_tpu::ops {

// (neg_log_likelihood [N], log_alpha [N, T, 2 * max_target_length + 1]).
std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            c10::IntArrayRef input_lengths,
                                            c10::IntArrayRef target_lengths, int64_t blank,
                                            bool zero_infinity);
std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs,
                                                   const at::Tensor& targets,
                                                   const at::Tensor& input_lengths,
                                                   const at::Tensor& target_lengths, int64_t blank,
                                                   bool zero_infinity);
// The gradient with respect to log_probs.
at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs,
                             const at::Tensor& targets, c10::IntArrayRef input_lengths,
                             c10::IntArrayRef target_lengths, const at::Tensor& neg_log_likelihood,
                             const at::Tensor& log_alpha, int64_t blank, bool zero_infinity);
at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad, const at::Tensor& log_probs,
                                    const at::Tensor& targets, const at::Tensor& input_lengths,
                                    const at::Tensor& target_lengths,
                                    const at::Tensor& neg_log_likelihood,
                                    const at::Tensor& log_alpha, int64_t blank, bool zero_infinity);

}  // namespace torch_tpu::ops

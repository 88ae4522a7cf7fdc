// Weight normalization (ops/weight_norm.cc): nn.utils.weight_norm's fused
// kernel pair, used by wav2vec2/HuBERT/WavLM's positional convolution.
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_tpu::ops {

// (w, norms): w = v * g / ||v||, the norm over every dim but `dim`.
std::tuple<at::Tensor, at::Tensor> weight_norm_interface(const at::Tensor& v, const at::Tensor& g,
                                                         int64_t dim);
// (grad_v, grad_g).
std::tuple<at::Tensor, at::Tensor> weight_norm_interface_backward(const at::Tensor& grad_w,
                                                                  const at::Tensor& saved_v,
                                                                  const at::Tensor& saved_g,
                                                                  const at::Tensor& saved_norms,
                                                                  int64_t dim);

}  // namespace torch_tpu::ops

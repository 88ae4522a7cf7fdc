// nn.EmbeddingBag (ops/embedding_bag.cc): the forward that
// F.embedding_bag reaches (with or without autograd) and the two backward
// kernels autograd's formula for _embedding_bag calls.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

// (output, offset2bag, bag_size, max_indices), as CPU's kernel returns them.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_forward(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
    bool scale_grad_by_freq, int64_t mode, bool sparse,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx);

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                        const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                        const at::Tensor& maximum_indices, c10::SymInt num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights,
                                        int64_t padding_idx);

// Autograd's backward for the weight: the dense kernel (sparse is refused).
at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices,
                                  const at::Tensor& offsets, const at::Tensor& offset2bag,
                                  const at::Tensor& bag_size, const at::Tensor& maximum_indices,
                                  c10::SymInt num_weights, bool scale_grad_by_freq, int64_t mode,
                                  bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                                  int64_t padding_idx);

at::Tensor embedding_bag_per_sample_weights_backward(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const at::Tensor& offsets, const at::Tensor& offset2bag, int64_t mode, int64_t padding_idx);

}  // namespace torch_tpu::ops

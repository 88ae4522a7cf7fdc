// Pairwise distances (ops/distance_ops.cc): torch.cdist's kernels, used by
// DETR's matcher among others.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

// [..., P, R]: the p-norm distance between each row of x1 [..., P, M] and
// each row of x2 [..., R, M].
at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> compute_mode);
// The gradient for x1 (autograd calls it with the operands swapped for x2).
at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                          double p, const at::Tensor& cdist);

// F.pdist: the condensed distances of self's rows, pairs i < j in row order.
at::Tensor pdist_forward(const at::Tensor& self, double p);
at::Tensor pdist_backward(const at::Tensor& grad, const at::Tensor& self, double p,
                          const at::Tensor& pdist);

}  // namespace torch_tpu::ops

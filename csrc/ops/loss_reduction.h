// A loss's reduction (none, mean, sum) and its derivative, shared by the
// losses written with other tpu kernels.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>

namespace torch_tpu::ops {

inline at::Tensor reduce_loss(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

// d(reduce(loss))/d(loss) times grad_output, for a loss with `count` terms.
inline at::Tensor reduce_grad(const at::Tensor& grad_output, int64_t count, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return grad_output / static_cast<double>(count);
  return grad_output;
}

}  // namespace torch_tpu::ops

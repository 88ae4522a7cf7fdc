// Windowed pooling (ops/window_pool.cc); the max pools' backward is shared
// with adaptive max pooling (ops/pool_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

// The backward of a max pool over self's `spatial` trailing dims: each
// output gradient added to the element of its plane that `indices` (flat
// over those dims, h * W + w in 2d) names; grad_input has self's sizes.
at::Tensor& scatter_to_max_indices(const char* op, const at::Tensor& grad_output,
                                   const at::Tensor& indices, const at::Tensor& self, int spatial,
                                   at::Tensor& grad_input);

}  // namespace torch_tpu::ops

// The GradScaler's kernels (ops/amp_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

void amp_foreach_non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                               const at::Tensor& inv_scale);
at::Tensor& amp_update_scale_(at::Tensor& current_scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval);

}  // namespace torch_tpu::ops

// TORCH_TPU_DEBUG_NAN=1: after every op, check its floating-point outputs on
// the host and raise at the first op that produced a NaN or an Inf. A
// debugging aid: it syncs after each op.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace torch_tpu {

bool nan_check_enabled();
// Raises RuntimeError naming `op` when an output holds NaN or Inf.
void check_outputs_finite(const char* op, const std::vector<at::Tensor>& outputs);

}  // namespace torch_tpu

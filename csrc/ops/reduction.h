// Reductions over dimensions (sum, mean, prod, amax, amin, all, any, argmax,
// argmin, max.dim, min.dim, var, std, logsumexp): one boxed kernel reads
// `dim`, `keepdim`, `dtype`, `correction` and the out= tensors by name from
// any overload's schema and applies PyTorch's dtype and shape rules.
#pragma once

#include <torch/library.h>

namespace torch_tpu::ops {

void register_reductions(torch::Library& m);

}  // namespace torch_tpu::ops

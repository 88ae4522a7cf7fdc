// The torch._foreach_* overloads, each run as one program (ops/foreach_ops.cc).
#pragma once

#include <torch/library.h>

namespace torch_tpu::ops {

void register_foreach_ops(torch::Library& m);

}  // namespace torch_tpu::ops

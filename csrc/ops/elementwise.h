// Elementwise operators: one boxed kernel serves every overload (functional,
// in-place `op_`, `out=`; Tensor or Scalar operands) of every op in the
// table, applying PyTorch's type promotion and broadcasting, then the op's
// StableHLO lowering.
#pragma once

#include <torch/library.h>

#include <string>
#include <vector>

namespace torch_tpu::ops {

void register_elementwise(torch::Library& m);
// The overload names registered (tests check each is a real ATen overload).
std::vector<std::string> elementwise_overloads();

}  // namespace torch_tpu::ops

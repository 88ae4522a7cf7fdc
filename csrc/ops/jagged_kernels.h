// The dense <-> jagged conversions under torch.nested's jagged layout
// (ops/jagged.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor jagged_to_padded_dense(const at::Tensor& values, at::TensorList offsets,
                                  c10::SymIntArrayRef max_lengths, double padding_value);
at::Tensor padded_dense_to_jagged(const at::Tensor& dense, at::TensorList offsets,
                                  std::optional<c10::SymInt> total_length);

}  // namespace torch_tpu::ops

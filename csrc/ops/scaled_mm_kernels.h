// torch._scaled_mm (ops/scaled_mm_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor scaled_mm(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                     const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& scale_result,
                     std::optional<at::ScalarType> out_dtype, bool use_fast_accum);
at::Tensor& scaled_mm_out(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                          const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale_result,
                          std::optional<at::ScalarType> out_dtype, bool use_fast_accum,
                          at::Tensor& out);

}  // namespace torch_tpu::ops

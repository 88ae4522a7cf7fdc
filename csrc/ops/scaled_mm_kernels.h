// torch._scaled_mm and _scaled_mm_v2 (ops/scaled_mm_ops.cc).
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

// The form float8 products take: the plugin's own (nullopt, the default:
// the f8 dot except on the CPU plugin) or forced, so that the CPU plugin's
// tests also run the form GPU and TPU plugins take.
void set_scaled_mm_native_f8(std::optional<bool> forced);

at::Tensor scaled_mm_v2(const at::Tensor& self, const at::Tensor& mat2, at::TensorList scale_a,
                        at::IntArrayRef recipe_a, at::IntArrayRef swizzle_a, at::TensorList scale_b,
                        at::IntArrayRef recipe_b, at::IntArrayRef swizzle_b,
                        const std::optional<at::Tensor>& bias,
                        std::optional<at::ScalarType> out_dtype, at::IntArrayRef contraction_dim,
                        bool use_fast_accum);
at::Tensor& scaled_mm_v2_out(const at::Tensor& self, const at::Tensor& mat2, at::TensorList scale_a,
                             at::IntArrayRef recipe_a, at::IntArrayRef swizzle_a,
                             at::TensorList scale_b, at::IntArrayRef recipe_b,
                             at::IntArrayRef swizzle_b, const std::optional<at::Tensor>& bias,
                             std::optional<at::ScalarType> out_dtype,
                             at::IntArrayRef contraction_dim, bool use_fast_accum, at::Tensor& out);

}  // namespace torch_tpu::ops

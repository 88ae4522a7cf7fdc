// Sliding-block extraction and its adjoint (ops/im2col.cc): aten::im2col
// (nn.functional.unfold / nn.Unfold) and aten::col2im (nn.functional.fold /
// nn.Fold). Each is the other's backward, so autograd needs both.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

// [N, C, H, W] (or [C, H, W]) -> [N, C*kh*kw, L] (or [C*kh*kw, L]).
at::Tensor im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                  at::IntArrayRef padding, at::IntArrayRef stride);
at::Tensor& im2col_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                       at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride,
                       at::Tensor& out);
// [N, C*kh*kw, L] (or [C*kh*kw, L]) -> [N, C, H, W] (or [C, H, W]) with
// (H, W) = output_size; overlapping blocks are summed.
at::Tensor col2im(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel_size,
                  at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride);
at::Tensor& col2im_out(const at::Tensor& self, at::IntArrayRef output_size,
                       at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                       at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out);

}  // namespace torch_tpu::ops

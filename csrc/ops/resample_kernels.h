// Separable linear resampling (ops/resample.cc): F.interpolate's
// nearest, nearest-exact, linear, bilinear, bicubic and trilinear modes and
// adaptive average pooling, forward and backward.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

using Scale = std::optional<double>;

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size);
at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self);
at::Tensor adaptive_avg_pool3d(const at::Tensor& self, at::IntArrayRef output_size);
at::Tensor adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self);
at::Tensor& upsample_nearest1d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale s,
                                   at::Tensor& out);
at::Tensor& upsample_nearest1d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale s, at::Tensor& grad_input);
at::Tensor& upsample_nearest2d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale h,
                                   Scale w, at::Tensor& out);
at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale h, Scale w, at::Tensor& grad_input);
at::Tensor& upsample_nearest3d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale d,
                                   Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_nearest3d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale d, Scale h, Scale w, at::Tensor& grad_input);
at::Tensor& upsample_nearest_exact1d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale s, at::Tensor& out);
at::Tensor& upsample_nearest_exact1d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale s,
                                                  at::Tensor& grad_input);
at::Tensor& upsample_nearest_exact2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_nearest_exact2d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale h, Scale w,
                                                  at::Tensor& grad_input);
at::Tensor& upsample_nearest_exact3d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale d, Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_nearest_exact3d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale d, Scale h,
                                                  Scale w, at::Tensor& grad_input);
at::Tensor& upsample_linear1d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                  bool align_corners, Scale s, at::Tensor& out);
at::Tensor& upsample_linear1d_backward_out(const at::Tensor& grad_output,
                                           at::IntArrayRef output_size, at::IntArrayRef input_size,
                                           bool align_corners, Scale s, at::Tensor& grad_input);
at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                    bool align_corners, Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad_output,
                                             at::IntArrayRef output_size,
                                             at::IntArrayRef input_size, bool align_corners,
                                             Scale h, Scale w, at::Tensor& grad_input);
at::Tensor& upsample_bicubic2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                   bool align_corners, Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_bicubic2d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            bool align_corners, Scale h, Scale w,
                                            at::Tensor& grad_input);
at::Tensor& upsample_trilinear3d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                     bool align_corners, Scale d, Scale h, Scale w,
                                     at::Tensor& out);
at::Tensor& upsample_trilinear3d_backward_out(const at::Tensor& grad_output,
                                              at::IntArrayRef output_size,
                                              at::IntArrayRef input_size, bool align_corners,
                                              Scale d, Scale h, Scale w, at::Tensor& grad_input);

at::Tensor& upsample_bilinear2d_aa_out(const at::Tensor& self, at::IntArrayRef output_size,
                                       bool align_corners, Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_bilinear2d_aa_backward_out(const at::Tensor& grad_output,
                                                at::IntArrayRef output_size,
                                                at::IntArrayRef input_size, bool align_corners,
                                                Scale h, Scale w, at::Tensor& grad_input);
at::Tensor& upsample_bicubic2d_aa_out(const at::Tensor& self, at::IntArrayRef output_size,
                                      bool align_corners, Scale h, Scale w, at::Tensor& out);
at::Tensor& upsample_bicubic2d_aa_backward_out(const at::Tensor& grad_output,
                                               at::IntArrayRef output_size,
                                               at::IntArrayRef input_size, bool align_corners,
                                               Scale h, Scale w, at::Tensor& grad_input);
}  // namespace torch_tpu::ops

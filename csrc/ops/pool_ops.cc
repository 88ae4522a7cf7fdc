// Adaptive pooling and resampling over the trailing dims of [N, C, H, W]
// (or [C, H, W]): adaptive_avg_pool2d, adaptive_max_pool2d/3d and
// nearest/bilinear upsampling, forward and backward (windowed pools are in
// ops/window_pool.cc).
//
// Adaptive average pooling and upsampling are separable linear maps:
// out = Mh · x · Mwᵀ with small constant matrices built on the host with
// ATen's own index formulas, and the backward is the transpose, so forward
// and backward share one lowering.
#include <ATen/OpMathType.h>
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Resize.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/empty.h>

#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"
#include "ops/window_pool.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

std::vector<int64_t> out_sizes(const at::Tensor& self, int64_t oh, int64_t ow) {
  std::vector<int64_t> s = self.sizes().vec();
  s[s.size() - 2] = oh;
  s[s.size() - 1] = ow;
  return s;
}

// A resampling matrix [out, in] (row o: the weights output o gives inputs).
using Matrix = std::vector<float>;

Matrix adaptive_matrix(int64_t in, int64_t out) {
  Matrix m(out * in, 0.f);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t s = at::native::start_index(o, out, in), e = at::native::end_index(o, out, in);
    for (int64_t i = s; i < e; ++i) m[o * in + i] = 1.f / static_cast<float>(e - s);
  }
  return m;
}

Matrix nearest_matrix(int64_t in, int64_t out, std::optional<double> scale) {
  Matrix m(out * in, 0.f);
  for (int64_t o = 0; o < out; ++o) m[o * in + at::native::nearest_idx(o, in, out, scale)] = 1.f;
  return m;
}

Matrix linear_matrix(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Matrix m(out * in, 0.f);
  const float ratio = at::native::area_pixel_compute_scale<float>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i0, i1;
    float l0, l1;
    at::native::compute_source_index_and_lambda<float, float>(i0, i1, l0, l1, ratio, o, in, out,
                                                              align_corners);
    m[o * in + i0] += l0;
    m[o * in + i1] += l1;
  }
  return m;
}

Value matrix_constant(Builder& b, const Matrix& m, int64_t rows, int64_t cols) {
  std::vector<unsigned char> bytes(m.size() * sizeof(float));
  std::memcpy(bytes.data(), m.data(), bytes.size());
  return b.constant_tensor({ElementType::kF32, {rows, cols}}, bytes);
}

// y[p, o, q] = sum_i M[o, i] x[p, i, q] on a [planes, H, W] value; `along`
// picks H (1) or W (2). With `transpose`, applies Mᵀ (the backward).
Value apply_along(Builder& b, Value x, Value m, int along, bool transpose) {
  // dot_general puts x's free dims first, then m's free dim.
  Value y = b.dot_general(x, m, {}, {}, {along}, {transpose ? 0 : 1}, x.type.element);
  return along == 1 ? b.transpose(y, {0, 2, 1}) : y;
}

// The whole separable map, forward (x: [planes, H, W] -> [planes, OH, OW])
// or transposed (g: [planes, OH, OW] -> [planes, H, W]).
at::Tensor& separable_map(const char* op, const std::string& key, const at::Tensor& src,
                          at::Tensor& dst, const Matrix& mh, const Matrix& mw, int64_t H, int64_t W,
                          int64_t OH, int64_t OW, bool transpose) {
  if (dst.numel() == 0) return dst;
  const ElementType t = element_type_for(src.scalar_type(), op);
  TORCH_CHECK(is_float(t), op, ": expected a floating point input, got ", src.scalar_type());
  const int64_t planes = dst.numel() / (transpose ? H * W : OH * OW);
  TensorProgram program(op, key);
  program.input(src);
  program.output(dst);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = transpose ? b.reshape(in[0], {planes, OH, OW}) : b.reshape(in[0], {planes, H, W});
    x = b.convert(x, ElementType::kF32);
    Value y = apply_along(b, x, matrix_constant(b, mh, OH, H), 1, transpose);
    y = apply_along(b, y, matrix_constant(b, mw, OW, W), 2, transpose);
    return std::vector<Value>{b.reshape(b.convert(y, t), dst.sizes().vec())};
  });
  return dst;
}

std::string scale_key(std::optional<double> s) { return s ? std::to_string(*s) : "-"; }

}  // namespace

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op, ": Expected 3D or 4D tensor, but got ",
              self.sizes());
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must be 2");
  const int64_t H = self.size(-2), W = self.size(-1), OH = output_size[0], OW = output_size[1];
  at::Tensor out = device_empty(out_sizes(self, OH, OW), self.options());
  return separable_map(op, program_key("adaptive_avg", OH, OW), self, out, adaptive_matrix(H, OH),
                       adaptive_matrix(W, OW), H, W, OH, OW, false);
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  const int64_t H = self.size(-2), W = self.size(-1);
  const int64_t OH = grad_output.size(-2), OW = grad_output.size(-1);
  at::Tensor grad_input = device_empty(self.sizes(), self.options());
  return separable_map(op, program_key("adaptive_avg_bwd", H, W), grad_output, grad_input,
                       adaptive_matrix(H, OH), adaptive_matrix(W, OW), H, W, OH, OW, true);
}

namespace {

// Whether input position i lies in output o's adaptive window, for every
// (o, i): [out, in] (ATen's start_index/end_index).
Value window_mask(Builder& b, int64_t in, int64_t out) {
  std::vector<unsigned char> bytes(out * in, 0);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t s = at::native::start_index(o, out, in), e = at::native::end_index(o, out, in);
    for (int64_t i = s; i < e; ++i) bytes[o * in + i] = 1;
  }
  return b.constant_tensor({ElementType::kPred, {out, in}}, bytes);
}

// The CPU kernel's pick over one window, scanning in order: a value greater
// than the best so far, or any NaN, replaces it (so the first of equal
// maxima wins, and the last NaN). `x` [..., n] holds the candidates along
// its last dim, `in_window` where they count, `position` each one's index
// to report (increasing along the dim). Returns the value and the index.
std::pair<Value, Value> window_pick(Builder& b, Value x, Value in_window, Value position) {
  const ElementType t = x.type.element;
  const int last = static_cast<int>(x.type.dims.size()) - 1;
  auto fill = [&](Value v) { return b.splat(v, x.type.dims); };
  Value is_nan = b.binary("and", in_window, b.compare(Compare::kNE, x, x));
  Value any_nan = b.reduce(is_nan, b.constant_int(ElementType::kPred, 0), {last}, "or");
  Value counted = b.select(b.binary("and", in_window, b.unary("not", is_nan)), x,
                           fill(b.constant(t, -std::numeric_limits<double>::infinity())));
  Value best =
      b.reduce(counted, b.constant(t, -std::numeric_limits<double>::infinity()), {last}, "maximum");
  std::vector<int64_t> kept(x.type.dims.size() - 1);
  for (size_t d = 0; d < kept.size(); ++d) kept[d] = static_cast<int64_t>(d);
  Value at_best = b.binary("and", in_window,
                           b.compare(Compare::kEQ, x, b.broadcast_in_dim(best, x.type.dims, kept)));
  const ElementType it = position.type.element;
  Value first_best = b.reduce(b.select(at_best, position, fill(b.constant_int(it, INT64_MAX))),
                              b.constant_int(it, INT64_MAX), {last}, "minimum");
  Value last_nan = b.reduce(b.select(is_nan, position, fill(b.constant_int(it, -1))),
                            b.constant_int(it, -1), {last}, "maximum");
  Value value = b.select(
      any_nan, b.splat(b.constant(t, std::numeric_limits<double>::quiet_NaN()), best.type.dims),
      best);
  return {value, b.select(any_nan, last_nan, first_best)};
}

// Adaptive max pooling over the last output_size.size() dims of `self`
// (2 or 3), with the CPU's checks and its pick in every window.
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool(const char* op, int k,
                                                       const at::Tensor& self,
                                                       at::IntArrayRef output_size, at::Tensor& out,
                                                       at::Tensor& indices) {
  const int64_t ndim = self.dim();
  TORCH_CHECK(ndim == k + 1 || ndim == k + 2, op, "(): Expected ", k + 1, "D or ", k + 2,
              "D tensor, but got: ", self.sizes());
  for (int64_t i = 1; i < ndim; ++i) {
    TORCH_CHECK(self.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has "
                "sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  }
  TORCH_CHECK(static_cast<int>(output_size.size()) == k, op,
              "(): internal error: output_size.size() must be ", k);
  TORCH_CHECK_NOT_IMPLEMENTED(
      at::isFloatingType(self.scalar_type()) && !c10::isFloat8Type(self.scalar_type()), "\"", op,
      "\" not implemented for '", c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected indices of dtype Long, got ",
              indices.scalar_type());
  std::vector<int64_t> in_sizes(k), sizes = self.sizes().vec();
  for (int j = 0; j < k; ++j) {
    in_sizes[j] = self.size(ndim - k + j);
    sizes[ndim - k + j] = output_size[j];
  }
  at::native::resize_output(out, sizes);
  at::native::resize_output(indices, sizes);
  if (out.numel() == 0) return {out, indices};
  int64_t plane_size = 1;
  for (int64_t n : in_sizes) plane_size *= n;
  const int64_t planes = self.numel() / plane_size;
  TensorProgram program(op, program_key("adaptive_max", output_size.vec()));
  program.input(self);
  program.output(out);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Separable, innermost dim first: a max over a box is a max over its
    // outer dim of the max over the rest, and the CPU's row-major scan picks
    // the same element (the first of equal maxima, the last NaN). Each stage
    // turns one input dim into its output dim, carrying the flat index
    // (h * W + w in 2d) of the element each value came from.
    std::vector<int64_t> dims{planes};
    dims.insert(dims.end(), in_sizes.begin(), in_sizes.end());
    Value value = b.reshape(in[0], dims);
    std::optional<Value> flat;
    int64_t stride = 1;  // of dim j in the flat index
    for (int j = k - 1; j >= 0; --j) {
      const int d = 1 + j;
      // [planes, ..., O_j, ..., S_j]: dim d becomes the output dim, the
      // input dim moves last, where window_pick reduces it.
      std::vector<int64_t> wide = value.type.dims;
      wide[d] = output_size[j];
      wide.push_back(in_sizes[j]);
      std::vector<int64_t> from(value.type.dims.size());
      for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<int64_t>(i);
      from[d] = static_cast<int64_t>(wide.size()) - 1;
      const int64_t last = static_cast<int64_t>(wide.size()) - 1;
      Value window =
          b.broadcast_in_dim(window_mask(b, in_sizes[j], output_size[j]), wide, {d, last});
      Value position = b.binary("multiply", b.iota({ElementType::kS64, wide}, last),
                                b.splat(b.constant_int(ElementType::kS64, stride), wide));
      if (flat) position = b.binary("add", position, b.broadcast_in_dim(*flat, wide, from));
      auto [best, index] = window_pick(b, b.broadcast_in_dim(value, wide, from), window, position);
      value = best;
      flat = index;
      stride *= in_sizes[j];
    }
    return std::vector<Value>{b.reshape(value, sizes), b.reshape(*flat, sizes)};
  });
  return {out, indices};
}

at::Tensor& adaptive_max_pool_backward(const char* op, const char* check_name, int k,
                                       const at::Tensor& grad_output, const at::Tensor& self,
                                       const at::Tensor& indices, at::Tensor& grad_input) {
  const int64_t ndim = grad_output.dim();
  TORCH_CHECK(ndim == k + 1 || ndim == k + 2, check_name, "(): Expected ", k + 1, "D or ", k + 2,
              "D grad_output, but got: ", grad_output.sizes());
  at::native::adaptive_pool_empty_output_check(grad_output, op);
  TORCH_CHECK(self.dtype() == grad_output.dtype(), "expected dtype ", self.dtype(),
              " for `grad_output` but got dtype ", grad_output.dtype());
  at::native::resize_output(grad_input, self.sizes());
  return scatter_to_max_indices(op, grad_output, indices, self, k, grad_input);
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool2d_out(const at::Tensor& self,
                                                             at::IntArrayRef output_size,
                                                             at::Tensor& out, at::Tensor& indices) {
  return adaptive_max_pool("adaptive_max_pool2d", 2, self, output_size, out, indices);
}

at::Tensor& adaptive_max_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& indices, at::Tensor& grad_input) {
  return adaptive_max_pool_backward("adaptive_max_pool2d_backward",
                                    "adaptive_max_pooling2d_backward", 2, grad_output, self,
                                    indices, grad_input);
}

std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool3d_out(const at::Tensor& self,
                                                             at::IntArrayRef output_size,
                                                             at::Tensor& out, at::Tensor& indices) {
  return adaptive_max_pool("adaptive_max_pool3d", 3, self, output_size, out, indices);
}

at::Tensor& adaptive_max_pool3d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& indices, at::Tensor& grad_input) {
  return adaptive_max_pool_backward("adaptive_max_pool3d_backward",
                                    "adaptive_max_pooling3d_backward", 3, grad_output, self,
                                    indices, grad_input);
}

at::Tensor& upsample_nearest2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                   std::optional<double> scales_h, std::optional<double> scales_w,
                                   at::Tensor& out) {
  const int64_t H = self.size(-2), W = self.size(-1), OH = output_size[0], OW = output_size[1];
  at::native::resize_output(out, out_sizes(self, OH, OW));
  return separable_map(
      "upsample_nearest2d", program_key("nearest", scale_key(scales_h), scale_key(scales_w)), self,
      out, nearest_matrix(H, OH, scales_h), nearest_matrix(W, OW, scales_w), H, W, OH, OW, false);
}

at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            std::optional<double> scales_h,
                                            std::optional<double> scales_w,
                                            at::Tensor& grad_input) {
  const int64_t H = input_size[2], W = input_size[3], OH = output_size[0], OW = output_size[1];
  at::native::resize_output(grad_input, input_size);
  return separable_map("upsample_nearest2d_backward",
                       program_key("nearest_bwd", scale_key(scales_h), scale_key(scales_w)),
                       grad_output, grad_input, nearest_matrix(H, OH, scales_h),
                       nearest_matrix(W, OW, scales_w), H, W, OH, OW, true);
}

at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                    bool align_corners, std::optional<double> scales_h,
                                    std::optional<double> scales_w, at::Tensor& out) {
  const int64_t H = self.size(-2), W = self.size(-1), OH = output_size[0], OW = output_size[1];
  at::native::resize_output(out, out_sizes(self, OH, OW));
  return separable_map(
      "upsample_bilinear2d",
      program_key("bilinear", align_corners, scale_key(scales_h), scale_key(scales_w)), self, out,
      linear_matrix(H, OH, align_corners, scales_h), linear_matrix(W, OW, align_corners, scales_w),
      H, W, OH, OW, false);
}

at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad_output,
                                             at::IntArrayRef output_size,
                                             at::IntArrayRef input_size, bool align_corners,
                                             std::optional<double> scales_h,
                                             std::optional<double> scales_w,
                                             at::Tensor& grad_input) {
  const int64_t H = input_size[2], W = input_size[3], OH = output_size[0], OW = output_size[1];
  at::native::resize_output(grad_input, input_size);
  return separable_map(
      "upsample_bilinear2d_backward",
      program_key("bilinear_bwd", align_corners, scale_key(scales_h), scale_key(scales_w)),
      grad_output, grad_input, linear_matrix(H, OH, align_corners, scales_h),
      linear_matrix(W, OW, align_corners, scales_w), H, W, OH, OW, true);
}

}  // namespace torch_tpu::ops

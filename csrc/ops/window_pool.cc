// Windowed pooling over the 2 or 3 trailing dims of [N, C, *spatial] (or
// [C, *spatial]): max_pool2d/3d with indices and avg_pool2d/3d, forward and
// backward.
//
// The lowering visits the window taps one strided slice at a time (a few
// taps for the kernels models use), so padding, dilation, ceil_mode and the
// CPU's tie and NaN rules stay explicit; one implementation serves both
// ranks (the checks and their messages are each rank's own, as on CPU).
#include "ops/window_pool.h"

#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

// One pooling's geometry, per spatial dim (outermost first).
struct Window {
  std::vector<int64_t> kernel, stride, pad, dilation, in, out;
  int64_t planes = 0;  // N * C
  size_t rank() const { return kernel.size(); }
};

// A parameter given as one value for every dim or one per dim (`empty_fill`
// when it may be omitted and is).
int64_t pick(at::IntArrayRef v, size_t i, int64_t empty_fill) {
  return v.empty() ? empty_fill : v[v.size() == 1 ? 0 : i];
}

void fill_geometry(Window& w, const at::Tensor& self, at::IntArrayRef kernel,
                   at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                   bool ceil_mode) {
  const size_t k = w.kernel.size();
  for (size_t j = 0; j < k; ++j) {
    w.kernel[j] = pick(kernel, j, 0);
    w.stride[j] = pick(stride, j, w.kernel[j]);
    w.pad[j] = pick(padding, j, 0);
    w.dilation[j] = pick(dilation, j, 1);
    w.in[j] = self.size(self.dim() - static_cast<int64_t>(k) + static_cast<int64_t>(j));
    if (w.stride[j] > 0 && w.dilation[j] > 0) {
      w.out[j] = at::native::pooling_output_shape<int64_t>(w.in[j], w.kernel[j], w.pad[j],
                                                           w.stride[j], w.dilation[j], ceil_mode);
    }
  }
  int64_t plane = 1;
  for (int64_t n : w.in) plane *= n;
  w.planes = self.numel() / std::max<int64_t>(1, plane);
}

Window window_2d(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                 const char* op) {
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op,
              ": Expected 3D or 4D (batch mode) tensor for input, got ", self.sizes());
  TORCH_CHECK(kernel.size() == 1 || kernel.size() == 2, op,
              ": kernel_size must either be a single int, or a tuple of two ints");
  Window w;
  for (auto* v : {&w.kernel, &w.stride, &w.pad, &w.dilation, &w.in, &w.out}) v->resize(2);
  fill_geometry(w, self, kernel, stride, padding, dilation, ceil_mode);
  TORCH_CHECK(w.kernel[0] > 0 && w.kernel[1] > 0, op, ": kernel size should be greater than zero");
  TORCH_CHECK(w.stride[0] > 0 && w.stride[1] > 0, op, ": stride should be greater than zero");
  TORCH_CHECK(w.out[0] > 0 && w.out[1] > 0, op, ": Given input size ", self.sizes(),
              ", calculated output size is too small");
  return w;
}

// The CPU's argument checks of max_pool3d (`is_max`) or avg_pool3d, then
// ATen's pool3d_shape_check.
Window window_3d(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, bool is_max,
                 const char* check_name) {
  const char* op = is_max ? "max_pool3d" : "avg_pool3d";
  const char* either = is_max ? " either" : "";
  TORCH_CHECK(kernel.size() == 1 || kernel.size() == 3, op, ": kernel_size must", either,
              " be a single int, or a tuple of three ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3, op, ": stride must",
              either, " be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3, op, ": padding must", either,
              " be a single int, or a tuple of three ints");
  TORCH_CHECK(!is_max || dilation.size() == 1 || dilation.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  Window w;
  for (auto* v : {&w.kernel, &w.stride, &w.pad, &w.dilation, &w.in, &w.out}) v->resize(3);
  fill_geometry(w, self, kernel, stride, padding, dilation, ceil_mode);
  const int64_t nslices = self.size(-4);
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  at::native::pool3d_shape_check(
      self, nslices, i32(w.kernel[0]), i32(w.kernel[1]), i32(w.kernel[2]), i32(w.stride[0]),
      i32(w.stride[1]), i32(w.stride[2]), i32(w.pad[0]), i32(w.pad[1]), i32(w.pad[2]),
      i32(w.dilation[0]), i32(w.dilation[1]), i32(w.dilation[2]), w.in[0], w.in[1], w.in[2],
      w.out[0], w.out[1], w.out[2], check_name, /*check_input_size=*/!is_max);
  return w;
}

std::vector<int64_t> pooled_sizes(const at::Tensor& self, const Window& w) {
  std::vector<int64_t> s = self.sizes().vec();
  for (size_t j = 0; j < w.rank(); ++j) s[s.size() - w.rank() + j] = w.out[j];
  return s;
}

std::vector<int64_t> plane_dims(const Window& w, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> d{w.planes};
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

std::string window_key(const char* name, const Window& w, bool ceil_mode) {
  return program_key(name, w.kernel, w.stride, w.pad, w.dilation, ceil_mode);
}

// Calls fn(tap) for every window tap, row-major.
void for_each_tap(const Window& w, const std::function<void(const std::vector<int64_t>&)>& fn) {
  std::vector<int64_t> tap(w.rank(), 0);
  while (true) {
    fn(tap);
    size_t j = w.rank();
    while (j > 0 && ++tap[j - 1] == w.kernel[j - 1]) tap[--j] = 0;
    if (j == 0) return;
  }
}

// `x` ([planes, *in]) zero-padded so every window tap of every output
// position is inside the array (built once per program, sliced per tap).
Value pad_for_taps(Builder& b, Value x, const Window& w) {
  std::vector<int64_t> low{0}, high{0};
  for (size_t j = 0; j < w.rank(); ++j) {
    const int64_t need = (w.out[j] - 1) * w.stride[j] + (w.kernel[j] - 1) * w.dilation[j] + 1;
    low.push_back(w.pad[j]);
    high.push_back(std::max<int64_t>(0, need - w.in[j] - w.pad[j]));
  }
  return b.pad(x, b.constant(x.type.element, 0), low, high);
}

// The element `tap` reads for each output position (zero in the padding).
Value tap_value(Builder& b, Value padded, const Window& w, const std::vector<int64_t>& tap) {
  std::vector<int64_t> start{0}, limit{w.planes}, step{1};
  for (size_t j = 0; j < w.rank(); ++j) {
    start.push_back(tap[j] * w.dilation[j]);
    limit.push_back(start.back() + (w.out[j] - 1) * w.stride[j] + 1);
    step.push_back(w.stride[j]);
  }
  return b.slice(padded, start, limit, step);
}

// Where `tap` reads: whether inside the input, and the flat index in the
// plane (h * W + w in 2d, as the CPU's indices count).
struct TapPosition {
  Value valid, index;
};

TapPosition tap_position(Builder& b, const Window& w, const std::vector<int64_t>& tap) {
  const TensorType it{ElementType::kS64, plane_dims(w, w.out)};
  auto splat = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS64, v), it.dims); };
  std::optional<Value> valid, index;
  for (size_t j = 0; j < w.rank(); ++j) {
    // Input coordinate of this tap: o * stride - pad + tap * dilation.
    Value c = b.binary(
        "add", b.binary("multiply", b.iota(it, static_cast<int64_t>(j) + 1), splat(w.stride[j])),
        splat(tap[j] * w.dilation[j] - w.pad[j]));
    Value inside = b.binary("and", b.compare(Compare::kGE, c, splat(0)),
                            b.compare(Compare::kLT, c, splat(w.in[j])));
    valid = valid ? b.binary("and", *valid, inside) : inside;
    index = index ? b.binary("add", b.binary("multiply", *index, splat(w.in[j])), c) : c;
  }
  return {*valid, *index};
}

// The dtypes the CPU kernels take: max pooling every real type but bool;
// average pooling floating types and int64 (half and bfloat16 too, which
// CPU's avg_pool3d lacks and CUDA's has). `name` is the kernel CPU names.
void check_pool_dtype(const at::Tensor& self, bool is_max, const char* name) {
  const at::ScalarType t = self.scalar_type();
  const bool ok = is_max ? t != at::kBool && !at::isComplexType(t)
                         : (at::isFloatingType(t) && !c10::isFloat8Type(t)) || t == at::kLong;
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "\"", name, "\" not implemented for '", c10::toString(t), "'");
}

std::tuple<at::Tensor&, at::Tensor&> max_pool_into(const char* op, const at::Tensor& self,
                                                   const Window& w, bool ceil_mode, at::Tensor& out,
                                                   at::Tensor& indices) {
  check_pool_dtype(self, true, w.rank() == 2 ? "max_pool2d" : "max_pool3d");
  const auto sizes = pooled_sizes(self, w);
  at::native::resize_output(out, sizes);
  at::native::resize_output(indices, sizes);
  if (out.numel() == 0) return {out, indices};
  const ElementType t = element_type_for(self.scalar_type(), op);
  TensorProgram program(op, window_key("maxpool", w, ceil_mode));
  program.input(self);
  program.output(out);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value padded = pad_for_taps(b, b.reshape(in[0], plane_dims(w, w.in)), w);
    const std::vector<int64_t> od = plane_dims(w, w.out);
    // The first in-bounds tap is always taken, so the start value is moot.
    Value best = b.zeros({t, od});
    Value best_index = b.splat(b.constant_int(ElementType::kS64, -1), od);
    Value none = b.splat(b.constant_int(ElementType::kS64, 0), od);
    for_each_tap(w, [&](const std::vector<int64_t>& tap) {
      Value v = tap_value(b, padded, w, tap);
      TapPosition where = tap_position(b, w, tap);
      // CPU rule: take a value greater than the best so far, or a NaN; the
      // first in-bounds tap stands for a window of -inf.
      Value take = b.compare(Compare::kGT, v, best);
      if (is_float(t)) take = b.binary("or", take, b.compare(Compare::kNE, v, v));
      Value unset = b.compare(Compare::kLT, best_index, none);
      take = b.binary("and", where.valid, b.binary("or", take, unset));
      best = b.select(take, v, best);
      best_index = b.select(take, where.index, best_index);
    });
    return std::vector<Value>{b.reshape(best, sizes), b.reshape(best_index, sizes)};
  });
  return {out, indices};
}

// Divisor per output position ([*out]), as the CPU kernels compute it.
Value avg_divisor(Builder& b, const Window& w, bool count_include_pad,
                  std::optional<int64_t> divisor_override, ElementType t) {
  if (divisor_override.has_value()) {
    return b.splat(b.constant(t, static_cast<double>(*divisor_override)), w.out);
  }
  const TensorType it{ElementType::kS64, w.out};
  auto splat = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS64, v), w.out); };
  std::optional<Value> count;
  for (size_t j = 0; j < w.rank(); ++j) {
    Value start = b.binary(
        "subtract", b.binary("multiply", b.iota(it, static_cast<int64_t>(j)), splat(w.stride[j])),
        splat(w.pad[j]));
    Value end =
        b.binary("minimum", b.binary("add", start, splat(w.kernel[j])), splat(w.in[j] + w.pad[j]));
    if (!count_include_pad) {
      start = b.binary("maximum", start, splat(0));
      end = b.binary("minimum", end, splat(w.in[j]));
    }
    Value extent = b.binary("subtract", end, start);
    count = count ? b.binary("multiply", *count, extent) : extent;
  }
  return b.convert(*count, t);
}

std::vector<int64_t> spatial_dims_of_planes(const Window& w) {
  std::vector<int64_t> d;
  for (size_t j = 0; j < w.rank(); ++j) d.push_back(static_cast<int64_t>(j) + 1);
  return d;
}

at::Tensor& avg_pool_into(const char* op, const at::Tensor& self, const Window& w, bool ceil_mode,
                          bool count_include_pad, std::optional<int64_t> divisor_override,
                          at::Tensor& out) {
  TORCH_CHECK(!divisor_override.has_value() || *divisor_override != 0, op,
              ": divisor must be not zero");
  check_pool_dtype(self, false, w.rank() == 2 ? "avg_pool2d" : "avg_pool3d_out_frame");
  const auto sizes = pooled_sizes(self, w);
  at::native::resize_output(out, sizes);
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(self.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(self.scalar_type(), op);
  TensorProgram program(op, program_key("avgpool", window_key("", w, ceil_mode), count_include_pad,
                                        divisor_override.value_or(0)));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value padded = pad_for_taps(b, b.convert(b.reshape(in[0], plane_dims(w, w.in)), acc), w);
    Value sum = b.zeros({acc, plane_dims(w, w.out)});
    for_each_tap(w, [&](const std::vector<int64_t>& tap) {
      sum = b.binary("add", sum, tap_value(b, padded, w, tap));  // padding reads 0
    });
    Value div = b.broadcast_in_dim(avg_divisor(b, w, count_include_pad, divisor_override, acc),
                                   sum.type.dims, spatial_dims_of_planes(w));
    return std::vector<Value>{b.reshape(b.convert(b.binary("divide", sum, div), t), sizes)};
  });
  return out;
}

at::Tensor& avg_pool_backward_into(const char* op, const at::Tensor& grad_output,
                                   const at::Tensor& self, const Window& w, bool ceil_mode,
                                   bool count_include_pad, std::optional<int64_t> divisor_override,
                                   at::Tensor& grad_input) {
  check_pool_dtype(self, false, op);
  at::native::resize_output(grad_input, self.sizes());
  if (grad_input.numel() == 0) return grad_input;
  const ElementType t = element_type_for(self.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(self.scalar_type(), op);
  TensorProgram program(op, program_key("avgpool_bwd", window_key("", w, ceil_mode),
                                        count_include_pad, divisor_override.value_or(0)));
  program.input(grad_output);
  program.output(grad_input);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = b.convert(b.reshape(in[0], plane_dims(w, w.out)), acc);
    Value div = b.broadcast_in_dim(avg_divisor(b, w, count_include_pad, divisor_override, acc),
                                   g.type.dims, spatial_dims_of_planes(w));
    g = b.binary("divide", g, div);
    // Each tap sends g to input position o * stride - pad + tap: spread g
    // with interior padding (stride - 1) and shift it by the tap offset.
    Value sum = b.zeros({acc, plane_dims(w, w.in)});
    for_each_tap(w, [&](const std::vector<int64_t>& tap) {
      std::vector<int64_t> low{0}, high{0}, interior{0};
      for (size_t j = 0; j < w.rank(); ++j) {
        const int64_t span = (w.out[j] - 1) * w.stride[j] + 1;
        low.push_back(tap[j] - w.pad[j]);
        high.push_back(w.in[j] - low.back() - span);
        interior.push_back(w.stride[j] - 1);
      }
      sum = b.binary("add", sum, b.pad(g, b.constant(acc, 0), low, high, interior));
    });
    return std::vector<Value>{b.reshape(b.convert(sum, t), self.sizes().vec())};
  });
  return grad_input;
}

}  // namespace

at::Tensor& scatter_to_max_indices(const char* op, const at::Tensor& grad_output,
                                   const at::Tensor& indices, const at::Tensor& self, int spatial,
                                   at::Tensor& grad_input) {
  if (grad_input.numel() == 0) return grad_input;
  const ElementType t = element_type_for(self.scalar_type(), op);
  int64_t plane_size = 1, outputs_per_plane = 1;
  for (int d = 1; d <= spatial; ++d) {
    plane_size *= self.size(-d);
    outputs_per_plane *= grad_output.size(-d);
  }
  const int64_t planes = self.numel() / plane_size;
  TensorProgram program(op, "maxpool_bwd");
  program.input(grad_output);
  program.input(indices);
  program.output(grad_input);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const int64_t n = planes * outputs_per_plane;
    Value plane = b.iota({ElementType::kS64, {planes, outputs_per_plane}}, 0);
    Value base = b.binary("multiply", plane,
                          b.splat(b.constant_int(ElementType::kS64, plane_size), plane.type.dims));
    Value idx = b.binary(
        "add", base, b.reshape(b.convert(in[1], ElementType::kS64), {planes, outputs_per_plane}));
    Value acc = b.zeros({t, {planes * plane_size}});
    Value r = b.scatter_1d(acc, b.reshape(idx, {n}), b.reshape(in[0], {n}), "add");
    return std::vector<Value>{b.reshape(r, self.sizes().vec())};
  });
  return grad_input;
}

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
    at::Tensor& indices) {
  const char* op = "max_pool2d_with_indices";
  const Window w = window_2d(self, kernel_size, stride, padding, dilation, ceil_mode, op);
  TORCH_CHECK(w.dilation[0] > 0 && w.dilation[1] > 0, op, ": dilation should be greater than zero");
  return max_pool_into(op, self, w, ceil_mode, out, indices);
}

at::Tensor& max_pool2d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    const at::Tensor& indices, at::Tensor& grad_input) {
  const char* op = "max_pool2d_with_indices_backward";
  (void)window_2d(self, kernel_size, stride, padding, dilation, ceil_mode, op);  // its checks
  at::native::resize_output(grad_input, self.sizes());
  return scatter_to_max_indices(op, grad_output, indices, self, 2, grad_input);
}

std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
    at::Tensor& indices) {
  const Window w = window_3d(self, kernel_size, stride, padding, dilation, ceil_mode, true,
                             "max_pool3d_with_indices_out_cpu_template()");
  return max_pool_into("max_pool3d_with_indices", self, w, ceil_mode, out, indices);
}

std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  at::Tensor out = device_empty({0}, self.options());
  at::Tensor indices = device_empty({0}, self.options().dtype(at::kLong));
  max_pool3d_with_indices_out(self, kernel_size, stride, padding, dilation, ceil_mode, out,
                              indices);
  return {out, indices};
}

at::Tensor& max_pool3d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    const at::Tensor& indices, at::Tensor& grad_input) {
  const char* op = "max_pool3d_with_indices_backward";
  const Window w = window_3d(self, kernel_size, stride, padding, dilation, ceil_mode, true,
                             "max_pool3d_with_indices_backward_out_cpu_template()");
  const auto sizes = pooled_sizes(self, w);
  TORCH_CHECK(grad_output.sizes().vec() == sizes && indices.sizes().vec() == sizes, op,
              ": expected grad_output and indices of sizes ", sizes, ", got ", grad_output.sizes(),
              " and ", indices.sizes());
  at::native::resize_output(grad_input, self.sizes());
  return scatter_to_max_indices(op, grad_output, indices, self, 3, grad_input);
}

at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation,
                                            bool ceil_mode, const at::Tensor& indices) {
  at::Tensor grad_input = device_empty({0}, self.options());
  return max_pool3d_with_indices_backward_out(grad_output, self, kernel_size, stride, padding,
                                              dilation, ceil_mode, indices, grad_input);
}

at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                           at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override,
                           at::Tensor& out) {
  const char* op = "avg_pool2d";
  const Window w = window_2d(self, kernel_size, stride, padding, {}, ceil_mode, op);
  return avg_pool_into(op, self, w, ceil_mode, count_include_pad, divisor_override, out);
}

at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                    at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                    std::optional<int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  const char* op = "avg_pool2d_backward";
  const Window w = window_2d(self, kernel_size, stride, padding, {}, ceil_mode, op);
  return avg_pool_backward_into(op, grad_output, self, w, ceil_mode, count_include_pad,
                                divisor_override, grad_input);
}

at::Tensor& avg_pool3d_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                           at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override,
                           at::Tensor& out) {
  const Window w =
      window_3d(self, kernel_size, stride, padding, {1}, ceil_mode, false, "avg_pool3d()");
  return avg_pool_into("avg_pool3d", self, w, ceil_mode, count_include_pad, divisor_override, out);
}

at::Tensor& avg_pool3d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                    at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                    std::optional<int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  const Window w =
      window_3d(self, kernel_size, stride, padding, {1}, ceil_mode, false, "avg_pool3d_backward()");
  return avg_pool_backward_into("avg_pool3d_backward", grad_output, self, w, ceil_mode,
                                count_include_pad, divisor_override, grad_input);
}

}  // namespace torch_tpu::ops

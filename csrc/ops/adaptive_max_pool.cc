// Adaptive max pooling over the 2 or 3 trailing dims of [N, C, ...] (or
// [C, ...]), forward with indices and backward (adaptive_max_pool1d goes
// through 2d). Adaptive average pooling is a separable linear map
// (ops/resample.cc); windowed pools are in ops/window_pool.cc.
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

}  // namespace torch_tpu::ops

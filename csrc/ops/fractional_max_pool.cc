// Fractional max pooling (nn.FractionalMaxPool2d/3d): max pooling over
// windows of a fixed size whose starts step by a fractional stride, offset
// per plane by a random sample in [0, 1) (the `random_samples` input, drawn
// by F.fractional_max_pool from the device's generator). Along a dim of
// input size `in`, output size `out` and window `pool`, CPU's starts are
// trunc((i + u) alpha) - trunc(u alpha) for i < out - 1 and in - pool for
// the last, with alpha = (in - pool) / (out - 1) in the input's type; one
// program gathers each window tap and keeps CPU's maximum (the first of
// equal values, and any NaN) with its index in the plane. The backward
// adds each gradient at its index (window_pool.h).
#include <ATen/native/Resize.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/elementwise_dtypes.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"
#include "ops/window_pool.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// Window starts along one dim for every plane: [planes, out] s64 from the
// planes' samples u [planes] (in the input's type t).
Value window_starts(Builder& b, Value u, int64_t in, int64_t out, int64_t pool) {
  const int64_t planes = u.type.dims[0];
  const std::vector<int64_t> dims{planes, out};
  auto s64 = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS64, v), dims); };
  if (out == 1) return s64(in - pool);
  const ElementType t = u.type.element;
  // alpha is rounded to t; CPU's half types then multiply in float.
  const bool half = t == ElementType::kF16 || t == ElementType::kBF16;
  const ElementType ct = half ? ElementType::kF32 : t;
  Value alpha = b.binary("divide", b.constant(t, static_cast<double>(in - pool)),
                         b.constant(t, static_cast<double>(out - 1)));
  Value alpha_b = b.splat(b.convert(alpha, ct), dims);
  Value ub = b.broadcast_in_dim(b.convert(u, ct), dims, {0});
  Value i = b.convert(b.iota({ElementType::kS64, dims}, 1), ct);
  Value shifted =
      b.convert(b.binary("multiply", b.binary("add", i, ub), alpha_b), ElementType::kS64);
  Value offset = b.convert(b.binary("multiply", ub, alpha_b), ElementType::kS64);
  Value starts = b.binary("subtract", shifted, offset);
  Value last = b.compare(Compare::kEQ, b.iota({ElementType::kS64, dims}, 1), s64(out - 1));
  return b.select(last, s64(in - pool), starts);
}

// CPU's kernels take the floating types with half and bfloat16; others get
// the dispatch macros' NotImplementedError naming CPU's kernel.
void check_dtype(const at::Tensor& t, const char* cpu_kernel) {
  const auto dtype = t.scalar_type();
  if (dtype != at::kFloat && dtype != at::kDouble && dtype != at::kHalf && dtype != at::kBFloat16) {
    refuse_dtype(cpu_kernel, dtype);
  }
}

void fractional_max_pool_into(const char* op, const at::Tensor& self, at::IntArrayRef kernel,
                              at::IntArrayRef output_size, const at::Tensor& samples,
                              at::Tensor& out, at::Tensor& indices) {
  const int spatial = static_cast<int>(kernel.size());
  check_dtype(self,
              spatial == 2 ? "fractional_max_pool2d_out_frame" : "fractional_max_pool3d_out_frame");
  const int64_t rank = self.dim();
  std::vector<int64_t> in(spatial), pooled(spatial), pool(spatial);
  int64_t plane_size = 1, outputs_per_plane = 1;
  for (int d = 0; d < spatial; ++d) {
    in[d] = self.size(rank - spatial + d);
    pooled[d] = output_size[d];
    pool[d] = kernel[d];
    plane_size *= in[d];
    outputs_per_plane *= pooled[d];
  }
  std::vector<int64_t> out_sizes(self.sizes().begin(), self.sizes().end() - spatial);
  out_sizes.insert(out_sizes.end(), pooled.begin(), pooled.end());
  at::native::resize_output(out, out_sizes);
  at::native::resize_output(indices, out_sizes);
  if (out.numel() == 0) return;
  const int64_t planes = self.numel() / plane_size;
  // CPU's checks, in its words (a batch of samples may be larger than the
  // input's: the first ones are used).
  const int64_t batch = rank == spatial + 2 ? self.size(0) : 1;
  TORCH_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ",
              samples.dim());
  TORCH_CHECK(samples.size(0) >= batch,
              "Expect _random_samples.size(0) no less then input batch size.");
  TORCH_CHECK(samples.size(1) == self.size(rank - spatial - 1),
              "Expect _random_samples.size(1) equals to input channel size.");
  TORCH_CHECK(samples.size(2) == spatial, "Expect _random_samples.size(2) equals to ", spatial,
              "; got ", samples.size(2), ".");
  TORCH_CHECK(samples.scalar_type() == self.scalar_type(),
              "Expect _random_samples to have the same dtype as input");
  const at::Tensor used_samples = samples.narrow(0, 0, batch);
  const ElementType t = element_type_for(self.scalar_type(), op);
  TensorProgram program(op, program_key("fractional_max_pool", kernel, output_size));
  program.input(self);
  program.input(used_samples);
  program.output(out);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& v) {
    Value x = b.reshape(v[0], {planes * plane_size});
    Value u = b.reshape(v[1], {planes, spatial});
    std::vector<int64_t> dims{planes};
    dims.insert(dims.end(), pooled.begin(), pooled.end());
    // Each dim's starts, broadcast over the output: 2d takes its W sample
    // first and its H sample second; 3d takes T, H, W in order.
    std::vector<Value> starts(spatial);
    int64_t stride = plane_size;
    std::vector<int64_t> strides(spatial);
    for (int d = 0; d < spatial; ++d) {
      stride /= in[d];
      strides[d] = stride;
      const int64_t sample = spatial == 2 ? 1 - d : d;
      Value ud = b.reshape(b.slice(u, {0, sample}, {planes, sample + 1}, {1, 1}), {planes});
      starts[d] =
          b.broadcast_in_dim(window_starts(b, ud, in[d], pooled[d], pool[d]), dims, {0, d + 1});
    }
    auto s64 = [&](int64_t c) { return b.splat(b.constant_int(ElementType::kS64, c), dims); };
    // Every tap in CPU's order (the first dim outermost): its index in the
    // plane, then its value.
    Value plane_base = b.binary("multiply", b.iota({ElementType::kS64, dims}, 0), s64(plane_size));
    Value best = b.splat(b.constant(t, -INFINITY), dims), best_index;
    std::vector<int64_t> tap(spatial, 0);
    bool first = true;
    for (bool more = true; more;) {
      Value index = s64(0);
      for (int d = 0; d < spatial; ++d) {
        Value pos = b.binary("add", starts[d], s64(tap[d]));
        index = b.binary("add", index, b.binary("multiply", pos, s64(strides[d])));
      }
      Value value = b.gather_1d(x, b.binary("add", plane_base, index));
      // (CPU's index before any tap wins: the window's first position)
      if (first) best_index = index;
      first = false;
      Value take = b.binary("or", b.compare(Compare::kGT, value, best),
                            b.compare(Compare::kNE, value, value));
      best = b.select(take, value, best);
      best_index = b.select(take, index, best_index);
      more = false;
      for (int d = spatial - 1; d >= 0; --d) {
        if (++tap[d] < pool[d]) {
          more = true;
          break;
        }
        tap[d] = 0;
      }
    }
    return std::vector<Value>{b.reshape(best, out_sizes), b.reshape(best_index, out_sizes)};
  });
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> fractional_max_pool2d_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef output_size,
    const at::Tensor& random_samples, at::Tensor& output, at::Tensor& indices) {
  // (PyTorch's meta function has checked the arguments)
  fractional_max_pool_into("fractional_max_pool2d", self, kernel_size, output_size, random_samples,
                           output, indices);
  return {output, indices};
}

std::tuple<at::Tensor&, at::Tensor&> fractional_max_pool3d_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef output_size,
    const at::Tensor& random_samples, at::Tensor& output, at::Tensor& indices) {
  fractional_max_pool_into("fractional_max_pool3d", self, kernel_size, output_size, random_samples,
                           output, indices);
  return {output, indices};
}

at::Tensor& fractional_max_pool2d_backward_out(const at::Tensor& grad_output,
                                               const at::Tensor& self, at::IntArrayRef kernel_size,
                                               at::IntArrayRef output_size,
                                               const at::Tensor& indices, at::Tensor& grad_input) {
  check_dtype(self, "fractional_max_pool2d_backward_out_frame");
  at::native::resize_output(grad_input, self.sizes());
  return scatter_to_max_indices("fractional_max_pool2d_backward", grad_output, indices, self, 2,
                                grad_input);
}

at::Tensor& fractional_max_pool3d_backward_out(const at::Tensor& grad_output,
                                               const at::Tensor& self, at::IntArrayRef kernel_size,
                                               at::IntArrayRef output_size,
                                               const at::Tensor& indices, at::Tensor& grad_input) {
  const char* op = "fractional_max_pool3d_backward";
  const int64_t rank = self.dim();
  TORCH_CHECK(rank == 4 || rank == 5, op, ": expected a 4D or 5D input, got ", rank, "D");
  TORCH_CHECK(output_size.size() == 3, op, ": output_size must have 3 elements");
  for (int d = 0; d < 3; ++d) {
    TORCH_CHECK(grad_output.dim() == rank && grad_output.size(rank - 3 + d) == output_size[d] &&
                    indices.sizes() == grad_output.sizes(),
                op, ": gradOutput and indices must have the output's sizes ", output_size);
  }
  check_dtype(self, "fractional_max_pool3d_backward_out_frame");
  at::native::resize_output(grad_input, self.sizes());
  return scatter_to_max_indices(op, grad_output, indices, self, 3, grad_input);
}

at::Tensor fractional_max_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                          at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                          const at::Tensor& indices) {
  at::Tensor grad_input = device_empty({0}, self.options());
  return fractional_max_pool3d_backward_out(grad_output, self, kernel_size, output_size, indices,
                                            grad_input);
}

}  // namespace torch_tpu::ops

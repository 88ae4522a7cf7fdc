// Convolution (N-d, groups, stride, padding, dilation, transposed) and its
// backward, lowered to stablehlo.convolution.
//
// The three lowerings (forward, input gradient, weight gradient) are written
// once; a transposed convolution is the input gradient of a plain one, and its
// gradients are the plain forward and weight gradient with roles swapped.
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
};

size_t spatial_rank(const Value& v) { return v.type.dims.size() - 2; }

std::vector<int64_t> ones(size_t n) { return std::vector<int64_t>(n, 1); }

// y = conv(x, w): x [N, C, in...], w [O, C/G, k...] -> [N, O, out...]
Value conv_forward(Builder& b, Value x, Value w, const ConvParams& p,
                   const std::vector<int64_t>& out_shape) {
  const size_t n = spatial_rank(x);
  Builder::ConvSpec spec;
  spec.strides = p.stride;
  spec.lhs_dilation = ones(n);
  spec.rhs_dilation = p.dilation;
  // High padding from the wanted output length: as the formula's floor drops
  // trailing rows, and exact when this is a transposed convolution's adjoint
  // with output_padding >= stride.
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.type.dims[2 + i], k = w.type.dims[2 + i], out = out_shape[2 + i];
    const int64_t high = (out - 1) * p.stride[i] + p.dilation[i] * (k - 1) + 1 - in - p.padding[i];
    spec.padding.emplace_back(p.padding[i], high);
  }
  spec.feature_groups = p.groups;
  return b.convolution(x, w, spec, TensorType{x.type.element, out_shape});
}

// dL/dx of y = conv(x, w): g [N, O, out...], w [O, C/G, k...] -> in_shape.
// A stride-1 convolution of g dilated by the stride with the flipped kernel
// whose in/out features are swapped within each group.
Value conv_input_grad(Builder& b, Value g, Value w, const ConvParams& p,
                      const std::vector<int64_t>& in_shape) {
  const size_t n = spatial_rank(g);
  const int64_t G = p.groups, O = w.type.dims[0], Ig = w.type.dims[1];
  std::vector<int64_t> k(w.type.dims.begin() + 2, w.type.dims.end());
  std::vector<int64_t> grouped{G, O / G, Ig}, perm{0, 2, 1}, swapped{G * Ig, O / G};
  std::vector<int64_t> spatial_dims;
  for (size_t i = 0; i < n; ++i) {
    grouped.push_back(k[i]);
    perm.push_back(3 + i);
    swapped.push_back(k[i]);
    spatial_dims.push_back(2 + i);
  }
  Value wt = b.reshape(b.transpose(b.reshape(w, grouped), perm), swapped);
  wt = b.reverse(wt, spatial_dims);
  Builder::ConvSpec spec;
  spec.strides = ones(n);
  spec.lhs_dilation = p.stride;
  spec.rhs_dilation = p.dilation;
  for (size_t i = 0; i < n; ++i) {
    const int64_t out = g.type.dims[2 + i], in = in_shape[2 + i];
    const int64_t low = p.dilation[i] * (k[i] - 1) - p.padding[i];
    const int64_t high = in - 1 - (out - 1) * p.stride[i] + p.padding[i];
    spec.padding.emplace_back(low, high);
  }
  spec.feature_groups = G;
  return b.convolution(g, wt, spec, TensorType{g.type.element, in_shape});
}

// dL/dw of y = conv(x, w): x [N, C, in...], g [N, O, out...] -> w_shape.
// The batch is contracted: x's batch dim plays the feature role, g is the
// kernel, the stride becomes the kernel dilation and the dilation the stride.
Value conv_weight_grad(Builder& b, Value x, Value g, const ConvParams& p,
                       const std::vector<int64_t>& w_shape) {
  const size_t n = spatial_rank(x);
  Builder::ConvSpec spec;
  spec.strides = p.dilation;
  spec.lhs_dilation = ones(n);
  spec.rhs_dilation = p.stride;
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.type.dims[2 + i], out = g.type.dims[2 + i], k = w_shape[2 + i];
    const int64_t high = (k - 1) * p.dilation[i] + (out - 1) * p.stride[i] + 1 - in - p.padding[i];
    spec.padding.emplace_back(p.padding[i], high);
  }
  spec.batch_groups = p.groups;
  spec.lhs_fb = spec.rhs_io = spec.out_fb = true;
  return b.convolution(x, g, spec, TensorType{x.type.element, w_shape});
}

std::vector<int64_t> all_but(size_t rank, int64_t keep) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < rank; ++d) {
    if (static_cast<int64_t>(d) != keep) dims.push_back(d);
  }
  return dims;
}

ConvParams params_of(at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                     bool transposed, at::IntArrayRef output_padding, int64_t groups,
                     size_t spatial) {
  auto expand = [spatial](at::IntArrayRef v, int64_t fill) {
    std::vector<int64_t> out(spatial, fill);
    for (size_t i = 0; i < spatial; ++i) out[i] = v.empty() ? fill : v[v.size() == 1 ? 0 : i];
    return out;
  };
  ConvParams p;
  p.stride = expand(stride, 1);
  p.padding = expand(padding, 0);
  p.dilation = expand(dilation, 1);
  p.output_padding = expand(output_padding, 0);
  p.groups = groups;
  p.transposed = transposed;
  return p;
}

std::string conv_key(const char* op, const ConvParams& p) {
  return program_key(op, p.stride, p.padding, p.dilation, p.output_padding, p.groups, p.transposed);
}

}  // namespace

namespace {

// The argument checks ATen's _convolution makes before any kernel runs
// (aten::convolution is registered here, so they would otherwise be skipped),
// with its messages.
void check_convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, const ConvParams& p) {
  const char* op = "convolution";
  TORCH_CHECK(input.dim() >= 3, op, ": expected a batched input with spatial dims, got ",
              input.dim(), " dims");
  TORCH_CHECK(weight.dim() == input.dim(), op, ": Expected ", input.dim(),
              "-dimensional weight for ", input.dim(), "-dimensional input ", input.sizes(),
              ", but got ", weight.dim(), "-dimensional weight of size ", weight.sizes(),
              " instead");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), op, ": Input type (",
              input.scalar_type(), ") and weight type (", weight.scalar_type(),
              ") should be the same");
  for (size_t i = 0; i < p.stride.size(); ++i) {
    TORCH_CHECK(p.stride[i] > 0, op, ": non-positive stride is not supported");
    TORCH_CHECK(p.padding[i] >= 0, op, ": negative padding is not supported");
    TORCH_CHECK(p.dilation[i] > 0, op, ": dilation should be greater than zero");
    TORCH_CHECK(p.output_padding[i] >= 0, op, ": negative output_padding is not supported");
    TORCH_CHECK(
        !p.transposed || p.output_padding[i] < p.stride[i] || p.output_padding[i] < p.dilation[i],
        op, ": output padding must be smaller than either stride or dilation, but got ",
        "output_padding ", at::IntArrayRef(p.output_padding), ", stride ",
        at::IntArrayRef(p.stride), " and dilation ", at::IntArrayRef(p.dilation));
  }
  TORCH_CHECK(p.groups > 0, op, ": non-positive groups is not supported");
  const int64_t channels = input.size(1);
  if (!p.transposed) {
    TORCH_CHECK(weight.size(0) >= p.groups && weight.size(0) % p.groups == 0, op,
                ": Given groups=", p.groups, ", expected weight to be divisible by ", p.groups,
                " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    TORCH_CHECK(channels == weight.size(1) * p.groups, op, ": Given groups=", p.groups,
                ", weight of size ", weight.sizes(), ", expected input", input.sizes(), " to have ",
                weight.size(1) * p.groups, " channels, but got ", channels, " channels instead");
  } else {
    TORCH_CHECK(channels == weight.size(0) && channels % p.groups == 0, op,
                ": Given transposed=1, weight of size ", weight.sizes(), ", expected input",
                input.sizes(), " to have ", weight.size(0), " channels, but got ", channels,
                " channels instead");
  }
  if (bias.has_value() && bias->defined()) {
    const int64_t out_channels = p.transposed ? weight.size(1) * p.groups : weight.size(0);
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == out_channels, op, ": Given weight of size ",
                weight.sizes(), ", expected bias to be 1-dimensional ", "with ", out_channels,
                " elements, but got bias of size ", bias->sizes(), " instead");
  }
  if (!p.transposed) {
    for (size_t i = 0; i < p.stride.size(); ++i) {
      const int64_t padded = input.size(2 + i) + 2 * p.padding[i];
      const int64_t kernel = p.dilation[i] * (weight.size(2 + i) - 1) + 1;
      TORCH_CHECK(padded >= kernel, op, ": Calculated padded input size per channel: ", padded,
                  " (dim ", i, "). Kernel size: ", kernel,
                  ". Kernel size can't be greater than actual input size");
    }
  }
}

}  // namespace

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  TORCH_CHECK(input.dim() >= 3, "convolution: expected a batched input with spatial dims, got ",
              input.dim(), " dims");
  const size_t n = input.dim() - 2;
  const ConvParams p = params_of(stride, padding, dilation, transposed, output_padding, groups, n);
  check_convolution(input, weight, bias, p);
  std::vector<int64_t> out_shape{input.size(0),
                                 transposed ? weight.size(1) * groups : weight.size(0)};
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = input.size(2 + i), k = weight.size(2 + i);
    out_shape.push_back(
        transposed ? (in - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k - 1) +
                         p.output_padding[i] + 1
                   : (in + 2 * p.padding[i] - p.dilation[i] * (k - 1) - 1) / p.stride[i] + 1);
  }
  at::Tensor out = device_empty(out_shape, input.options());
  if (out.numel() == 0) return out;
  const bool has_bias = bias.has_value() && bias->defined();
  const ElementType t = element_type_for(input.scalar_type(), "convolution");
  // half/bfloat16 convolve in float32, like the CPU kernels' accumulation.
  const ElementType ct = opmath_element_type_for(input.scalar_type(), "convolution");
  TensorProgram program("convolution", conv_key("conv", p) + (has_bias ? "b" : ""));
  program.input(input);
  program.input(weight);
  if (has_bias) program.input(*bias);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.convert(in[0], ct), w = b.convert(in[1], ct);
    std::vector<int64_t> shape = out_shape;
    Value y = transposed ? conv_input_grad(b, x, w, p, shape) : conv_forward(b, x, w, p, shape);
    if (has_bias) {
      y = b.binary("add", y, b.broadcast_in_dim(b.convert(in[2], ct), shape, {1}));
    }
    return std::vector<Value>{b.convert(y, t)};
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> mask) {
  const size_t n = input.dim() - 2;
  const ConvParams p = params_of(stride, padding, dilation, transposed, output_padding, groups, n);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) grad_input = device_empty(input.sizes(), input.options());
  if (mask[1]) grad_weight = device_empty(weight.sizes(), weight.options());
  if (mask[2]) {
    grad_bias = device_empty({grad_output.size(1)}, grad_output.options());
  }
  const ElementType t = element_type_for(input.scalar_type(), "convolution_backward");
  const ElementType ct = opmath_element_type_for(input.scalar_type(), "convolution_backward");
  TensorProgram program("convolution_backward", conv_key("conv_bwd", p) + (mask[0] ? "i" : "") +
                                                    (mask[1] ? "w" : "") + (mask[2] ? "b" : ""));
  program.input(grad_output);
  program.input(input);
  program.input(weight);
  if (mask[0]) program.output(grad_input);
  if (mask[1]) program.output(grad_weight);
  if (mask[2]) program.output(grad_bias);
  if (!mask[0] && !mask[1] && !mask[2]) return {grad_input, grad_weight, grad_bias};
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = b.convert(in[0], ct), x = b.convert(in[1], ct), w = b.convert(in[2], ct);
    std::vector<Value> results;
    const auto in_shape = input.sizes().vec(), w_shape = weight.sizes().vec();
    if (mask[0]) {
      // A transposed convolution's adjoint is the plain convolution.
      Value gi =
          transposed ? conv_forward(b, g, w, p, in_shape) : conv_input_grad(b, g, w, p, in_shape);
      results.push_back(b.convert(gi, t));
    }
    if (mask[1]) {
      Value gw = transposed ? conv_weight_grad(b, g, x, p, w_shape)
                            : conv_weight_grad(b, x, g, p, w_shape);
      results.push_back(b.convert(gw, t));
    }
    if (mask[2]) {
      results.push_back(
          b.convert(b.reduce(g, b.constant(ct, 0), all_but(g.type.dims.size(), 1), "add"), t));
    }
    return results;
  });
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace torch_tpu::ops

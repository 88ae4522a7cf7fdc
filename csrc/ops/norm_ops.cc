// Normalization layers: batch_norm (train with running statistics, and
// eval), layer_norm and group_norm, forward and backward.
//
// All three normalize a value over some of its dims; they share the moments
// and the input-gradient formula below and differ only in the layout they
// reshape to: batch norm [N, C, S] over {0, 2}, layer norm [M, K] over {1},
// group norm [N, G, D] over {2}. Statistics are computed in float32 for
// half/bfloat16 inputs, like the CPU kernels.
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

// The norm kernels take floating inputs only; CPU's dispatch refuses the
// others with NotImplementedError (before any StableHLO, which would not
// compile for them, or silently compute complex statistics).
void check_floating_input(const at::Tensor& input, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"", op,
                              "\" not implemented for '", c10::toString(input.scalar_type()), "'");
}

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

// Sum over `dims`, keeping them as size-1 dims.
Value sum_keep(Builder& b, Value x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept = x.type.dims;
  for (int64_t d : dims) kept[d] = 1;
  return b.reshape(b.reduce(x, b.constant(x.type.element, 0), dims, "add"), kept);
}

Value mean_keep(Builder& b, Value x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.type.dims[d];
  Value s = sum_keep(b, x, dims);
  return b.binary("divide", s,
                  b.splat(b.constant(x.type.element, static_cast<double>(n)), s.type.dims));
}

Value full_like(Builder& b, Value v, const std::vector<int64_t>& shape) {
  return broadcast_to(b, v, shape);
}

struct Moments {
  Value mean;  // keepdims
  Value var;   // biased, keepdims
};

Moments moments(Builder& b, Value x, const std::vector<int64_t>& dims) {
  Moments m;
  m.mean = mean_keep(b, x, dims);
  Value centered = b.binary("subtract", x, full_like(b, m.mean, x.type.dims));
  m.var = mean_keep(b, b.binary("multiply", centered, centered), dims);
  return m;
}

// Gradient of x -> xhat = (x - mean) * rstd over `dims`, given dL/dxhat:
// rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)).
Value normalized_input_grad(Builder& b, Value gxhat, Value xhat, Value rstd,
                            const std::vector<int64_t>& dims) {
  const auto& shape = xhat.type.dims;
  Value m1 = full_like(b, mean_keep(b, gxhat, dims), shape);
  Value m2 = full_like(b, mean_keep(b, b.binary("multiply", gxhat, xhat), dims), shape);
  Value inner =
      b.binary("subtract", b.binary("subtract", gxhat, m1), b.binary("multiply", xhat, m2));
  return b.binary("multiply", full_like(b, rstd, shape), inner);
}

bool defined(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Per-channel parameter [C] broadcast to [N, C, S] (dim 1).
Value channel(Builder& b, Value p, const std::vector<int64_t>& shape, ElementType t) {
  return b.broadcast_in_dim(b.convert(p, t), shape, {1});
}

std::vector<int64_t> bn_shape(const at::Tensor& input) {
  int64_t s = 1;
  for (int64_t d = 2; d < input.dim(); ++d) s *= input.size(d);
  return {input.size(0), input.size(1), s};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, bool training, double momentum, double eps) {
  const char* op = "native_batch_norm";
  check_floating_input(input, op);
  TORCH_CHECK(input.dim() >= 2, op, ": expected 2D or more input, got ", input.dim(), "D");
  const bool has_w = defined(weight), has_b = defined(bias);
  const bool has_stats = defined(running_mean) && defined(running_var);
  TORCH_CHECK(training || has_stats, op, ": running_mean and running_var must be defined in eval");
  const int64_t C = input.size(1);
  const auto shape = bn_shape(input);
  if (training) {
    TORCH_CHECK(shape[0] * shape[2] > 1, "Expected more than 1 value per channel when training, ",
                "got input size ", input.sizes());
  }
  const at::ScalarType stat_dtype = has_stats
                                        ? running_mean->scalar_type()
                                        : (has_w ? weight->scalar_type() : input.scalar_type());
  at::Tensor out = device_empty(input.sizes(), input.options());
  at::Tensor save_mean = device_empty({training ? C : 0}, input.options().dtype(stat_dtype));
  at::Tensor save_invstd = device_empty({training ? C : 0}, input.options().dtype(stat_dtype));
  if (input.numel() == 0) return {out, save_mean, save_invstd};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  const ElementType st = element_type_for(stat_dtype, op);
  const bool update = training && has_stats;
  TensorProgram program(op, program_key("bn", training, has_w, has_b, has_stats));
  program.input(input);
  if (has_w) program.input(*weight);
  if (has_b) program.input(*bias);
  if (has_stats) {
    program.input(*running_mean);
    program.input(*running_var);
  }
  program.scalar(eps, acc);
  program.scalar(momentum, acc);
  program.output(out);
  if (training) {
    program.output(save_mean);
    program.output(save_invstd);
  }
  if (update) {
    program.output(*running_mean);
    program.output(*running_var);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    size_t i = 0;
    Value x = b.reshape(b.convert(in[i++], acc), shape);
    Value w = has_w ? in[i++] : Value{};
    Value bi = has_b ? in[i++] : Value{};
    Value rm = has_stats ? in[i++] : Value{};
    Value rv = has_stats ? in[i++] : Value{};
    Value eps_v = in[i++], mom = in[i++];
    Value mean, var;  // [C]
    if (training) {
      Moments m = moments(b, x, {0, 2});
      mean = b.reshape(m.mean, {C});
      var = b.reshape(m.var, {C});
    } else {
      mean = b.convert(rm, acc);
      var = b.convert(rv, acc);
    }
    Value invstd = b.unary("rsqrt", b.binary("add", var, b.splat(eps_v, {C})));
    Value y = b.binary("multiply", b.binary("subtract", x, channel(b, mean, shape, acc)),
                       channel(b, invstd, shape, acc));
    if (has_w) y = b.binary("multiply", y, channel(b, w, shape, acc));
    if (has_b) y = b.binary("add", y, channel(b, bi, shape, acc));
    std::vector<Value> results{b.reshape(b.convert(y, t), input.sizes().vec())};
    if (training) {
      results.push_back(b.convert(mean, st));
      results.push_back(b.convert(invstd, st));
    }
    if (update) {
      // running = (1 - momentum) * running + momentum * batch (unbiased var).
      const double n = static_cast<double>(shape[0] * shape[2]);
      Value unbiased = b.binary("multiply", var, b.splat(b.constant(acc, n / (n - 1)), {C}));
      Value keep = b.binary("subtract", b.constant(acc, 1), mom);
      auto blend = [&](Value running, Value batch) {
        Value r = b.binary("add", b.binary("multiply", b.splat(keep, {C}), b.convert(running, acc)),
                           b.binary("multiply", b.splat(mom, {C}), batch));
        return b.convert(r, running.type.element);
      };
      results.push_back(blend(rm, mean));
      results.push_back(blend(rv, unbiased));
    }
    return results;
  });
  return {out, save_mean, save_invstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd,
    bool train, double eps, std::array<bool, 3> mask) {
  const char* op = "native_batch_norm_backward";
  check_floating_input(input, op);
  const bool has_w = defined(weight);
  const int64_t C = input.size(1);
  const auto shape = bn_shape(input);
  at::Tensor gi, gw, gb;
  const at::ScalarType pdtype = has_w ? weight->scalar_type() : input.scalar_type();
  if (mask[0]) gi = device_empty(input.sizes(), input.options());
  if (mask[1]) gw = device_empty({C}, input.options().dtype(pdtype));
  if (mask[2]) gb = device_empty({C}, input.options().dtype(pdtype));
  if (!mask[0] && !mask[1] && !mask[2]) return {gi, gw, gb};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType pt = element_type_for(pdtype, op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  TensorProgram program(op, program_key("bn_bwd", train, has_w, mask[0], mask[1], mask[2]));
  program.input(grad_out);
  program.input(input);
  if (has_w) program.input(*weight);
  if (train) {
    program.input(*save_mean);
    program.input(*save_invstd);
  } else {
    TORCH_CHECK(defined(running_mean) && defined(running_var), op,
                ": running statistics are needed in eval");
    program.input(*running_mean);
    program.input(*running_var);
  }
  program.scalar(eps, acc);
  if (mask[0]) program.output(gi);
  if (mask[1]) program.output(gw);
  if (mask[2]) program.output(gb);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    size_t i = 0;
    Value g = b.reshape(b.convert(in[i++], acc), shape);
    Value x = b.reshape(b.convert(in[i++], acc), shape);
    Value w = has_w ? b.convert(in[i++], acc) : b.splat(b.constant(acc, 1), {C});
    Value mean = b.convert(in[i++], acc);
    Value second = b.convert(in[i++], acc);
    Value eps_v = in[i++];
    Value invstd = train ? second : b.unary("rsqrt", b.binary("add", second, b.splat(eps_v, {C})));
    Value xhat = b.binary("multiply", b.binary("subtract", x, channel(b, mean, shape, acc)),
                          channel(b, invstd, shape, acc));
    std::vector<Value> results;
    if (mask[0]) {
      Value gxhat = b.binary("multiply", g, channel(b, w, shape, acc));
      Value grad = train
                       ? normalized_input_grad(b, gxhat, xhat, b.reshape(invstd, {1, C, 1}), {0, 2})
                       : b.binary("multiply", gxhat, channel(b, invstd, shape, acc));
      results.push_back(b.reshape(b.convert(grad, t), input.sizes().vec()));
    }
    if (mask[1]) {
      results.push_back(b.convert(
          b.reduce(b.binary("multiply", g, xhat), b.constant(acc, 0), {0, 2}, "add"), pt));
    }
    if (mask[2]) results.push_back(b.convert(b.reduce(g, b.constant(acc, 0), {0, 2}, "add"), pt));
    return results;
  });
  return {gi, gw, gb};
}

namespace {

// [M, K] split of a layer-norm input.
std::pair<int64_t, int64_t> ln_split(const at::Tensor& input, at::IntArrayRef normalized,
                                     const char* op) {
  TORCH_CHECK(!normalized.empty(), op,
              ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
              "least one element, but got normalized_shape = ",
              normalized);
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized.size());
  TORCH_CHECK(axis >= 0 && input.sizes().slice(axis).equals(normalized), op,
              ": Given normalized_shape=", normalized, ", expected input with shape [*, ",
              normalized, "], but got input of size", input.sizes());
  int64_t m = 1, k = 1;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? m : k) *= input.size(d);
  return {m, k};
}

std::vector<int64_t> stat_shape(const at::Tensor& input, size_t normalized_rank) {
  std::vector<int64_t> s = input.sizes().vec();
  for (size_t i = s.size() - normalized_rank; i < s.size(); ++i) s[i] = 1;
  return s;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(
    const at::Tensor& input, at::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps) {
  const char* op = "native_layer_norm";
  check_floating_input(input, op);
  const auto [M, K] = ln_split(input, normalized_shape, op);
  const bool has_w = defined(weight), has_b = defined(bias);
  const auto sshape = stat_shape(input, normalized_shape.size());
  at::Tensor out = device_empty(input.sizes(), input.options());
  at::Tensor mean = device_empty(sshape, input.options());
  at::Tensor rstd = device_empty(sshape, input.options());
  if (input.numel() == 0) return {out, mean, rstd};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  TensorProgram program(op, program_key("ln", has_w, has_b));
  program.input(input);
  if (has_w) program.input(*weight);
  if (has_b) program.input(*bias);
  program.scalar(eps, acc);
  program.output(out);
  program.output(mean);
  program.output(rstd);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    size_t i = 0;
    Value x = b.reshape(b.convert(in[i++], acc), {M, K});
    Value w = has_w ? b.reshape(b.convert(in[i++], acc), {1, K}) : Value{};
    Value bi = has_b ? b.reshape(b.convert(in[i++], acc), {1, K}) : Value{};
    Value eps_v = in[i++];
    Moments m = moments(b, x, {1});
    Value r = b.unary("rsqrt", b.binary("add", m.var, b.splat(eps_v, {M, 1})));
    Value y = b.binary("multiply", b.binary("subtract", x, full_like(b, m.mean, {M, K})),
                       full_like(b, r, {M, K}));
    if (has_w) y = b.binary("multiply", y, full_like(b, w, {M, K}));
    if (has_b) y = b.binary("add", y, full_like(b, bi, {M, K}));
    return std::vector<Value>{b.reshape(b.convert(y, t), input.sizes().vec()),
                              b.reshape(b.convert(m.mean, t), sshape),
                              b.reshape(b.convert(r, t), sshape)};
  });
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, std::array<bool, 3> mask) {
  const char* op = "native_layer_norm_backward";
  check_floating_input(input, op);
  const auto [M, K] = ln_split(input, normalized_shape, op);
  const bool has_w = defined(weight);
  at::Tensor gi, gw, gb;
  if (mask[0]) gi = device_empty(input.sizes(), input.options());
  if (mask[1] && has_w) gw = device_empty(weight->sizes(), weight->options());
  if (mask[2] && defined(bias)) gb = device_empty(bias->sizes(), bias->options());
  const bool want_w = gw.defined(), want_b = gb.defined();
  if (!mask[0] && !want_w && !want_b) return {gi, gw, gb};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  TensorProgram program(op, program_key("ln_bwd", has_w, mask[0], want_w, want_b));
  program.input(grad_out);
  program.input(input);
  program.input(mean);
  program.input(rstd);
  if (has_w) program.input(*weight);
  if (mask[0]) program.output(gi);
  if (want_w) program.output(gw);
  if (want_b) program.output(gb);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = b.reshape(b.convert(in[0], acc), {M, K});
    Value x = b.reshape(b.convert(in[1], acc), {M, K});
    Value mu = b.reshape(b.convert(in[2], acc), {M, 1});
    Value r = b.reshape(b.convert(in[3], acc), {M, 1});
    Value xhat = b.binary("multiply", b.binary("subtract", x, full_like(b, mu, {M, K})),
                          full_like(b, r, {M, K}));
    std::vector<Value> results;
    if (mask[0]) {
      Value gxhat = has_w ? b.binary("multiply", g,
                                     full_like(b, b.reshape(b.convert(in[4], acc), {1, K}), {M, K}))
                          : g;
      Value grad = normalized_input_grad(b, gxhat, xhat, r, {1});
      results.push_back(b.reshape(b.convert(grad, t), input.sizes().vec()));
    }
    if (want_w) {
      Value s = b.reduce(b.binary("multiply", g, xhat), b.constant(acc, 0), {0}, "add");
      results.push_back(b.reshape(b.convert(s, in[4].type.element), weight->sizes().vec()));
    }
    if (want_b) {
      Value s = b.reduce(g, b.constant(acc, 0), {0}, "add");
      results.push_back(
          b.reshape(b.convert(s, element_type_for(bias->scalar_type(), op)), bias->sizes().vec()));
    }
    return results;
  });
  return {gi, gw, gb};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, int64_t N, int64_t C, int64_t HxW, int64_t group,
    double eps) {
  const char* op = "native_group_norm";
  check_floating_input(input, op);
  TORCH_CHECK(group > 0 && C % group == 0, op, ": Expected number of channels in input to be ",
              "divisible by num_groups, but got input of shape ", input.sizes(),
              " and num_groups=", group);
  const bool has_w = defined(weight), has_b = defined(bias);
  const int64_t G = group, D = C / G * HxW;
  at::Tensor out = device_empty(input.sizes(), input.options());
  at::Tensor mean = device_empty({N, G}, input.options());
  at::Tensor rstd = device_empty({N, G}, input.options());
  if (input.numel() == 0) return {out, mean, rstd};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  TensorProgram program(op, program_key("gn", N, C, HxW, G, has_w, has_b));
  program.input(input);
  if (has_w) program.input(*weight);
  if (has_b) program.input(*bias);
  program.scalar(eps, acc);
  program.output(out);
  program.output(mean);
  program.output(rstd);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    size_t i = 0;
    Value x = b.reshape(b.convert(in[i++], acc), {N, G, D});
    Value w = has_w ? in[i++] : Value{};
    Value bi = has_b ? in[i++] : Value{};
    Value eps_v = in[i++];
    Moments m = moments(b, x, {2});
    Value r = b.unary("rsqrt", b.binary("add", m.var, b.splat(eps_v, {N, G, 1})));
    Value y = b.binary("multiply", b.binary("subtract", x, full_like(b, m.mean, {N, G, D})),
                       full_like(b, r, {N, G, D}));
    const std::vector<int64_t> nchw{N, C, HxW};
    y = b.reshape(y, nchw);
    if (has_w) y = b.binary("multiply", y, channel(b, w, nchw, acc));
    if (has_b) y = b.binary("add", y, channel(b, bi, nchw, acc));
    return std::vector<Value>{b.reshape(b.convert(y, t), input.sizes().vec()),
                              b.reshape(b.convert(m.mean, t), {N, G}),
                              b.reshape(b.convert(r, t), {N, G})};
  });
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, int64_t N, int64_t C,
    int64_t HxW, int64_t group, std::array<bool, 3> mask) {
  const char* op = "native_group_norm_backward";
  check_floating_input(input, op);
  const bool has_w = defined(weight);
  const int64_t G = group, D = C / G * HxW;
  at::Tensor gi, gw, gb;
  if (mask[0]) gi = device_empty(input.sizes(), input.options());
  if (mask[1]) gw = device_empty({C}, input.options());
  if (mask[2]) gb = device_empty({C}, input.options());
  if ((!mask[0] && !mask[1] && !mask[2]) || input.numel() == 0) return {gi, gw, gb};
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(input.scalar_type(), op);
  TensorProgram program(op, program_key("gn_bwd", N, C, HxW, G, has_w, mask[0], mask[1], mask[2]));
  program.input(grad_out);
  program.input(input);
  program.input(mean);
  program.input(rstd);
  if (has_w) program.input(*weight);
  if (mask[0]) program.output(gi);
  if (mask[1]) program.output(gw);
  if (mask[2]) program.output(gb);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const std::vector<int64_t> grouped{N, G, D}, nchw{N, C, HxW};
    Value g = b.reshape(b.convert(in[0], acc), nchw);
    Value x = b.reshape(b.convert(in[1], acc), grouped);
    Value mu = b.reshape(b.convert(in[2], acc), {N, G, 1});
    Value r = b.reshape(b.convert(in[3], acc), {N, G, 1});
    Value xhat = b.binary("multiply", b.binary("subtract", x, full_like(b, mu, grouped)),
                          full_like(b, r, grouped));
    std::vector<Value> results;
    if (mask[0]) {
      Value gxhat = has_w ? b.binary("multiply", g, channel(b, in[4], nchw, acc)) : g;
      Value grad = normalized_input_grad(b, b.reshape(gxhat, grouped), xhat, r, {2});
      results.push_back(b.reshape(b.convert(grad, t), input.sizes().vec()));
    }
    if (mask[1]) {
      Value s = b.reduce(b.binary("multiply", g, b.reshape(xhat, nchw)), b.constant(acc, 0), {0, 2},
                         "add");
      results.push_back(b.convert(s, t));
    }
    if (mask[2]) results.push_back(b.convert(b.reduce(g, b.constant(acc, 0), {0, 2}, "add"), t));
    return results;
  });
  return {gi, gw, gb};
}

// The batch norm entry points of torch.export's and AOTAutograd's graphs
// (`_native_batch_norm_legit*`, `_batch_norm_with_update`/`_no_update`, and
// their backward `batch_norm_backward`): the same kernels under the names
// those graphs call when they run eagerly (`ExportedProgram.module()`).

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    bool training, double momentum, double eps) {
  return ops::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                                eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit_no_stats(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, bool training, double momentum, double eps) {
  return ops::native_batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum,
                                eps);
}

namespace {
// What CPU returns as the "reserve" (cuDNN's workspace elsewhere): nothing.
at::Tensor no_reserve(const at::Tensor& input) {
  return device_empty({0}, input.options().dtype(at::kByte));
}
}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    double momentum, double eps) {
  auto [out, mean, invstd] =
      ops::native_batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
  return {out, mean, invstd, no_reserve(input)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_no_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, double momentum, double eps) {
  // Without running statistics, batch statistics (as CPU does).
  const bool have_stats = running_mean.has_value() && running_mean->defined() &&
                          running_var.has_value() && running_var->defined();
  auto [out, mean, invstd] = ops::native_batch_norm(input, weight, bias, running_mean, running_var,
                                                    !have_stats, momentum, eps);
  return {out, mean, invstd, no_reserve(input)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_var,
    bool update, double eps, std::array<bool, 3> output_mask, const at::Tensor& /*reserve*/) {
  return ops::native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                         save_mean, save_var, update, eps, output_mask);
}
}  // namespace torch_tpu::ops

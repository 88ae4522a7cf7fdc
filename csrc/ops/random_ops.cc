// Random ops drawn from the per-device generator with scalar parameters:
// uniform_, normal_, the other in-place distributions, bernoulli_, random_,
// dropout, randperm and multinomial (ops/random_draws.h: how they draw).
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "core/dtype_map.h"
#include "device/generator.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/device_findings.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/random_draws.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

// Runs `draw` (seed, offset, extra inputs -> value of self's shape) into self.
template <typename Draw>
at::Tensor& draw_into(at::Tensor& self, const char* op, const std::string& key,
                      const std::optional<at::Generator>& gen,
                      const std::vector<std::pair<c10::Scalar, ElementType>>& scalars,
                      const std::vector<at::Tensor>& tensors, Draw draw) {
  // As CPU: an expanded self would get one draw per element for memory that
  // several elements share.
  at::assert_no_internal_overlap(self);
  if (self.numel() == 0) return self;
  RandomProgram rp(op, key, gen, draw_device(self), static_cast<uint64_t>(self.numel()) * 2);
  TensorProgram& program = rp.program();
  for (const auto& [value, type] : scalars) program.scalar(value, type);
  for (const auto& t : tensors) program.input(t);
  program.output(self);
  program.run(
      [&](Builder& b, const std::vector<Value>& in) { return std::vector<Value>{draw(b, in)}; });
  return self;
}

void check_float(const at::Tensor& self, const char* op) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op,
              " is implemented for floating point tensors only, got ", self.scalar_type());
}

}  // namespace

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  check_float(self, "uniform_");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  const ElementType t = element_type_for(self.scalar_type(), "uniform_");
  const ElementType c = float_compute(t);
  const auto dims = self.sizes().vec();
  return draw_into(self, "uniform_", "uniform", gen, {{from, c}, {to, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value u = uniform01(b, in[0], in[1], dims, c);
                     Value range = b.splat(b.binary("subtract", in[3], in[2]), dims);
                     return b.convert(
                         b.binary("add", b.binary("multiply", u, range), b.splat(in[2], dims)), t);
                   });
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  check_float(self, "normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  const ElementType t = element_type_for(self.scalar_type(), "normal_");
  const ElementType c = float_compute(t);
  const auto dims = self.sizes().vec();
  return draw_into(self, "normal_", "normal", gen, {{mean, c}, {std, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value z = standard_normal(b, in[0], in[1], dims, c);
                     return b.convert(b.binary("add", b.binary("multiply", z, b.splat(in[3], dims)),
                                               b.splat(in[2], dims)),
                                      t);
                   });
}

double dtype_epsilon(at::ScalarType st) {
  switch (st) {
    case at::kHalf:
      return static_cast<double>(std::numeric_limits<c10::Half>::epsilon());
    case at::kBFloat16:
      return static_cast<double>(std::numeric_limits<c10::BFloat16>::epsilon());
    case at::kDouble:
      return std::numeric_limits<double>::epsilon();
    default:
      return std::numeric_limits<float>::epsilon();
  }
}

// The continuous distributions' dtype check, in CPU's words.
void check_continuous(const at::Tensor& self, const char* distribution) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), distribution,
              " distribution is a continuous probability distribution. dtype must be a floating "
              "point but you specified ",
              self.scalar_type());
}

at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  check_continuous(self, "Exponential");
  const ElementType t = element_type_for(self.scalar_type(), "exponential_");
  const ElementType c = float_compute(t);
  const auto dims = self.sizes().vec();
  // -log(u) / lambda with u in (0, 1); as CUDA does, the log is kept at most
  // -epsilon/2 of the dtype, so no value rounds to 0 (a sampler divides by
  // them: vLLM's Gumbel-max).
  const double epsilon = dtype_epsilon(self.scalar_type());
  return draw_into(self, "exponential_", "exponential", gen, {{lambd, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value log_u = b.unary("log", open_uniform01(b, in[0], in[1], dims, c));
                     log_u = b.binary("minimum", log_u, b.splat(b.constant(c, -epsilon / 2), dims));
                     return b.convert(
                         b.binary("divide", b.unary("negate", log_u), b.splat(in[2], dims)), t);
                   });
}

at::Tensor& cauchy_(at::Tensor& self, double median, double sigma,
                    std::optional<at::Generator> gen) {
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  check_continuous(self, "Cauchy");
  const ElementType t = element_type_for(self.scalar_type(), "cauchy_");
  const ElementType c = float_compute(t);
  const auto dims = self.sizes().vec();
  return draw_into(self, "cauchy_", "cauchy", gen, {{median, c}, {sigma, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     // median + sigma * tan(pi * (u - 1/2))
                     Value u = open_uniform01(b, in[0], in[1], dims, c);
                     Value angle =
                         b.binary("multiply", b.splat(b.constant(c, M_PI), dims),
                                  b.binary("subtract", u, b.splat(b.constant(c, 0.5), dims)));
                     Value v = b.binary("multiply", b.unary("tan", angle), b.splat(in[3], dims));
                     return b.convert(b.binary("add", v, b.splat(in[2], dims)), t);
                   });
}

at::Tensor& log_normal_(at::Tensor& self, double mean, double std,
                        std::optional<at::Generator> gen) {
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"log_normal_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  const ElementType t = element_type_for(self.scalar_type(), "log_normal_");
  const ElementType c = float_compute(t);
  const auto dims = self.sizes().vec();
  return draw_into(self, "log_normal_", "log_normal", gen, {{mean, c}, {std, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value z = standard_normal(b, in[0], in[1], dims, c);
                     Value v = b.binary("add", b.binary("multiply", z, b.splat(in[3], dims)),
                                        b.splat(in[2], dims));
                     return b.convert(b.unary("exponential", v), t);
                   });
}

at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  TORCH_CHECK_NOT_IMPLEMENTED(
      self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()),
      "\"geometric_cpu\" not implemented for '", c10::toString(self.scalar_type()), "'");
  const ElementType t = element_type_for(self.scalar_type(), "geometric_");
  const auto dims = self.sizes().vec();
  const ElementType c = ElementType::kF64;
  return draw_into(self, "geometric_", "geometric", gen, {{p, c}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     // The number of trials to the first success: ceil(log(u) / log(1 - p)).
                     Value u = open_uniform01(b, in[0], in[1], dims, c);
                     Value trials =
                         b.binary("divide", b.unary("log", u),
                                  b.splat(b.unary("log_plus_one", b.unary("negate", in[2])), dims));
                     return b.convert(b.unary("ceil", trials), t);
                   });
}

// nn.RReLU: in training each element <= 0 is scaled by a slope drawn from
// U(lower, upper), recorded in `noise` (1 elsewhere) for the backward; in
// evaluation, leaky_relu with the mean slope and `noise` untouched (CPU).
at::Tensor& rrelu_with_noise_out(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                                 const at::Scalar& upper, bool training,
                                 std::optional<at::Generator> gen, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"rrelu_with_noise_out_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(self.sym_sizes() == noise.sym_sizes(),
              "noise tensor shape must match self tensor shape. Got self.shape = ", self.sizes(),
              " noise.shape = ", noise.sizes());
  at::Tensor value;
  if (training) {
    const at::Tensor slopes =
        at::empty_like(self).uniform_(lower.toDouble(), upper.toDouble(), gen);
    noise.copy_(at::where(self.le(0), slopes, at::ones_like(self)));
    value = self * noise;
  } else {
    value = at::leaky_relu(self, (lower.toDouble() + upper.toDouble()) / 2);
  }
  at::native::resize_output(out, value.sizes());
  out.copy_(value);
  return out;
}

at::Tensor rrelu_with_noise(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                            const at::Scalar& upper, bool training,
                            std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(self);
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, out);
}

at::Tensor& rrelu_with_noise_(at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                              const at::Scalar& upper, bool training,
                              std::optional<at::Generator> gen) {
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, self);
}

at::Tensor rrelu_with_noise_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                     const at::Tensor& noise, const at::Scalar& lower,
                                     const at::Scalar& upper, bool training, bool self_is_result) {
  if (training && upper.toDouble() - lower.toDouble() > 1e-6) return grad_output * noise;
  return at::leaky_relu_backward(grad_output, self, (lower.toDouble() + upper.toDouble()) / 2,
                                 self_is_result);
}

at::Tensor& bernoulli_float_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  const ElementType t = element_type_for(self.scalar_type(), "bernoulli_");
  const auto dims = self.sizes().vec();
  return draw_into(self, "bernoulli_", "bernoulli_p", gen, {{p, ElementType::kF64}}, {},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value u = uniform01(b, in[0], in[1], dims, ElementType::kF64);
                     return b.convert(b.compare(Compare::kLT, u, b.splat(in[2], dims)), t);
                   });
}

at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p,
                              std::optional<at::Generator> gen) {
  const ElementType t = element_type_for(self.scalar_type(), "bernoulli_");
  const auto dims = self.sizes().vec();
  return draw_into(self, "bernoulli_", "bernoulli_t", gen, {}, {p},
                   [&](Builder& b, const std::vector<Value>& in) {
                     Value u = uniform01(b, in[0], in[1], dims, ElementType::kF64);
                     Value prob = broadcast_to(b, b.convert(in[2], ElementType::kF64), dims);
                     return b.convert(b.compare(Compare::kLT, u, prob), t);
                   });
}

at::Tensor& random_from_(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                         std::optional<at::Generator> gen) {
  const char* op = "random_";
  const ElementType t = element_type_for(self.scalar_type(), op);
  // Without `to`: up to the largest value the dtype holds exactly (CPU rule).
  uint64_t range;
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {
    int64_t max;
    switch (self.scalar_type()) {
      case at::kFloat:
        max = int64_t(1) << 24;
        break;
      case at::kDouble:
        max = int64_t(1) << 53;
        break;
      case at::kHalf:
        max = int64_t(1) << 11;
        break;
      case at::kBFloat16:
        max = int64_t(1) << 8;
        break;
      case at::kBool:
        max = 1;
        break;
      case at::kByte:
        max = 255;
        break;
      case at::kChar:
        max = 127;
        break;
      case at::kShort:
        max = 32767;
        break;
      case at::kInt:
        max = 2147483647;
        break;
      default:
        max = std::numeric_limits<int64_t>::max();
        break;
    }
    range = static_cast<uint64_t>(max) - static_cast<uint64_t>(from) + 1;
  }
  const auto dims = self.sizes().vec();
  return draw_into(self, op, "random", gen,
                   {{c10::Scalar(static_cast<int64_t>(range)), ElementType::kU64},
                    {c10::Scalar(from), ElementType::kS64}},
                   {}, [&](Builder& b, const std::vector<Value>& in) {
                     Value bits = random_bits(b, in[0], in[1], {ElementType::kU64, dims});
                     Value v = b.binary("remainder", bits, b.splat(in[2], dims));
                     v = b.binary("add", b.convert(v, ElementType::kS64), b.splat(in[3], dims));
                     return b.convert(v, t);
                   });
}

at::Tensor& random_to_(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from_(self, 0, to, gen);
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  return random_from_(self, 0, std::nullopt, gen);
}

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(0 <= p && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::Tensor out = device_empty(input.sizes(), input.options());
  at::Tensor mask = device_empty(input.sizes(), input.options().dtype(at::kBool));
  if (input.numel() == 0) return {out, mask};
  const bool training = !train.has_value() || *train;
  const ElementType t = element_type_for(input.scalar_type(), "native_dropout");
  const auto dims = input.sizes().vec();
  if (!training || p == 0) {
    copy_on_device(out, input, "native_dropout");
    fill_tensor(mask, true, "native_dropout");
    return {out, mask};
  }
  RandomProgram rp("native_dropout", "dropout", std::nullopt, draw_device(input),
                   static_cast<uint64_t>(input.numel()));
  TensorProgram& program = rp.program();
  program.scalar(p, ElementType::kF64);
  program.input(input);
  program.output(out);
  program.output(mask);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Keep with probability 1 - p and scale kept values by 1 / (1 - p).
    Value u = uniform01(b, in[0], in[1], dims, ElementType::kF32);
    Value keep = b.compare(Compare::kGE, u, b.splat(b.convert(in[2], ElementType::kF32), dims));
    const ElementType c = t == ElementType::kF64 ? t : ElementType::kF32;
    Value scale = b.binary("divide", b.constant(c, 1),
                           b.binary("subtract", b.constant(c, 1), b.convert(in[2], c)));
    if (p == 1) scale = b.constant(c, 0);
    Value y = b.binary("multiply", b.convert(in[3], c), b.splat(scale, dims));
    y = b.select(keep, y, b.zeros({c, dims}));
    return std::vector<Value>{b.convert(y, t), keep};
  });
  return {out, mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  // grad * mask * scale: an integer or bool grad times the float scale
  // promotes to the default float dtype, as on CPU.
  const at::ScalarType out_type = at::isFloatingType(grad.scalar_type())
                                      ? grad.scalar_type()
                                      : c10::typeMetaToScalarType(c10::get_default_dtype());
  at::Tensor out = device_empty(grad.sizes(), grad.options().dtype(out_type));
  if (grad.numel() == 0) return out;
  const ElementType t = element_type_for(out_type, "native_dropout_backward");
  const ElementType c = t == ElementType::kF64 ? t : ElementType::kF32;
  const auto dims = grad.sizes().vec();
  TensorProgram program("native_dropout_backward", "dropout_bwd");
  program.input(grad);
  program.input(mask);
  program.scalar(scale, c);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = b.binary("multiply", b.convert(in[0], c), b.splat(in[2], dims));
    Value keep = b.convert(broadcast_to(b, in[1], dims), ElementType::kPred);
    return std::vector<Value>{b.convert(b.select(keep, g, b.zeros({c, dims})), t)};
  });
  return out;
}

at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "randperm: n must be non-negative, got", n);
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), "randperm");
  RandomProgram rp("randperm", "randperm", gen, draw_device(out), static_cast<uint64_t>(n));
  TensorProgram& program = rp.program();
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Sorting by random keys carries the positions along: a uniform shuffle.
    Value keys = random_bits(b, in[0], in[1], {ElementType::kU64, {n}});
    Value positions = b.iota({ElementType::kS64, {n}}, 0);
    return std::vector<Value>{b.convert(b.sort({keys, positions}, 0, false)[1], t)};
  });
  return out;
}

at::Tensor multinomial(const at::Tensor& self, int64_t num_samples, bool replacement,
                       std::optional<at::Generator> gen) {
  const char* op = "multinomial";
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, op, ": prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op,
              ": only floating-point dtypes are supported for self");
  TORCH_CHECK(num_samples > 0, op, ": cannot sample n_sample <= 0 samples");
  const int64_t n = self.size(-1), rows = self.dim() == 2 ? self.size(0) : 1;
  TORCH_CHECK(replacement || num_samples <= n, op,
              ": cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  std::vector<int64_t> out_shape{num_samples};
  if (self.dim() == 2) out_shape.insert(out_shape.begin(), rows);
  at::Tensor out = device_empty(out_shape, self.options().dtype(at::kLong));
  if (out.numel() == 0) return out;
  RandomProgram rp(op, program_key("multinomial", num_samples, replacement), gen, draw_device(self),
                   static_cast<uint64_t>(rows * std::max(n, num_samples)));
  TensorProgram& program = rp.program();
  program.input(self);
  program.output(out);
  // CPU's checks of the probabilities, found on the device (no sync here).
  program.report_findings(op, IndexErrorClass::kRuntimeError);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const ElementType c = ElementType::kF64;
    Value p = b.reshape(b.convert(in[2], c), {rows, n});
    Value finding = invalid_distribution_finding(b, p);
    Value result;
    if (replacement) {
      // Inverse CDF: the sample is how many cumulative weights lie at or
      // below u * total.
      Value cdf =
          b.reduce_window(p, b.constant(c, 0), {1, n}, {1, 1}, {1, 1}, {{0, 0}, {n - 1, 0}}, "add");
      Value total = b.reshape(b.slice(cdf, {0, n - 1}, {rows, n}, {1, 1}), {rows, 1});
      Value u = uniform01(b, in[0], in[1], {rows, num_samples}, c);
      Value target = b.binary("multiply", u, broadcast_to(b, total, {rows, num_samples}));
      const std::vector<int64_t> cube{rows, num_samples, n};
      Value below = b.compare(Compare::kLE, b.broadcast_in_dim(cdf, cube, {0, 2}),
                              b.broadcast_in_dim(target, cube, {0, 1}));
      Value count = b.reduce(b.convert(below, ElementType::kS64),
                             b.constant_int(ElementType::kS64, 0), {2}, "add");
      result = b.binary("minimum", count,
                        b.splat(b.constant_int(ElementType::kS64, n - 1), {rows, num_samples}));
    } else {
      // Gumbel top-k: the k largest log(p) - log(-log(u)) are a sample
      // without replacement; zero-probability classes are never chosen.
      Value u = uniform01(b, in[0], in[1], {rows, n}, c);
      Value one = b.splat(b.constant(c, 1), {rows, n});
      Value gumbel =
          b.unary("negate",
                  b.unary("log", b.unary("negate", b.unary("log", b.binary("subtract", one, u)))));
      Value keys = b.binary("add", b.unary("log", p), gumbel);
      Value idx = b.iota({ElementType::kS64, {rows, n}}, 1);
      Value sorted = b.sort({keys, idx}, 1, true)[1];
      result = b.slice(sorted, {0, 0}, {rows, num_samples}, {1, 1});
    }
    return std::vector<Value>{b.reshape(result, out_shape), finding};
  });
  return out;
}

}  // namespace torch_tpu::ops

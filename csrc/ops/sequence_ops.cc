// linspace and logspace. start, end and base are runtime scalars (a new
// value does not recompile; the length does, being the result's shape), and
// each element is computed by CPU's kernel's formula in CPU's types: values
// below the halfway point step up from start, the rest step down from end,
// so both endpoints are exact.
#include <ATen/native/Resize.h>

#include <cmath>

#include "core/dtype_map.h"
#include "hlo/int_constants.h"
#include "ops/program_key.h"
#include "ops/sequence_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64_splat;
using hlo::Value;

void prepare(int64_t steps, at::Tensor& out, const char* op) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  TORCH_CHECK_NOT_IMPLEMENTED(
      out.scalar_type() != at::kBool && !at::isComplexType(out.scalar_type()), "\"", op,
      "_cpu\" not implemented for '", c10::toString(out.scalar_type()), "'");
  if (out.numel() != steps) out.resize_({steps});
}

// CPU's two-sided steps, in the type of `lo`, `hi` and `step` (scalars):
// positions below steps / 2 step up from lo, the rest step down from hi, so
// both endpoints are exact.
Value two_sided_steps(Builder& b, Value lo, Value hi, Value step, int64_t steps) {
  const std::vector<int64_t> dims{steps};
  const ElementType type = step.type.element;
  Value idx = b.iota({ElementType::kS64, dims}, 0);
  Value from_end = b.binary("subtract", s64_splat(b, steps - 1, dims), idx);
  Value step_b = b.splat(step, dims);
  Value up = b.binary("add", b.splat(lo, dims), b.binary("multiply", step_b, b.convert(idx, type)));
  Value down = b.binary("subtract", b.splat(hi, dims),
                        b.binary("multiply", step_b, b.convert(from_end, type)));
  Value lower_half = b.compare(Compare::kLT, idx, s64_splat(b, steps / 2, dims));
  return b.select(lower_half, up, down);
}

}  // namespace

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps,
                         at::Tensor& out) {
  const char* op = "linspace";
  prepare(steps, out, op);
  if (steps == 0) return out;
  if (steps == 1) {
    fill_tensor(out, start, op);
    return out;
  }
  const ElementType t = element_type_for(out.scalar_type(), op);
  // Integer results step in double and truncate; floating ones step in
  // their own type (bfloat16 included, as CPU's BFloat16 arithmetic does).
  const bool integral = !hlo::is_float(t);
  const ElementType step_type = integral ? ElementType::kF64 : t;
  TensorProgram program(op, program_key("linspace", steps));
  program.scalar(start, t);
  program.scalar(end, t);
  // The divisor is a runtime value too: XLA would turn a division by a
  // constant into a multiplication by its reciprocal, which rounds differently.
  program.scalar(steps - 1, step_type);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value lo = b.convert(in[0], step_type), hi = b.convert(in[1], step_type);
    Value step = b.binary("divide", b.binary("subtract", hi, lo), in[2]);
    return std::vector<Value>{b.convert(two_sided_steps(b, lo, hi, step, steps), t)};
  });
  return out;
}

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base,
                         at::Tensor& out) {
  const char* op = "logspace";
  prepare(steps, out, op);
  if (steps == 0) return out;
  if (steps == 1) {
    fill_tensor(out, std::pow(base, start.to<double>()), op);
    return out;
  }
  // CPU: start and end in the result's type, their difference in that type,
  // then the exponent and the power in double.
  const ElementType t = element_type_for(out.scalar_type(), op);
  TensorProgram program(op, program_key("logspace", steps));
  program.scalar(start, t);
  program.scalar(end, t);
  program.scalar(base, ElementType::kF64);
  program.scalar(steps - 1, ElementType::kF64);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const std::vector<int64_t> dims{steps};
    const ElementType f64 = ElementType::kF64;
    Value lo = b.convert(in[0], f64), hi = b.convert(in[1], f64);
    // (C++ subtracts 8- and 16-bit integers as int.)
    const bool narrow_int = !hlo::is_float(t) && hlo::byte_size(t) < 4;
    Value span = narrow_int ? b.binary("subtract", b.convert(in[1], ElementType::kS32),
                                       b.convert(in[0], ElementType::kS32))
                            : b.binary("subtract", in[1], in[0]);
    span = b.convert(span, f64);
    Value step = b.binary("divide", span, in[3]);
    Value exponent = two_sided_steps(b, lo, hi, step, steps);
    return std::vector<Value>{b.convert(b.binary("power", b.splat(in[2], dims), exponent), t)};
  });
  return out;
}

}  // namespace torch_tpu::ops

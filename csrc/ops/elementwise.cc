#include "ops/elementwise.h"

#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype_map.h"
#include "exec/key_buffer.h"
#include "ops/bessel.h"
#include "ops/broadcast.h"
#include "ops/device_findings.h"
#include "ops/elementwise_dtypes.h"
#include "ops/expanded_writes.h"
#include "ops/hurwitz_zeta.h"
#include "ops/incomplete_gamma.h"
#include "ops/normal_tail_functions.h"
#include "ops/orthogonal_polynomials.h"
#include "ops/out_checks.h"
#include "ops/overload_names.h"
#include "ops/result_layout.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

// How an op's result dtype follows from the promoted operand dtype.
enum class ResultDtype {
  kPromoted,  // add, mul, maximum, abs, ...
  kFloat,     // sqrt, exp, div: integers and bool compute in the default float
  kBool,      // comparisons and logical ops
  kSelf,      // masked_fill: the dtype of `self`
};

// The operands of one call, by schema argument name, each converted to the
// compute type (except masks and conditions) and broadcast to the output
// shape; plus the static attributes (strings, bools, ints) of the call.
struct Inputs {
  std::map<std::string, Value> values;
  std::map<std::string, std::string> attrs;
  std::set<std::string> scalar_operands;  // operands passed as Python numbers
  ElementType compute;
  ElementType promoted;  // the operands' common dtype (compute widens half and bfloat16)
  std::vector<int64_t> shape;

  bool has(const std::string& name) const { return values.count(name) > 0; }
  bool is_scalar(const std::string& name) const { return scalar_operands.count(name) > 0; }
  Value operator[](const std::string& name) const {
    auto it = values.find(name);
    TORCH_CHECK(it != values.end(), "elementwise lowering: missing operand ", name);
    return it->second;
  }
  std::string attr(const std::string& name, const std::string& fallback = "") const {
    auto it = attrs.find(name);
    return it == attrs.end() ? fallback : it->second;
  }
};

using LowerFn = std::function<Value(Builder&, const Inputs&)>;

struct ElementwiseDef {
  ResultDtype result;
  LowerFn lower;
  // Operands that take part in type promotion; empty means all of them.
  std::vector<std::string> promote = {};
};

// Operands that keep their own dtype (boolean masks and conditions).
bool keeps_own_type(const std::string& name) { return name == "condition" || name == "mask"; }

Value scalar_like(Builder& b, const Inputs& in, double v) {
  return b.splat(b.constant(in.compute, v), in.shape);
}

Value to_bool(Builder& b, Value v) {
  if (v.type.element == ElementType::kPred) return v;
  return b.compare(hlo::Compare::kNE, v, b.zeros(v.type));
}

LowerFn unary(const char* op) {
  return [op](Builder& b, const Inputs& in) { return b.unary(op, in["self"]); };
}
LowerFn chlo(const char* op) {
  return [op](Builder& b, const Inputs& in) {
    return b.op(std::string("chlo.") + op, {in["self"]}, in["self"].type);
  };
}
LowerFn binary(const char* op, const char* rhs = "other") {
  return [op, rhs](Builder& b, const Inputs& in) { return b.binary(op, in["self"], in[rhs]); };
}
LowerFn compare(hlo::Compare direction) {
  return [direction](Builder& b, const Inputs& in) {
    return b.compare(direction, in["self"], in["other"]);
  };
}
// Integer rounding ops are the identity.
LowerFn rounding(const char* op) {
  return [op](Builder& b, const Inputs& in) {
    return hlo::is_float(in.compute) ? b.unary(op, in["self"]) : in["self"];
  };
}
LowerFn logical(const char* op) {
  return [op](Builder& b, const Inputs& in) {
    return b.binary(op, to_bool(b, in["self"]), to_bool(b, in["other"]));
  };
}
// x * c for a compile-time constant c.
Value scale(Builder& b, const Inputs& in, Value x, double c) {
  return b.binary("multiply", x, scalar_like(b, in, c));
}
// a + alpha * b (alpha is present only when it is not 1), rounded once, as
// CPU's vectorized half/bfloat16 loop computes it (its scalar loop, taken for
// tails and mixed dtypes, rounds alpha * b first).
LowerFn add_like(const char* op) {
  return [op](Builder& b, const Inputs& in) {
    Value rhs = in.has("alpha") ? b.binary("multiply", in["other"], in["alpha"]) : in["other"];
    return b.binary(op, in["self"], rhs);
  };
}

// -lambd <= x <= lambd: where hardshrink gives 0 and both shrinks' gradients
// vanish (false for NaN).
Value shrunk(Builder& b, Value x, Value lambd) {
  return b.binary("and", b.compare(hlo::Compare::kGE, x, b.unary("negate", lambd)),
                  b.compare(hlo::Compare::kLE, x, lambd));
}

Value splat_int(Builder& b, const Inputs& in, int64_t v) {
  return b.splat(b.constant_int(in.compute, v), in.shape);
}

// The sign bit of a float tensor: set for -0.0 and negative NaNs too, which
// no comparison can see.
Value float_sign_bit(Builder& b, Value x) {
  const size_t size = hlo::byte_size(x.type.element);
  const ElementType bits = size == 8   ? ElementType::kS64
                           : size == 4 ? ElementType::kS32
                                       : ElementType::kS16;
  Value i = b.bitcast_convert(x, {bits, x.type.dims});
  return b.compare(hlo::Compare::kLT, i, b.zeros(i.type));
}

// |x| of a complex x, as its real type.
Value complex_abs(Builder& b, Value x) {
  return b.op("stablehlo.abs", {x}, {hlo::real_part_type(x.type.element), x.type.dims});
}

// z * c for a real constant c, part by part: a complex multiply by (c, 0)
// turns an infinite part into NaN (log2(0) is -inf, not -inf + nan j).
Value scale_parts(Builder& b, Value z, double c) {
  const hlo::TensorType part{hlo::real_part_type(z.type.element), z.type.dims};
  Value k = b.splat(b.constant(part.element, c), part.dims);
  Value re = b.binary("multiply", b.op("stablehlo.real", {z}, part), k);
  Value im = b.binary("multiply", b.op("stablehlo.imag", {z}, part), k);
  return b.op("stablehlo.complex", {re, im}, z.type);
}

// Python's floor division, as ATen computes it (c10::div_floor_floating /
// div_floor_integer): through the remainder rather than floor(x / y), so
// that x == (x // y) * y + x % y holds where floor(x / y) rounds wrongly
// (1 // 0.1 is 9, inf // 3 is nan, 0.135 // -inf is -1).
Value floor_div(Builder& b, const Inputs& in, Value x, Value y) {
  Value zero = b.zeros(x.type);
  if (hlo::is_float(in.compute)) {
    Value one = scalar_like(b, in, 1);
    Value quotient = b.binary("divide", x, y);
    Value mod = b.binary("remainder", x, y);
    Value div = b.binary("divide", b.binary("subtract", x, mod), y);
    Value signs_differ = b.compare(hlo::Compare::kNE, b.compare(hlo::Compare::kLT, y, zero),
                                   b.compare(hlo::Compare::kLT, mod, zero));
    Value adjust = b.binary("and", b.compare(hlo::Compare::kNE, mod, zero), signs_differ);
    div = b.select(adjust, b.binary("subtract", div, one), div);
    Value floored = b.unary("floor", div);
    Value round_up =
        b.compare(hlo::Compare::kGT, b.binary("subtract", div, floored), scalar_like(b, in, 0.5));
    floored = b.select(round_up, b.binary("add", floored, one), floored);
    // A zero quotient takes the sign of x / y (finite there: x * 0 is its
    // copysign(0, .)).
    Value signed_zero = b.binary("multiply", quotient, zero);
    Value result = b.select(b.compare(hlo::Compare::kNE, div, zero), floored, signed_zero);
    // Division by zero gives the IEEE quotient.
    return b.select(b.compare(hlo::Compare::kEQ, y, zero), quotient, result);
  }
  // Integer division rounding toward negative infinity.
  Value q = b.binary("divide", x, y);
  Value r = b.binary("remainder", x, y);
  Value adjust = b.binary("and", b.compare(hlo::Compare::kNE, r, zero),
                          b.compare(hlo::Compare::kNE, b.compare(hlo::Compare::kLT, r, zero),
                                    b.compare(hlo::Compare::kLT, y, zero)));
  return b.select(adjust, b.binary("subtract", q, splat_int(b, in, 1)), q);
}

// x ** e for integers, by squaring over every bit of the exponent (XLA's
// integer power looks at the low bits only), with C's rules for negative
// exponents: 1 and -1 keep their magnitude, every other base gives 0.
Value integer_pow(Builder& b, const Inputs& in, Value x, Value e) {
  const ElementType t = x.type.element;
  const bool is_signed = hlo::is_signed_int(t);
  const int steps = static_cast<int>(hlo::byte_size(t)) * 8 - (is_signed ? 1 : 0);
  Value zero = b.zeros(x.type);
  Value one = splat_int(b, in, 1);
  Value result = one;
  Value base = x;
  Value bits = e;
  for (int i = 0; i < steps; ++i) {
    Value bit_set = b.compare(hlo::Compare::kNE, b.binary("and", bits, one), zero);
    result = b.select(bit_set, b.binary("multiply", result, base), result);
    if (i + 1 < steps) {
      base = b.binary("multiply", base, base);
      bits = b.binary("shift_right_logical", bits, one);
    }
  }
  if (!is_signed) return result;
  Value minus_one = splat_int(b, in, -1);
  Value odd = b.compare(hlo::Compare::kNE, b.binary("and", e, one), zero);
  Value negative = b.select(
      b.compare(hlo::Compare::kEQ, x, one), one,
      b.select(b.compare(hlo::Compare::kEQ, x, minus_one), b.select(odd, minus_one, one), zero));
  return b.select(b.compare(hlo::Compare::kLT, e, zero), negative, result);
}

Value pow(Builder& b, const Inputs& in) {
  Value x = in["self"], e = in["exponent"];
  if (in.compute == ElementType::kPred) {
    // bool ** bool (a Python bool exponent): as uint8, back to bool
    Inputs as_byte = in;
    as_byte.compute = ElementType::kU8;
    Value r =
        integer_pow(b, as_byte, b.convert(x, ElementType::kU8), b.convert(e, ElementType::kU8));
    return b.convert(r, ElementType::kPred);
  }
  if (!hlo::is_float(in.compute) && !hlo::is_complex(in.compute)) return integer_pow(b, in, x, e);
  Value p = b.binary("power", x, e);
  if (!in.is_scalar("exponent")) return p;
  // A Python number exponent: CPU's kernel takes sqrt, rsqrt and products
  // for these values (pow(-inf, 0.5) is nan, as sqrt(-inf) is), chosen at
  // run time here since the exponent is a runtime scalar.
  auto when = [&](double value, Value then, Value otherwise) {
    return b.select(b.compare(hlo::Compare::kEQ, e, scalar_like(b, in, value)), then, otherwise);
  };
  Value square = b.binary("multiply", x, x);
  p = when(2, square, p);
  p = when(3, b.binary("multiply", square, x), p);
  p = when(0.5, b.unary("sqrt", x), p);
  return when(-0.5, b.unary("rsqrt", x), p);
}

Value python_remainder(Builder& b, Value x, Value y) {
  Value r = b.binary("remainder", x, y);
  Value zero = b.zeros(r.type);
  Value fix = b.binary("and", b.compare(hlo::Compare::kNE, r, zero),
                       b.compare(hlo::Compare::kNE, b.compare(hlo::Compare::kLT, r, zero),
                                 b.compare(hlo::Compare::kLT, y, zero)));
  return b.select(fix, b.binary("add", r, y), r);
}

// Phi(x). In double, erfc(-x / sqrt(2)) / 2: accurate far below zero. In
// the narrower types, (1 + erf(x / sqrt(2))) / 2, as CPU's float kernels
// form it: XLA expands erfc into two polynomial branches, an exp and a
// divide (on XLA CPU it made gelu 3x dearer than erf, and gelu the costliest
// fusion of a GPT forward). 1 + erf cancels below zero; under x = -5.5,
// where what is left is erf's rounding error (gelu(-1e4) would be -9e-4
// rather than -0) and the true Phi is below float's resolution of 1, Phi
// is 0, as CPU's float kernel rounds it.
Value normal_cdf(Builder& b, const Inputs& in, Value x) {
  if (x.type.element == hlo::ElementType::kF64) {
    Value z = scale(b, in, x, -0.7071067811865476);
    return scale(b, in, b.op("chlo.erfc", {z}, z.type), 0.5);
  }
  Value z = scale(b, in, x, 0.7071067811865476);
  Value half_one_plus_erf =
      scale(b, in, b.binary("add", scalar_like(b, in, 1), b.op("chlo.erf", {z}, z.type)), 0.5);
  return b.select(b.compare(hlo::Compare::kLT, x, scalar_like(b, in, -5.5)), b.zeros(x.type),
                  half_one_plus_erf);
}

Value gelu(Builder& b, const Inputs& in, Value x) {
  if (in.attr("approximate", "none") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 = b.binary("multiply", b.binary("multiply", x, x), x);
    Value inner = scale(b, in, b.binary("add", x, scale(b, in, x3, 0.044715)), 0.7978845608028654);
    // (0.5 x) first, as CPU and CUDA associate it: no overflow near the max
    return b.binary("multiply", scale(b, in, x, 0.5),
                    b.binary("add", scalar_like(b, in, 1), b.unary("tanh", inner)));
  }
  // x Phi(x) with no intermediate overflow, as CPU's scalar and double
  // kernels and CUDA's compute it. (CPU's vectorized float kernel forms
  // x (1 + erf) first: there |x| above half the float max is inf and +inf is
  // NaN, depending on the tensor's layout; that is not followed.)
  return b.binary("multiply", x, normal_cdf(b, in, x));
}

Value gelu_grad(Builder& b, const Inputs& in, Value x) {
  if (in.attr("approximate", "none") == "tanh") {
    const double k = 0.7978845608028654, c = 0.044715;
    Value x2 = b.binary("multiply", x, x);
    Value inner = scale(b, in, b.binary("add", x, scale(b, in, b.binary("multiply", x2, x), c)), k);
    Value t = b.unary("tanh", inner);
    Value one = scalar_like(b, in, 1);
    Value left = scale(b, in, b.binary("add", one, t), 0.5);
    Value sech2 = b.binary("subtract", one, b.binary("multiply", t, t));
    Value dinner = scale(b, in, b.binary("add", one, scale(b, in, x2, 3 * c)), k);
    Value right = scale(b, in, b.binary("multiply", x, b.binary("multiply", sech2, dinner)), 0.5);
    return b.binary("add", left, right);
  }
  Value cdf = normal_cdf(b, in, x);
  Value pdf = scale(b, in, b.unary("exponential", scale(b, in, b.binary("multiply", x, x), -0.5)),
                    0.3989422804014327);
  return b.binary("add", cdf, b.binary("multiply", x, pdf));
}

Value softplus(Builder& b, const Inputs& in, Value x) {
  // log1p(exp(beta x)) / beta, linear above threshold (beta, threshold are runtime scalars)
  Value bx = b.binary("multiply", x, in["beta"]);
  Value soft = b.binary("divide", b.unary("log_plus_one", b.unary("exponential", bx)), in["beta"]);
  return b.select(b.compare(hlo::Compare::kGT, bx, in["threshold"]), x, soft);
}

// x raised to `lo` / lowered to `hi`, as ATen's clamp kernels: a NaN in x or
// in the bound gives NaN, and x is kept where it equals the bound (so
// clamp(-0.0, min=0.0) is -0.0). Integers need no NaN test.
Value clamp_below(Builder& b, Value x, Value lo) {
  if (!hlo::is_float(x.type.element)) return b.maximum(x, lo);
  Value raise =
      b.binary("or", b.compare(hlo::Compare::kLT, x, lo), b.compare(hlo::Compare::kNE, lo, lo));
  return b.select(raise, lo, x);
}
Value clamp_above(Builder& b, Value x, Value hi) {
  if (!hlo::is_float(x.type.element)) return b.minimum(x, hi);
  Value lower =
      b.binary("or", b.compare(hlo::Compare::kGT, x, hi), b.compare(hlo::Compare::kNE, hi, hi));
  return b.select(lower, hi, x);
}

Value clamp_value(Builder& b, const Inputs& in, Value x) {
  // min first, then max: where min > max the result is max, as in ATen.
  if (in.has("min")) x = clamp_below(b, x, in["min"]);
  if (in.has("max")) x = clamp_above(b, x, in["max"]);
  return x;
}

// sign and sgn of a real number: (x > 0) - (x < 0), so NaN and -0.0 give
// +0.0 as on CPU (stablehlo.sign keeps both, and takes no unsigned type).
Value real_sign(Builder& b, const Inputs& in) {
  Value x = in["self"];
  if (in.compute == ElementType::kPred) return x;  // sign of a bool is itself
  if (hlo::is_signed_int(in.compute)) return b.unary("sign", x);
  Value zero = b.zeros(x.type);
  if (hlo::is_unsigned_int(in.compute)) {
    return b.convert(b.compare(hlo::Compare::kNE, x, zero), in.compute);
  }
  return b.binary("subtract", b.convert(b.compare(hlo::Compare::kGT, x, zero), in.compute),
                  b.convert(b.compare(hlo::Compare::kLT, x, zero), in.compute));
}

// fmax/fmin: the other operand where one is NaN (NaN only if both are).
Value fmax_fmin(Builder& b, const Inputs& in, hlo::Compare beyond) {
  Value x = in["self"], y = in["other"];
  if (!hlo::is_float(in.compute)) {
    return beyond == hlo::Compare::kGT ? b.maximum(x, y) : b.minimum(x, y);
  }
  Value take_x = b.binary("or", b.compare(beyond, x, y), b.compare(hlo::Compare::kNE, y, y));
  return b.select(take_x, x, y);
}

// --- Shifts, number theory and special functions ---

// x << s and x >> s with CPU's rules for shift amounts outside [0, bits):
// 0 for left and logical right shifts, the sign fill for arithmetic right.
Value shift(Builder& b, const Inputs& in, bool left) {
  Value x = in["self"], s = in["other"];
  const int64_t bits = 8 * static_cast<int64_t>(hlo::byte_size(x.type.element));
  Value zero = b.zeros(x.type);
  Value width = b.splat(b.constant_int(x.type.element, bits), in.shape);
  Value valid = b.binary("and", b.compare(hlo::Compare::kGE, s, zero),
                         b.compare(hlo::Compare::kLT, s, width));
  if (left) return b.select(valid, b.binary("shift_left", x, s), zero);
  if (!hlo::is_signed_int(x.type.element)) {
    return b.select(valid, b.binary("shift_right_logical", x, s), zero);
  }
  Value fill = b.binary("shift_right_arithmetic", x,
                        b.splat(b.constant_int(x.type.element, bits - 1), in.shape));
  return b.select(valid, b.binary("shift_right_arithmetic", x, s), fill);
}

// gcd by Euclid's algorithm as CPU runs it (on |a| and |b|), unrolled for
// the longest possible run: consecutive Fibonacci numbers are the worst
// case, and fewer than 95 steps reach 2^64.
Value gcd_value(Builder& b, const Inputs& in, Value a, Value c) {
  const ElementType t = a.type.element;
  if (hlo::is_signed_int(t)) {
    a = b.unary("abs", a);
    c = b.unary("abs", c);
  }
  const size_t bytes = hlo::byte_size(t);
  const int steps = bytes == 1 ? 14 : bytes == 2 ? 26 : bytes == 4 ? 49 : 95;
  Value zero = b.zeros(a.type);
  Value one = b.splat(b.constant_int(t, 1), in.shape);
  for (int i = 0; i < steps; ++i) {
    Value nonzero = b.compare(hlo::Compare::kNE, a, zero);
    Value r = b.binary("remainder", c, b.select(nonzero, a, one));
    c = b.select(nonzero, a, c);
    a = b.select(nonzero, r, a);
  }
  return c;
}

Value lcm_value(Builder& b, const Inputs& in, Value a, Value c) {
  Value g = gcd_value(b, in, a, c);
  Value zero = b.zeros(g.type);
  Value is_zero = b.compare(hlo::Compare::kEQ, g, zero);
  Value safe = b.select(is_zero, b.splat(b.constant_int(g.type.element, 1), in.shape), g);
  // C++ promotes 8- and 16-bit operands to int before the product and abs,
  // so CPU wraps only when storing the result.
  const ElementType t = g.type.element;
  const ElementType wide = hlo::byte_size(t) < 4 ? ElementType::kS32 : t;
  Value r = b.binary("multiply", b.convert(b.binary("divide", a, safe), wide), b.convert(c, wide));
  if (hlo::is_signed_int(wide)) r = b.unary("abs", r);
  return b.select(is_zero, zero, b.convert(r, t));
}

// log(exp(x) + exp(y)) (base 2 with `base2`), CPU's formula: the larger
// operand plus log1p of the smaller one's relative weight; equal infinities
// are returned as they are (inf - inf would be NaN).
Value log_add_exp(Builder& b, const Inputs& in, bool base2) {
  Value x = in["self"], y = in["other"];
  Value m = b.binary("maximum", x, y);
  Value neg_d = b.unary("negate", b.unary("abs", b.binary("subtract", x, y)));
  Value r;
  if (base2) {
    Value w = b.unary("log_plus_one", b.binary("power", scalar_like(b, in, 2.0), neg_d));
    r = b.binary("add", m, scale(b, in, w, 1.4426950408889634));
  } else {
    r = b.binary("add", m, b.unary("log_plus_one", b.unary("exponential", neg_d)));
  }
  Value same_inf =
      b.binary("and", b.compare(hlo::Compare::kEQ, x, y),
               b.compare(hlo::Compare::kEQ, b.unary("abs", x), scalar_like(b, in, INFINITY)));
  return b.select(same_inf, x, r);
}

// Clenshaw's recurrence for a Chebyshev series, in Cephes' convention
// (chbevl): 0.5 * (b0 - b2).
Value chebyshev_series(Builder& b, const Inputs& in, Value y, const std::vector<double>& coeffs) {
  Value b0 = scalar_like(b, in, coeffs[0]);
  Value b1 = b.zeros(y.type);
  Value b2 = b.zeros(y.type);
  for (size_t i = 1; i < coeffs.size(); ++i) {
    b2 = b1;
    b1 = b0;
    b0 = b.binary("add", b.binary("subtract", b.binary("multiply", y, b1), b2),
                  scalar_like(b, in, coeffs[i]));
  }
  return scale(b, in, b.binary("subtract", b0, b2), 0.5);
}

// The modified Bessel function I0, by the Cephes Chebyshev expansions of
// exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) above 8 (the
// coefficients are those of the Cephes library, which CPU uses too).
Value bessel_i0(Builder& b, const Inputs& in, Value x, bool scaled = false) {
  static const std::vector<double> below8 = {
      -4.41534164647933937950E-18, 3.33079451882223809783E-17,  -2.43127984654795469359E-16,
      1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
      -4.85644678311192946090E-13, 2.95505266312963983461E-12,  -1.72682629144155570723E-11,
      9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
      -1.30002500998624804212E-8,  6.04699502254191894932E-8,   -2.67079385394061173391E-7,
      1.11738753912010371815E-6,   -4.41673835845875056359E-6,  1.64484480707288970893E-5,
      -5.75419501008210370398E-5,  1.88502885095841655729E-4,   -5.76375574538582365885E-4,
      1.63947561694133579842E-3,   -4.32430999505057594430E-3,  1.05464603945949983183E-2,
      -2.37374148058994688156E-2,  4.93052842396707084878E-2,   -9.49010970480476444210E-2,
      1.71620901522208775349E-1,   -3.04682672343198398683E-1,  6.76795274409476084995E-1};
  static const std::vector<double> above8 = {
      -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
      3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
      1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
      -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
      7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
      -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
      3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
      2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
      8.04490411014108831608E-1};
  Value ax = b.unary("abs", x);
  // I0(x) = exp(|x|) * (a Chebyshev series); the scaled I0e(x) drops the exp.
  Value e = scaled ? scalar_like(b, in, 1.0) : b.unary("exponential", ax);
  Value near = b.binary(
      "multiply", e,
      chebyshev_series(b, in, b.binary("subtract", scale(b, in, ax, 0.5), scalar_like(b, in, 2.0)),
                       below8));
  Value y_far = b.binary("subtract", b.binary("divide", scalar_like(b, in, 32.0), ax),
                         scalar_like(b, in, 2.0));
  Value far = b.binary("divide", b.binary("multiply", e, chebyshev_series(b, in, y_far, above8)),
                       b.unary("sqrt", ax));
  return b.select(b.compare(hlo::Compare::kLE, ax, scalar_like(b, in, 8.0)), near, far);
}

// digamma with CPU's values at the poles: -inf at +0, +inf at -0, NaN at the
// negative integers.
Value digamma_value(Builder& b, const Inputs& in, Value x) {
  Value r = b.op("chlo.digamma", {x}, x.type);
  Value zero = b.zeros(x.type);
  Value at_zero = b.compare(hlo::Compare::kEQ, x, zero);
  Value neg_zero =
      b.compare(hlo::Compare::kLT, b.binary("divide", scalar_like(b, in, 1.0), x), zero);
  Value pole = b.select(neg_zero, scalar_like(b, in, INFINITY), scalar_like(b, in, -INFINITY));
  Value neg_int = b.binary("and", b.compare(hlo::Compare::kLT, x, zero),
                           b.compare(hlo::Compare::kEQ, b.unary("floor", x), x));
  r = b.select(neg_int, scalar_like(b, in, std::nan("")), r);
  return b.select(at_zero, pole, r);
}

// polygamma(1, x), by the same steps as CPU: the reflection formula below
// 1/2, six recurrence steps, then the asymptotic series.
Value trigamma_value(Builder& b, const Inputs& in, Value x) {
  Value one = scalar_like(b, in, 1.0);
  Value reflect = b.compare(hlo::Compare::kLT, x, scalar_like(b, in, 0.5));
  Value sin_pi_x = b.unary("sine", scale(b, in, x, M_PI));
  Value pi2 = b.binary("multiply", scalar_like(b, in, M_PI), scalar_like(b, in, M_PI));
  Value result = b.select(
      reflect, b.unary("negate", b.binary("divide", pi2, b.binary("multiply", sin_pi_x, sin_pi_x))),
      b.zeros(x.type));
  x = b.select(reflect, b.binary("subtract", one, x), x);
  for (int i = 0; i < 6; ++i) {
    result = b.binary("add", result, b.binary("divide", one, b.binary("multiply", x, x)));
    x = b.binary("add", x, one);
  }
  Value ixx = b.binary("divide", one, b.binary("multiply", x, x));
  Value series = b.binary("subtract", scalar_like(b, in, 1.0 / 30), scale(b, in, ixx, 1.0 / 42));
  series = b.binary("subtract", scalar_like(b, in, 1.0 / 6), b.binary("multiply", ixx, series));
  series = b.binary("add", b.binary("add", one, b.binary("divide", one, scale(b, in, x, 2.0))),
                    b.binary("multiply", ixx, series));
  result = b.binary("add", result, b.binary("divide", series, x));
  return b.select(reflect, b.unary("negate", result), result);
}

// The dtypes CPU's kernel for an op rejects (its dispatch macro raises
// NotImplementedError naming the kernel), signbit's refusal of complex
// numbers and heaviside's same-dtype rule: worked out once per overload
// (kernel_dtype_rule), checked on each call (reject_kernel_dtypes).
struct KernelDtypeRule {
  const char* kernel = nullptr;  // the kernel takes integers only, or floats
  bool wants_float = false;      // (the latter)
  bool no_complex = false;       // signbit
  bool same_dtypes = false;      // heaviside
  bool any() const { return kernel != nullptr || no_complex || same_dtypes; }
};

KernelDtypeRule kernel_dtype_rule(const std::string& name) {
  KernelDtypeRule rule;
  if (name == "bitwise_left_shift") rule.kernel = "lshift_cpu";
  if (name == "bitwise_right_shift") rule.kernel = "rshift_cpu";
  if (name == "gcd") rule.kernel = "gcd_cpu";
  if (name == "lcm") rule.kernel = "lcm_cpu";
  if (name == "logaddexp") rule.kernel = "logaddexp_cpu";
  if (name == "softshrink") rule.kernel = "softshrink_check";
  if (name == "hardshrink") rule.kernel = "hardshrink_cpu";
  if (name == "softshrink_backward") rule.kernel = "softshrink_backward_cpu";
  if (name == "hardshrink_backward") rule.kernel = "hardshrink_backward_cpu";
  if (name == "_prelu_kernel") rule.kernel = "prelu_cpu";
  if (name == "logaddexp2") rule.kernel = "logaddexp2_cpu";
  rule.wants_float = name == "logaddexp" || name == "logaddexp2" || name == "softshrink" ||
                     name == "hardshrink" || name == "softshrink_backward" ||
                     name == "hardshrink_backward" || name == "_prelu_kernel";
  rule.no_complex = name == "signbit";
  rule.same_dtypes = name == "heaviside";
  return rule;
}

void reject_kernel_dtypes(const KernelDtypeRule& rule, at::ScalarType compute,
                          c10::ArrayRef<at::ScalarType> tensor_dtypes) {
  if (rule.kernel != nullptr) {
    const bool integral = at::isIntegralType(compute, /*includeBool=*/false);
    const bool floating = at::isFloatingType(compute);
    TORCH_CHECK_NOT_IMPLEMENTED(rule.wants_float ? floating : integral, "\"", rule.kernel,
                                "\" not implemented for '", c10::toString(compute), "'");
  }
  TORCH_CHECK_NOT_IMPLEMENTED(!rule.no_complex || !at::isComplexType(compute),
                              "signbit is not implemented for complex tensors.");
  if (rule.same_dtypes) {
    TORCH_CHECK(tensor_dtypes.size() < 2 || tensor_dtypes[0] == tensor_dtypes[1],
                "heaviside is not yet implemented for tensors with different dtypes.");
  }
}

const std::unordered_map<std::string, ElementwiseDef>& table() {
  using R = ResultDtype;
  using C = hlo::Compare;
  static auto* const defs = new std::unordered_map<std::string, ElementwiseDef>{
      // Unary, dtype-preserving.
      {"abs", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (hlo::is_unsigned_int(x.type.element)) return x;
         if (hlo::is_complex(x.type.element)) return complex_abs(b, x);
         return b.unary("abs", x); }}},
      {"neg", {R::kPromoted, unary("negate")}},
      {"conj_physical", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         return hlo::is_complex(x.type.element) ? b.conj(x) : x; }}},
      {"sign", {R::kPromoted, real_sign}},
      {"ceil", {R::kPromoted, rounding("ceil")}},
      {"floor", {R::kPromoted, rounding("floor")}},
      {"round", {R::kPromoted, [](Builder& b, const Inputs& in) {
         if (!hlo::is_float(in.compute)) return in["self"];
         const std::string d = in.attr("decimals", "0");
         if (d == "0") return b.unary("round_nearest_even", in["self"]);
         // ATen's formula: multiply then divide for decimals > 0, the other
         // way round for decimals < 0, so values like 1200 stay exact.
         const int decimals = std::stoi(d);
         const double ten = std::pow(10.0, std::abs(decimals));
         Value x = in["self"];
         if (decimals > 0) {
           return b.binary("divide", b.unary("round_nearest_even", scale(b, in, x, ten)), scalar_like(b, in, ten));
         }
         Value q = b.binary("divide", x, scalar_like(b, in, ten));
         return scale(b, in, b.unary("round_nearest_even", q), ten); }}},
      {"trunc", {R::kPromoted, [](Builder& b, const Inputs& in) {
         if (!hlo::is_float(in.compute)) return in["self"];
         Value x = in["self"];
         return b.select(b.compare(C::kLT, x, b.zeros(x.type)), b.unary("ceil", x), b.unary("floor", x)); }}},
      {"frac", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         Value t = b.select(b.compare(C::kLT, x, b.zeros(x.type)), b.unary("ceil", x), b.unary("floor", x));
         return b.binary("subtract", x, t); }}},
      {"bitwise_not", {R::kPromoted, unary("not")}},
      {"relu", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return clamp_below(b, in["self"], b.zeros(in["self"].type)); }}},
      {"isnan", {R::kBool, [](Builder& b, const Inputs& in) {
         return b.compare(C::kNE, in["self"], in["self"]); }}},
      {"logical_not", {R::kBool, [](Builder& b, const Inputs& in) {
         return b.unary("not", to_bool(b, in["self"])); }}},
      // Unary, floating result.
      {"sqrt", {R::kFloat, unary("sqrt")}},
      {"rsqrt", {R::kFloat, unary("rsqrt")}},
      {"exp", {R::kFloat, unary("exponential")}},
      {"exp2", {R::kFloat, [](Builder& b, const Inputs& in) {
         return b.binary("power", scalar_like(b, in, 2.0), in["self"]); }}},
      {"expm1", {R::kFloat, unary("exponential_minus_one")}},
      {"log", {R::kFloat, unary("log")}},
      {"log2", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value l = b.unary("log", in["self"]);
         const double c = 1.4426950408889634;
         return hlo::is_complex(in.compute) ? scale_parts(b, l, c) : scale(b, in, l, c); }}},
      {"log10", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value l = b.unary("log", in["self"]);
         const double c = 0.4342944819032518;
         return hlo::is_complex(in.compute) ? scale_parts(b, l, c) : scale(b, in, l, c); }}},
      {"log1p", {R::kFloat, unary("log_plus_one")}},
      {"reciprocal", {R::kFloat, [](Builder& b, const Inputs& in) {
         return b.binary("divide", scalar_like(b, in, 1.0), in["self"]); }}},
      {"sin", {R::kFloat, unary("sine")}},
      {"cos", {R::kFloat, unary("cosine")}},
      {"tan", {R::kFloat, unary("tan")}},
      {"asin", {R::kFloat, chlo("asin")}},
      {"acos", {R::kFloat, chlo("acos")}},
      // Real atan is atan2(x, 1) with the 1 behind an optimization barrier.
      // XLA's CPU backend in the newer plugin (lammps-jax-pjrt-cpu 0.11.2)
      // computes chlo.atan, and atan2 of a constant 1 that its simplifier
      // turns back into atan, wrongly over 64 or more elements (errors up to
      // 1.4); its atan2 of a runtime value is right, and older XLA lowers
      // chlo.atan to this same atan2 (tests/test_plugin_compat.py).
      {"atan", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (hlo::is_complex(x.type.element)) return chlo("atan")(b, in);
         Value one = scalar_like(b, in, 1.0);
         return b.binary("atan2", x, b.optimization_barrier(one)); }}},
      {"sinh", {R::kFloat, chlo("sinh")}},
      {"cosh", {R::kFloat, chlo("cosh")}},
      {"asinh", {R::kFloat, chlo("asinh")}},
      {"acosh", {R::kFloat, chlo("acosh")}},
      {"atanh", {R::kFloat, chlo("atanh")}},
      {"tanh", {R::kFloat, unary("tanh")}},
      {"sigmoid", {R::kFloat, unary("logistic")}},
      {"erf", {R::kFloat, chlo("erf")}},
      {"erfinv", {R::kFloat, chlo("erf_inv")}},
      {"logit", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (in.has("eps")) x = b.binary("minimum", b.binary("maximum", x, in["eps"]),
                                          b.binary("subtract", scalar_like(b, in, 1), in["eps"]));
         return b.unary("log", b.binary("divide", x, b.binary("subtract", scalar_like(b, in, 1), x))); }}},
      // Activations and their backward ops.
      {"gelu", {R::kFloat, [](Builder& b, const Inputs& in) { return gelu(b, in, in["self"]); }}},
      {"gelu_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         return b.binary("multiply", in["grad_output"], gelu_grad(b, in, in["self"])); }}},
      {"silu", {R::kFloat, [](Builder& b, const Inputs& in) {
         return b.binary("multiply", in["self"], b.unary("logistic", in["self"])); }}},
      {"silu_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value s = b.unary("logistic", in["self"]);
         Value one = scalar_like(b, in, 1);
         Value d = b.binary("multiply", s, b.binary("add", one, b.binary("multiply", in["self"], b.binary("subtract", one, s))));
         return b.binary("multiply", in["grad_output"], d); }}},
      {"mish", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value sp = b.unary("log_plus_one", b.unary("exponential", in["self"]));
         return b.binary("multiply", in["self"], b.unary("tanh", sp)); }}},
      // complex: the gradient times the conjugate derivative, as ATen's
      {"sigmoid_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value y = in["output"];
         Value d = b.binary("multiply", y, b.binary("subtract", scalar_like(b, in, 1), y));
         return b.binary("multiply", in["grad_output"], hlo::is_complex(in.compute) ? b.conj(d) : d); }}},
      {"tanh_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value y = in["output"];
         Value d = b.binary("subtract", scalar_like(b, in, 1), b.binary("multiply", y, y));
         return b.binary("multiply", in["grad_output"], hlo::is_complex(in.compute) ? b.conj(d) : d); }}},
      {"threshold_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"];
         return b.select(b.compare(C::kLE, in["self"], in["threshold"]), b.zeros(g.type), g); },
       {"grad_output", "self"}}},
      {"leaky_relu", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         return b.select(b.compare(C::kGT, x, b.zeros(x.type)), x, b.binary("multiply", x, in["negative_slope"])); },
       {"self"}}},
      {"leaky_relu_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"];
         return b.select(b.compare(C::kGT, in["self"], b.zeros(g.type)), g, b.binary("multiply", g, in["negative_slope"])); },
       {"grad_output", "self"}}},
      {"elu", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         Value neg = b.binary("multiply", in["alpha"], b.unary("exponential_minus_one", b.binary("multiply", x, in["input_scale"])));
         // zeros take the x branch, as CPU's x < 0 test: elu(0, alpha=nan) is 0
         return b.binary("multiply", in["scale"], b.select(b.compare(C::kGE, x, b.zeros(x.type)), x, neg)); },
       {"self"}}},
      {"hardtanh", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return clamp_above(b, clamp_below(b, in["self"], in["min_val"]), in["max_val"]); },
       {"self"}}},
      {"threshold", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // x <= threshold is false for NaN, which stays.
         return b.select(b.compare(C::kLE, in["self"], in["threshold"]), in["value"], in["self"]); },
       {"self"}}},
      {"softshrink", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // CPU's x * 0 in the middle keeps a NaN.
         Value x = in["self"], l = in["lambd"];
         Value out = b.select(b.compare(C::kLT, x, b.unary("negate", l)), b.binary("add", x, l),
                              b.binary("multiply", x, b.zeros(x.type)));
         return b.select(b.compare(C::kGT, x, l), b.binary("subtract", x, l), out); },
       {"self"}}},
      {"hardshrink", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return b.select(shrunk(b, in["self"], in["lambd"]), b.zeros(in["self"].type), in["self"]); },
       {"self"}}},
      {"softshrink_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"];
         return b.select(shrunk(b, in["self"], in["lambd"]), b.zeros(g.type), g); },
       {"grad_output", "self"}}},
      {"hardshrink_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value g = in["grad_out"];
         return b.select(shrunk(b, in["self"], in["lambd"]), b.zeros(g.type), g); },
       {"grad_out", "self"}}},
      // PReLU after prelu() has shaped the weight to broadcast over channels.
      {"_prelu_kernel", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         return b.select(b.compare(C::kGT, x, b.zeros(x.type)), x, b.binary("multiply", in["weight"], x)); }}},
      {"hardtanh_backward", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"], x = in["self"];
         Value inside = b.binary("and", b.compare(C::kGT, x, in["min_val"]), b.compare(C::kLT, x, in["max_val"]));
         return b.select(inside, g, b.zeros(g.type)); },
       {"grad_output", "self"}}},
      {"hardsigmoid", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value r = scale(b, in, b.binary("add", in["self"], scalar_like(b, in, 3)), 1.0 / 6.0);
         return b.binary("minimum", b.binary("maximum", r, scalar_like(b, in, 0)), scalar_like(b, in, 1)); }}},
      {"hardswish", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value r = b.binary("minimum", b.binary("maximum", b.binary("add", in["self"], scalar_like(b, in, 3)), scalar_like(b, in, 0)), scalar_like(b, in, 6));
         return scale(b, in, b.binary("multiply", in["self"], r), 1.0 / 6.0); }}},
      {"softplus", {R::kFloat, [](Builder& b, const Inputs& in) { return softplus(b, in, in["self"]); },
       {"self"}}},
      {"elu_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         // Written with the input or (is_result) the output, as ATen's formula.
         Value g = in["grad_output"], x = in["self_or_result"];
         Value neg_coef = b.binary("multiply", in["alpha"], in["scale"]);
         Value neg = in.attr("is_result") == "1"
             ? b.binary("multiply", b.binary("multiply", g, in["input_scale"]), b.binary("add", x, neg_coef))
             : b.binary("multiply", b.binary("multiply", g, b.binary("multiply", in["input_scale"], neg_coef)),
                        b.unary("exponential", b.binary("multiply", x, in["input_scale"])));
         return b.select(b.compare(C::kLE, x, b.zeros(x.type)), neg, b.binary("multiply", g, in["scale"])); },
       {"grad_output", "self_or_result"}}},
      {"hardswish_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"], x = in["self"];
         Value mid = b.binary("multiply", g, b.binary("add", scale(b, in, x, 1.0 / 3.0), scalar_like(b, in, 0.5)));
         Value r = b.select(b.compare(C::kLT, x, scalar_like(b, in, 3)), mid, g);
         return b.select(b.compare(C::kLT, x, scalar_like(b, in, -3)), b.zeros(x.type), r); }}},
      {"hardsigmoid_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"], x = in["self"];
         Value inside = b.binary("and", b.compare(C::kGT, x, scalar_like(b, in, -3)), b.compare(C::kLT, x, scalar_like(b, in, 3)));
         return b.select(inside, scale(b, in, g, 1.0 / 6.0), b.zeros(x.type)); }}},
      {"softplus_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"], xb = b.binary("multiply", in["self"], in["beta"]);
         Value z = b.unary("exponential", xb);
         Value soft = b.binary("multiply", g, b.binary("divide", z, b.binary("add", z, scalar_like(b, in, 1))));
         return b.select(b.compare(C::kGT, xb, in["threshold"]), g, soft); },
       {"grad_output", "self"}}},
      {"logit_backward", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value g = in["grad_output"], x = in["self"];
         Value one = scalar_like(b, in, 1);
         Value grad = b.binary("divide", g, b.binary("multiply", x, b.binary("subtract", one, x)));
         if (!in.has("eps")) {
           Value out = b.binary("or", b.compare(C::kLT, x, b.zeros(x.type)), b.compare(C::kGT, x, one));
           return b.select(out, scalar_like(b, in, std::nan("")), grad);
         }
         Value lo = in["eps"], hi = b.binary("subtract", one, in["eps"]);
         Value out = b.binary("or", b.compare(C::kLT, x, lo), b.compare(C::kGT, x, hi));
         return b.select(out, b.zeros(x.type), grad); },
       {"grad_output", "self"}}},
      {"sgn", {R::kPromoted, [](Builder& b, const Inputs& in) {
         if (hlo::is_complex(in.compute)) return b.unary("sign", in["self"]);
         return real_sign(b, in); }}},
      {"xlogy", {R::kFloat, [](Builder& b, const Inputs& in) {
         // 0 * log(y) is 0 unless y is NaN.
         Value x = in["self"], y = in["other"];
         Value r = b.binary("multiply", x, b.unary("log", y));
         Value zero_x = b.binary("and", b.compare(C::kEQ, x, b.zeros(x.type)), b.compare(C::kEQ, y, y));
         return b.select(zero_x, b.zeros(x.type), r); }}},
      {"isneginf", {R::kBool, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (!hlo::is_float(x.type.element)) return b.compare(C::kNE, x, x);
         return b.compare(C::kEQ, x, scalar_like(b, in, -INFINITY)); }}},
      // nan/posinf/neginf are always present: the kernel fills the ones the
      // caller left out with 0 and the result dtype's finite extremes.
      {"nan_to_num", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (!hlo::is_float(x.type.element)) return x;
         Value out = b.select(b.compare(C::kEQ, x, scalar_like(b, in, INFINITY)), in["posinf"], x);
         out = b.select(b.compare(C::kEQ, x, scalar_like(b, in, -INFINITY)), in["neginf"], out);
         return b.select(b.compare(C::kNE, x, x), in["nan"], out); },
       {"self"}}},
      {"isposinf", {R::kBool, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         if (!hlo::is_float(x.type.element)) return b.compare(C::kNE, x, x);
         return b.compare(C::kEQ, x, scalar_like(b, in, INFINITY)); }}},
      // Binary arithmetic.
      {"add", {R::kPromoted, add_like("add"), {"self", "other"}}},
      {"sub", {R::kPromoted, add_like("subtract"), {"self", "other"}}},
      {"mul", {R::kPromoted, binary("multiply")}},
      {"div", {R::kFloat, [](Builder& b, const Inputs& in) {
         const std::string mode = in.attr("rounding_mode");
         if (mode == "trunc") {
           if (!hlo::is_float(in.compute)) return b.binary("divide", in["self"], in["other"]);
           Value q = b.binary("divide", in["self"], in["other"]);
           return b.select(b.compare(C::kLT, q, b.zeros(q.type)), b.unary("ceil", q), b.unary("floor", q));
         }
         if (mode == "floor") return floor_div(b, in, in["self"], in["other"]);
         return b.binary("divide", in["self"], in["other"]); }}},
      {"floor_divide", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return floor_div(b, in, in["self"], in["other"]); }}},
      {"remainder", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return python_remainder(b, in["self"], in["other"]); }}},
      {"fmod", {R::kPromoted, binary("remainder")}},
      {"pow", {R::kPromoted, pow}},
      {"atan2", {R::kFloat, binary("atan2")}},
      {"nextafter", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return b.op("chlo.next_after", {in["self"], in["other"]}, in["self"].type);
       }}},
      {"hypot", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // big * sqrt(1 + (small / big)^2): no overflow for large inputs
         // (hypot(1e30, 1e30) is 1.4e30), inf when either is inf, even NaN.
         Value x = b.unary("abs", in["self"]), y = b.unary("abs", in["other"]);
         Value big = b.binary("maximum", x, y), small = b.binary("minimum", x, y);
         Value ratio = b.binary("divide", small, big);
         Value r = b.binary("multiply", big, b.unary("sqrt", b.binary("add", scalar_like(b, in, 1), b.binary("multiply", ratio, ratio))));
         r = b.select(b.compare(C::kEQ, big, b.zeros(big.type)), big, r);
         Value inf = scalar_like(b, in, INFINITY);
         Value any_inf = b.binary("or", b.compare(C::kEQ, x, inf), b.compare(C::kEQ, y, inf));
         return b.select(any_inf, inf, r); }}},
      {"copysign", {R::kFloat, [](Builder& b, const Inputs& in) {
         // The sign bit of other, as CPU's std::copysign reads it: -0.0 and
         // negative NaNs count as negative.
         Value mag = b.unary("abs", in["self"]);
         return b.select(float_sign_bit(b, in["other"]), b.unary("negate", mag), mag); }}},
      // NaN from either operand propagates (hlo::Builder::maximum).
      {"maximum", {R::kPromoted, binary("maximum")}},
      {"minimum", {R::kPromoted, binary("minimum")}},
      {"fmax", {R::kPromoted, [](Builder& b, const Inputs& in) { return fmax_fmin(b, in, C::kGT); }}},
      {"fmin", {R::kPromoted, [](Builder& b, const Inputs& in) { return fmax_fmin(b, in, C::kLT); }}},
      {"bitwise_and", {R::kPromoted, binary("and")}},
      {"bitwise_or", {R::kPromoted, binary("or")}},
      {"bitwise_xor", {R::kPromoted, binary("xor")}},
      {"logical_and", {R::kBool, logical("and")}},
      {"logical_or", {R::kBool, logical("or")}},
      {"logical_xor", {R::kBool, logical("xor")}},
      {"eq", {R::kBool, compare(C::kEQ)}},
      {"ne", {R::kBool, compare(C::kNE)}},
      {"lt", {R::kBool, compare(C::kLT)}},
      {"le", {R::kBool, compare(C::kLE)}},
      {"gt", {R::kBool, compare(C::kGT)}},
      {"ge", {R::kBool, compare(C::kGE)}},
      // Three or more operands.
      {"where", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return b.select(to_bool(b, in["condition"]), in["self"], in["other"]); },
       {"self", "other"}}},
      {"masked_fill", {R::kSelf, [](Builder& b, const Inputs& in) {
         return b.select(to_bool(b, in["mask"]), in["value"], in["self"]); }}},
      {"clamp", {R::kPromoted, [](Builder& b, const Inputs& in) { return clamp_value(b, in, in["self"]); }}},
      {"clamp_min", {R::kPromoted, [](Builder& b, const Inputs& in) { return clamp_below(b, in["self"], in["min"]); }}},
      {"clamp_max", {R::kPromoted, [](Builder& b, const Inputs& in) { return clamp_above(b, in["self"], in["max"]); }}},
      {"lerp", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // Same two-branch formula as ATen, for the same rounding.
         Value x = in["self"], y = in["end"], w = in["weight"];
         Value diff = b.binary("subtract", y, x);
         Value lo = b.binary("add", x, b.binary("multiply", w, diff));
         Value hi = b.binary("subtract", y, b.binary("multiply", diff, b.binary("subtract", scalar_like(b, in, 1), w)));
         Value w_abs = hlo::is_complex(w.type.element) ? complex_abs(b, w) : b.unary("abs", w);
         Value small = b.compare(C::kLT, w_abs, b.splat(b.constant(w_abs.type.element, 0.5), in.shape));
         return b.select(small, lo, hi); }, {"self", "end"}}},
      {"addcmul", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // self + value * t1 * t2, associated as CPU's kernel writes it.
         Value prod = in.has("value") ? b.binary("multiply", in["value"], in["tensor1"]) : in["tensor1"];
         prod = b.binary("multiply", prod, in["tensor2"]);
         return b.binary("add", in["self"], prod); }, {"self", "tensor1", "tensor2"}}},
      {"addcdiv", {R::kPromoted, [](Builder& b, const Inputs& in) {
         // self + value * t1 / t2, associated as CPU's kernel writes it
         // (value * (t1 / t2) overflows where (value * t1) / t2 does not).
         Value q = in.has("value") ? b.binary("multiply", in["value"], in["tensor1"]) : in["tensor1"];
         q = b.binary("divide", q, in["tensor2"]);
         return b.binary("add", in["self"], q); }, {"self", "tensor1", "tensor2"}}},
      // Shifts, number theory and special functions.
      {"bitwise_left_shift", {R::kPromoted, [](Builder& b, const Inputs& in) { return shift(b, in, true); }}},
      {"bitwise_right_shift", {R::kPromoted, [](Builder& b, const Inputs& in) { return shift(b, in, false); }}},
      {"signbit", {R::kBool, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         const ElementType t = x.type.element;
         if (hlo::is_float(t)) return float_sign_bit(b, x);
         if (hlo::is_signed_int(t)) return b.compare(C::kLT, x, b.zeros(x.type));
         return b.splat(b.constant_int(ElementType::kPred, 0), in.shape); }}},
      {"gcd", {R::kPromoted, [](Builder& b, const Inputs& in) { return gcd_value(b, in, in["self"], in["other"]); }}},
      {"lcm", {R::kPromoted, [](Builder& b, const Inputs& in) { return lcm_value(b, in, in["self"], in["other"]); }}},
      {"sinc", {R::kFloat, [](Builder& b, const Inputs& in) {
         // sin(pi x) / (pi x), 1 at 0, with pi in the compute type as on CPU.
         Value x = in["self"];
         Value px = scale(b, in, x, M_PI);
         Value r = b.binary("divide", b.unary("sine", px), px);
         return b.select(b.compare(C::kEQ, x, b.zeros(x.type)), scalar_like(b, in, 1.0), r); }}},
      {"logaddexp", {R::kPromoted, [](Builder& b, const Inputs& in) { return log_add_exp(b, in, false); }}},
      {"logaddexp2", {R::kPromoted, [](Builder& b, const Inputs& in) { return log_add_exp(b, in, true); }}},
      {"erfc", {R::kFloat, chlo("erfc")}},
      {"lgamma", {R::kFloat, chlo("lgamma")}},
      {"digamma", {R::kFloat, [](Builder& b, const Inputs& in) { return digamma_value(b, in, in["self"]); }}},
      {"polygamma", {R::kFloat, [](Builder& b, const Inputs& in) {
         const int64_t n = std::stoll(in.attr("n", "0"));
         TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
         if (n == 0) return digamma_value(b, in, in["self"]);
         if (n == 1) return trigamma_value(b, in, in["self"]);
         // (-1)^(n+1) n! zeta(n+1, x), with CPU's own zeta (XLA's polygamma,
         // a zeta with a fixed number of terms, is far off below x = -8).
         Value x = in["self"];
         Value z = hurwitz_zeta(b, scalar_like(b, in, static_cast<double>(n + 1)), x);
         const double factor = (n % 2 ? 1.0 : -1.0) * std::exp(std::lgamma(n + 1.0));
         return scale(b, in, z, factor); }}},
      {"igamma", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return regularized_gamma(b, in["self"], in["other"], false); }}},
      {"igammac", {R::kPromoted, [](Builder& b, const Inputs& in) {
         return regularized_gamma(b, in["self"], in["other"], true); }}},
      {"i0", {R::kFloat, [](Builder& b, const Inputs& in) { return bessel_i0(b, in, in["self"]); }}},
      {"special_modified_bessel_i0", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_i0(b, in, in["self"]); }}},
      {"special_modified_bessel_i1", {R::kFloat, [](Builder& b, const Inputs& in) {
         Value x = in["self"];
         return b.binary("multiply", b.op("chlo.bessel_i1e", {x}, x.type), b.unary("exponential", b.unary("abs", x))); }}},
      {"special_i0e", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_i0(b, in, in["self"], /*scaled=*/true); }}},
      {"special_i1e", {R::kFloat, chlo("bessel_i1e")}},
      {"special_entr", {R::kFloat, [](Builder& b, const Inputs& in) {
         // -x log x; 0 at 0, -inf below 0, NaN stays NaN.
         Value x = in["self"], zero = b.zeros(x.type);
         Value r = b.unary("negate", b.binary("multiply", x, b.unary("log", x)));
         Value rest = b.select(b.compare(C::kLT, x, zero), scalar_like(b, in, -INFINITY), x);
         return b.select(b.compare(C::kGT, x, zero), r,
                         b.select(b.compare(C::kEQ, x, zero), zero, rest)); }}},
      {"special_xlog1py", {R::kFloat, [](Builder& b, const Inputs& in) {
         // 0 * log1p(y) is 0 unless y is NaN.
         Value x = in["self"], y = in["other"];
         Value r = b.binary("multiply", x, b.unary("log_plus_one", y));
         Value zero_x = b.binary("and", b.compare(C::kEQ, x, b.zeros(x.type)), b.compare(C::kEQ, y, y));
         return b.select(zero_x, b.zeros(x.type), r); }}},
      {"special_spherical_bessel_j0", {R::kFloat, [](Builder& b, const Inputs& in) {
         // sin(x) / x: 1 at 0, 0 at +-inf.
         Value x = in["x"], zero = b.zeros(x.type);
         Value r = b.binary("divide", b.unary("sine", x), x);
         r = b.select(b.compare(C::kEQ, x, zero), scalar_like(b, in, 1.0), r);
         Value inf = b.compare(C::kEQ, b.unary("abs", x), scalar_like(b, in, INFINITY));
         return b.select(inf, zero, r); }}},
      {"special_erfcx", {R::kFloat, [](Builder& b, const Inputs& in) { return erfcx(b, in["self"]); }}},
      {"special_log_ndtr", {R::kFloat, [](Builder& b, const Inputs& in) { return log_ndtr(b, in["self"]); }}},
      {"special_ndtri", {R::kFloat, [](Builder& b, const Inputs& in) { return ndtri(b, in["self"]); }}},
      {"special_bessel_j0", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_jy(b, in["self"], 0, false); }}},
      {"special_bessel_j1", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_jy(b, in["self"], 1, false); }}},
      {"special_bessel_y0", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_jy(b, in["self"], 0, true); }}},
      {"special_bessel_y1", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_jy(b, in["self"], 1, true); }}},
      {"special_modified_bessel_k0", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_k(b, in["self"], 0, false); }}},
      {"special_modified_bessel_k1", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_k(b, in["self"], 1, false); }}},
      {"special_scaled_modified_bessel_k0", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_k(b, in["x"], 0, true); }}},
      {"special_scaled_modified_bessel_k1", {R::kFloat, [](Builder& b, const Inputs& in) {
         return bessel_k(b, in["x"], 1, true); }}},
      {"special_zeta", {R::kFloat, [](Builder& b, const Inputs& in) {
         return hurwitz_zeta(b, in["self"], in["other"]); }}},
      {"special_i1", {R::kFloat, [](Builder& b, const Inputs& in) {
         // I1(x) = exp(|x|) * I1e(x)
         Value x = in["self"];
         return b.binary("multiply", b.op("chlo.bessel_i1e", {x}, x.type), b.unary("exponential", b.unary("abs", x))); }}},
      {"heaviside", {R::kPromoted, [](Builder& b, const Inputs& in) {
         Value x = in["self"], v = in["values"];
         if (x.type.element == ElementType::kPred) return b.binary("or", x, v);
         Value step = b.convert(b.compare(C::kGT, x, b.zeros(x.type)), x.type.element);
         return b.select(b.compare(C::kEQ, x, b.zeros(x.type)), v, step); }}},
  };
  static const bool polynomials_added = [] {
    for (const auto& name : orthogonal_polynomial_ops()) {
      (*defs)[name] = {R::kFloat, [name](Builder& b, const Inputs& in) {
                         return orthogonal_polynomial(b, name, in["x"], in["n"]);
                       }};
    }
    return true;
  }();
  (void)polynomials_added;
  return *defs;
}

// The overloads registered for each op: functional, in-place and out=, for
// Tensor and (where ATen has them) Scalar operands. ATen spells these
// families differently, hence the patterns.
std::vector<std::string> overloads() {
  const std::vector<std::pair<std::vector<const char*>, std::vector<const char*>>> families = {
      // op, op_, op.out
      {{"abs",
        "neg",
        "sign",
        "ceil",
        "floor",
        "trunc",
        "frac",
        "bitwise_not",
        "sqrt",
        "rsqrt",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "reciprocal",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "tanh",
        "sigmoid",
        "erf",
        "erfinv",
        "logit",
        "logical_not",
        "logical_and",
        "logical_or",
        "logical_xor",
        "gelu",
        "silu",
        "mish",
        "hardsigmoid",
        "hardswish",
        "hardtanh",
        "elu",
        "leaky_relu",
        "atan2",
        "hypot",
        "igamma",
        "igammac",
        "copysign.Tensor",
        "fmod.Tensor",
        "remainder.Tensor",
        "nan_to_num"},
       {"", "_", ".out"}},
      // op, op_ (no out overload with this name)
      {{"relu"}, {"", "_"}},
      {{"nextafter"}, {"", "_", ".out"}},
      {{"threshold"}, {"", "_", ".out"}},
      {{"isnan"}, {""}},
      // op, op.out
      // backward ops: functional here, out= as .grad_input below
      // (silu_backward itself and where's Scalar overloads are left to their
      // CompositeImplicitAutograd decompositions: a tpu kernel would take
      // their autograd away.)
      {{"gelu_backward", "sigmoid_backward", "tanh_backward", "threshold_backward",
        "leaky_relu_backward", "hardtanh_backward"},
       {""}},
      {{"maximum", "minimum", "fmax", "fmin", "softplus", "masked_fill.Scalar",
        "masked_fill.Tensor", "where.self", "round.decimals", "clamp.Tensor", "lerp.Scalar",
        "lerp.Tensor", "addcmul", "addcdiv"},
       {"", ".out"}},
      {{"round", "clamp", "clamp_min", "clamp_max"}, {"", "_", ".out"}},
      // op.Tensor, op_.Tensor, op.out, op.Scalar, op_.Scalar
      {{"add", "sub", "mul", "div"}, {".Tensor", "_.Tensor", ".out", ".Scalar", "_.Scalar"}},
      // op.Tensor, op_.Tensor, op.Tensor_out, op.Scalar, op_.Scalar, op.Scalar_out
      {{"bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge"},
       {".Tensor", "_.Tensor", ".Tensor_out", ".Scalar", "_.Scalar", ".Scalar_out"}},
  };
  std::vector<std::string> names;
  for (const auto& [ops, suffixes] : families) {
    for (const char* op : ops) {
      for (const char* suffix : suffixes) {
        // A dotted overload ("fmod.Tensor") takes "_" before the dot for
        // in-place and "_out" after the overload for out=, except
        // copysign.Tensor, whose out= overload is plain "out".
        std::string name = op;
        const auto dot = name.find('.');
        const std::string s = suffix;
        if (dot == std::string::npos) {
          name += s;
        } else if (s == "_") {
          name.insert(dot, "_");
        } else if (s == ".out") {
          name = name == "copysign.Tensor" ? "copysign.out" : name + "_out";
        }
        names.push_back(name);
      }
    }
  }
  for (const auto& name : orthogonal_polynomial_ops()) {
    for (const char* suffix :
         {"", ".x_scalar", ".n_scalar", ".out", ".x_scalar_out", ".n_scalar_out"}) {
      names.push_back(name + suffix);
    }
  }
  for (const char* extra :
       {"div.Tensor_mode", "div_.Tensor_mode", "div.out_mode", "div.Scalar_mode",
        "div_.Scalar_mode", "pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out",
        "pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out", "pow.Scalar", "pow.Scalar_out",
        "copysign.Scalar", "copysign_.Scalar", "copysign.Scalar_out", "fmod.Scalar", "fmod_.Scalar",
        "fmod.Scalar_out", "remainder.Scalar", "remainder_.Scalar", "remainder.Scalar_out",
        "remainder.Scalar_Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor", "clamp_.Tensor",
        "clamp_min.Tensor", "clamp_min_.Tensor", "clamp_min.Tensor_out", "clamp_max.Tensor",
        "clamp_max_.Tensor", "clamp_max.Tensor_out", "lerp_.Scalar", "lerp_.Tensor", "addcmul_",
        "addcdiv_", "round_.decimals", "floor_divide", "floor_divide_.Tensor", "floor_divide.out",
        // (the functional conj_physical stays PyTorch's
        // composite, which autograd records)
        "conj_physical_", "conj_physical.out", "floor_divide.Scalar", "floor_divide_.Scalar",
        "floor_divide.Scalar_out", "softplus.out", "hardtanh_backward.grad_input",
        "gelu_backward.grad_input", "silu_backward.grad_input", "sigmoid_backward.grad_input",
        "tanh_backward.grad_input", "threshold_backward.grad_input",
        "leaky_relu_backward.grad_input", "logit_", "elu_backward", "elu_backward.grad_input",
        "hardswish_backward", "hardsigmoid_backward", "hardsigmoid_backward.grad_input",
        "softplus_backward", "softplus_backward.grad_input", "logit_backward",
        "logit_backward.grad_input", "sgn", "sgn_", "sgn.out", "xlogy.Tensor", "xlogy_.Tensor",
        "xlogy.OutTensor", "xlogy.Scalar_Other", "xlogy_.Scalar_Other", "xlogy.OutScalar_Other",
        "xlogy.Scalar_Self", "xlogy.OutScalar_Self", "isneginf.out", "isposinf.out",
        "bitwise_left_shift.Tensor", "bitwise_left_shift_.Tensor", "bitwise_left_shift.Tensor_out",
        "bitwise_left_shift.Tensor_Scalar", "bitwise_left_shift_.Tensor_Scalar",
        "bitwise_left_shift.Tensor_Scalar_out", "bitwise_left_shift.Scalar_Tensor",
        "bitwise_left_shift.Scalar_Tensor_out", "bitwise_right_shift.Tensor",
        "bitwise_right_shift_.Tensor", "bitwise_right_shift.Tensor_out",
        "bitwise_right_shift.Tensor_Scalar", "bitwise_right_shift_.Tensor_Scalar",
        "bitwise_right_shift.Tensor_Scalar_out", "bitwise_right_shift.Scalar_Tensor",
        "bitwise_right_shift.Scalar_Tensor_out", "signbit", "signbit.out", "gcd", "gcd_", "gcd.out",
        "lcm", "lcm_", "lcm.out", "sinc", "sinc_", "sinc.out", "logaddexp", "logaddexp.out",
        "logaddexp2", "logaddexp2.out", "erfc", "erfc_", "erfc.out", "lgamma", "lgamma_",
        "lgamma.out", "digamma", "digamma_", "digamma.out", "polygamma", "polygamma_",
        "polygamma.out", "i0", "i0_", "i0.out", "special_i1", "special_i1.out",
        "special_modified_bessel_i0", "special_modified_bessel_i0.out",
        "special_modified_bessel_i1", "special_modified_bessel_i1.out", "special_i0e",
        "special_i0e.out", "special_i1e", "special_i1e.out", "special_entr", "special_entr.out",
        "special_spherical_bessel_j0", "special_spherical_bessel_j0.out", "special_xlog1py",
        "special_xlog1py.self_scalar", "special_xlog1py.other_scalar", "special_xlog1py.out",
        "special_xlog1py.self_scalar_out", "special_xlog1py.other_scalar_out", "special_zeta",
        "special_bessel_j0", "special_bessel_j0.out", "special_bessel_j1", "special_bessel_j1.out",
        "special_bessel_y0", "special_bessel_y0.out", "special_bessel_y1", "special_bessel_y1.out",
        "special_modified_bessel_k0", "special_modified_bessel_k0.out",
        "special_modified_bessel_k1", "special_modified_bessel_k1.out",
        "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k0.out",
        "special_scaled_modified_bessel_k1", "special_scaled_modified_bessel_k1.out",
        "special_erfcx", "special_erfcx.out", "special_log_ndtr", "special_log_ndtr.out",
        "special_ndtri", "special_ndtri.out", "special_zeta.self_scalar",
        "special_zeta.other_scalar", "special_zeta.out", "special_zeta.self_scalar_out",
        "special_zeta.other_scalar_out", "heaviside", "heaviside_", "heaviside.out", "softshrink",
        "softshrink.out", "hardshrink", "hardshrink.out", "softshrink_backward",
        "softshrink_backward.grad_input", "hardshrink_backward", "hardshrink_backward.grad_input",
        "_prelu_kernel"}) {
    names.push_back(extra);
  }
  return names;
}

// What a call needs to know about one overload's schema, worked out once per
// overload: kernels run on every call, and reading argument names and types
// out of the schema each time is measurable next to a small launch.
struct ArgInfo {
  std::string name;
  bool is_self = false;          // name == "self" (read on every call)
  bool is_out = false;           // out= / grad_input= (not for in-place ops)
  bool is_scalar = false;        // a Scalar or float argument
  bool optional_factor = false;  // alpha/value: left out when it is 1
  bool promotes = false;         // takes part in type promotion
  bool keeps_own_type = false;   // a mask or condition
  // A Python number as `self`/`other`: ATen wraps it into a 0-dim tensor,
  // whose cast to the compute dtype wraps integers (uint8 == 300 compares
  // with 44) instead of raising as Scalar::to<T>() does.
  bool wrapped_number = false;
  // A scalar ATen rounds to the (half/bfloat16) compute dtype before the
  // float32 opmath type (mul/div/floor_divide read a single-element `other`
  // in opmath instead: OverloadInfo::opmath_other).
  bool rounds_to_compute = false;
};

struct OverloadInfo {
  std::string name;  // the op without its in-place underscore
  bool inplace = false;
  const ElementwiseDef* def = nullptr;
  std::string op_name;     // aten::add.Tensor, for messages
  std::string key_prefix;  // everything of the cache key fixed by the overload
  std::vector<ArgInfo> args;
  const DtypeRule* dtype_rule = nullptr;
  bool out_dtype_must_match = false;
  // CPU's mul/div/floor_divide kernels, for a half/bfloat16 common dtype and
  // a single-element `other` (a Python number, a 0-dim or a one-element
  // tensor: TensorIterator's is_scalar(2)), read `other` in float32 from its
  // original dtype (not rounded to the common dtype first) and compute the
  // whole op in float32, trunc and floor division included.
  bool opmath_other = false;
  // CPU's TensorIterator takes `self` before grad_output (the result's
  // layout follows the first input where inputs disagree).
  bool self_first_in_layout = false;
  // The op has checks of its own in check_op_arguments (most have none,
  // and skip them).
  bool has_argument_checks = false;
  // The ops run_elementwise treats specially, named once here: it runs on
  // every call, and comparing `name` to each was a measurable part of it.
  bool is_div = false;
  bool is_floor_divide = false;
  bool is_abs = false;
  bool is_nan_to_num = false;
  bool is_masked_fill = false;
  bool is_nextafter = false;
  bool is_pow = false;
  KernelDtypeRule kernel_dtype_rule;
};

// An overload's part of the cache key as this thread's last call without
// attributes built it, and what it was built from (packed: run_elementwise).
// A loop calling the op with the same dtypes copies it instead of building
// it again. Per thread: an OverloadInfo is shared by every thread that
// calls the overload.
struct LastOpKey {
  uint64_t source = ~uint64_t{0};
  std::string key;
};

LastOpKey& last_op_key(const OverloadInfo& info) {
  thread_local std::unordered_map<const OverloadInfo*, LastOpKey> keys;
  return keys[&info];
}

// Scalar and float arguments (logit's eps, softplus's beta) are runtime
// scalars of the op, like Python numbers passed as Scalar.
bool is_scalar_type(const c10::TypePtr& type) {
  auto numeric = [](c10::TypeKind k) {
    return k == c10::TypeKind::NumberType || k == c10::TypeKind::FloatType;
  };
  if (numeric(type->kind())) return true;
  if (auto opt = type->cast<c10::OptionalType>()) return numeric(opt->getElementType()->kind());
  return false;
}

OverloadInfo describe_overload(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  const OverloadNames& names = overload_names(op);
  OverloadInfo info;
  info.name = names.name;
  info.inplace = !info.name.empty() && info.name.back() == '_';
  if (info.inplace) info.name.pop_back();
  info.def = &table().at(info.name);
  info.op_name = names.op_name;
  info.key_prefix = "ew:" + info.op_name;
  info.dtype_rule = &dtype_rule(info.name);
  info.out_dtype_must_match =
      out_dtype_must_match(info.op_name.substr(info.op_name.find("::") + 2));
  const auto& promote = info.def->promote;
  info.opmath_other = info.name == "mul" || info.name == "div" || info.name == "floor_divide";
  info.self_first_in_layout =
      info.name == "threshold_backward" || info.name == "leaky_relu_backward";
  static const std::unordered_set<std::string> checked_ops = {
      "sub",        "addcdiv",  "clamp", "gelu", "gelu_backward", "where", "masked_fill",
      "softshrink", "hardtanh", "pow",   "abs",  "div",           "round", "lerp"};
  info.has_argument_checks = checked_ops.count(info.name) > 0;
  info.is_div = info.name == "div";
  info.is_floor_divide = info.name == "floor_divide";
  info.is_abs = info.name == "abs";
  info.is_nan_to_num = info.name == "nan_to_num";
  info.is_masked_fill = info.name == "masked_fill";
  info.is_nextafter = info.name == "nextafter";
  info.is_pow = info.name == "pow";
  info.kernel_dtype_rule = kernel_dtype_rule(info.name);
  for (const auto& arg : schema.arguments()) {
    ArgInfo a;
    a.name = arg.name();
    a.is_self = a.name == "self";
    a.is_out = arg.alias_info() && arg.alias_info()->isWrite() && !info.inplace;
    a.is_scalar = is_scalar_type(arg.type());
    a.optional_factor = (a.name == "alpha" && (info.name == "add" || info.name == "sub")) ||
                        (a.name == "value" && (info.name == "addcmul" || info.name == "addcdiv"));
    a.keeps_own_type = keeps_own_type(a.name);
    a.promotes = !a.keeps_own_type && (promote.empty() || std::find(promote.begin(), promote.end(),
                                                                    a.name) != promote.end());
    const bool operand = a.name == "self" || a.name == "other";
    a.wrapped_number = a.is_scalar && operand;
    // add/sub's alpha is cast to the common dtype too (ATen's alpha.to<scalar_t>())
    a.rounds_to_compute =
        a.is_scalar && (operand || a.name == "exponent" || a.name == "min" || a.name == "max" ||
                        (a.optional_factor && a.name == "alpha"));
    info.args.push_back(std::move(a));
  }
  return info;
}

const OverloadInfo& overload_info(const c10::OperatorHandle& op) {
  // Keyed by the schema's address, which is stable while the operator is
  // registered; per thread, so the lookup takes no lock.
  thread_local std::unordered_map<const c10::FunctionSchema*, OverloadInfo> infos;
  const c10::FunctionSchema& schema = op.schema();
  auto it = infos.find(&schema);
  if (it == infos.end()) it = infos.emplace(&schema, describe_overload(op)).first;
  return it->second;
}

struct Operand {
  const ArgInfo* arg;
  bool is_tensor = false;  // a tpu tensor read through its view
  // The caller's tensor (also set for CPU 0-dim tensors, for promotion);
  // borrowed, since copying a Python-owned tensor costs a refcount round
  // trip through the interpreter.
  const at::Tensor* tensor = nullptr;
  at::Scalar scalar;
};
using Operands = c10::SmallVector<Operand, 4>;

// TensorIterator's overlap rules (check_out_overlap) for a tensor written
// from the call's tensor operands.
void check_write_overlaps(const at::Tensor& dst, const Operands& operands) {
  c10::SmallVector<std::reference_wrapper<const at::Tensor>, 4> inputs;
  for (const auto& o : operands) {
    if (o.is_tensor) inputs.emplace_back(*o.tensor);
  }
  check_out_overlap(dst, inputs);
}

using Attrs = std::map<std::string, std::string>;

void push_operand(Operands& operands, const ArgInfo& arg, const at::Tensor& t) {
  Operand o{&arg};
  o.tensor = &t;
  const bool tpu = t.device().type() == c10::DeviceType::PrivateUse1;
  // CPU 0-dim tensors act as scalars, as they do with CUDA tensors.
  if (!tpu && t.dim() == 0 && t.device().is_cpu()) {
    o.scalar = t.item();
  } else {
    o.is_tensor = true;
  }
  operands.push_back(std::move(o));
}

void push_operand(Operands& operands, const ArgInfo& arg, const at::Scalar& value) {
  // alpha == 1 and value == 1 are the common case: leave them out.
  if (arg.optional_factor && value.equal(1)) return;
  Operand o{&arg};
  o.scalar = value;
  operands.push_back(std::move(o));
}

// nan_to_num's replacements default to 0 for NaN and the largest and
// lowest finite values of the result dtype for +-inf.
void add_nan_to_num_defaults(const OverloadInfo& info, at::ScalarType dtype, Operands& operands) {
  if (!at::isFloatingType(dtype)) return;
  for (const auto& arg : info.args) {
    if (arg.name != "nan" && arg.name != "posinf" && arg.name != "neginf") continue;
    const bool given =
        std::any_of(operands.begin(), operands.end(), [&](const auto& o) { return o.arg == &arg; });
    if (given) continue;
    double value = 0.0;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "nan_to_num", [&] {
      if (arg.name == "posinf") value = static_cast<double>(std::numeric_limits<scalar_t>::max());
      if (arg.name == "neginf") {
        value = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
      }
    });
    Operand o{&arg};
    o.scalar = value;
    operands.push_back(std::move(o));
  }
}

// The dtype of an operand as type promotion sees it (a Python number or a
// CPU 0-dim tensor as its wrapped tensor's dtype).
at::ScalarType operand_dtype(const Operand& o) {
  if (o.tensor) return o.tensor->scalar_type();
  if (o.scalar.isBoolean()) return at::kBool;
  if (o.scalar.isIntegral(false)) return at::kLong;
  if (o.scalar.isComplex()) return at::kComplexDouble;
  return at::kDouble;
}

const Operand* find_operand(const Operands& operands, const char* name) {
  for (const auto& o : operands) {
    if (o.arg->name == name) return &o;
  }
  return nullptr;
}

const std::string* find_attr(const Attrs& attrs, const char* key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

// floor_divide, remainder, fmod and div with a rounding mode, on integers:
// CPU raises "ZeroDivisionError" for a zero divisor.
bool divides_integers(const std::string& name, const Attrs& attrs, at::ScalarType compute) {
  if (!at::isIntegralType(compute, /*includeBool=*/false)) return false;
  return name == "floor_divide" || name == "remainder" || name == "fmod" ||
         (name == "div" && attrs.count("rounding_mode"));
}

// Raises for a scalar divisor that is 0 in the compute dtype (a wrapped
// number wraps first); true when the divisor is a tensor, whose zeros the
// program must look for.
bool check_scalar_divisor(const Operand* divisor, at::ScalarType compute) {
  if (divisor == nullptr || divisor->is_tensor) return divisor != nullptr;
  const int64_t value = divisor->scalar.toLong();
  const bool zero = AT_DISPATCH_INTEGRAL_TYPES(compute, "ZeroDivisionError",
                                               [&] { return static_cast<scalar_t>(value) == 0; });
  TORCH_CHECK(!zero, "ZeroDivisionError");
  return false;
}

// The ops' own argument checks (OverloadInfo::has_argument_checks).
void check_op_arguments(const OverloadInfo& info, const Operands& operands, const Attrs& attrs,
                        at::ScalarType compute) {
  const std::string& name = info.name;
  const std::string& op_name = info.op_name;
  if (name == "sub") {
    const Operand* self = find_operand(operands, "self");
    const Operand* other = find_operand(operands, "other");
    const bool self_bool = self && operand_dtype(*self) == at::kBool;
    const bool other_bool = other && operand_dtype(*other) == at::kBool;
    TORCH_CHECK(!(self_bool && other_bool),
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead.");
    TORCH_CHECK(!(self_bool || other_bool),
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                "instead.");
  }
  if (name == "softshrink") {
    // CPU's softshrink_check: lambd in [0, the dtype's max].
    const Operand* lambd = find_operand(operands, "lambd");
    double max = std::numeric_limits<float>::max();
    if (compute == at::kDouble) max = std::numeric_limits<double>::max();
    if (compute == at::kHalf) max = static_cast<double>(std::numeric_limits<c10::Half>::max());
    if (compute == at::kBFloat16) {
      max = static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    }
    const double value = lambd ? lambd->scalar.toDouble() : 0.5;
    TORCH_CHECK(value >= 0 && value <= max, "lambda must be in range [0, ", max,
                "] for input dtype ", compute, ", but found ", value);
  }
  if (name == "addcdiv") {
    const Operand* t1 = find_operand(operands, "tensor1");
    const Operand* t2 = find_operand(operands, "tensor2");
    TORCH_CHECK(!(t1 && t2 && at::isIntegralType(operand_dtype(*t1), true) &&
                  at::isIntegralType(operand_dtype(*t2), true)),
                "Integer division with addcdiv is no longer supported, and in a future  release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  }
  if (name == "clamp") {
    const Operand* lo = find_operand(operands, "min");
    const Operand* hi = find_operand(operands, "max");
    TORCH_CHECK(lo || hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
    // clamp.Tensor's kernel, unlike clamp's, has no bool version
    const bool tensor_bounds = (lo && lo->tensor) || (hi && hi->tensor);
    if (tensor_bounds && compute == at::kBool) refuse_dtype(op_name, compute);
  }
  if (name == "div") {
    const std::string* mode = find_attr(attrs, "rounding_mode");
    TORCH_CHECK(!mode || *mode == "trunc" || *mode == "floor",
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                *mode, "'");
  }
  if (name == "gelu" || name == "gelu_backward") {
    const std::string* approximate = find_attr(attrs, "approximate");
    TORCH_CHECK(!approximate || *approximate == "none" || *approximate == "tanh",
                "approximate argument must be either none or tanh.");
  }
  if (name == "where") {
    const Operand* condition = find_operand(operands, "condition");
    const at::ScalarType c = condition ? operand_dtype(*condition) : at::kBool;
    if (c == at::kByte) {
      TORCH_WARN_ONCE(
          "where received a uint8 condition tensor. This behavior is deprecated and will be "
          "removed in a future version of PyTorch. Use a boolean condition instead.");
    }
    TORCH_CHECK(c == at::kBool || c == at::kByte,
                "where expected condition to be a boolean tensor, but got a tensor with dtype ", c);
  }
  if (name == "masked_fill") {
    const Operand* mask = find_operand(operands, "mask");
    TORCH_CHECK(!mask || !mask->tensor || mask->tensor->scalar_type() == at::kBool,
                "masked_fill_ only supports boolean masks, but got mask with dtype ",
                mask->tensor->dtype());
    const Operand* value = find_operand(operands, "value");
    TORCH_CHECK(!value || !value->tensor || value->tensor->dim() == 0,
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                value->tensor->dim(), " dimension(s).");
  }
  if (name == "hardtanh" && compute == at::kByte) {
    const Operand* lo = find_operand(operands, "min_val");
    const Operand* hi = find_operand(operands, "max_val");
    TORCH_CHECK((!lo || lo->scalar.toLong() >= 0) && (!hi || hi->scalar.toLong() >= 0),
                "cannot do hardtanh on an unsigned type with negative limits");
  }
  if (name == "pow") {
    // A tensor exponent follows the integer rules per element; a negative
    // Python integer exponent of an integer tensor is refused up front.
    const Operand* exponent = find_operand(operands, "exponent");
    const Operand* self = find_operand(operands, "self");
    if (exponent && !exponent->tensor && self && self->tensor) {
      TORCH_CHECK(!(at::isIntegralType(self->tensor->scalar_type(), true) &&
                    exponent->scalar.isIntegral(true) && exponent->scalar.toLong() < 0),
                  "Integers to negative integer powers are not allowed.");
    } else if (compute == at::kBool) {
      refuse_dtype(op_name, compute);
    }
  }
  if (name == "lerp") {
    // lerp's meta function: end and a tensor weight must have self's dtype
    // (a 0-dim weight may have another)
    const Operand* self = find_operand(operands, "self");
    for (const char* arg : {"end", "weight"}) {
      const Operand* o = find_operand(operands, arg);
      if (!self || !self->tensor || !o || !o->tensor) continue;
      if (std::string(arg) == "weight" && o->tensor->dim() == 0) continue;
      TORCH_CHECK(o->tensor->dtype() == self->tensor->dtype(), "expected dtype ",
                  self->tensor->dtype(), " for `", arg, "` but got dtype ", o->tensor->dtype());
    }
  }
  if (info.inplace && name == "abs") {
    TORCH_CHECK(!at::isComplexType(compute), "In-place abs is not supported for complex tensors.");
  }
}

// The few elementwise kernels CPU has for the 8-bit floats (found by
// calling every overload on CPU: tests/test_dtype_audit.py); the rest raise
// NotImplementedError there, and here.
bool float8_kernel_on_cpu(const OverloadInfo& info, at::ScalarType compute) {
  const std::string& name = info.name;
  if (name == "abs") return compute != at::kFloat8_e8m0fnu;
  if (name == "mul") return info.op_name != "aten::mul.Scalar";
  if (name == "conj_physical") return info.op_name != "aten::conj_physical.out";
  return name == "eq" || name == "ne" || name == "isnan" || name == "where";
}

// The checks CPU makes before it computes anything, with its exception
// classes: the dtypes the kernel takes (before any StableHLO is built for a
// dtype the lowering cannot take) and the op's own argument checks.
void check_call(const OverloadInfo& info, const Operands& operands, const Attrs& attrs,
                at::ScalarType compute, const at::Tensor* out) {
  const std::string& name = info.name;
  const std::string& op_name = info.op_name;
  auto attr = [&](const char* key) { return find_attr(attrs, key); };
  // out= dtype checks come first: CPU makes them while it sets the call up,
  // before its kernel refuses a dtype.
  if (out) {
    // (CPU refuses a complex signbit before it looks at out)
    TORCH_CHECK_NOT_IMPLEMENTED(name != "signbit" || !at::isComplexType(compute),
                                "signbit is not implemented for complex tensors.");
    if (name == "isneginf" || name == "isposinf" || name == "signbit") {
      TORCH_CHECK(out->scalar_type() == at::kBool, name, " does not support non-boolean outputs.");
    }
    TORCH_CHECK(name != "heaviside" || out->scalar_type() == compute,
                "heaviside is not yet implemented for tensors with different dtypes.");
    // gelu_backward's out must match only on CPU's oneDNN path (approximate="none")
    const std::string* approximate = attr("approximate");
    const bool tanh_gelu = name == "gelu_backward" && approximate && *approximate == "tanh";
    if (info.out_dtype_must_match && !tanh_gelu) {
      const at::ScalarType expected = info.def->result == ResultDtype::kBool ? at::kBool : compute;
      const at::ScalarType got = out->scalar_type();
      // abs of a complex tensor writes its real type, or its own
      const bool complex_abs =
          name == "abs" && at::isComplexType(compute) && got == c10::toRealValueType(compute);
      TORCH_CHECK(got == expected || complex_abs, "Found dtype ", got, " but expected ", expected);
    }
  }
  if (info.has_argument_checks) check_op_arguments(info, operands, attrs, compute);

  const DtypeRule* rule = info.dtype_rule;
  if (info.has_argument_checks && name == "div" && attr("rounding_mode")) {
    rule = &dtype_rule("div_rounding");
  }
  if (!(rule->classes & dtype_class(compute))) refuse_dtype(*rule, op_name, compute);
  if (c10::isFloat8Type(compute) && !float8_kernel_on_cpu(info, compute)) {
    refuse_dtype(op_name, compute);
  }
  // round with `decimals` has only a floating kernel
  if (info.has_argument_checks && name == "round" && attr("decimals") &&
      !at::isFloatingType(compute)) {
    refuse_dtype(op_name, compute);
  }
}

// A 0-dim stand-in for a number operand in layout_inputs.
const at::Tensor& number_placeholder() {
  static const auto* t = new at::Tensor(at::empty({}, at::TensorOptions().device(at::kMeta)));
  return *t;
}

// The tensors TensorIterator would see as inputs, in its order, for the
// result's layout. Number operands count (as 0-dim tensors: CPU wraps
// them, and TensorIterator skips its fast contiguous setup when shapes
// differ). Where CPU does not lay the result out by its inputs (masked_fill
// clones `self` contiguous; pow with a number base allocates contiguous)
// there are none.
c10::SmallVector<const at::Tensor*, 4> layout_inputs(const OverloadInfo& info,
                                                     const Operands& operands) {
  c10::SmallVector<const at::Tensor*, 4> inputs;
  if (info.def->result == ResultDtype::kSelf) return inputs;
  for (const auto& o : operands) {
    const at::Tensor* t = nullptr;
    if (o.tensor) {
      t = o.tensor;  // a tpu tensor, or a CPU 0-dim one
    } else if (o.arg->wrapped_number) {
      t = &number_placeholder();
    } else {
      continue;
    }
    if (o.arg->is_self && info.self_first_in_layout) {
      inputs.insert(inputs.begin(), t);
    } else {
      inputs.push_back(t);
    }
  }
  if (info.is_pow && !find_operand(operands, "self")->tensor) inputs.clear();
  return inputs;
}

// Lowerings where the table's StableHLO op does not take an unsigned type:
// StableHLO's sign takes signed integers only, and for an unsigned x it is
// x != 0.
bool unsigned_sign(const std::string& name, hlo::ElementType type) {
  return (name == "sign" || name == "sgn") && hlo::is_unsigned_int(type);
}

// An operand in the compute type. A bool goes through uint8: XLA rewrites
// convert(pred) * x as select(pred, x, 0), which is 0 where x is inf or NaN
// (False * inf must be nan).
Value convert_operand(Builder& b, Value v, ElementType to) {
  if (v.type.element == ElementType::kPred && (hlo::is_float(to) || hlo::is_complex(to))) {
    v = b.convert(v, ElementType::kU8);
  }
  return b.convert(v, to);
}

// One elementwise call: type promotion, broadcasting, the result tensor
// (new, `out`, or self for in-place ops) and the launch.
at::Tensor run_elementwise(const OverloadInfo& info, Operands& operands, const Attrs& attrs,
                           const at::Tensor* out) {
  const std::string& name = info.name;
  const bool inplace = info.inplace;
  const ElementwiseDef& def = *info.def;
  const std::string& op_name = info.op_name;

  // Type promotion, as TensorIterator does it, over the promoting operands;
  // broadcasting over all tensor operands.
  at::native::ResultTypeState state;
  at::DimVector shape;
  const at::Tensor* first_tpu = nullptr;
  const at::Tensor* self_tensor = nullptr;
  for (const auto& o : operands) {
    if (o.tensor) shape = at::infer_size_dimvector(shape, o.tensor->sizes());
    if (o.is_tensor && first_tpu == nullptr) first_tpu = o.tensor;
    if (o.arg->is_self && o.tensor) self_tensor = o.tensor;
    if (!o.arg->promotes) continue;
    state = o.tensor ? at::native::update_result_type_state(*o.tensor, state)
                     : at::native::update_result_type_state(o.scalar, state);
  }
  TORCH_CHECK(first_tpu != nullptr, op_name, ": expected a tpu tensor operand");
  // `promoted` is the dtype the operands are cast to, as CPU casts them;
  // `compute` may widen it further (integers computing in float).
  at::ScalarType promoted = at::native::result_type(state);
  if (def.result == ResultDtype::kSelf) promoted = self_tensor->scalar_type();
  const at::ScalarType common = promoted;
  at::ScalarType compute = promoted;
  const bool true_division = !info.is_div || !attrs.count("rounding_mode");
  if (def.result == ResultDtype::kFloat && true_division &&
      at::isIntegralType(compute, /*includeBool=*/true)) {
    compute = c10::typeMetaToScalarType(c10::get_default_dtype());
    promoted = compute;
  }
  at::ScalarType result_dtype = def.result == ResultDtype::kBool ? at::kBool : compute;
  if (info.is_abs && at::isComplexType(compute)) result_dtype = c10::toRealValueType(compute);
  const bool masked_fill_expanded = inplace && info.is_masked_fill &&
                                    at::has_internal_overlap(*self_tensor) == at::MemOverlap::Yes;
  const bool integer_nan_to_num = info.is_nan_to_num && !at::isFloatingType(result_dtype);
  if (inplace && !masked_fill_expanded && !integer_nan_to_num) {
    // (TensorIterator checks overlaps before it looks at dtypes)
    check_write_overlaps(*self_tensor, operands);
  }
  // CPU's TensorIterator refuses an in-place result of a common dtype it
  // cannot cast to self before the kernel refuses that dtype
  // (int.bitwise_xor_(float) is a cast error, not a missing kernel); ops
  // that go to float on their own (sqrt_ of an int) are checked below.
  TORCH_CHECK(!inplace || def.result == ResultDtype::kBool ||
                  at::canCast(common, self_tensor->scalar_type()),
              "result type ", common, " can't be cast to the desired output type ",
              self_tensor->scalar_type());
  check_call(info, operands, attrs, common, out);
  if (info.kernel_dtype_rule.any()) {
    c10::SmallVector<at::ScalarType, 2> tensor_dtypes;
    for (const auto& o : operands) {
      if (o.is_tensor) tensor_dtypes.push_back(o.tensor->scalar_type());
    }
    reject_kernel_dtypes(info.kernel_dtype_rule, compute, tensor_dtypes);
  }
  if (info.is_nan_to_num) {
    // Integers have no NaN or infinity: a copy, whatever the replacements
    // are (CPU never converts them, so out-of-range values are fine).
    if (!at::isFloatingType(result_dtype)) {
      operands.erase(std::remove_if(operands.begin(), operands.end(),
                                    [](const Operand& o) { return !o.is_tensor; }),
                     operands.end());
    }
    add_nan_to_num_defaults(info, result_dtype, operands);
  }

  at::Tensor result;
  if (masked_fill_expanded) {
    // Allowed (deprecated) on CPU: one write per memory location.
    TORCH_WARN(
        "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
        "before performing this operation. This also applies to advanced indexing e.g. "
        "tensor[mask] = scalar");
    const Operand* mask = find_operand(operands, "mask");
    const DistinctWrite w = distinct_masked_write(*self_tensor, *mask->tensor);
    Operands distinct = operands;
    for (auto& o : distinct) {
      if (o.tensor == self_tensor) o.tensor = &w.dst;
      if (o.tensor == mask->tensor) o.tensor = &w.mask;
    }
    run_elementwise(info, distinct, attrs, nullptr);
    return *self_tensor;
  }
  // An integer nan_to_num_ leaves self as it is (CPU does not even look at
  // its memory, so an expanded self is fine).
  if (inplace && integer_nan_to_num) return *self_tensor;
  if (inplace || out != nullptr) {
    // out='s overlaps are checked before it is resized (self's came first).
    if (!inplace) check_write_overlaps(*out, operands);
    if (inplace) {
      result = *self_tensor;
      TORCH_CHECK(result.sizes() == at::IntArrayRef(shape), "output with shape ", result.sizes(),
                  " doesn't match the broadcast shape ", at::IntArrayRef(shape));
      TORCH_CHECK(at::canCast(result_dtype, result.scalar_type()), "result type ", result_dtype,
                  " can't be cast to the desired output type ", result.scalar_type());
    } else {
      TORCH_CHECK(info.out_dtype_must_match || at::canCast(result_dtype, out->scalar_type()),
                  "result type ", result_dtype, " can't be cast to the desired output type ",
                  out->scalar_type());
      resize_out(*out, shape, layout_inputs(info, operands));
      result = *out;
    }
  } else {
    result = empty_result(shape, first_tpu->options().dtype(result_dtype),
                          layout_inputs(info, operands));
  }

  // Half and bfloat16 compute in float32 and round once at the end, like
  // the CPU kernels' opmath type (scalars too).
  // (the 8-bit floats' few kernels compute in float, as c10's operators do)
  const bool reduced_float =
      compute == at::kHalf || compute == at::kBFloat16 || c10::isFloat8Type(compute);
  const Operand* other = info.opmath_other ? find_operand(operands, "other") : nullptr;
  const bool opmath_other =
      reduced_float && other && (!other->is_tensor || other->tensor->numel() == 1);
  // (Exceptions, also CPU's: rounding division of two tensors computes in
  // the narrow type, rounding the quotient before truncating it and every
  // step of the floor division, c10::div_floor_floating on Half/BFloat16;
  // nextafter steps in the narrow type.)
  const bool rounding_division =
      info.is_floor_divide || (info.is_div && attrs.count("rounding_mode"));
  const bool narrow_quotient = (rounding_division && !opmath_other) || info.is_nextafter;
  const at::ScalarType opmath = reduced_float && !narrow_quotient ? at::kFloat : compute;
  const hlo::ElementType ctype = element_type_for(opmath, op_name.c_str());
  const hlo::ElementType ptype = element_type_for(promoted, op_name.c_str());
  KeyBuffer key_buffer;
  std::string& key = key_buffer.str();
  // What the op's part of the key is built from, packed: 8 bits per type,
  // 1 for opmath_other, 4 for the operand count, then 5 per operand (its
  // argument's index in info.args, < 16, and whether it is a tensor), for
  // up to 8 operands and no attributes; anything else is built every time
  // (all ones stands for "not packed", which no packing reaches).
  uint64_t key_source = ~uint64_t{0};
  if (attrs.empty() && operands.size() <= 8) {
    key_source = static_cast<uint64_t>(ctype) | static_cast<uint64_t>(ptype) << 8 |
                 static_cast<uint64_t>(opmath_other) << 16 |
                 static_cast<uint64_t>(operands.size()) << 17;
    for (size_t i = 0; i < operands.size() && key_source != ~uint64_t{0}; ++i) {
      const auto arg = static_cast<uint64_t>(operands[i].arg - info.args.data());
      if (arg >= 16) {
        key_source = ~uint64_t{0};
      } else {
        key_source |= (arg << 1 | static_cast<uint64_t>(operands[i].is_tensor)) << (21 + 5 * i);
      }
    }
  }
  LastOpKey* last = key_source != ~uint64_t{0} ? &last_op_key(info) : nullptr;
  if (last != nullptr && last->source == key_source) {
    key = last->key;
  } else {
    key += info.key_prefix;
    key += ':';
    key += hlo::mlir_name(ctype);
    key += ':';
    key += hlo::mlir_name(ptype);
    for (const auto& o : operands) {
      key += ':';
      key += o.arg->name;
      key += o.is_tensor ? "=t" : "=s";
    }
    for (const auto& [k, v] : attrs) {
      key += ':';
      key += k;
      key += '=';
      key += v;
    }
    if (opmath_other) key += ":opmath_other";
    if (last != nullptr) {
      last->key = key;
      last->source = key_source;
    }
  }
  TensorProgram program(op_name.c_str(), TensorProgram::BorrowedKey{key});
  // Integer division by zero raises, as on CPU: a scalar divisor here, a
  // tensor's zeros on the device (raised at the next host read).
  const bool check_divisor = divides_integers(name, attrs, compute) &&
                             check_scalar_divisor(find_operand(operands, "other"), compute);
  if (check_divisor) program.report_findings(op_name.c_str(), IndexErrorClass::kRuntimeError);
  for (const auto& o : operands) {
    if (o.is_tensor) {
      program.input(*o.tensor);
    } else if (o.arg->keeps_own_type) {
      program.scalar(o.scalar, ElementType::kPred);  // a scalar condition/mask
    } else {
      // A CPU 0-dim tensor is cast as a tensor operand: wrapping, and
      // rounded to the promoted dtype unless the op reads it in opmath.
      const bool cpu_tensor = o.tensor != nullptr;
      const bool wrap = cpu_tensor || o.arg->wrapped_number;
      const bool in_opmath = opmath_other && &o == other;
      const bool round = !in_opmath && (cpu_tensor || o.arg->rounds_to_compute);
      program.scalar(o.scalar, round ? ptype : ctype,
                     wrap ? ScalarConversion::kWrapped : ScalarConversion::kChecked);
    }
  }
  program.output(result);
  const std::vector<int64_t> out_shape(shape.begin(), shape.end());
  // The result is rounded to its own dtype before it is written: an out=
  // tensor of a wider dtype gets the half/bfloat16 result cast, as on CPU.
  const hlo::ElementType rtype = element_type_for(result_dtype, op_name.c_str());
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Inputs inputs;
    inputs.attrs = attrs;
    inputs.compute = ctype;
    inputs.promoted = ptype;
    inputs.shape = out_shape;
    for (size_t i = 0; i < operands.size(); ++i) {
      const ArgInfo& arg = *operands[i].arg;
      Value v = in[i];
      if (!arg.keeps_own_type) {
        // Cast a tensor to the promoted dtype first, as CPU casts its
        // operands (int64 70000 to float16 is inf), then to the opmath type
        // (scalars were packed in the type they take).
        const bool in_opmath = opmath_other && &operands[i] == other;
        if (operands[i].is_tensor && !in_opmath && v.type.element != ptype && ptype != ctype) {
          v = b.convert(v, ptype);
        }
        v = convert_operand(b, v, ctype);
      }
      if (!operands[i].is_tensor) inputs.scalar_operands.insert(arg.name);
      inputs.values[arg.name] = broadcast_to(b, v, out_shape);
    }
    if (unsigned_sign(name, ctype)) {
      Value x = inputs["self"];
      return std::vector<Value>{b.convert(b.compare(hlo::Compare::kNE, x, b.zeros(x.type)), ctype)};
    }
    Value r = def.lower(b, inputs);
    if (r.type.element != rtype) r = b.convert(r, rtype);
    std::vector<Value> results{r};
    if (check_divisor) results.push_back(zero_divisor_finding(b, inputs["other"]));
    return results;
  });
  return result;
}

// The boxed kernel: serves every overload, reading the arguments off the
// stack by the overload's schema.
void elementwise_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const OverloadInfo& info = overload_info(op);
  const size_t num_args = info.args.size();
  auto args = torch::jit::last(*stack, num_args);
  Operands operands;
  Attrs attrs;
  const at::Tensor* out = nullptr;
  for (size_t i = 0; i < num_args; ++i) {
    const ArgInfo& arg = info.args[i];
    const c10::IValue& v = args[i];
    if (arg.is_out) {
      out = &v.toTensor();  // out= / grad_input=
      continue;
    }
    if (v.isNone()) continue;
    if (v.isTensor()) {
      push_operand(operands, arg, v.toTensor());
    } else if (arg.is_scalar) {
      push_operand(operands, arg, v.toScalar());
    } else if (v.isString()) {
      attrs[arg.name] = v.toStringRef();
    } else if (v.isBool()) {
      attrs[arg.name] = v.toBool() ? "1" : "0";
    } else if (v.isInt()) {
      attrs[arg.name] = std::to_string(v.toInt());
    } else {
      TORCH_CHECK(false, info.op_name, ": unsupported argument '", arg.name, "'");
    }
  }
  at::Tensor result = run_elementwise(info, operands, attrs, out);
  torch::jit::drop(*stack, num_args);
  torch::jit::push(*stack, std::move(result));
}

}  // namespace

std::vector<std::string> elementwise_overloads() {
  std::vector<std::string> names = overloads();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

namespace {

// Unboxed front ends for the most common signatures. Going through the
// boxed kernel costs a stack of IValues per call, and copying Python-owned
// tensors onto it costs a refcount round trip through the interpreter
// (callgrind: about 5% of a 64x64 add's host instructions). The schema is checked at registration,
// so an overload only gets an unboxed kernel whose signature is exactly
// its own; every other overload keeps the boxed one.
enum class Signature {
  kBoxed,
  kUnary,              // (Tensor self) -> Tensor
  kBinary,             // (Tensor self, Tensor other) -> Tensor
  kBinaryAlpha,        // (Tensor self, Tensor other, *, Scalar alpha) -> Tensor
  kUnaryInplace,       // (Tensor(a!) self) -> Tensor(a!)
  kBinaryInplace,      // (Tensor(a!) self, Tensor other) -> Tensor(a!)
  kBinaryAlphaInplace  // (Tensor(a!) self, Tensor other, *, Scalar alpha) -> Tensor(a!)
};

Signature signature_of(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();
  if (schema.returns().size() != 1 || args.empty() || args.size() > 3) return Signature::kBoxed;
  auto is_tensor = [](const c10::Argument& a) {
    return a.type()->kind() == c10::TypeKind::TensorType;
  };
  const bool inplace = args[0].alias_info() && args[0].alias_info()->isWrite();
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].alias_info()) return Signature::kBoxed;  // an out= overload
  }
  if (!is_tensor(args[0])) return Signature::kBoxed;
  if (args.size() >= 2 && !is_tensor(args[1])) return Signature::kBoxed;
  if (args.size() == 3 && args[2].type()->kind() != c10::TypeKind::NumberType) {
    return Signature::kBoxed;
  }
  switch (args.size()) {
    case 1:
      return inplace ? Signature::kUnaryInplace : Signature::kUnary;
    case 2:
      return inplace ? Signature::kBinaryInplace : Signature::kBinary;
    default:
      return inplace ? Signature::kBinaryAlphaInplace : Signature::kBinaryAlpha;
  }
}

// An overload's info, worked out on its first call rather than while the
// library registers ~300 overloads.
class LazyOverload {
 public:
  explicit LazyOverload(c10::OperatorHandle op) : op_(std::move(op)) {}
  const OverloadInfo& get() {
    // (std::call_once costs a thread-local set-up and a pthread_once call
    // on every call, and this runs on every one of the op's calls)
    if (ready_.load(std::memory_order_acquire)) return info_;
    std::call_once(once_, [this] {
      info_ = describe_overload(op_);
      ready_.store(true, std::memory_order_release);
    });
    return info_;
  }

 private:
  c10::OperatorHandle op_;
  std::once_flag once_;
  std::atomic<bool> ready_{false};
  OverloadInfo info_;
};

const Attrs& no_attrs() {
  static const Attrs* attrs = new Attrs();
  return *attrs;
}

template <typename... Args>
at::Tensor call_unboxed(LazyOverload& lazy, const at::Tensor& self, const Args&... rest) {
  const OverloadInfo& info = lazy.get();
  Operands operands;
  push_operand(operands, info.args[0], self);
  size_t i = 1;
  (push_operand(operands, info.args[i++], rest), ...);
  return run_elementwise(info, operands, no_attrs(), nullptr);
}

void register_overload(torch::Library& m, const std::string& name) {
  const auto dot = name.find('.');
  c10::OperatorName op_name("aten::" + name.substr(0, dot),
                            dot == std::string::npos ? "" : name.substr(dot + 1));
  auto handle = c10::Dispatcher::singleton().findSchema(op_name);
  const Signature signature = handle ? signature_of(handle->schema()) : Signature::kBoxed;
  if (signature == Signature::kBoxed) {
    m.impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&elementwise_kernel>());
    return;
  }
  auto lazy = std::make_shared<LazyOverload>(*handle);
  using at::Scalar;
  using at::Tensor;
  switch (signature) {
    case Signature::kUnary:
      m.impl(name.c_str(), [lazy](const Tensor& self) { return call_unboxed(*lazy, self); });
      return;
    case Signature::kBinary:
      m.impl(name.c_str(), [lazy](const Tensor& self, const Tensor& other) {
        return call_unboxed(*lazy, self, other);
      });
      return;
    case Signature::kBinaryAlpha:
      m.impl(name.c_str(), [lazy](const Tensor& self, const Tensor& other, const Scalar& alpha) {
        return call_unboxed(*lazy, self, other, alpha);
      });
      return;
    case Signature::kUnaryInplace:
      m.impl(name.c_str(), [lazy](Tensor& self) -> Tensor& {
        call_unboxed(*lazy, self);
        return self;
      });
      return;
    case Signature::kBinaryInplace:
      m.impl(name.c_str(), [lazy](Tensor& self, const Tensor& other) -> Tensor& {
        call_unboxed(*lazy, self, other);
        return self;
      });
      return;
    case Signature::kBinaryAlphaInplace:
      m.impl(name.c_str(),
             [lazy](Tensor& self, const Tensor& other, const Scalar& alpha) -> Tensor& {
               call_unboxed(*lazy, self, other, alpha);
               return self;
             });
      return;
    case Signature::kBoxed:  // registered above
      return;
  }
}

}  // namespace

void register_elementwise(torch::Library& m) {
  for (const auto& name : elementwise_overloads()) register_overload(m, name);
}

}  // namespace torch_tpu::ops

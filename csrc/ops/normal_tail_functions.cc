// See ops/normal_tail_functions.h.
//
// erfcx(x) for x >= 0 is exp(x^2) erfc(x) below 5 (both factors are
// accurate in double there) and Laplace's continued fraction
// 1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))) from 5 up,
// 40 terms evaluated from the bottom (within 6e-14 of the exact value
// everywhere); erfcx(-x) = 2 exp(x^2) - erfcx(x). log_ndtr is
// log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1 (no underflow) and
// log1p(-erfc(x / sqrt 2) / 2) above (no cancellation), as CPU's. ndtri
// starts from sqrt 2 erfinv(2q - 1) for the lower tail probability q (or
// the tail's asymptotic form where 2q - 1 rounds to -1) and takes four
// Newton steps on log Phi(x) = log q, which converge to within a few ulps
// in double across [1e-300, 1 - 1e-16].
#include "ops/normal_tail_functions.h"

#include <cmath>

#include "hlo/doubles.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Doubles;
using hlo::Value;

constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

// erfcx on double x.
Value erfcx_double(const Doubles& d, Value x) {
  Value a = d.unary("abs", x);
  // exp(a^2) erfc(a), for a < 5 (elsewhere its value is not used)
  Value small_a = d.select(d.lt(a, d.c(5)), a, d.c(0));
  Value direct = d.mul(d.unary("exponential", d.mul(small_a, small_a)), d.chlo("erfc", small_a));
  // the continued fraction, for a >= 5
  Value big_a = d.select(d.lt(a, d.c(5)), d.c(5), a);
  Value f = big_a;
  for (int k = 40; k >= 1; --k) f = d.add(big_a, d.div(d.c(k / 2.0), f));
  Value fraction = d.div(d.c(kInvSqrtPi), f);
  Value positive = d.select(d.lt(a, d.c(5)), direct, fraction);
  // erfcx(-a) = 2 exp(a^2) - erfcx(a) (overflows to inf past about 26.6)
  Value negative = d.sub(d.mul(d.c(2), d.unary("exponential", d.mul(a, a))), positive);
  // (NaN compares false: it takes the positive branch and stays NaN)
  return d.select(d.lt(x, d.c(0)), negative, d.select(d.eq(x, x), positive, x));
}

Value log_ndtr_double(const Doubles& d, Value x) {
  Value t = d.mul(x, d.c(kInvSqrt2));
  Value lower = d.sub(d.unary("log", d.div(erfcx_double(d, d.unary("negate", t)), d.c(2))),
                      d.div(d.mul(x, x), d.c(2)));
  Value upper = d.unary("log_plus_one", d.unary("negate", d.div(d.chlo("erfc", t), d.c(2))));
  return d.select(d.lt(x, d.c(-1)), lower, upper);
}

Value ndtri_double(const Doubles& d, Value p) {
  Value upper_half = d.gt(p, d.c(0.5));
  Value q = d.select(upper_half, d.sub(d.c(1), p), p);
  // (q in (0, 0.5] where it matters; other elements are replaced below)
  Value usable = d.select(d.gt(q, d.c(0)), q, d.c(0.25));
  Value central =
      d.mul(d.c(std::sqrt(2.0)), d.chlo("erf_inv", d.sub(d.mul(d.c(2), usable), d.c(1))));
  // x ~ -sqrt(l - log l - log 2 pi), l = -2 log q, far in the tail
  Value l = d.mul(d.c(-2), d.unary("log", usable));
  Value tail = d.unary(
      "negate", d.unary("sqrt", d.sub(d.sub(l, d.unary("log", l)), d.c(std::log(2 * M_PI)))));
  Value x = d.select(d.gt(usable, d.c(1e-10)), central, tail);
  Value log_q = d.unary("log", usable);
  for (int step = 0; step < 4; ++step) {
    Value ln = log_ndtr_double(d, x);
    // d/dx log Phi(x) = phi(x) / Phi(x)
    Value slope =
        d.unary("exponential", d.sub(d.sub(d.div(d.mul(x, x), d.c(-2)), ln), d.c(kLogSqrt2Pi)));
    x = d.sub(x, d.div(d.sub(ln, log_q), slope));
  }
  x = d.select(upper_half, d.unary("negate", x), x);
  Value nan = d.c(std::nan(""));
  x = d.select(d.eq(p, d.c(0)), d.c(-INFINITY), x);
  x = d.select(d.eq(p, d.c(1)), d.c(INFINITY), x);
  Value outside = d.any(d.any(d.lt(p, d.c(0)), d.gt(p, d.c(1))), d.unary("not", d.eq(p, p)));
  return d.select(outside, nan, x);
}

}  // namespace

Value erfcx(Builder& b, Value x) { return Doubles::in_double(b, x, erfcx_double); }
Value log_ndtr(Builder& b, Value x) { return Doubles::in_double(b, x, log_ndtr_double); }
Value ndtri(Builder& b, Value p) { return Doubles::in_double(b, p, ndtri_double); }

}  // namespace torch_tpu::ops

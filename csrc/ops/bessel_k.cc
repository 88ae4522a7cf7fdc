// See ops/bessel_k.h. Three regimes, each within a few ulps of the exact
// value in double (checked against mpmath):
// - x <= 2: the power series, K0 = -(log(x/2) + gamma) I0(x) + sum_k H_k
//   y^k / (k!)^2 and K1 = 1/x + log(x/2) I1(x) - (x/4) sum_k (psi(k+1) +
//   psi(k+2)) y^k / (k! (k+1)!), y = x^2/4, 30 terms;
// - 2 < x <= 20: the integral K_n(x) = int_0^inf cosh(n t) exp(-x cosh t) dt
//   by the trapezoidal rule (step 0.1, 60 nodes), which converges
//   geometrically for this analytic, double-exponentially decaying integrand;
// - x > 20: the asymptotic expansion sqrt(pi / 2x) exp(-x) sum_k a_k(n) / x^k,
//   30 terms.
#include "ops/bessel_k.h"

#include <cmath>

#include "hlo/doubles.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Doubles;
using hlo::Value;

constexpr double kEulerGamma = 0.57721566490153286061;

// The series (meant for 0 < x <= 2).
Value series(const Doubles& d, Value x, int order) {
  Value y = d.div(d.mul(x, x), d.c(4));
  Value term = d.c(1), bessel_i = d.c(1);
  // (k = 0's weight: 0 for K0; psi(1) + psi(2) = 1 - 2 gamma for K1)
  Value sum = d.c(order == 0 ? 0.0 : 1.0 - 2 * kEulerGamma);
  double harmonic = 0;
  for (int k = 1; k < 30; ++k) {
    harmonic += 1.0 / k;
    term = d.mul(term, d.div(y, d.c(order == 0 ? 1.0 * k * k : k * (k + 1.0))));
    bessel_i = d.add(bessel_i, term);
    // K0: H_k; K1: psi(k+1) + psi(k+2) = 2 (H_k - gamma) + 1/(k+1)
    const double weight = order == 0 ? harmonic : 2 * (harmonic - kEulerGamma) + 1.0 / (k + 1);
    sum = d.add(sum, d.mul(term, d.c(weight)));
  }
  Value log_half = d.unary("log", d.div(x, d.c(2)));
  if (order == 0) {
    return d.sub(sum, d.mul(d.add(log_half, d.c(kEulerGamma)), bessel_i));
  }
  Value i1 = d.mul(d.div(x, d.c(2)), bessel_i);
  return d.sub(d.add(d.div(d.c(1), x), d.mul(log_half, i1)), d.mul(d.div(x, d.c(4)), sum));
}

// The trapezoidal rule on the integral (meant for 2 < x <= 20).
Value integral(const Doubles& d, Value x, int order, bool scaled) {
  constexpr double kStep = 0.1;
  Value total = d.c(0);
  for (int k = 0; k < 60; ++k) {
    const double c = std::cosh(k * kStep);
    Value f = d.unary("exponential", d.mul(x, d.c(-(scaled ? c - 1 : c))));
    const double weight = (k == 0 ? 0.5 : 1.0) * kStep * (order == 0 ? 1.0 : c);
    total = d.add(total, d.mul(f, d.c(weight)));
  }
  return total;
}

// The asymptotic expansion (meant for x > 20).
Value asymptotic(const Doubles& d, Value x, int order, bool scaled) {
  Value sum = d.c(1), a = d.c(1);
  const double mu = 4.0 * order * order;
  for (int k = 1; k < 30; ++k) {
    const double odd = 2.0 * k - 1;
    a = d.mul(a, d.div(d.c((mu - odd * odd) / (8.0 * k)), x));
    sum = d.add(sum, a);
  }
  Value r = d.mul(d.unary("sqrt", d.div(d.c(M_PI / 2), x)), sum);
  return scaled ? r : d.mul(r, d.unary("exponential", d.sub(d.c(0), x)));
}

Value bessel_k_double(const Doubles& d, Value x, int order, bool scaled) {
  // Each regime sees only its own arguments (others get a harmless 3 or 30).
  Value small = d.le(x, d.c(2)), large = d.gt(x, d.c(20));
  Value xs = d.select(small, x, d.c(1));
  Value xm = d.select(d.any(small, large), d.c(3), x);
  Value xl = d.select(large, x, d.c(30));
  Value s = series(d, xs, order);
  if (scaled) s = d.mul(s, d.unary("exponential", xs));
  Value r = d.select(
      small, s, d.select(large, asymptotic(d, xl, order, scaled), integral(d, xm, order, scaled)));
  r = d.select(d.eq(x, d.c(0)), d.c(INFINITY), r);
  r = d.select(d.eq(x, d.c(INFINITY)), d.c(0), r);
  return d.select(d.any(d.lt(x, d.c(0)), d.is_nan(x)), d.c(NAN), r);
}

}  // namespace

Value bessel_k(Builder& b, Value x, int order, bool scaled) {
  return Doubles::in_double(
      b, x, [&](const Doubles& d, Value xd) { return bessel_k_double(d, xd, order, scaled); });
}

}  // namespace torch_tpu::ops

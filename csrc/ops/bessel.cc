// See ops/bessel.h. Each function has three regimes, each within about
// 1e-16 of the exact value in double (checked against mpmath):
// - near 0 (|x| <= 2), the power series, shared: with y = x^2/4,
//   J0 = sum (-y)^k / (k!)^2 and I0 = sum y^k / (k!)^2 (order 1: (x/2) sum
//   (+-y)^k / (k! (k+1)!)), and the same terms weighted by H_k (order 0) or
//   psi(k+1) + psi(k+2) (order 1), from which Y and K follow:
//   Y0 = (2/pi) ((log(x/2) + gamma) J0 - S), K0 = S - (log(x/2) + gamma) I0,
//   Y1 = (2/pi) (log(x/2) J1 - 1/x) - x S / (2 pi), K1 = 1/x + log(x/2) I1 - x S / 4;
// - J and Y to 25: Miller's backward recurrence J_{m-1} = (2m/x) J_m -
//   J_{m+1} from m = 60, normalized by J_0 + 2 sum J_2k = 1, and Neumann's
//   series Y0 = (2/pi) ((log(x/2) + gamma) J0 - 2 sum (-1)^k J_2k / k) with
//   its derivative for Y1 = -Y0'; K to 20: the trapezoidal rule on
//   K_n(x) = int_0^inf cosh(n t) exp(-x cosh t) dt (step 0.1, 60 nodes),
//   which converges geometrically for this analytic, double-exponentially
//   decaying integrand;
// - beyond: Hankel's asymptotic expansions (40 terms of P and Q for J and Y;
//   30 terms of sqrt(pi / 2x) exp(-x) sum a_k / x^k for K).
// J0 is even and J1 odd; Y and K are defined for x >= 0 only.
#include "ops/bessel.h"

#include <cmath>
#include <vector>

#include "hlo/doubles.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Doubles;
using hlo::Value;

constexpr double kEulerGamma = 0.57721566490153286061;

// The power series at x (meant for 0 < x <= 2) with y = x^2/4 taken as
// sign * y: sign -1 for J (and Y), +1 for I (and K).
struct PowerSeries {
  Value first;     // J_order or I_order
  Value weighted;  // S above
  Value log_half;  // log(x / 2)
};
PowerSeries power_series(const Doubles& d, Value x, int order, double sign) {
  Value y = d.div(d.mul(x, x), d.c(4));
  Value term = d.c(1), first = d.c(1);
  // (k = 0's weight: 0 for order 0; psi(1) + psi(2) = 1 - 2 gamma for order 1)
  Value weighted = d.c(order == 0 ? 0.0 : 1.0 - 2 * kEulerGamma);
  double harmonic = 0;
  for (int k = 1; k < 30; ++k) {
    harmonic += 1.0 / k;
    term = d.mul(term, d.div(y, d.c(sign * (order == 0 ? 1.0 * k * k : k * (k + 1.0)))));
    first = d.add(first, term);
    // order 1: psi(k+1) + psi(k+2) = 2 (H_k - gamma) + 1/(k+1)
    const double weight = order == 0 ? harmonic : 2 * (harmonic - kEulerGamma) + 1.0 / (k + 1);
    weighted = d.add(weighted, d.mul(term, d.c(weight)));
  }
  if (order == 1) first = d.mul(d.div(x, d.c(2)), first);
  return {first, weighted, d.unary("log", d.div(x, d.c(2)))};
}

struct JY {
  Value j, y;
};

JY jy_series(const Doubles& d, Value x, int order) {
  const PowerSeries s = power_series(d, x, order, -1);
  if (order == 0) {
    return {s.first, d.mul(d.c(2 / M_PI),
                           d.sub(d.mul(d.add(s.log_half, d.c(kEulerGamma)), s.first), s.weighted))};
  }
  Value y1 = d.sub(d.sub(d.mul(d.c(2 / M_PI), d.mul(s.log_half, s.first)), d.div(d.c(2 / M_PI), x)),
                   d.mul(d.div(x, d.c(2 * M_PI)), s.weighted));
  return {s.first, y1};
}

Value k_series(const Doubles& d, Value x, int order) {
  const PowerSeries s = power_series(d, x, order, 1);
  if (order == 0) return d.sub(s.weighted, d.mul(d.add(s.log_half, d.c(kEulerGamma)), s.first));
  return d.sub(d.add(d.div(d.c(1), x), d.mul(s.log_half, s.first)),
               d.mul(d.div(x, d.c(4)), s.weighted));
}

JY miller(const Doubles& d, Value x, int order) {
  constexpr int kStart = 60;
  std::vector<Value> js(kStart + 2);
  js[kStart + 1] = d.c(0);
  js[kStart] = d.c(1e-30);
  for (int m = kStart; m >= 1; --m) {
    js[m - 1] = d.sub(d.mul(d.div(d.c(2.0 * m), x), js[m]), js[m + 1]);
  }
  Value norm = js[0];
  for (int k = 1; 2 * k <= kStart; ++k) norm = d.add(norm, d.mul(d.c(2), js[2 * k]));
  Value s0 = d.c(0), s1 = d.c(0);
  for (int k = 1; k < kStart / 2; ++k) {
    const double sign = k % 2 ? -1.0 : 1.0;
    s0 = d.add(s0, d.mul(d.c(sign / k), js[2 * k]));
    s1 = d.add(s1, d.mul(d.c(sign / (2.0 * k)), d.sub(js[2 * k - 1], js[2 * k + 1])));
  }
  Value j0 = d.div(js[0], norm), j1 = d.div(js[1], norm);
  s0 = d.div(s0, norm);
  s1 = d.div(s1, norm);
  Value log_term = d.add(d.unary("log", d.div(x, d.c(2))), d.c(kEulerGamma));
  if (order == 0) return {j0, d.mul(d.c(2 / M_PI), d.sub(d.mul(log_term, j0), d.mul(d.c(2), s0)))};
  Value y1 = d.add(d.mul(d.c(-2 / M_PI), d.sub(d.div(j0, x), d.mul(log_term, j1))),
                   d.mul(d.c(4 / M_PI), s1));
  return {j1, y1};
}

JY jy_asymptotic(const Doubles& d, Value x, int order) {
  const double mu = 4.0 * order * order;
  Value p = d.c(1), q = d.c(0), a = d.c(1);
  for (int k = 1; k < 40; ++k) {
    const double odd = 2.0 * k - 1;
    a = d.mul(a, d.div(d.c((mu - odd * odd) / (8.0 * k)), x));
    const bool odd_k = k % 2 == 1;
    const double sign = ((odd_k ? (k - 1) : k) / 2) % 2 ? -1.0 : 1.0;
    if (odd_k) {
      q = d.add(q, d.mul(d.c(sign), a));
    } else {
      p = d.add(p, d.mul(d.c(sign), a));
    }
  }
  Value chi = d.sub(x, d.c((order / 2.0 + 0.25) * M_PI));
  Value f = d.unary("sqrt", d.div(d.c(2 / M_PI), x));
  Value cos = d.unary("cosine", chi), sin = d.unary("sine", chi);
  return {d.mul(f, d.sub(d.mul(p, cos), d.mul(q, sin))),
          d.mul(f, d.add(d.mul(p, sin), d.mul(q, cos)))};
}

Value bessel_jy_double(const Doubles& d, Value x, int order, bool second_kind) {
  Value a = d.unary("abs", x);
  Value small = d.le(a, d.c(2)), large = d.gt(a, d.c(25));
  // Each regime sees only its own arguments (others get a harmless 1, 3 or 30).
  JY s = jy_series(d, d.select(small, a, d.c(1)), order);
  JY m = miller(d, d.select(d.any(small, large), d.c(3), a), order);
  // (an infinite argument stays: its cosine is NaN, as CPU's value)
  JY l = jy_asymptotic(d, d.select(d.any(large, d.is_nan(a)), a, d.c(30)), order);
  if (!second_kind) {
    Value j = d.select(small, s.j, d.select(large, l.j, m.j));
    // J1 is odd (J0 even); NaN stays NaN
    if (order == 1) j = d.select(d.lt(x, d.c(0)), d.sub(d.c(0), j), j);
    if (order == 1) j = d.select(d.eq(x, d.c(0)), x, j);  // keeps -0
    return d.select(d.is_nan(x), x, j);
  }
  Value y = d.select(small, s.y, d.select(large, l.y, m.y));
  y = d.select(d.eq(x, d.c(0)), d.c(-INFINITY), y);
  return d.select(d.any(d.lt(x, d.c(0)), d.is_nan(x)), d.c(NAN), y);
}

// The trapezoidal rule on the integral (meant for 2 < x <= 20).
Value k_integral(const Doubles& d, Value x, int order, bool scaled) {
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
Value k_asymptotic(const Doubles& d, Value x, int order, bool scaled) {
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
  Value s = k_series(d, xs, order);
  if (scaled) s = d.mul(s, d.unary("exponential", xs));
  Value r = d.select(
      small, s,
      d.select(large, k_asymptotic(d, xl, order, scaled), k_integral(d, xm, order, scaled)));
  r = d.select(d.eq(x, d.c(0)), d.c(INFINITY), r);
  r = d.select(d.eq(x, d.c(INFINITY)), d.c(0), r);
  return d.select(d.any(d.lt(x, d.c(0)), d.is_nan(x)), d.c(NAN), r);
}

}  // namespace

Value bessel_jy(Builder& b, Value x, int order, bool second_kind) {
  return Doubles::in_double(b, x, [&](const Doubles& d, Value xd) {
    return bessel_jy_double(d, xd, order, second_kind);
  });
}

Value bessel_k(Builder& b, Value x, int order, bool scaled) {
  return Doubles::in_double(
      b, x, [&](const Doubles& d, Value xd) { return bessel_k_double(d, xd, order, scaled); });
}

}  // namespace torch_tpu::ops

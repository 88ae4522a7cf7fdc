// See ops/incomplete_gamma.h. Computed in double whatever the input type:
// below x < a + 1 by P's power series, above by Q's continued fraction
// (modified Lentz), each run in a loop on the device until every element's
// next term is below double's epsilon, then scaled by
// exp(a log x - x - lgamma(a)). Both loops run over all elements (each
// element keeps the result of its own regime).
#include "ops/incomplete_gamma.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hlo/rounds.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

namespace {

constexpr int kMaxTerms = 2000;

}  // namespace

Value regularized_gamma(Builder& b, Value a_in, Value x_in, bool upper) {
  const ElementType t = a_in.type.element;
  const auto dims = a_in.type.dims;
  const ElementType d = ElementType::kF64;
  Value a = b.convert(a_in, d), x = b.convert(x_in, d);
  auto full = [&](Builder& c, double v) { return c.splat(c.constant(d, v), dims); };
  const double eps = std::numeric_limits<double>::epsilon();
  const double tiny = 1e-300;
  // Only elements with a finite, positive a and x reach the loops; the
  // others get their edge values below (and 1s in the loops).
  Value finite_a = b.binary("and", b.compare(Compare::kGT, a, full(b, 0)),
                            b.compare(Compare::kLT, a, full(b, INFINITY)));
  Value finite_x = b.binary("and", b.compare(Compare::kGT, x, full(b, 0)),
                            b.compare(Compare::kLT, x, full(b, INFINITY)));
  Value regular = b.binary("and", finite_a, finite_x);
  Value aa = b.select(regular, a, full(b, 1)), xx = b.select(regular, x, full(b, 1));
  Value use_series = b.compare(Compare::kLT, xx, b.binary("add", aa, full(b, 1)));
  // Power series: sum_n x^n / (a (a+1) ... (a+n)).
  Value term0 = b.binary("divide", full(b, 1), aa);
  auto series = hlo::rounds_until_done(
      b, {aa, xx, term0, term0, b.unary("not", use_series)}, 4, kMaxTerms,
      [&](Builder& c, Value round, const std::vector<Value>& v) {
        Value n = c.convert(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), d);
        Value term = c.binary("multiply", v[2],
                              c.binary("divide", v[1], c.binary("add", v[0], c.splat(n, dims))));
        Value sum = c.select(v[4], v[3], c.binary("add", v[3], term));
        Value done = c.binary("or", v[4],
                              c.compare(Compare::kLT, c.unary("abs", term),
                                        c.binary("multiply", c.unary("abs", sum), full(c, eps))));
        return std::vector<Value>{v[0], v[1], term, sum, done};
      });
  // Continued fraction for Q (modified Lentz).
  Value b0 = b.binary("add", b.binary("subtract", xx, aa), full(b, 1));
  Value c0 = full(b, 1.0 / tiny);
  Value d0 = b.binary("divide", full(b, 1), b0);
  auto fraction = hlo::rounds_until_done(
      b, {aa, b0, c0, d0, d0, use_series}, 5, kMaxTerms,
      [&](Builder& c, Value round, const std::vector<Value>& v) {
        Value i = c.splat(
            c.convert(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), d), dims);
        Value an = c.unary("negate", c.binary("multiply", i, c.binary("subtract", i, v[0])));
        Value bn = c.binary("add", v[1], full(c, 2));
        auto guard = [&](Value z) {
          return c.select(c.compare(Compare::kLT, c.unary("abs", z), full(c, tiny)), full(c, tiny),
                          z);
        };
        Value dn = guard(c.binary("add", c.binary("multiply", an, v[3]), bn));
        Value cn = guard(c.binary("add", bn, c.binary("divide", an, v[2])));
        dn = c.binary("divide", full(c, 1), dn);
        Value delta = c.binary("multiply", dn, cn);
        Value h = c.select(v[5], v[4], c.binary("multiply", v[4], delta));
        Value done = c.binary(
            "or", v[5],
            c.compare(Compare::kLT, c.unary("abs", c.binary("subtract", delta, full(c, 1))),
                      full(c, eps)));
        return std::vector<Value>{v[0], bn, cn, dn, h, done};
      });
  Value log_prefix =
      b.binary("subtract", b.binary("subtract", b.binary("multiply", aa, b.unary("log", xx)), xx),
               b.op("chlo.lgamma", {aa}, aa.type));
  Value prefix = b.unary("exponential", log_prefix);
  Value p_series = b.binary("multiply", prefix, series[3]);
  Value q_fraction = b.binary("multiply", prefix, fraction[4]);
  Value p = b.select(use_series, p_series, b.binary("subtract", full(b, 1), q_fraction));
  Value q = b.select(use_series, b.binary("subtract", full(b, 1), p_series), q_fraction);
  Value value = upper ? q : p;
  // The edges, as CPU's calc_igamma/calc_igammac.
  Value zero = full(b, 0), one = full(b, 1), nan = full(b, NAN), inf = full(b, INFINITY);
  Value lower_edge = upper ? zero : one;  // P = 1 (Q = 0)
  Value upper_edge = upper ? one : zero;  // P = 0 (Q = 1)
  Value a_zero = b.compare(Compare::kEQ, a, zero), x_zero = b.compare(Compare::kEQ, x, zero);
  Value a_inf = b.compare(Compare::kEQ, a, inf), x_inf = b.compare(Compare::kEQ, x, inf);
  Value bad = b.binary("or", b.compare(Compare::kLT, a, zero), b.compare(Compare::kLT, x, zero));
  bad = b.binary("or", bad, b.binary("and", a_zero, x_zero));
  bad = b.binary("or", bad, b.binary("and", a_inf, x_inf));
  bad = b.binary("or", bad,
                 b.binary("or", b.compare(Compare::kNE, a, a), b.compare(Compare::kNE, x, x)));
  value = b.select(b.binary("or", a_zero, x_inf), lower_edge, value);
  value = b.select(b.binary("or", x_zero, a_inf), upper_edge, value);
  value = b.select(bad, nan, value);
  return b.convert(value, t);
}

}  // namespace torch_tpu::ops

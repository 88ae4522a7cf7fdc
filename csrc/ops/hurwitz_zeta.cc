// See ops/hurwitz_zeta.h. The algorithm CPU uses (Cephes' zeta): sum the
// series directly until its terms are negligible or past q + 9 (at least 9
// terms; as many as it takes to get past 9 for a negative q, which XLA's
// fixed-length zeta does not do), then add the Euler-Maclaurin tail with up
// to 12 Bernoulli terms. Computed in double.
#include "ops/hurwitz_zeta.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hlo/rounds.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

Value hurwitz_zeta(Builder& b, Value x_in, Value q_in) {
  const ElementType t = x_in.type.element;
  const ElementType d = ElementType::kF64;
  const auto dims = x_in.type.dims;
  auto full = [&](Builder& c, double v) { return c.splat(c.constant(d, v), dims); };
  const double eps = std::numeric_limits<double>::epsilon();
  Value x = b.convert(x_in, d), q = b.convert(q_in, d);
  // (2k)! / B_2k: the Euler-Maclaurin tail's coefficients.
  static const double kTail[12] = {12.0,
                                   -720.0,
                                   30240.0,
                                   -1209600.0,
                                   47900160.0,
                                   -1.8924375803183791606e9,
                                   7.47242496e10,
                                   -2.950130727918164224e12,
                                   1.1646782814350067249e14,
                                   -4.5979787224074726105e15,
                                   1.8152105401943546773e17,
                                   -7.1661652561756670113e18};
  Value one = full(b, 1);
  Value pole_x = b.compare(Compare::kEQ, x, one);
  Value below_one = b.compare(Compare::kLT, x, one);
  Value q_nonpositive = b.compare(Compare::kLE, q, full(b, 0));
  Value q_integer = b.compare(Compare::kEQ, q, b.unary("floor", q));
  Value x_integer = b.compare(Compare::kEQ, x, b.unary("floor", x));
  Value pole_q = b.binary("and", q_nonpositive, q_integer);
  Value bad = b.binary("or", below_one, b.binary("and", q_nonpositive, b.unary("not", x_integer)));
  Value special = b.binary("or", b.binary("or", pole_x, pole_q), bad);
  Value huge_q = b.compare(Compare::kGT, q, full(b, 1e8));
  // Elements the sum does not serve run it on (x, q) = (2, 1).
  Value skip = b.binary("or", special, huge_q);
  Value xs = b.select(skip, full(b, 2), x), qs = b.select(skip, one, q);
  Value first = b.binary("power", qs, b.unary("negate", xs));
  // Direct sum: s = sum_{i=0..} (q + i)^-x while i < 9 or q + i <= 9.
  auto direct = hlo::rounds_until_done(
      b, {xs, qs, first, first, full(b, 0), skip, b.zeros({ElementType::kPred, dims})}, 5, 100000,
      [&](Builder& c, Value round, const std::vector<Value>& v) {
        Value i = c.convert(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), d);
        Value a = c.binary("add", v[1], c.splat(i, dims));
        Value term = c.binary("power", a, c.unary("negate", v[0]));
        Value running = c.unary("not", v[5]);
        Value sum = c.select(running, c.binary("add", v[3], term), v[3]);
        Value converged =
            c.compare(Compare::kLT, c.unary("abs", c.binary("divide", term, sum)), full(c, eps));
        Value enough = c.binary("and", c.compare(Compare::kGE, c.splat(i, dims), full(c, 9)),
                                c.compare(Compare::kGT, a, full(c, 9)));
        Value stop = c.binary("and", running, c.binary("or", converged, enough));
        // A series that converged needs no tail.
        Value no_tail = c.select(c.binary("and", running, converged), running, v[6]);
        Value last_a = c.select(running, a, v[4]);
        Value last_term = c.select(running, term, v[2]);
        return std::vector<Value>{v[0],   v[1], last_term, sum, last_a, c.binary("or", v[5], stop),
                                  no_tail};
      });
  Value b_term = direct[2], s = direct[3], w = direct[4], no_tail = direct[6];
  // The Euler-Maclaurin tail at w = q + n.
  Value tail =
      b.binary("subtract",
               b.binary("divide", b.binary("multiply", b_term, w), b.binary("subtract", xs, one)),
               b.binary("multiply", full(b, 0.5), b_term));
  Value sum = b.binary("add", s, tail);
  Value a = one, k = full(b, 0), bb = b_term;
  Value stopped = no_tail;
  for (double coefficient : kTail) {
    a = b.binary("multiply", a, b.binary("add", xs, k));
    bb = b.binary("divide", bb, w);
    Value term = b.binary("divide", b.binary("multiply", a, bb), full(b, coefficient));
    Value next = b.binary("add", sum, term);
    Value done =
        b.compare(Compare::kLT, b.unary("abs", b.binary("divide", term, next)), full(b, eps));
    sum = b.select(stopped, sum, next);
    stopped = b.binary("or", stopped, done);
    k = b.binary("add", k, one);
    a = b.binary("multiply", a, b.binary("add", xs, k));
    bb = b.binary("divide", bb, w);
    k = b.binary("add", k, one);
  }
  Value result = b.select(no_tail, s, sum);
  // q > 1e8: the asymptotic form (1/(x-1) + 1/(2q)) q^(1-x).
  Value asymptotic =
      b.binary("multiply",
               b.binary("add", b.binary("divide", one, b.binary("subtract", x, one)),
                        b.binary("divide", one, b.binary("multiply", full(b, 2), q))),
               b.binary("power", q, b.binary("subtract", one, x)));
  result = b.select(huge_q, asymptotic, result);
  // Cephes' order of checks: x = 1, then x < 1, then an integer q <= 0,
  // then q < 0 with a non-integer x (the later select wins).
  result =
      b.select(b.binary("and", q_nonpositive, b.unary("not", x_integer)), full(b, NAN), result);
  result = b.select(pole_q, full(b, INFINITY), result);
  result = b.select(below_one, full(b, NAN), result);
  result = b.select(pole_x, full(b, INFINITY), result);
  // NaN in, NaN out.
  Value nan_in = b.binary("or", b.compare(Compare::kNE, x, x), b.compare(Compare::kNE, q, q));
  return b.convert(b.select(nan_in, full(b, NAN), result), t);
}

}  // namespace torch_tpu::ops

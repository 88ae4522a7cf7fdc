// See ops/orthogonal_polynomials.h. Each polynomial is its three-term
// recurrence from P_0 = 1 and P_1, run as one device loop over the whole
// tensor (an element stops after its own n - 1 steps, or once it is NaN),
// with the cases CPU's kernels answer before the recurrence selected over
// it. Every expression keeps CPU's operand order so float rounding agrees.
#include "ops/orthogonal_polynomials.h"

#include <c10/util/Exception.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>

#include "hlo/rounds.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

enum class Family { kChebyshev, kHermiteH, kHermiteHe, kLaguerre, kLegendre };

struct Polynomial {
  Family family;
  char kind = 0;         // Chebyshev's T, U, V or W
  bool shifted = false;  // Chebyshev's on [0, 1]: at 2x - 1
};

const std::map<std::string, Polynomial>& polynomials() {
  static const auto* table = new std::map<std::string, Polynomial>{
      {"special_chebyshev_polynomial_t", {Family::kChebyshev, 'T'}},
      {"special_chebyshev_polynomial_u", {Family::kChebyshev, 'U'}},
      {"special_chebyshev_polynomial_v", {Family::kChebyshev, 'V'}},
      {"special_chebyshev_polynomial_w", {Family::kChebyshev, 'W'}},
      {"special_shifted_chebyshev_polynomial_t", {Family::kChebyshev, 'T', true}},
      {"special_shifted_chebyshev_polynomial_u", {Family::kChebyshev, 'U', true}},
      {"special_shifted_chebyshev_polynomial_v", {Family::kChebyshev, 'V', true}},
      {"special_shifted_chebyshev_polynomial_w", {Family::kChebyshev, 'W', true}},
      {"special_hermite_polynomial_h", {Family::kHermiteH}},
      {"special_hermite_polynomial_he", {Family::kHermiteHe}},
      {"special_laguerre_polynomial_l", {Family::kLaguerre}},
      {"special_legendre_polynomial_p", {Family::kLegendre}},
  };
  return *table;
}

// times * k + plus in type t, for an s64 k (a degree or a step index),
// converted as CPU converts its int64 expressions to T.
Value affine_as(Builder& c, Value k, int64_t times, int64_t plus, ElementType t) {
  auto s64 = [&](int64_t v) { return c.splat(c.constant_int(ElementType::kS64, v), k.type.dims); };
  Value scaled = times == 1 ? k : c.binary("multiply", k, s64(times));
  return c.convert(c.binary("add", scaled, s64(plus)), t);
}

// One polynomial's evaluation over x [dims] and its integer degrees n.
class Evaluation {
 public:
  Evaluation(Builder& b, Value x, Value n_float)
      : b_(b), x_(x), t_(x.type.element), dims_(x.type.dims), n_(degree(n_float)) {}

  Value full(double v) const { return b_.splat(b_.constant(t_, v), dims_); }
  Value integer(int64_t v) const { return b_.splat(b_.constant_int(ElementType::kS64, v), dims_); }
  Value n_plus(int64_t times, int64_t plus) const { return affine_as(b_, n_, times, plus, t_); }
  Value n_compare(Compare direction, int64_t v) const {
    return b_.compare(direction, n_, integer(v));
  }
  Value x_equals(double v) const { return b_.compare(Compare::kEQ, x_, full(v)); }
  // v where n is even, -v where it is odd.
  Value by_parity(Value v) const {
    Value even = b_.compare(Compare::kEQ, b_.binary("remainder", n_, integer(2)), integer(0));
    return b_.select(even, v, b_.unary("negate", v));
  }
  Value add(Value a, Value c) const { return b_.binary("add", a, c); }
  Value sub(Value a, Value c) const { return b_.binary("subtract", a, c); }
  Value mul(Value a, Value c) const { return b_.binary("multiply", a, c); }
  Value div(Value a, Value c) const { return b_.binary("divide", a, c); }

  // P_n from P_0 = 1, P_1 = q1 and P_{j+1} = step(j, P_{j-1}, P_j) for
  // j = 1 .. n - 1, where `run` holds (elsewhere q1): the elements run
  // their own number of steps in one loop, stopping early once NaN (every
  // later step would keep it NaN).
  using Step = std::function<Value(Builder&, Value j, Value x, Value p, Value q)>;
  Value recurrence(Value q1, Value run, const Step& step) const {
    Value done = b_.binary("or", b_.unary("not", run), n_compare(Compare::kLT, 2));
    auto state = hlo::rounds_until_done(
        b_, {x_, n_, full(1), q1, done}, 4, std::numeric_limits<int64_t>::max(),
        [&](Builder& c, Value round, const std::vector<Value>& v) {
          Value j = c.splat(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), dims_);
          Value r = step(c, j, v[0], v[2], v[3]);
          Value stepping = c.unary("not", v[4]);
          Value p = c.select(stepping, v[3], v[2]);
          Value q = c.select(stepping, r, v[3]);
          // step j = n - 1 is the last
          Value last = c.compare(
              Compare::kGE,
              c.binary("add", j, c.splat(c.constant_int(ElementType::kS64, 1), dims_)), v[1]);
          Value nan = c.compare(Compare::kNE, q, q);
          return std::vector<Value>{v[0], v[1], p, q,
                                    c.binary("or", v[4], c.binary("or", last, nan))};
        });
    return state[3];
  }

  Value x() const { return x_; }
  Value n() const { return n_; }
  ElementType type() const { return t_; }
  Builder& builder() const { return b_; }

 private:
  // static_cast<int64_t>(n) as CPU's kernels compute it on x86:
  // truncation, and INT64_MIN (a negative degree) for NaN, infinities and
  // values out of range.
  Value degree(Value n) const {
    Value in_range = b_.compare(Compare::kLT, b_.unary("abs", n), full(9.2e18));
    return b_.select(in_range, b_.convert(n, ElementType::kS64),
                     integer(std::numeric_limits<int64_t>::min()));
  }

  Builder& b_;
  Value x_;
  ElementType t_;
  std::vector<int64_t> dims_;
  Value n_;
};

Value acos(Builder& b, Value v) { return b.op("chlo.acos", {v}, v.type); }

Value chebyshev(const Evaluation& e, char kind, bool shifted) {
  Builder& b = e.builder();
  Value x = e.x();
  Value y = shifted ? e.sub(e.add(x, x), e.full(1)) : x;
  Value one = e.full(1);
  // The interval's ends: x = 1 and x = -1 (x = 1 and x = 0 when shifted).
  Value at_one = e.x_equals(1), at_minus_one = e.x_equals(shifted ? 0 : -1);
  Value n1 = e.n_plus(1, 1), n2 = e.n_plus(2, 1);
  Value end_one = kind == 'U' ? n1 : kind == 'W' ? n2 : one;
  Value end_minus_one = e.by_parity(kind == 'U' ? n1 : kind == 'V' ? n2 : one);
  // Degrees above which CPU uses the closed form inside the interval.
  const int64_t threshold = shifted ? (kind == 'W' ? 4 : 6) : (kind == 'T' ? 6 : 8);
  Value inside = b.compare(Compare::kLT, b.unary("abs", y), one);
  Value closed = b.binary("and", e.n_compare(Compare::kGT, threshold), inside);
  Value theta = acos(b, y);
  Value half = e.div(theta, e.full(2));
  Value n_half = e.add(e.n_plus(1, 0), e.full(0.5));
  Value closed_value;
  switch (kind) {
    case 'T':
      closed_value = b.unary("cosine", e.mul(e.n_plus(1, 0), theta));
      break;
    case 'U': {
      Value s = b.unary("sine", theta);
      Value regular = e.div(b.unary("sine", e.mul(n1, theta)), s);
      Value at_pole = e.div(e.mul(n1, b.unary("cosine", e.mul(n1, theta))), y);
      closed_value = b.select(b.compare(Compare::kNE, s, e.full(0)), regular, at_pole);
      break;
    }
    case 'V': {
      Value regular = e.div(b.unary("cosine", e.mul(n_half, theta)), b.unary("cosine", half));
      closed_value =
          b.select(b.compare(Compare::kNE, b.unary("sine", half), one), regular, e.by_parity(n2));
      break;
    }
    default: {  // 'W'
      Value regular = e.div(b.unary("sine", e.mul(n_half, theta)), b.unary("sine", half));
      Value degenerate = e.by_parity(one);
      if (!shifted) {
        degenerate = b.select(b.compare(Compare::kGT, x, e.full(0)), n2, degenerate);
      }
      closed_value =
          b.select(b.compare(Compare::kNE, b.unary("cosine", half), one), regular, degenerate);
      break;
    }
  }
  Value q1 = kind == 'T'   ? y
             : kind == 'U' ? e.add(y, y)
             : kind == 'V' ? e.sub(e.add(y, y), one)
                           : e.add(e.add(y, y), one);
  Value negative = e.n_compare(Compare::kLT, 0);
  Value answered =
      b.binary("or", b.binary("or", negative, b.binary("or", at_one, at_minus_one)), closed);
  // (a loop body sees only its state: y is made again from x there)
  const ElementType t = e.type();
  Value r = e.recurrence(q1, b.unary("not", answered),
                         [&](Builder& c, Value, Value xv, Value p, Value q) {
                           Value yv = xv;
                           if (shifted) {
                             yv = c.binary("subtract", c.binary("add", xv, xv),
                                           c.splat(c.constant(t, 1), xv.type.dims));
                           }
                           Value twice = c.binary("add", yv, yv);
                           return c.binary("subtract", c.binary("multiply", twice, q), p);
                         });
  r = b.select(e.n_compare(Compare::kEQ, 1), q1, r);
  r = b.select(e.n_compare(Compare::kEQ, 0), one, r);
  r = b.select(closed, closed_value, r);
  r = b.select(at_minus_one, end_minus_one, r);
  r = b.select(at_one, end_one, r);
  return b.select(negative, e.full(0), r);
}

}  // namespace

const std::vector<std::string>& orthogonal_polynomial_ops() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>();
    for (const auto& [name, poly] : polynomials()) v->push_back(name);
    return v;
  }();
  return *names;
}

Value orthogonal_polynomial(Builder& b, const std::string& op, Value x, Value n) {
  const auto it = polynomials().find(op);
  TORCH_INTERNAL_ASSERT(it != polynomials().end(), op, " is not an orthogonal polynomial");
  const Polynomial& poly = it->second;
  const Evaluation e(b, x, n);
  if (poly.family == Family::kChebyshev) return chebyshev(e, poly.kind, poly.shifted);
  const ElementType t = e.type();
  // T(j) for the s64 step index j.
  auto j_as = [t](Builder& c, Value j, int64_t times, int64_t plus) {
    return affine_as(c, j, times, plus, t);
  };
  Value one = e.full(1);
  Value negative = e.n_compare(Compare::kLT, 0);
  Value answered = negative;
  Value q1;
  Evaluation::Step step;
  Value special, special_value;  // one more case answered before the recurrence
  switch (poly.family) {
    case Family::kHermiteH:
    case Family::kHermiteHe: {
      const bool physicists = poly.family == Family::kHermiteH;
      q1 = physicists ? e.add(x, x) : x;
      // CPU gives NaN past a degree where its recurrence would overflow.
      special = e.n_compare(Compare::kGT, t == ElementType::kF64 ? 512 : 128);
      special_value = e.full(std::numeric_limits<double>::quiet_NaN());
      step = [&, physicists](Builder& c, Value j, Value xv, Value p, Value q) {
        // H: (x + x) q - 2j p; He: x q - j p.
        Value factor = physicists ? c.binary("add", xv, xv) : xv;
        return c.binary("subtract", c.binary("multiply", factor, q),
                        c.binary("multiply", j_as(c, j, physicists ? 2 : 1, 0), p));
      };
      break;
    }
    case Family::kLaguerre:
      q1 = e.sub(one, x);
      special = e.x_equals(0);
      special_value = one;
      step = [&](Builder& c, Value j, Value xv, Value p, Value q) {
        // ((2j + (1 - x)) q - j p) / (j + 1)
        Value a = c.binary("add", j_as(c, j, 2, 0),
                           c.binary("subtract", c.splat(c.constant(t, 1), xv.type.dims), xv));
        return c.binary("divide",
                        c.binary("subtract", c.binary("multiply", a, q),
                                 c.binary("multiply", j_as(c, j, 1, 0), p)),
                        j_as(c, j, 1, 1));
      };
      break;
    default: {  // Legendre
      q1 = x;
      Value at_minus_one = e.x_equals(-1);
      special = b.binary("or", e.x_equals(1), at_minus_one);
      special_value = b.select(at_minus_one, e.by_parity(one), one);
      step = [&](Builder& c, Value j, Value xv, Value p, Value q) {
        // ((2j + 1) x q - j p) / (j + 1)
        Value a = c.binary("multiply", c.binary("multiply", j_as(c, j, 2, 1), xv), q);
        return c.binary("divide",
                        c.binary("subtract", a, c.binary("multiply", j_as(c, j, 1, 0), p)),
                        j_as(c, j, 1, 1));
      };
      break;
    }
  }
  // Hermite checks n == 0 and n == 1 before its degree limit; Laguerre and
  // Legendre check x before n.
  const bool hermite = poly.family != Family::kLaguerre && poly.family != Family::kLegendre;
  answered = b.binary("or", answered, special);
  Value r = e.recurrence(q1, b.unary("not", answered), step);
  if (hermite) r = b.select(special, special_value, r);
  r = b.select(e.n_compare(Compare::kEQ, 1), q1, r);
  r = b.select(e.n_compare(Compare::kEQ, 0), one, r);
  if (!hermite) r = b.select(special, special_value, r);
  return b.select(negative, e.full(0), r);
}

}  // namespace torch_tpu::ops

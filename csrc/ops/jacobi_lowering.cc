// See ops/jacobi_lowering.h.
#include "ops/jacobi_lowering.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "hlo/int_constants.h"
#include "hlo/predicates.h"
#include "ops/linalg_lowering.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::Value;

namespace {

double epsilon(ElementType t) {
  return t == ElementType::kF64 ? std::numeric_limits<double>::epsilon()
                                : static_cast<double>(std::numeric_limits<float>::epsilon());
}

// Column j of x [B, m, n] as [B, m], and x with it replaced.
Value column(Builder& b, Value x, Value j) {
  const int64_t batch = x.type.dims[0], m = x.type.dims[1];
  Value zero = s64(b, 0);
  return b.reshape(b.dynamic_slice(x, {zero, zero, j}, {batch, m, 1}), {batch, m});
}
Value with_column(Builder& b, Value x, Value j, Value v) {
  const int64_t batch = x.type.dims[0], m = x.type.dims[1];
  Value zero = s64(b, 0);
  return b.dynamic_update_slice_at(x, b.reshape(v, {batch, m, 1}), {zero, zero, j});
}
Value row(Builder& b, Value x, Value i) {
  const int64_t batch = x.type.dims[0], n = x.type.dims[2];
  Value zero = s64(b, 0);
  return b.reshape(b.dynamic_slice(x, {zero, i, zero}, {batch, 1, n}), {batch, n});
}
Value with_row(Builder& b, Value x, Value i, Value v) {
  const int64_t batch = x.type.dims[0], n = x.type.dims[2];
  Value zero = s64(b, 0);
  return b.dynamic_update_slice_at(x, b.reshape(v, {batch, 1, n}), {zero, i, zero});
}
Value entry(Builder& b, Value x, Value i, Value j) {
  const int64_t batch = x.type.dims[0];
  return b.reshape(b.dynamic_slice(x, {s64(b, 0), i, j}, {batch, 1, 1}), {batch});
}

// The real part (x itself for a real type).
Value real_part(Builder& b, Value x) {
  if (!hlo::is_complex(x.type.element)) return x;
  return b.op("stablehlo.real", {x}, {hlo::real_part_type(x.type.element), x.type.dims});
}

// A real value in the (complex or real) type `t`.
Value as_type(Builder& b, Value x, ElementType t) {
  return hlo::is_complex(t) ? b.convert(x, t) : x;
}

// |z| elementwise, in the real type.
Value magnitude(Builder& b, Value z) {
  if (!hlo::is_complex(z.type.element)) return b.unary("abs", z);
  return b.op("stablehlo.abs", {z}, {hlo::real_part_type(z.type.element), z.type.dims});
}

// z / |z| elementwise (1 where z is 0): the sign of a real z.
Value unit_phase(Builder& b, Value z) {
  Value magnitude = as_type(b, ops::magnitude(b, z), z.type.element);
  Value one = b.splat(b.constant(z.type.element, 1), z.type.dims);
  Value is_zero = b.compare(Compare::kEQ, magnitude, b.zeros(magnitude.type));
  return b.select(is_zero, one, b.binary("divide", z, b.select(is_zero, one, magnitude)));
}

// v [B, k] times a per-matrix factor f [B].
Value scaled(Builder& b, Value v, Value f) {
  return b.binary("multiply", v, b.broadcast_in_dim(f, v.type.dims, {0}));
}

// (c u - s v, s u + c v) for vectors u, v [B, k] and per-matrix c, s [B].
std::pair<Value, Value> rotate(Builder& b, Value u, Value v, Value c, Value s) {
  const ElementType t = u.type.element;
  Value cb = b.broadcast_in_dim(as_type(b, c, t), u.type.dims, {0});
  Value sb = b.broadcast_in_dim(as_type(b, s, t), u.type.dims, {0});
  return {b.binary("subtract", b.binary("multiply", cb, u), b.binary("multiply", sb, v)),
          b.binary("add", b.binary("multiply", sb, u), b.binary("multiply", cb, v))};
}

// The rotation (c, s) that zeroes the pair's coupling `off` between
// diagonal terms `pp` and `qq` (tan = t, the smaller root of t^2 + 2 x t - 1
// with x = (qq - pp) / (2 off)); the identity where `skip`.
std::pair<Value, Value> jacobi_rotation(Builder& b, Value pp, Value qq, Value off, Value skip) {
  const auto& dims = pp.type.dims;
  const ElementType t = pp.type.element;
  auto full = [&](double v) { return b.splat(b.constant(t, v), dims); };
  Value safe_off = b.select(skip, full(1), off);
  Value x =
      b.binary("divide", b.binary("subtract", qq, pp), b.binary("multiply", full(2), safe_off));
  Value sign = b.select(b.compare(Compare::kGE, x, full(0)), full(1), full(-1));
  Value root = b.unary("sqrt", b.binary("add", b.binary("multiply", x, x), full(1)));
  Value tan = b.binary("divide", sign, b.binary("add", b.unary("abs", x), root));
  // x*x overflows for a negligible coupling: the rotation is then the identity.
  Value finite = b.compare(Compare::kLT, b.unary("abs", x), full(1e150));
  tan = b.select(b.binary("or", skip, b.unary("not", finite)), full(0), tan);
  Value c = b.binary("divide", full(1),
                     b.unary("sqrt", b.binary("add", b.binary("multiply", tan, tan), full(1))));
  return {c, b.binary("multiply", tan, c)};
}

// Cyclic sweeps over the pairs p < q of n:// Cyclic sweeps over the pairs p < q of n: `rotate_pair`
// (carried values, p, q) -> (carried values, rotated [B] pred). Stops after a sweep with no
// rotation, or after a cap far above what Jacobi needs (its convergence is
// quadratic).
using PairStep = std::function<std::pair<std::vector<Value>, Value>(
    Builder&, const std::vector<Value>&, Value, Value)>;
std::vector<Value> sweeps(Builder& b, std::vector<Value> state, int64_t n, int64_t batch,
                          const PairStep& step) {
  if (n < 2) return state;
  std::vector<Value> init{s64(b, 0), b.splat(b.constant_int(ElementType::kPred, 1), {batch})};
  init.insert(init.end(), state.begin(), state.end());
  auto outer = b.while_loop(
      init,
      [&](Builder& c, const std::vector<Value>& v) {
        return c.binary("and", c.compare(Compare::kLT, v[0], s64(c, 60)), hlo::any_true(c, v[1]));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        std::vector<Value> inner_init{s64(c, 0), s64(c, 1), c.zeros({ElementType::kPred, {batch}})};
        inner_init.insert(inner_init.end(), v.begin() + 2, v.end());
        auto inner = c.while_loop(
            inner_init,
            [&](Builder& d, const std::vector<Value>& w) {
              return d.compare(Compare::kLT, w[0], s64(d, n - 1));
            },
            [&](Builder& d, const std::vector<Value>& w) {
              std::vector<Value> carried(w.begin() + 3, w.end());
              auto [next, rotated] = step(d, carried, w[0], w[1]);
              Value q = d.binary("add", w[1], s64(d, 1));
              Value wrap = d.compare(Compare::kEQ, q, s64(d, n));
              Value p = d.select(wrap, d.binary("add", w[0], s64(d, 1)), w[0]);
              q = d.select(wrap, d.binary("add", p, s64(d, 1)), q);
              std::vector<Value> out{p, q, d.binary("or", w[2], rotated)};
              out.insert(out.end(), next.begin(), next.end());
              return out;
            });
        std::vector<Value> out{c.binary("add", v[0], s64(c, 1)), inner[2]};
        out.insert(out.end(), inner.begin() + 3, inner.end());
        return out;
      });
  return std::vector<Value>(outer.begin() + 2, outer.end());
}

// True on the diagonals of [batch, n, n].
Value diagonal_mask(Builder& b, int64_t batch, int64_t n) {
  return b.compare(Compare::kEQ, b.iota({ElementType::kS64, {batch, n, n}}, 1),
                   b.iota({ElementType::kS64, {batch, n, n}}, 2));
}

Value identity(Builder& b, int64_t batch, int64_t n, ElementType t) {
  const ElementType real = hlo::is_complex(t) ? hlo::real_part_type(t) : t;
  return as_type(b, b.convert(diagonal_mask(b, batch, n), real), t);
}

// The diagonals of x [B, n, n] as [B, n].
Value diagonal(Builder& b, Value x) {
  const int64_t batch = x.type.dims[0], n = x.type.dims[1];
  return b.reduce(b.select(diagonal_mask(b, batch, n), x, b.zeros(x.type)),
                  b.constant(x.type.element, 0), {2}, "add");
}

// x [B, m, n] with its columns reordered: column j is x's column order[b, j].
Value gather_columns(Builder& b, Value x, Value order) {
  const int64_t batch = x.type.dims[0], m = x.type.dims[1], n = x.type.dims[2];
  const std::vector<int64_t> dims{batch, m, n};
  Value base =
      b.binary("multiply", b.iota({ElementType::kS64, dims}, 0), b.splat(s64(b, m * n), dims));
  Value rows = b.binary("multiply", b.iota({ElementType::kS64, dims}, 1), b.splat(s64(b, n), dims));
  Value idx = b.binary("add", b.binary("add", base, rows), b.broadcast_in_dim(order, dims, {0, 2}));
  return b.reshape(b.gather_1d(b.reshape(x, {batch * m * n}), idx), dims);
}

// Sorts values [B, n] (ascending, or descending) and returns (sorted, order).
std::pair<Value, Value> sorted_with_order(Builder& b, Value values, bool descending) {
  Value idx = b.iota({ElementType::kS64, values.type.dims}, 1);
  auto r = b.sort({values, idx}, 1, descending);
  return {r[0], r[1]};
}

}  // namespace

EighResult jacobi_eigh(Builder& b, Value a, bool lower) {
  const MatrixBatch shape = matrix_batch(a);
  const int64_t batch = shape.batch, n = shape.cols;
  const ElementType t = a.type.element;
  const bool complex = hlo::is_complex(t);
  const ElementType real = complex ? hlo::real_part_type(t) : t;
  const double eps = epsilon(real);
  // The symmetric (Hermitian) matrix the chosen triangle stands for (of a
  // complex diagonal only the real part, as LAPACK reads it).
  Value strict = b.reshape(triangle(b, a, lower, lower ? -1 : 1), {batch, n, n});
  Value diag = as_type(b, real_part(b, diagonal(b, b.reshape(a, {batch, n, n}))), t);
  Value sym = b.select(diagonal_mask(b, batch, n), b.broadcast_in_dim(diag, {batch, n, n}, {0, 1}),
                       b.binary("add", strict, adjoint(b, strict)));
  auto result =
      sweeps(b, {sym, identity(b, batch, n, t)}, n, batch,
             [&](Builder& c, const std::vector<Value>& v, Value p, Value q) {
               Value m = v[0], vec = v[1];
               Value pq = entry(c, m, p, q);
               if (complex) {
                 // A unitary diagonal scaling of row and column q makes the
                 // coupling real, |pq|; a real rotation then zeroes it.
                 Value phase = unit_phase(c, pq), back = c.conj(phase);
                 m = with_row(c, m, q, scaled(c, row(c, m, q), phase));
                 m = with_column(c, m, q, scaled(c, column(c, m, q), back));
                 vec = with_column(c, vec, q, scaled(c, column(c, vec, q), back));
                 pq = magnitude(c, pq);
               }
               Value pp = real_part(c, entry(c, m, p, p)), qq = real_part(c, entry(c, m, q, q));
               auto full = [&](double x) { return c.splat(c.constant(real, x), {batch}); };
               // Rotate unless the coupling is negligible against its diagonal.
               Value scale = c.unary("sqrt", c.unary("abs", c.binary("multiply", pp, qq)));
               Value small = c.compare(Compare::kLE, c.unary("abs", pq),
                                       c.binary("multiply", full(eps), scale));
               Value skip = c.binary("or", small, c.compare(Compare::kEQ, pq, full(0)));
               auto [cs, sn] = jacobi_rotation(c, pp, qq, pq, skip);
               auto [rp, rq] = rotate(c, row(c, m, p), row(c, m, q), cs, sn);
               m = with_row(c, with_row(c, m, p, rp), q, rq);
               auto [cp, cq] = rotate(c, column(c, m, p), column(c, m, q), cs, sn);
               m = with_column(c, with_column(c, m, p, cp), q, cq);
               auto [vp, vq] = rotate(c, column(c, vec, p), column(c, vec, q), cs, sn);
               vec = with_column(c, with_column(c, vec, p, vp), q, vq);
               return std::make_pair(std::vector<Value>{m, vec}, c.unary("not", skip));
             });
  // The (real) diagonal, ascending, with the eigenvectors in the same order.
  auto [w, order] = sorted_with_order(b, real_part(b, diagonal(b, result[0])), false);
  Value vectors = gather_columns(b, result[1], order);
  return {b.reshape(w, shape.with({n})), b.reshape(vectors, shape.with({n, n}))};
}

SvdResult jacobi_svd(Builder& b, Value a, bool full, bool vectors) {
  const MatrixBatch shape = matrix_batch(a);
  const auto& batch_dims = shape.batch_dims;
  const int64_t batch = shape.batch, m = shape.rows, n = shape.cols;
  const ElementType t = a.type.element;
  // One-sided Jacobi orthogonalizes columns, so work on the tall one of a
  // and a^T: a^T = U' S V'^T gives a = V' S U'^T.
  const bool wide = m < n;
  const int64_t rows = wide ? n : m, cols = wide ? m : n;
  Value w0 = b.reshape(wide ? adjoint(b, a) : a, {batch, rows, cols});
  const bool complex = hlo::is_complex(t);
  const ElementType real = complex ? hlo::real_part_type(t) : t;
  const double eps = epsilon(real);
  auto result =
      sweeps(b, {w0, identity(b, batch, cols, t)}, cols, batch,
             [&](Builder& c, const std::vector<Value>& v, Value p, Value q) {
               Value w = v[0], vec = v[1];
               Value wp = column(c, w, p), wq = column(c, w, q);
               Value alpha = c.reduce(abs_squared(c, wp), c.constant(real, 0), {1}, "add");
               Value beta = c.reduce(abs_squared(c, wq), c.constant(real, 0), {1}, "add");
               Value gamma = c.reduce(c.binary("multiply", complex ? c.conj(wp) : wp, wq),
                                      c.constant(t, 0), {1}, "add");
               if (complex) {
                 // Column q scaled by a unit phase makes the correlation
                 // real, |gamma|; a real rotation then zeroes it.
                 Value back = c.conj(unit_phase(c, gamma));
                 wq = scaled(c, wq, back);
                 vec = with_column(c, vec, q, scaled(c, column(c, vec, q), back));
                 gamma = magnitude(c, gamma);
               }
               auto fullv = [&](double x) { return c.splat(c.constant(real, x), {batch}); };
               Value scale = c.unary("sqrt", c.binary("multiply", alpha, beta));
               Value small = c.compare(Compare::kLE, c.unary("abs", gamma),
                                       c.binary("multiply", fullv(eps), scale));
               Value skip = c.binary("or", small, c.compare(Compare::kEQ, gamma, fullv(0)));
               auto [cs, sn] = jacobi_rotation(c, alpha, beta, gamma, skip);
               auto [np, nq] = rotate(c, wp, wq, cs, sn);
               w = with_column(c, with_column(c, w, p, np), q, nq);
               auto [vp, vq] = rotate(c, column(c, vec, p), column(c, vec, q), cs, sn);
               vec = with_column(c, with_column(c, vec, p, vp), q, vq);
               return std::make_pair(std::vector<Value>{w, vec}, c.unary("not", skip));
             });
  Value w = result[0];
  Value norms = b.unary("sqrt", b.reduce(abs_squared(b, w), b.constant(real, 0), {1}, "add"));
  auto [s, order] = sorted_with_order(b, norms, true);
  SvdResult out{Value{}, b.reshape(s, shape.with({cols})), Value{}};
  if (!vectors) return out;
  // The left vectors: the sorted columns, normalized by a QR (which also
  // completes them where a singular value is 0, and to a square basis for
  // full matrices), each column's sign (phase) set so it is w_j / s_j.
  Value ws = gather_columns(b, w, order);
  Value vs = gather_columns(b, result[1], order);
  const int64_t q_cols = full ? rows : cols;
  QrResult qr = householder_qr(b, ws, q_cols, cols);
  Value sign = unit_phase(b, diagonal(b, qr.r));
  // Columns past the first `cols` (full matrices) keep their sign.
  Value sign_q = sign;
  if (q_cols > cols) {
    sign_q = b.concatenate({sign, b.splat(b.constant(t, 1), {batch, q_cols - cols})}, 1);
  }
  Value u = b.binary("multiply", qr.q, b.broadcast_in_dim(sign_q, {batch, rows, q_cols}, {0, 2}));
  // a = u diag(s) vs^T (tall case).
  Value left = u, right_t = adjoint(b, vs);  // right_t: cols x cols
  std::vector<int64_t> u_dims = batch_dims, vh_dims = batch_dims;
  if (!wide) {
    u_dims.insert(u_dims.end(), {m, q_cols});
    vh_dims.insert(vh_dims.end(), {cols, n});
    out.u = b.reshape(left, u_dims);
    out.vh = b.reshape(right_t, vh_dims);
  } else {
    // a^T = u s vs^T, so a = vs s u^T: U = vs (m x m), Vh = u^T.
    u_dims.insert(u_dims.end(), {m, m});
    vh_dims.insert(vh_dims.end(), {q_cols, n});
    out.u = b.reshape(vs, u_dims);
    out.vh = b.reshape(adjoint(b, left), vh_dims);
  }
  return out;
}

}  // namespace torch_tpu::ops

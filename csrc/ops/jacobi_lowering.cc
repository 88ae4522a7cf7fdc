// See ops/jacobi_lowering.h.
#include "ops/jacobi_lowering.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
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

// (c u - s v, s u + c v) for u, v and the rotations' c, s broadcast into
// them along `dims`.
std::pair<Value, Value> rotate(Builder& b, Value u, Value v, Value c, Value s,
                               const std::vector<int64_t>& dims) {
  const ElementType t = u.type.element;
  Value cb = b.broadcast_in_dim(real_to(b, c, t), u.type.dims, dims);
  Value sb = b.broadcast_in_dim(real_to(b, s, t), u.type.dims, dims);
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

// The rounds of a sweep pair the N (even) indices in the layout
// (0, 1), (2, 3), ...: position 2i holds pair i's first index, 2i + 1 its
// second. x with its `axis` (of size N) split into those halves, [.., N/2,
// ..] each, and joined back.
std::pair<Value, Value> split_pairs(Builder& b, Value x, int64_t axis) {
  std::vector<int64_t> dims = x.type.dims;
  const int64_t half = dims[axis] / 2;
  std::vector<int64_t> paired = dims;
  paired[axis] = half;
  paired.insert(paired.begin() + axis + 1, 2);
  Value y = b.reshape(x, paired);
  std::vector<int64_t> start(paired.size(), 0), limit = paired, strides(paired.size(), 1);
  limit[axis + 1] = 1;
  Value first = b.slice(y, start, limit, strides);
  start[axis + 1] = 1;
  limit[axis + 1] = 2;
  Value second = b.slice(y, start, limit, strides);
  dims[axis] = half;
  return {b.reshape(first, dims), b.reshape(second, dims)};
}
Value join_pairs(Builder& b, Value first, Value second, int64_t axis) {
  std::vector<int64_t> dims = first.type.dims;
  std::vector<int64_t> one = dims;
  one.insert(one.begin() + axis + 1, 1);
  Value joined = b.concatenate({b.reshape(first, one), b.reshape(second, one)}, axis + 1);
  dims[axis] *= 2;
  return b.reshape(joined, dims);
}

// The next round's layout along `axis`, by the circle method: with pair i
// = (t_i, u_i), t_0 stays and the others move one place around the circle
// (t_0, u_0, t_1, ..., t_{k-2} on top; u_1, ..., u_{k-1}, t_{k-1} below),
// so the N - 1 rounds of a sweep meet every pair once and end where the
// sweep began. Only slices: no gather.
Value next_round(Builder& b, Value x, int64_t axis) {
  const int64_t k = x.type.dims[axis] / 2;
  if (k < 2) return x;
  auto [t, u] = split_pairs(b, x, axis);
  auto part = [&](Value v, int64_t from, int64_t to) {
    std::vector<int64_t> start(v.type.dims.size(), 0), limit = v.type.dims,
                                                       strides(v.type.dims.size(), 1);
    start[axis] = from;
    limit[axis] = to;
    return b.slice(v, start, limit, strides);
  };
  std::vector<Value> top{part(t, 0, 1), part(u, 0, 1)};
  if (k > 2) top.push_back(part(t, 1, k - 1));
  Value new_t = b.concatenate(top, axis);
  Value new_u = b.concatenate({part(u, 1, k), part(t, k - 1, k)}, axis);
  return join_pairs(b, new_t, new_u, axis);
}

// Sweeps of N - 1 rounds, each rotating the N / 2 disjoint pairs of its
// layout at once (Brent and Luk's parallel ordering: per round a few
// whole-matrix updates instead of one loop step per pair), until a sweep
// rotates nothing, or after a cap far above what Jacobi needs (its
// convergence is quadratic). `round` (carried values) -> (carried values
// rotated in the current layout, [B] pred: something rotated); `advance`
// moves the carried values to the next round's layout.
using Round =
    std::function<std::pair<std::vector<Value>, Value>(Builder&, const std::vector<Value>&)>;
using Advance = std::function<std::vector<Value>(Builder&, const std::vector<Value>&)>;
std::vector<Value> sweeps(Builder& b, std::vector<Value> state, int64_t n, int64_t batch,
                          const Round& round, const Advance& advance) {
  if (n < 2) return state;
  std::vector<Value> init{s64(b, 0), b.splat(b.constant_int(ElementType::kPred, 1), {batch})};
  init.insert(init.end(), state.begin(), state.end());
  auto outer = b.while_loop(
      init,
      [&](Builder& c, const std::vector<Value>& v) {
        return c.binary("and", c.compare(Compare::kLT, v[0], s64(c, 60)), hlo::any_true(c, v[1]));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        std::vector<Value> inner_init{s64(c, 0), c.zeros({ElementType::kPred, {batch}})};
        inner_init.insert(inner_init.end(), v.begin() + 2, v.end());
        auto inner = c.while_loop(
            inner_init,
            [&](Builder& d, const std::vector<Value>& w) {
              return d.compare(Compare::kLT, w[0], s64(d, n - 1));
            },
            [&](Builder& d, const std::vector<Value>& w) {
              auto [next, rotated] = round(d, std::vector<Value>(w.begin() + 2, w.end()));
              next = advance(d, next);
              std::vector<Value> out{d.binary("add", w[0], s64(d, 1)),
                                     d.binary("or", w[1], rotated)};
              out.insert(out.end(), next.begin(), next.end());
              return out;
            });
        std::vector<Value> out{c.binary("add", v[0], s64(c, 1)), inner[1]};
        out.insert(out.end(), inner.begin() + 2, inner.end());
        return out;
      });
  return std::vector<Value>(outer.begin() + 2, outer.end());
}

// Whether any pair of a [B, N/2] `skip` rotated, per matrix.
Value any_rotated(Builder& b, Value skip) {
  Value rotated = b.convert(b.unary("not", skip), ElementType::kS32);
  Value count = b.reduce(rotated, b.constant_int(ElementType::kS32, 0), {1}, "maximum");
  return b.compare(Compare::kNE, count, b.zeros(count.type));
}

// The rotation of a round's pairs, skipped where the coupling `off` is
// negligible against sqrt(|pp qq|) (or exactly 0: a padding index).
struct PairRotation {
  Value c, s, skip;
};
PairRotation pair_rotation(Builder& b, Value pp, Value qq, Value off, double eps) {
  auto full = [&](double x) { return b.splat(b.constant(pp.type.element, x), pp.type.dims); };
  Value scale = b.unary("sqrt", b.unary("abs", b.binary("multiply", pp, qq)));
  Value small =
      b.compare(Compare::kLE, b.unary("abs", off), b.binary("multiply", full(eps), scale));
  Value skip = b.binary("or", small, b.compare(Compare::kEQ, off, full(0)));
  auto [c, s] = jacobi_rotation(b, pp, qq, off, skip);
  return {c, s, skip};
}

// x [B, R, C] zero-padded to `cols` columns (and `rows` rows).
Value pad_to(Builder& b, Value x, int64_t rows, int64_t cols) {
  const auto& d = x.type.dims;
  if (d[1] == rows && d[2] == cols) return x;
  return b.pad(x, b.constant(x.type.element, 0), {0, 0, 0}, {0, rows - d[1], cols - d[2]});
}
Value crop(Builder& b, Value x, int64_t rows, int64_t cols) {
  const auto& d = x.type.dims;
  if (d[1] == rows && d[2] == cols) return x;
  return b.slice(x, {0, 0, 0}, {d[0], rows, cols}, {1, 1, 1});
}

// True on the diagonals of [batch, n, n].
Value diagonal_mask(Builder& b, int64_t batch, int64_t n) {
  return b.compare(Compare::kEQ, b.iota({ElementType::kS64, {batch, n, n}}, 1),
                   b.iota({ElementType::kS64, {batch, n, n}}, 2));
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
  Value diag = real_to(b, real_part(b, diagonal(b, b.reshape(a, {batch, n, n}))), t);
  Value sym = b.select(diagonal_mask(b, batch, n), b.broadcast_in_dim(diag, {batch, n, n}, {0, 1}),
                       b.binary("add", strict, adjoint(b, strict)));
  // An odd order gets a padding index: a row and column of zeros, which no
  // rotation ever touches (its coupling is 0) and which is cut off after.
  const int64_t padded = n + n % 2, half = padded / 2;
  Value m0 = pad_to(b, sym, padded, padded);
  auto result = sweeps(
      b, {m0, identity_matrix(b, batch, padded, padded, t)}, padded, batch,
      [&](Builder& c, const std::vector<Value>& v) {
        Value m = v[0], vec = v[1];
        // Each pair's 2x2 diagonal block: [B, half, 2, 2].
        const std::vector<int64_t> blocks_dims{batch, half, 2, half, 2};
        Value same = c.compare(Compare::kEQ, c.iota({ElementType::kS64, blocks_dims}, 1),
                               c.iota({ElementType::kS64, blocks_dims}, 3));
        Value blocks =
            c.reduce(c.select(same, c.reshape(m, blocks_dims), c.zeros({t, blocks_dims})),
                     c.constant(t, 0), {3}, "add");
        auto block = [&](int64_t i, int64_t j) {
          return c.reshape(c.slice(blocks, {0, 0, i, j}, {batch, half, i + 1, j + 1}, {1, 1, 1, 1}),
                           {batch, half});
        };
        Value pq = block(0, 1);
        if (complex) {
          // A unitary diagonal scaling of each pair's second row and column
          // makes its coupling real, |pq|; a real rotation then zeroes it.
          Value phase = unit_phase(c, pq);
          Value f = join_pairs(c, c.splat(c.constant(t, 1), {batch, half}), phase, 1);
          Value back = c.conj(f);
          const std::vector<int64_t> dims{batch, padded, padded};
          m = c.binary("multiply", c.binary("multiply", m, c.broadcast_in_dim(f, dims, {0, 1})),
                       c.broadcast_in_dim(back, dims, {0, 2}));
          vec = c.binary("multiply", vec, c.broadcast_in_dim(back, dims, {0, 2}));
          pq = magnitude(c, pq);
        }
        PairRotation r =
            pair_rotation(c, real_part(c, block(0, 0)), real_part(c, block(1, 1)), pq, eps);
        auto [rp, rq] = split_pairs(c, m, 1);  // rows
        std::tie(rp, rq) = rotate(c, rp, rq, r.c, r.s, {0, 1});
        m = join_pairs(c, rp, rq, 1);
        auto [cp, cq] = split_pairs(c, m, 2);  // columns
        std::tie(cp, cq) = rotate(c, cp, cq, r.c, r.s, {0, 2});
        m = join_pairs(c, cp, cq, 2);
        auto [vp, vq] = split_pairs(c, vec, 2);
        std::tie(vp, vq) = rotate(c, vp, vq, r.c, r.s, {0, 2});
        vec = join_pairs(c, vp, vq, 2);
        return std::make_pair(std::vector<Value>{m, vec}, any_rotated(c, r.skip));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        return std::vector<Value>{next_round(c, next_round(c, v[0], 1), 2), next_round(c, v[1], 2)};
      });
  result[0] = crop(b, result[0], n, n);
  result[1] = crop(b, result[1], n, n);
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
  // An odd number of columns gets a zero column, cut off after.
  const int64_t padded = cols + cols % 2;
  auto result = sweeps(
      b, {pad_to(b, w0, rows, padded), identity_matrix(b, batch, padded, padded, t)}, padded, batch,
      [&](Builder& c, const std::vector<Value>& v) {
        auto [wp, wq] = split_pairs(c, v[0], 2);  // [B, rows, half]
        auto [vp, vq] = split_pairs(c, v[1], 2);
        Value alpha = c.reduce(abs_squared(c, wp), c.constant(real, 0), {1}, "add");
        Value beta = c.reduce(abs_squared(c, wq), c.constant(real, 0), {1}, "add");
        Value gamma = c.reduce(c.binary("multiply", complex ? c.conj(wp) : wp, wq),
                               c.constant(t, 0), {1}, "add");
        if (complex) {
          // Each pair's second column scaled by a unit phase makes the
          // correlation real, |gamma|; a real rotation then zeroes it.
          Value back = c.conj(unit_phase(c, gamma));
          wq = c.binary("multiply", wq, c.broadcast_in_dim(back, wq.type.dims, {0, 2}));
          vq = c.binary("multiply", vq, c.broadcast_in_dim(back, vq.type.dims, {0, 2}));
          gamma = magnitude(c, gamma);
        }
        PairRotation r = pair_rotation(c, alpha, beta, gamma, eps);
        std::tie(wp, wq) = rotate(c, wp, wq, r.c, r.s, {0, 2});
        std::tie(vp, vq) = rotate(c, vp, vq, r.c, r.s, {0, 2});
        return std::make_pair(
            std::vector<Value>{join_pairs(c, wp, wq, 2), join_pairs(c, vp, vq, 2)},
            any_rotated(c, r.skip));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        return std::vector<Value>{next_round(c, v[0], 2), next_round(c, v[1], 2)};
      });
  result[0] = crop(b, result[0], rows, cols);
  result[1] = crop(b, result[1], cols, cols);
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

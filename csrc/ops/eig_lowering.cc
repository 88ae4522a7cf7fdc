// See ops/eig_lowering.h.
//
// The iterations work on the whole matrix (no Hessenberg reduction): each
// is one Householder QR of the active block minus a shift, which on a
// device costs a loop step per column either way, and a full QR step keeps
// the code to the pieces linalg_lowering already has. The active block is
// rows and columns 0..hi; below it the matrix is already triangular. A step
// factors M = [[H11 - mu I, H12], [0, I]] = Q R, whose Q is diag(Q1, I), and
// sets H to Q^H H Q = [[R1 Q1 + mu I, Q1^H H12], [0, H22]]: the isolated
// eigenvalues in H22 are never touched again, so they keep their bits.
#include "ops/eig_lowering.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "hlo/int_constants.h"
#include "ops/linalg_lowering.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::TensorType;
using hlo::Value;

namespace {

// The iterations' cap: LAPACK's (30 per eigenvalue, at least 300 in all).
int64_t iteration_cap(int64_t n) { return 30 * std::max<int64_t>(n, 10); }

struct Limits {
  double eps;    // the real type's epsilon (LAPACK's ulp)
  double small;  // LAPACK's smlnum: the least safe value times n / ulp
};
Limits limits(ElementType real, int64_t n) {
  const double eps = epsilon(real);
  const double least = real == ElementType::kF64
                           ? std::numeric_limits<double>::min()
                           : static_cast<double>(std::numeric_limits<float>::min());
  return {eps, least * static_cast<double>(std::max<int64_t>(n, 1)) / eps};
}

// Masks and per-matrix picks over a [B, n, n] batch.
struct Grid {
  Builder& c;
  std::vector<int64_t> dims;  // {B, n, n}
  Value rows, cols;           // s64 iotas

  Grid(Builder& builder, const std::vector<int64_t>& d)
      : c(builder),
        dims(d),
        rows(builder.iota({ElementType::kS64, d}, 1)),
        cols(builder.iota({ElementType::kS64, d}, 2)) {}

  // A per-matrix [B] value broadcast over the grid.
  Value each(Value per_matrix) const { return c.broadcast_in_dim(per_matrix, dims, {0}); }
  // x[r, k] for each matrix's own r and k ([B] s64), as [B].
  Value entry(Value x, Value r, Value k) const {
    Value at = c.binary("and", c.compare(Compare::kEQ, rows, each(r)),
                        c.compare(Compare::kEQ, cols, each(k)));
    return c.reduce(c.select(at, x, c.zeros(x.type)), c.constant(x.type.element, 0), {1, 2}, "add");
  }
  // Each matrix's row r left of the diagonal.
  Value left_in_row(Value r) const {
    return c.binary("and", c.compare(Compare::kEQ, rows, each(r)),
                    c.compare(Compare::kLT, cols, each(r)));
  }
  // sum |x[r, j]| over j < r: how strongly row r couples to the rows above.
  Value coupling(Value x, Value r) const {
    const ElementType real = hlo::real_part_type(x.type.element);
    return c.reduce(c.select(left_in_row(r), magnitude(c, x), c.zeros({real, dims})),
                    c.constant(real, 0), {1, 2}, "add");
  }
  // The row above r (r itself for row 0), for each matrix.
  Value above(Value r) const {
    const std::vector<int64_t> batch{dims[0]};
    return c.maximum(c.binary("subtract", r, c.splat(s64(c, 1), batch)), c.splat(s64(c, 0), batch));
  }
};

// The shift for the active block's bottom row hi: the eigenvalue of its
// trailing 2 x 2 block nearer its last diagonal entry (Wilkinson's), or,
// every 10th step without progress, LAPACK's exceptional shift (the
// diagonal entry plus 3/4 of the row's coupling), which breaks the cycles
// a permutation-like matrix can fall into.
Value shift(const Grid& g, Value h, Value hi, Value coupling, Value stalled) {
  Builder& c = g.c;
  const ElementType t = h.type.element;
  const std::vector<int64_t> batch{g.dims[0]};
  Value above = g.above(hi);
  Value a = g.entry(h, above, above), p = g.entry(h, above, hi), q = g.entry(h, hi, above),
        d = g.entry(h, hi, hi);
  Value half = c.binary("multiply", c.binary("subtract", a, d), c.splat(c.constant(t, 0.5), batch));
  Value pq = c.binary("multiply", p, q);
  Value root =
      c.unary("sqrt", c.binary("add", c.binary("multiply", half, half), pq));  // complex sqrt
  Value plus = c.binary("add", half, root), minus = c.binary("subtract", half, root);
  Value big =
      c.select(c.compare(Compare::kGE, abs_squared(c, plus), abs_squared(c, minus)), plus, minus);
  Value big2 = abs_squared(c, big);
  Value zero_big = c.compare(Compare::kEQ, big2, c.zeros(big2.type));
  Value safe_big = c.select(zero_big, c.splat(c.constant(t, 1), batch), big);
  Value wilkinson =
      c.select(zero_big, d, c.binary("subtract", d, c.binary("divide", pq, safe_big)));
  Value exceptional = c.binary(
      "add", d,
      real_to(
          c,
          c.binary("multiply", coupling, c.splat(c.constant(coupling.type.element, 0.75), batch)),
          t));
  return c.select(stalled, exceptional, wilkinson);
}

// Isolates every eigenvalue at the bottom of an active block whose row's
// coupling to the rows above is negligible (zeroing it), as often as that
// holds. Returns (h, hi, and whether anything was isolated).
struct Deflation {
  Value h, hi, isolated;
};
Deflation deflate(Builder& b, Value h, Value hi, Value scale, const Limits& lim) {
  const std::vector<int64_t> dims = h.type.dims;
  const ElementType real = hlo::real_part_type(h.type.element);
  const std::vector<int64_t> batch{dims[0]};
  auto loop = b.while_loop(
      {h, hi, b.constant_int(ElementType::kPred, 1), b.zeros({ElementType::kPred, batch}), scale},
      [&](Builder& c, const std::vector<Value>& v) { return v[2]; },
      [&](Builder& c, const std::vector<Value>& v) {
        const Grid g(c, dims);
        Value h = v[0], hi = v[1], scale = v[4];
        Value one = c.splat(s64(c, 1), batch);
        Value above = g.above(hi);
        Value coupling = g.coupling(h, hi);
        // LAPACK's test: against the two diagonal entries, or the matrix's
        // scale where both are zero.
        Value near = c.binary("add", magnitude(c, g.entry(h, hi, hi)),
                              magnitude(c, g.entry(h, above, above)));
        near = c.select(c.compare(Compare::kEQ, near, c.zeros(near.type)), scale, near);
        Value bound =
            c.maximum(c.binary("multiply", near, c.splat(c.constant(real, lim.eps), batch)),
                      c.splat(c.constant(real, lim.small), batch));
        Value isolate = c.binary("and", c.compare(Compare::kGT, hi, c.splat(s64(c, 0), batch)),
                                 c.binary("or", c.compare(Compare::kLE, coupling, bound),
                                          // (a NaN never converges: it ends as it is)
                                          c.compare(Compare::kNE, coupling, coupling)));
        h = c.select(c.binary("and", g.left_in_row(hi), g.each(isolate)), c.zeros(h.type), h);
        hi = c.select(isolate, c.binary("subtract", hi, one), hi);
        Value any = c.reduce(isolate, c.constant_int(ElementType::kPred, 0), {0}, "or");
        return std::vector<Value>{h, hi, any, c.binary("or", v[3], isolate), scale};
      });
  return {loop[0], loop[1], loop[3]};
}

// One shifted QR step on each matrix's active block (see the file comment);
// z accumulates the transformations. Matrices with hi == 0 are finished and
// keep their values.
std::pair<Value, Value> qr_step(Builder& c, Value h, Value z, Value hi, Value mu) {
  const std::vector<int64_t> dims = h.type.dims;
  const int64_t batch = dims[0], n = dims[1];
  const ElementType t = h.type.element;
  const Grid g(c, dims);
  Value below = c.compare(Compare::kGT, g.rows, g.each(hi));
  Value diagonal = c.compare(Compare::kEQ, g.rows, g.cols);
  Value eye = c.convert(diagonal, t);
  Value shifted = c.binary("subtract", h, c.binary("multiply", eye, g.each(mu)));
  HouseholderFactors f = geqrf(c, c.select(below, eye, shifted));
  // R Q and Z Q, as (Q^H [R^H | Z^H])^H: one pass over the reflectors.
  Value r = triangle(c, f.packed, false);
  Value both = apply_householder(c, f.packed, f.taus,
                                 c.concatenate({adjoint(c, r), adjoint(c, z)}, 2), true);
  Value rq = adjoint(c, c.slice(both, {0, 0, 0}, {batch, n, n}, {1, 1, 1}));
  Value zq = adjoint(c, c.slice(both, {0, 0, n}, {batch, n, 2 * n}, {1, 1, 1}));
  Value stepped = c.select(below, h, c.binary("add", rq, c.binary("multiply", eye, g.each(mu))));
  Value running = g.each(c.compare(Compare::kGT, hi, c.splat(s64(c, 0), {batch})));
  return {c.select(running, stepped, h), c.select(running, zq, z)};
}

// The eigenvectors of the upper triangular t with diagonal `eigenvalues`
// (columns of X, X[k][k] = 1) by
// back substitution, row by row from the bottom: x_jk = -(sum_{l > j} t_jl
// x_lk) / (t_jj - t_kk), the divisor kept off zero as LAPACK's trevc does
// for repeated eigenvalues.
Value triangular_eigenvectors(Builder& b, Value t, Value eigenvalues, const Limits& lim) {
  const std::vector<int64_t> dims = t.type.dims;
  const int64_t batch = dims[0], n = dims[1];
  const ElementType type = t.type.element, real = hlo::real_part_type(type);
  const std::vector<int64_t> bn{batch, n};
  Value floor = b.maximum(
      b.binary("multiply", magnitude(b, eigenvalues), b.splat(b.constant(real, lim.eps), bn)),
      b.splat(b.constant(real, lim.small), bn));
  auto loop = b.while_loop(
      {s64(b, 0), identity_matrix(b, batch, n, n, type), t, eigenvalues, floor},
      [&](Builder& c, const std::vector<Value>& v) {
        return c.compare(Compare::kLT, v[0], s64(c, n - 1));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Value j = c.binary("subtract", s64(c, n - 2), v[0]), x = v[1], tri = v[2], values = v[3],
              least = v[4];
        Value zero = s64(c, 0);
        Value row = c.reshape(c.dynamic_slice(tri, {zero, j, zero}, {batch, 1, n}), bn);
        Value k = c.iota({ElementType::kS64, bn}, 1);
        Value right = c.compare(Compare::kGT, k, c.splat(j, bn));
        Value sum =
            c.dot_general(c.select(right, row, c.zeros(row.type)), x, {0}, {0}, {1}, {1}, type);
        Value tjj = c.reshape(c.dynamic_slice(tri, {zero, j, j}, {batch, 1, 1}), {batch});
        Value divisor = c.binary("subtract", c.broadcast_in_dim(tjj, bn, {0}), values);
        Value tiny = c.compare(Compare::kLT, magnitude(c, divisor), least);
        divisor = c.select(tiny, real_to(c, least, type), divisor);
        Value xj = c.select(right, c.unary("negate", c.binary("divide", sum, divisor)),
                            c.convert(c.compare(Compare::kEQ, k, c.splat(j, bn)), type));
        x = c.dynamic_update_slice_at(x, c.reshape(xj, {batch, 1, n}), {zero, j, zero});
        // Each column scaled down to a largest entry of at most 1 (trevc's
        // scaling): a defective T (a Jordan block) grows its columns by a
        // factor 1 / least per row, which would overflow to inf and NaN.
        Value largest = c.reduce(magnitude(c, x), c.constant(real, 0), {1}, "maximum");
        Value divide_by = c.maximum(largest, c.splat(c.constant(real, 1), bn));
        x = c.binary("divide", x, c.broadcast_in_dim(real_to(c, divide_by, type), dims, {0, 2}));
        return std::vector<Value>{c.binary("add", v[0], s64(c, 1)), x, tri, values, least};
      });
  return loop[1];
}

// Columns scaled to unit norm, then turned so that the largest component
// (the first of equal magnitude) is real and positive: geev's normalization.
Value normalized_columns(Builder& b, Value v) {
  const std::vector<int64_t> dims = v.type.dims;
  const int64_t n = dims[1];
  const ElementType t = v.type.element, real = hlo::real_part_type(t);
  Value sq = abs_squared(b, v);
  Value norm = b.unary("sqrt", b.reduce(sq, b.constant(real, 0), {1}, "add"));
  v = b.binary("divide", v, b.broadcast_in_dim(real_to(b, norm, t), dims, {0, 2}));
  sq = abs_squared(b, v);
  Value top = b.reduce(sq, b.constant(real, -1), {1}, "maximum");
  Value rows = b.iota({ElementType::kS64, dims}, 1);
  Value at_top = b.compare(Compare::kEQ, sq, b.broadcast_in_dim(top, dims, {0, 2}));
  Value first =
      b.reduce(b.select(at_top, rows, b.splat(s64(b, n), dims)), s64(b, n), {1}, "minimum");
  Value picked = b.compare(Compare::kEQ, rows, b.broadcast_in_dim(first, dims, {0, 2}));
  Value largest =
      b.reduce(b.select(picked, v, b.zeros(v.type)), b.constant(t, 0), {1}, "add");  // [B, n]
  Value turn = b.conj(unit_phase(b, largest));
  return b.binary("multiply", v, b.broadcast_in_dim(turn, dims, {0, 2}));
}

// Per matrix of [B, n, n] x: whether every entry is finite.
Value all_finite(Builder& b, Value x) {
  const ElementType real = hlo::real_part_type(x.type.element);
  const TensorType parts{real, x.type.dims};
  Value finite = b.binary(
      "and", b.op("stablehlo.is_finite", {real_part(b, x)}, {ElementType::kPred, x.type.dims}),
      b.op("stablehlo.is_finite", {b.op("stablehlo.imag", {x}, parts)},
           {ElementType::kPred, x.type.dims}));
  return b.reduce(finite, b.constant_int(ElementType::kPred, 1), {1, 2}, "and");
}

// x where the matrix was finite, else NaN ([B, ...] x, [B] finite).
Value nan_unless(Builder& b, Value x, Value finite) {
  const ElementType t = x.type.element;
  Value nan = b.splat(b.constant(t, std::numeric_limits<double>::quiet_NaN()), x.type.dims);
  return b.select(b.broadcast_in_dim(finite, x.type.dims, {0}), x, nan);
}

}  // namespace

EigResult schur_eig(Builder& b, Value a, bool vectors) {
  const MatrixBatch shape = matrix_batch(a);
  const int64_t batch = shape.batch, n = shape.cols;
  const ElementType t = a.type.element, real = hlo::real_part_type(t);
  const Limits lim = limits(real, n);
  const std::vector<int64_t> dims{batch, n, n}, per_matrix{batch};
  Value h0 = b.reshape(a, dims);
  // The matrix's scale for the deflation test where the diagonal is zero.
  Value scale = b.unary("sqrt", b.reduce(abs_squared(b, h0), b.constant(real, 0), {1, 2}, "add"));
  auto loop = b.while_loop(
      {s64(b, 0), h0, identity_matrix(b, batch, n, n, t), b.splat(s64(b, n - 1), per_matrix),
       b.zeros({ElementType::kS64, per_matrix}), scale},
      [&](Builder& c, const std::vector<Value>& v) {
        Value unfinished = c.reduce(c.compare(Compare::kGT, v[3], c.splat(s64(c, 0), per_matrix)),
                                    c.constant_int(ElementType::kPred, 0), {0}, "or");
        return c.binary("and", c.compare(Compare::kLT, v[0], s64(c, iteration_cap(n))), unfinished);
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Deflation d = deflate(c, v[1], v[3], v[5], lim);
        Value stall = c.select(d.isolated, c.zeros(v[4].type), v[4]);
        const Grid g(c, dims);
        Value coupling = g.coupling(d.h, d.hi);
        Value ten = c.splat(s64(c, 10), per_matrix);
        Value stalled = c.binary(
            "and", c.compare(Compare::kGT, stall, c.zeros(stall.type)),
            c.compare(Compare::kEQ, c.binary("remainder", stall, ten), c.zeros(stall.type)));
        Value mu = shift(g, d.h, d.hi, coupling, stalled);
        auto [h, z] = qr_step(c, d.h, v[2], d.hi, mu);
        return std::vector<Value>{c.binary("add", v[0], s64(c, 1)),
                                  h,
                                  z,
                                  d.hi,
                                  c.binary("add", stall, c.splat(s64(c, 1), per_matrix)),
                                  v[5]};
      });
  Value h = loop[1], z = loop[2], hi = loop[3];
  // geev's info: 0, or 1 + the index of the last row not isolated.
  Value unfinished = b.compare(Compare::kGT, hi, b.zeros(hi.type));
  Value info =
      b.convert(b.select(unfinished, b.binary("add", hi, b.splat(s64(b, 1), per_matrix)), hi),
                ElementType::kS32);
  EigResult result;
  // A matrix with an inf or NaN has NaN eigenvalues and vectors, as from
  // LAPACK (whose balancing spreads them; the iterations here could isolate
  // a finite diagonal entry next to an infinite coupling).
  Value finite = all_finite(b, h0);
  Value eigenvalues = diagonal(b, h);
  result.eigenvalues = b.reshape(nan_unless(b, eigenvalues, finite), shape.with({n}));
  result.info = b.reshape(info, shape.batch_dims);
  if (!vectors) return result;
  Value x = triangular_eigenvectors(b, triangle(b, h, false), eigenvalues, lim);
  Value v = b.dot_general(z, x, {0}, {0}, {2}, {1}, t);
  result.eigenvectors =
      b.reshape(nan_unless(b, normalized_columns(b, v), finite), shape.with({n, n}));
  return result;
}

}  // namespace torch_tpu::ops

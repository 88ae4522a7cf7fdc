// See ops/linalg_lowering.h.
#include "ops/linalg_lowering.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hlo/int_constants.h"
#include "hlo/predicates.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::TensorType;
using hlo::Value;

MatrixBatch matrix_batch(const Value& a) {
  const auto& dims = a.type.dims;
  MatrixBatch m;
  m.batch_dims.assign(dims.begin(), dims.end() - 2);
  for (int64_t d : m.batch_dims) m.batch *= d;
  m.rows = dims[dims.size() - 2];
  m.cols = dims.back();
  return m;
}

std::vector<int64_t> MatrixBatch::with(std::initializer_list<int64_t> tail) const {
  std::vector<int64_t> out = batch_dims;
  out.insert(out.end(), tail);
  return out;
}

namespace {

// Any element of each matrix set, for a pred [batch..., m, n]: pred [batch...].
Value any_in_matrix(Builder& b, Value flags) {
  const size_t r = flags.type.rank();
  Value as_int = b.convert(flags, ElementType::kS32);
  Value count = b.reduce(as_int, b.constant_int(ElementType::kS32, 0),
                         {static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)}, "maximum");
  return b.compare(Compare::kNE, count, b.zeros(count.type));
}

// LAPACK's potrf info for the flattened batch w [B, n, n] (Hermitian, lower
// triangle meaningful) of the matrices `failed` marks: an unblocked
// right-looking factorization that stops at the first pivot that is not
// positive (or is NaN), run only while some failed matrix has no info yet,
// so a batch that factorized costs no iteration.
Value potrf_info(Builder& b, Value w, Value failed) {
  const int64_t batch = w.type.dims[0], n = w.type.dims[1];
  const ElementType t = w.type.element;
  const bool complex = hlo::is_complex(t);
  const ElementType real = complex ? hlo::real_part_type(t) : t;
  Value info0 = b.zeros({ElementType::kS32, {batch}});
  auto loop = b.while_loop(
      {s64(b, 0), w, info0, failed},
      [&](Builder& c, const std::vector<Value>& v) {
        Value more = c.compare(Compare::kLT, v[0], s64(c, n));
        Value open = c.binary("and", v[3], c.compare(Compare::kEQ, v[2], c.zeros(v[2].type)));
        return c.binary("and", more, hlo::any_true(c, open));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Value j = v[0], m = v[1], info = v[2], flagged = v[3];
        Value zero = s64(c, 0);
        Value d = c.reshape(c.dynamic_slice(m, {zero, j, j}, {batch, 1, 1}), {batch});
        if (complex) d = c.op("stablehlo.real", {d}, {real, {batch}});
        Value bad = c.unary("not", c.compare(Compare::kGT, d, c.zeros(d.type)));
        Value newly = c.binary(
            "and", c.binary("and", flagged, c.compare(Compare::kEQ, info, c.zeros(info.type))),
            bad);
        Value order = c.splat(c.convert(c.binary("add", j, s64(c, 1)), ElementType::kS32), {batch});
        info = c.select(newly, order, info);
        // Column j below the pivot, divided by its root: the rank-1 update
        // of the trailing matrix.
        Value col = c.reshape(c.dynamic_slice(m, {zero, zero, j}, {batch, n, 1}), {batch, n});
        Value root = c.unary("sqrt", d);
        if (complex) root = c.convert(root, t);
        Value l = c.binary("divide", col, c.broadcast_in_dim(root, {batch, n}, {0}));
        Value below = c.compare(Compare::kGT, c.iota({ElementType::kS64, {batch, n}}, 1),
                                c.splat(j, {batch, n}));
        l = c.select(below, l, c.zeros(l.type));
        Value lc = complex ? c.conj(l) : l;
        Value outer = c.binary("multiply", c.broadcast_in_dim(l, {batch, n, n}, {0, 1}),
                               c.broadcast_in_dim(lc, {batch, n, n}, {0, 2}));
        m = c.binary("subtract", m, outer);
        return std::vector<Value>{c.binary("add", j, s64(c, 1)), m, info, flagged};
      });
  // A matrix XLA could not factorize whose pivots all came out positive
  // here (rounding at the edge of definiteness): its last minor.
  Value info = loop[2];
  Value unset = b.binary("and", failed, b.compare(Compare::kEQ, info, b.zeros(info.type)));
  return b.select(unset, b.splat(b.constant_int(ElementType::kS32, n), {batch}), info);
}

// |x| as LAPACK's pivot search measures it: |re| + |im| for complex.
Value pivot_magnitude(Builder& b, Value x) {
  if (!hlo::is_complex(x.type.element)) return b.unary("abs", x);
  const TensorType part{hlo::real_part_type(x.type.element), x.type.dims};
  return b.binary("add", b.unary("abs", b.op("stablehlo.real", {x}, part)),
                  b.unary("abs", b.op("stablehlo.imag", {x}, part)));
}

// Row `row` ([B] s64, one per matrix) of w [B, m, n]: [B, n].
Value row_at(Builder& b, Value w, Value row) {
  const int64_t batch = w.type.dims[0], m = w.type.dims[1], n = w.type.dims[2];
  Value rows = b.iota({ElementType::kS64, {batch, m, n}}, 1);
  Value pick = b.compare(Compare::kEQ, rows, b.broadcast_in_dim(row, {batch, m, n}, {0}));
  return b.reduce(b.select(pick, w, b.zeros(w.type)), b.constant(w.type.element, 0), {1}, "add");
}

}  // namespace

LuResult lu_factor(Builder& b, Value a) {
  const auto& dims = a.type.dims;
  const MatrixBatch shape = matrix_batch(a);
  const auto& batch_dims = shape.batch_dims;
  const int64_t batch = shape.batch, m = shape.rows, n = shape.cols, steps = std::min(m, n);
  const ElementType t = a.type.element;
  Value w0 = b.reshape(a, {batch, m, n});
  auto loop = b.while_loop(
      {s64(b, 0), w0, b.zeros({ElementType::kS32, {batch, steps}}),
       b.zeros({ElementType::kS32, {batch}})},
      [&](Builder& c, const std::vector<Value>& v) {
        return c.compare(Compare::kLT, v[0], s64(c, steps));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Value j = v[0], w = v[1], piv = v[2], info = v[3];
        Value zero = s64(c, 0);
        const std::vector<int64_t> bm{batch, m}, bmn{batch, m, n};
        Value rows = c.iota({ElementType::kS64, bm}, 1);
        Value jm = c.splat(j, bm);
        // The pivot row: the first of largest magnitude at or below j.
        Value col = c.reshape(c.dynamic_slice(w, {zero, zero, j}, {batch, m, 1}), bm);
        Value mag = pivot_magnitude(c, col);
        Value candidate = c.select(c.compare(Compare::kGE, rows, jm), mag,
                                   c.splat(c.constant(mag.type.element, -1), bm));
        Value top = c.reduce(candidate, c.constant(mag.type.element, -1), {1}, "maximum");
        Value is_top =
            c.binary("and", c.compare(Compare::kGE, rows, jm),
                     c.compare(Compare::kEQ, candidate, c.broadcast_in_dim(top, bm, {0})));
        Value p =
            c.reduce(c.select(is_top, rows, c.splat(s64(c, m), bm)), s64(c, m), {1}, "minimum");
        // NaN magnitudes match nothing: keep row j.
        p = c.select(c.compare(Compare::kEQ, p, c.splat(s64(c, m), {batch})), c.splat(j, {batch}),
                     p);
        Value order = c.convert(c.binary("add", p, c.splat(s64(c, 1), {batch})), ElementType::kS32);
        piv = c.dynamic_update_slice_at(piv, c.reshape(order, {batch, 1}), {zero, j});
        // Swap rows j and p.
        Value rows3 = c.iota({ElementType::kS64, bmn}, 1);
        Value at_j = c.compare(Compare::kEQ, rows3, c.splat(j, bmn));
        Value at_p = c.compare(Compare::kEQ, rows3, c.broadcast_in_dim(p, bmn, {0}));
        Value row_p = c.broadcast_in_dim(row_at(c, w, p), bmn, {0, 2});
        Value row_j = c.broadcast_in_dim(row_at(c, w, c.splat(j, {batch})), bmn, {0, 2});
        w = c.select(at_j, row_p, c.select(at_p, row_j, w));
        // The multipliers below the pivot, stored in column j.
        Value d = c.reshape(c.dynamic_slice(w, {zero, j, j}, {batch, 1, 1}), {batch});
        Value zero_pivot = c.compare(Compare::kEQ, d, c.zeros(d.type));
        Value first =
            c.binary("and", zero_pivot, c.compare(Compare::kEQ, info, c.zeros(info.type)));
        Value step = c.convert(c.binary("add", j, s64(c, 1)), ElementType::kS32);
        info = c.select(first, c.splat(step, {batch}), info);
        Value safe_d = c.select(zero_pivot, c.splat(c.constant(t, 1), {batch}), d);
        Value pivot_col = c.reshape(c.dynamic_slice(w, {zero, zero, j}, {batch, m, 1}), bm);
        Value below = c.compare(Compare::kGT, rows, jm);
        Value l =
            c.select(below, c.binary("divide", pivot_col, c.broadcast_in_dim(safe_d, bm, {0})),
                     c.zeros(pivot_col.type));
        Value cols3 = c.iota({ElementType::kS64, bmn}, 2);
        Value below3 = c.compare(Compare::kGT, rows3, c.splat(j, bmn));
        Value in_col = c.binary("and", below3, c.compare(Compare::kEQ, cols3, c.splat(j, bmn)));
        w = c.select(in_col, c.broadcast_in_dim(l, bmn, {0, 1}), w);
        // The trailing update: w[i, k] -= l[i] * w[j, k] for i, k > j.
        Value urow = c.reshape(c.dynamic_slice(w, {zero, j, zero}, {batch, 1, n}), {batch, n});
        Value trailing = c.binary("and", below3, c.compare(Compare::kGT, cols3, c.splat(j, bmn)));
        Value outer = c.binary("multiply", c.broadcast_in_dim(l, bmn, {0, 1}),
                               c.broadcast_in_dim(urow, bmn, {0, 2}));
        w = c.select(trailing, c.binary("subtract", w, outer), w);
        return std::vector<Value>{c.binary("add", j, s64(c, 1)), w, piv, info};
      });
  return {b.reshape(loop[1], dims), b.reshape(loop[2], shape.with({steps})),
          b.reshape(loop[3], batch_dims)};
}

namespace {

// The row permutation the pivots' interchanges make, as s64 [B, m]: row i
// of P^T A is row perm[i] of A (piv: [B, k] 1-based, k <= m swaps).
Value permutation(Builder& b, Value piv, int64_t m) {
  const int64_t batch = piv.type.dims[0], k = piv.type.dims[1];
  Value start = b.iota({ElementType::kS64, {batch, m}}, 1);
  auto loop = b.while_loop(
      {s64(b, 0), start, piv},
      [&](Builder& c, const std::vector<Value>& v) {
        return c.compare(Compare::kLT, v[0], s64(c, k));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Value i = v[0], perm = v[1];
        Value zero = s64(c, 0);
        Value target =
            c.binary("subtract",
                     c.convert(c.reshape(c.dynamic_slice(v[2], {zero, i}, {batch, 1}), {batch}),
                               ElementType::kS64),
                     c.splat(s64(c, 1), {batch}));
        Value idx = c.iota({ElementType::kS64, {batch, m}}, 1);
        auto value_at = [&](Value where) {
          Value pick = c.compare(Compare::kEQ, idx, c.broadcast_in_dim(where, {batch, m}, {0}));
          return c.reduce(c.select(pick, perm, c.zeros(perm.type)), s64(c, 0), {1}, "add");
        };
        Value vi = value_at(c.splat(i, {batch})), vt = value_at(target);
        Value at_i = c.compare(Compare::kEQ, idx, c.splat(i, {batch, m}));
        Value at_t = c.compare(Compare::kEQ, idx, c.broadcast_in_dim(target, {batch, m}, {0}));
        perm = c.select(at_i, c.broadcast_in_dim(vt, {batch, m}, {0}),
                        c.select(at_t, c.broadcast_in_dim(vi, {batch, m}, {0}), perm));
        return std::vector<Value>{c.binary("add", i, s64(c, 1)), perm, v[2]};
      });
  return loop[1];
}

}  // namespace

Value lu_solve(Builder& b, Value lu, Value pivots, Value rhs, bool adjoint_a) {
  const auto& dims = rhs.type.dims;
  const size_t r = dims.size();
  const int64_t n = dims[r - 2], k = dims[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= dims[i];
  Value perm = permutation(b, b.reshape(pivots, {batch, n}), n);
  const std::vector<int64_t> bnk{batch, n, k};
  Value x = b.reshape(rhs, bnk);
  if (!adjoint_a) {
    // P^T rhs: row i is rhs's row perm[i] (a gather over the flat rhs).
    Value base =
        b.binary("multiply", b.iota({ElementType::kS64, bnk}, 0), b.splat(s64(b, n * k), bnk));
    Value idx = b.binary("add", base,
                         b.binary("add",
                                  b.binary("multiply", b.broadcast_in_dim(perm, bnk, {0, 1}),
                                           b.splat(s64(b, k), bnk)),
                                  b.iota({ElementType::kS64, bnk}, 2)));
    x = b.reshape(b.gather_1d(b.reshape(x, {batch * n * k}), idx), dims);
    x = triangular_solve(b, lu, x, true, true, true);
    return triangular_solve(b, lu, x, true, false, false);
  }
  x = triangular_solve(b, lu, rhs, true, false, false, true);
  x = b.reshape(triangular_solve(b, lu, x, true, true, true, true), bnk);
  // P w: row perm[i] of the result is row i of w.
  const std::vector<int64_t> bnnk{batch, n, n, k};
  Value src = b.broadcast_in_dim(x, bnnk, {0, 2, 3});
  Value pick = b.compare(Compare::kEQ, b.broadcast_in_dim(perm, bnnk, {0, 2}),
                         b.iota({ElementType::kS64, bnnk}, 1));
  x = b.reduce(b.select(pick, src, b.zeros(src.type)), b.constant(x.type.element, 0), {2}, "add");
  return b.reshape(x, dims);
}

Value abs_squared(Builder& b, Value x) {
  if (!hlo::is_complex(x.type.element)) return b.binary("multiply", x, x);
  const TensorType part{hlo::real_part_type(x.type.element), x.type.dims};
  Value re = b.op("stablehlo.real", {x}, part), im = b.op("stablehlo.imag", {x}, part);
  return b.binary("add", b.binary("multiply", re, re), b.binary("multiply", im, im));
}

Value real_to(Builder& b, Value x, ElementType t) {
  return hlo::is_complex(t) ? b.convert(x, t) : x;
}

double epsilon(ElementType t) {
  return t == ElementType::kF64 ? std::numeric_limits<double>::epsilon()
                                : static_cast<double>(std::numeric_limits<float>::epsilon());
}

Value diagonal(Builder& b, Value x) {
  const std::vector<int64_t>& dims = x.type.dims;
  Value on_diagonal = b.compare(Compare::kEQ, b.iota({ElementType::kS64, dims}, 1),
                                b.iota({ElementType::kS64, dims}, 2));
  return b.reduce(b.select(on_diagonal, x, b.zeros(x.type)), b.constant(x.type.element, 0), {2},
                  "add");
}

Value real_part(Builder& b, Value x) {
  if (!hlo::is_complex(x.type.element)) return x;
  return b.op("stablehlo.real", {x}, {hlo::real_part_type(x.type.element), x.type.dims});
}

Value magnitude(Builder& b, Value z) {
  if (!hlo::is_complex(z.type.element)) return b.unary("abs", z);
  return b.op("stablehlo.abs", {z}, {hlo::real_part_type(z.type.element), z.type.dims});
}

Value unit_phase(Builder& b, Value z) {
  Value magnitude = real_to(b, ops::magnitude(b, z), z.type.element);
  Value one = b.splat(b.constant(z.type.element, 1), z.type.dims);
  Value is_zero = b.compare(Compare::kEQ, magnitude, b.zeros(magnitude.type));
  return b.select(is_zero, one, b.binary("divide", z, b.select(is_zero, one, magnitude)));
}

Value identity_matrix(Builder& b, int64_t batch, int64_t rows, int64_t cols, ElementType t) {
  const std::vector<int64_t> dims{batch, rows, cols};
  return b.convert(b.compare(Compare::kEQ, b.iota({ElementType::kS64, dims}, 1),
                             b.iota({ElementType::kS64, dims}, 2)),
                   t);
}

namespace {

// Reflector j's vector (1 at row j, the stored part below it, 0 above) from
// w [B, m, n] that holds it in column j below the diagonal.
Value reflector(Builder& b, Value w, Value j) {
  const int64_t batch = w.type.dims[0], m = w.type.dims[1];
  Value zero = s64(b, 0);
  Value col = b.reshape(b.dynamic_slice(w, {zero, zero, j}, {batch, m, 1}), {batch, m});
  Value rows = b.iota({ElementType::kS64, {batch, m}}, 1);
  Value jm = b.splat(j, {batch, m});
  Value one = b.splat(b.constant(w.type.element, 1), {batch, m});
  return b.select(b.compare(Compare::kGT, rows, jm), col,
                  b.select(b.compare(Compare::kEQ, rows, jm), one, b.zeros(col.type)));
}

// x - tau v (v^H x) for x [B, m, c], v [B, m], tau [B] (tau_conj: conj(tau)).
Value apply_reflector(Builder& b, Value x, Value v, Value tau) {
  const int64_t batch = x.type.dims[0], m = x.type.dims[1], c = x.type.dims[2];
  const bool complex = hlo::is_complex(x.type.element);
  Value vh = complex ? b.conj(v) : v;
  Value proj = b.reduce(b.binary("multiply", b.broadcast_in_dim(vh, {batch, m, c}, {0, 1}), x),
                        b.constant(x.type.element, 0), {1}, "add");  // [B, c]
  Value scaled = b.binary("multiply", proj, b.broadcast_in_dim(tau, {batch, c}, {0}));
  return b.binary("subtract", x,
                  b.binary("multiply", b.broadcast_in_dim(v, {batch, m, c}, {0, 1}),
                           b.broadcast_in_dim(scaled, {batch, m, c}, {0, 2})));
}

}  // namespace

HouseholderFactors geqrf(Builder& b, Value a) {
  const MatrixBatch shape = matrix_batch(a);
  const int64_t batch = shape.batch, m = shape.rows, n = shape.cols, k = std::min(m, n);
  const ElementType t = a.type.element;
  const bool complex = hlo::is_complex(t);
  const ElementType real = complex ? hlo::real_part_type(t) : t;
  const std::vector<int64_t> bm{batch, m}, bmn{batch, m, n};
  Value w0 = b.reshape(a, bmn);
  // geqrf: column j's reflector H = I - tau v v^H zeroes it below the
  // diagonal (LAPACK's larfg: beta = -sign(re alpha) |(alpha, x)|, tau =
  // (beta - alpha) / beta, v = x / (alpha - beta); tau = 0 when x = 0 and
  // alpha is real); H^H is applied to the columns right of j.
  auto factor = b.while_loop(
      {s64(b, 0), w0, b.zeros({t, {batch, std::max<int64_t>(k, 1)}})},
      [&](Builder& c, const std::vector<Value>& v) {
        return c.compare(Compare::kLT, v[0], s64(c, k));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        Value j = v[0], w = v[1], taus = v[2];
        Value zero = s64(c, 0);
        Value rows = c.iota({ElementType::kS64, bm}, 1);
        Value jm = c.splat(j, bm);
        Value col = c.reshape(c.dynamic_slice(w, {zero, zero, j}, {batch, m, 1}), bm);
        Value alpha = c.reshape(c.dynamic_slice(w, {zero, j, j}, {batch, 1, 1}), {batch});
        Value below = c.compare(Compare::kGT, rows, jm);
        Value x = c.select(below, col, c.zeros(col.type));
        Value xnorm2 = c.reduce(abs_squared(c, x), c.constant(real, 0), {1}, "add");
        Value alpha2 = abs_squared(c, alpha);
        Value norm = c.unary("sqrt", c.binary("add", alpha2, xnorm2));
        Value alpha_re = complex ? c.op("stablehlo.real", {alpha}, {real, {batch}}) : alpha;
        Value negative = c.compare(Compare::kLT, alpha_re, c.zeros(alpha_re.type));
        Value beta = c.select(negative, norm, c.unary("negate", norm));
        Value trivial = c.compare(Compare::kEQ, xnorm2, c.zeros(xnorm2.type));
        if (complex) {
          Value alpha_im = c.op("stablehlo.imag", {alpha}, {real, {batch}});
          trivial =
              c.binary("and", trivial, c.compare(Compare::kEQ, alpha_im, c.zeros(alpha_im.type)));
        }
        Value beta_t = real_to(c, beta, t);
        Value tau = c.binary("divide", c.binary("subtract", beta_t, alpha), beta_t);
        Value scale = c.binary("divide", c.splat(c.constant(t, 1), {batch}),
                               c.binary("subtract", alpha, beta_t));
        tau = c.select(trivial, c.zeros(tau.type), tau);
        scale = c.select(trivial, c.zeros(scale.type), scale);
        Value new_alpha = c.select(trivial, alpha, beta_t);
        Value vbelow = c.binary("multiply", x, c.broadcast_in_dim(scale, bm, {0}));
        // Column j: R's entry at the diagonal, the reflector below it.
        Value new_col = c.select(below, vbelow,
                                 c.select(c.compare(Compare::kEQ, rows, jm),
                                          c.broadcast_in_dim(new_alpha, bm, {0}), col));
        Value cols3 = c.iota({ElementType::kS64, bmn}, 2);
        Value at_j = c.compare(Compare::kEQ, cols3, c.splat(j, bmn));
        w = c.select(at_j, c.broadcast_in_dim(new_col, bmn, {0, 1}), w);
        // The trailing columns get H^H.
        Value one = c.splat(c.constant(t, 1), bm);
        Value vfull = c.select(below, vbelow,
                               c.select(c.compare(Compare::kEQ, rows, jm), one, c.zeros(one.type)));
        Value tau_h = complex ? c.conj(tau) : tau;
        Value updated = apply_reflector(c, w, vfull, tau_h);
        w = c.select(c.compare(Compare::kGT, cols3, c.splat(j, bmn)), updated, w);
        taus = c.dynamic_update_slice_at(taus, c.reshape(tau, {batch, 1}), {zero, j});
        return std::vector<Value>{c.binary("add", j, s64(c, 1)), w, taus};
      });
  return {b.reshape(factor[1], shape.with({m, n})),
          b.reshape(b.slice(factor[2], {0, 0}, {batch, k}, {1, 1}), shape.with({k}))};
}

Value apply_householder(Builder& b, Value packed, Value taus, Value c, bool adjoint_q) {
  const MatrixBatch shape = matrix_batch(packed);
  const MatrixBatch target = matrix_batch(c);
  const int64_t batch = shape.batch, m = shape.rows, n = shape.cols;
  const int64_t k = taus.type.dims.back(), cols = target.cols;
  const bool complex = hlo::is_complex(packed.type.element);
  Value w = b.reshape(packed, {batch, m, n});
  Value t = b.reshape(taus, {batch, k});
  Value x = b.reshape(c, {batch, m, cols});
  if (k == 0) return c;
  // Q = H_1 ... H_k: Q x applies the last reflector first; Q^H x applies
  // H_1^H (tau conjugated) first.
  auto loop = b.while_loop(
      {s64(b, 0), x, w, t},
      [&](Builder& l, const std::vector<Value>& v) {
        return l.compare(Compare::kLT, v[0], s64(l, k));
      },
      [&](Builder& l, const std::vector<Value>& v) {
        Value j = adjoint_q ? v[0] : l.binary("subtract", s64(l, k - 1), v[0]);
        Value vj = reflector(l, v[2], j);
        Value tau = l.reshape(l.dynamic_slice(v[3], {s64(l, 0), j}, {batch, 1}), {batch});
        if (adjoint_q && complex) tau = l.conj(tau);
        Value next = apply_reflector(l, v[1], vj, tau);
        return std::vector<Value>{l.binary("add", v[0], s64(l, 1)), next, v[2], v[3]};
      });
  return b.reshape(loop[1], target.with({m, cols}));
}

QrResult householder_qr(Builder& b, Value a, int64_t q_cols, int64_t r_rows) {
  const MatrixBatch shape = matrix_batch(a);
  const int64_t batch = shape.batch, m = shape.rows, n = shape.cols;
  const ElementType t = a.type.element;
  HouseholderFactors f = geqrf(b, a);
  Value w = b.reshape(f.packed, {batch, m, n});
  Value rmat = triangle(b, b.slice(w, {0, 0, 0}, {batch, r_rows, n}, {1, 1, 1}), false);
  QrResult result{Value{}, b.reshape(rmat, shape.with({r_rows, n}))};
  if (q_cols == 0) return result;
  // orgqr: Q applied to the first q_cols columns of I.
  Value eye = identity_matrix(b, batch, m, q_cols, t);
  result.q = apply_householder(b, f.packed, f.taus, b.reshape(eye, shape.with({m, q_cols})), false);
  return result;
}

Value matrix_exp(Builder& b, Value a) {
  const MatrixBatch shape = matrix_batch(a);
  const int64_t batch = shape.batch, n = shape.cols;
  const ElementType t = a.type.element;
  const bool complex = hlo::is_complex(t);
  const ElementType real = complex ? hlo::real_part_type(t) : t;
  const std::vector<int64_t> bnn{batch, n, n};
  Value x = b.reshape(a, bnn);
  auto matmul = [&](Builder& c, Value p, Value q) {
    return c.dot_general(p, q, {0}, {0}, {2}, {1}, t);
  };
  // The 1-norm (largest column sum of magnitudes) picks the scaling: 2^-s a
  // gets a norm at most theta, where 18 Taylor terms reach the type's
  // precision (theta 3.01 for float, 1.09 for double: the bounds CPU's
  // degree-18 step uses). Each squaring doubles the relative rounding
  // error, so the scaling is kept as small as the polynomial allows.
  Value mag = complex ? b.op("stablehlo.abs", {x}, {real, bnn}) : b.unary("abs", x);
  Value norm =
      b.reduce(b.reduce(mag, b.constant(real, 0), {1}, "add"), b.constant(real, 0), {1}, "maximum");
  const double theta = real == ElementType::kF64 ? 1.090863719290036 : 3.010066362817634;
  Value ratio = b.binary("divide", norm, b.splat(b.constant(real, theta), {batch}));
  Value steps = b.unary("ceil", b.binary("divide", b.unary("log", ratio),
                                         b.splat(b.constant(real, std::log(2.0)), {batch})));
  // No scaling for small norms, none past 2^1000 (inf stays inf).
  steps =
      b.minimum(b.maximum(steps, b.zeros(steps.type)), b.splat(b.constant(real, 1000), {batch}));
  steps = b.select(b.compare(Compare::kNE, steps, steps), b.zeros(steps.type), steps);
  Value scale = b.unary("exponential", b.binary("multiply", b.unary("negate", steps),
                                                b.splat(b.constant(real, std::log(2.0)), {batch})));
  Value scaled = b.binary("multiply", x, b.broadcast_in_dim(real_to(b, scale, t), bnn, {0}));
  // Horner: I + y (I + y/2 (I + y/3 (... (I + y/18)))).
  Value eye = identity_matrix(b, batch, n, n, t);
  Value poly = eye;
  for (int k = 18; k >= 1; --k) {
    Value term =
        b.binary("multiply", matmul(b, scaled, poly), b.splat(b.constant(t, 1.0 / k), bnn));
    poly = b.binary("add", eye, term);
  }
  // Square each matrix its own number of times.
  Value count = b.convert(steps, ElementType::kS64);
  Value most = b.reduce(count, s64(b, 0), {0}, "maximum");
  auto loop = b.while_loop(
      {s64(b, 0), most, count, poly},
      [&](Builder& c, const std::vector<Value>& v) { return c.compare(Compare::kLT, v[0], v[1]); },
      [&](Builder& c, const std::vector<Value>& v) {
        Value squared = matmul(c, v[3], v[3]);
        Value more = c.compare(Compare::kLT, c.splat(v[0], {batch}), v[2]);
        Value next = c.select(c.broadcast_in_dim(more, bnn, {0}), squared, v[3]);
        return std::vector<Value>{c.binary("add", v[0], s64(c, 1)), v[1], v[2], next};
      });
  return b.reshape(loop[3], shape.with({n, n}));
}

Value permutation_matrix(Builder& b, Value pivots, int64_t m, ElementType type) {
  const auto& dims = pivots.type.dims;
  std::vector<int64_t> batch_dims(dims.begin(), dims.end() - 1);
  int64_t batch = 1;
  for (int64_t d : batch_dims) batch *= d;
  Value perm = permutation(b, b.reshape(pivots, {batch, dims.back()}), m);
  // A = P L U with row i of P^T A row perm[i] of A: P[perm[i], i] = 1.
  const std::vector<int64_t> bmm{batch, m, m};
  Value ones = b.compare(Compare::kEQ, b.broadcast_in_dim(perm, bmm, {0, 2}),
                         b.iota({ElementType::kS64, bmm}, 1));
  std::vector<int64_t> out = batch_dims;
  out.insert(out.end(), {m, m});
  return b.reshape(b.convert(ones, type), out);
}

Value triangle(Builder& b, Value x, bool lower, int64_t diagonal) {
  const auto& dims = x.type.dims;
  const size_t r = dims.size();
  Value row = b.iota({ElementType::kS64, dims}, static_cast<int64_t>(r - 2));
  Value col = b.iota({ElementType::kS64, dims}, static_cast<int64_t>(r - 1));
  Value offset = b.binary("subtract", col, row);
  Value keep =
      b.compare(lower ? Compare::kLE : Compare::kGE, offset, b.splat(s64(b, diagonal), dims));
  return b.select(keep, x, b.zeros(x.type));
}

Value adjoint(Builder& b, Value x) {
  const size_t r = x.type.rank();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[r - 1], perm[r - 2]);
  Value t = b.transpose(x, perm);
  return hlo::is_complex(x.type.element) ? b.conj(t) : t;
}

Value triangular_solve(Builder& b, Value a, Value rhs, bool left, bool lower, bool unit_diagonal,
                       bool adjoint_a) {
  const char* transpose = !adjoint_a                        ? "NO_TRANSPOSE"
                          : hlo::is_complex(a.type.element) ? "ADJOINT"
                                                            : "TRANSPOSE";
  auto flag = [](bool v) { return v ? "true" : "false"; };
  return b.op("stablehlo.triangular_solve", {a, rhs}, rhs.type,
              std::string("left_side = ") + flag(left) + ", lower = " + flag(lower) +
                  ", unit_diagonal = " + flag(unit_diagonal) +
                  ", transpose_a = #stablehlo<transpose " + transpose + ">");
}

CholeskyResult cholesky(Builder& b, Value a) {
  const auto& dims = a.type.dims;
  const size_t r = dims.size();
  const int64_t n = dims[r - 1];
  // The Hermitian matrix the lower triangle stands for (CPU's LAPACK reads
  // only that triangle).
  Value sym = b.binary("add", triangle(b, a, true), adjoint(b, triangle(b, a, true, -1)));
  Value factor = triangle(b, b.op("stablehlo.cholesky", {sym}, sym.type, "lower = true"), true);
  // XLA leaves NaN in the factor of a matrix it could not factorize.
  Value failed = any_in_matrix(b, b.compare(Compare::kNE, factor, factor));
  const MatrixBatch shape = matrix_batch(a);
  const auto& batch_dims = shape.batch_dims;
  const int64_t batch = shape.batch;
  Value info = potrf_info(b, b.reshape(sym, {batch, n, n}), b.reshape(failed, {batch}));
  return {factor, b.reshape(info, batch_dims)};
}

}  // namespace torch_tpu::ops

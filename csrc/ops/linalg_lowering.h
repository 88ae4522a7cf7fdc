// StableHLO pieces of the tpu linear algebra kernels: triangles, triangular
// solves and the Cholesky factor, over batches of matrices (the last two
// dims; every leading dim is a batch dim).
#pragma once

#include <initializer_list>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::ops {

// The shape of a batch of matrices: its batch dims, their product, and the
// matrices' rows and columns (the lowerings loop over a flat batch).
struct MatrixBatch {
  std::vector<int64_t> batch_dims;
  int64_t batch = 1, rows = 0, cols = 0;
  // batch_dims followed by `tail`.
  std::vector<int64_t> with(std::initializer_list<int64_t> tail) const;
};
MatrixBatch matrix_batch(const hlo::Value& a);

// `x` with everything outside one triangle zeroed: the lower one keeps
// col - row <= diagonal (tril's rule), the upper one col - row >= diagonal
// (triu's).
hlo::Value triangle(hlo::Builder& b, hlo::Value x, bool lower, int64_t diagonal = 0);

// The conjugate transpose of a batch of matrices (the transpose for reals).
hlo::Value adjoint(hlo::Builder& b, hlo::Value x);

// |x|^2 elementwise, in the real type (x's for a real x).
hlo::Value abs_squared(hlo::Builder& b, hlo::Value x);

// A real-valued x (a norm, a rotation's cosine) in the element type t:
// converted for a complex t, as it is for a real one.
hlo::Value real_to(hlo::Builder& b, hlo::Value x, hlo::ElementType t);

// The epsilon of the real type t (f32 or f64): LAPACK's ulp.
double epsilon(hlo::ElementType t);

// The diagonals of x [B, n, n] as [B, n].
hlo::Value diagonal(hlo::Builder& b, hlo::Value x);

// The real part (x itself for a real type).
hlo::Value real_part(hlo::Builder& b, hlo::Value x);

// |z| elementwise, in the real type.
hlo::Value magnitude(hlo::Builder& b, hlo::Value z);

// z / |z| elementwise (1 where z is 0): the sign of a real z.
hlo::Value unit_phase(hlo::Builder& b, hlo::Value z);

// [batch, rows, cols] matrices of type t with ones on the diagonal.
hlo::Value identity_matrix(hlo::Builder& b, int64_t batch, int64_t rows, int64_t cols,
                           hlo::ElementType t);

// Solves op(a) x = rhs (left) or x op(a) = rhs (!left) for x, where `a` is
// triangular (only its `lower` or upper triangle is read; its diagonal is
// taken as ones when `unit_diagonal`) and op is the identity, or the
// conjugate transpose when `adjoint_a`. `a` and `rhs` have the same batch
// dims and element type.
hlo::Value triangular_solve(hlo::Builder& b, hlo::Value a, hlo::Value rhs, bool left, bool lower,
                            bool unit_diagonal, bool adjoint_a = false);

// The lower Cholesky factor L of the Hermitian `a` (a = L L^H) read from its
// lower triangle only (the upper one mirrors it), with zeros above the
// diagonal, and LAPACK's info for each matrix (s32, the batch dims): 0 when
// `a` is positive definite, else the order of its first leading minor that
// is not (L is then not meaningful, as on CPU).
struct CholeskyResult {
  hlo::Value factor;
  hlo::Value info;
};
CholeskyResult cholesky(hlo::Builder& b, hlo::Value a);

// LAPACK's getrf on a batch of m x n matrices (the last two dims): the
// factors L (unit lower, below the diagonal) and U packed in one matrix,
// the row interchanges as 1-based s32 pivots (min(m, n) of them: row k was
// swapped with row pivots[k] - 1 at step k), and info (s32, the batch
// dims): the 1-based index of the first exactly zero pivot, else 0. Partial
// pivoting picks LAPACK's row: the first of largest magnitude (|re| + |im|
// for complex, as its icamax). Unblocked, one loop step per column.
struct LuResult {
  hlo::Value lu, pivots, info;
};
LuResult lu_factor(hlo::Builder& b, hlo::Value a);

// X with A X = rhs (A^H X = rhs when `adjoint`) for A = P L U given by
// lu_factor's square `lu` and `pivots` ([batch..., n, k] rhs, the same
// batch dims).
hlo::Value lu_solve(hlo::Builder& b, hlo::Value lu, hlo::Value pivots, hlo::Value rhs,
                    bool adjoint);

// LAPACK's geqrf: R on and above the diagonal of `packed` (a's shape), the
// reflectors' vectors below it (each with an implicit 1 on the diagonal),
// and their scales `taus` ([batch..., min(m, n)]): Q = H_1 ... H_k with
// H_j = I - tau_j v_j v_j^H.
struct HouseholderFactors {
  hlo::Value packed, taus;
};
HouseholderFactors geqrf(hlo::Builder& b, hlo::Value a);

// Q c (or Q^H c when `adjoint_q`) for the Q of geqrf-style `packed` ([...,
// m, n]) and `taus` ([..., k], k <= n: the first k reflectors), c of shape
// [..., m, cols] (orgqr and ormqr).
hlo::Value apply_householder(hlo::Builder& b, hlo::Value packed, hlo::Value taus, hlo::Value c,
                             bool adjoint_q);

// LAPACK's Householder QR (geqrf, then orgqr for Q) of a batch of m x n
// matrices, with its reflectors and signs, so Q and R are CPU's: R is
// `r_rows` x n (min(m, n), or m for mode 'complete'), upper triangular; Q is
// m x `q_cols` (min(m, n) or m), or not built when q_cols is 0.
struct QrResult {
  hlo::Value q, r;
};
QrResult householder_qr(hlo::Builder& b, hlo::Value a, int64_t q_cols, int64_t r_rows);

// exp(a) for a batch of square matrices: scaling and squaring around a
// degree-18 Taylor polynomial, each matrix scaled by its own power of two
// (from its 1-norm) so the polynomial's truncation is below the precision
// of its type.
hlo::Value matrix_exp(hlo::Builder& b, hlo::Value a);

// The m x m permutation matrix P of A = P L U that lu_factor's `pivots`
// (of an m-row A) record, in element type `type` (lu_unpack's P).
hlo::Value permutation_matrix(hlo::Builder& b, hlo::Value pivots, int64_t m, hlo::ElementType type);

}  // namespace torch_tpu::ops

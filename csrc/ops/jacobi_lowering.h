// Symmetric (Hermitian) eigendecomposition and SVD of batches of real or
// complex matrices by Jacobi rotations, on the device: cyclic sweeps over
// every index pair until the off-diagonal part (eigh) or the columns'
// correlations (SVD, the one-sided method) fall under the dtype's epsilon.
// For complex matrices each pair's coupling is first made real by a unitary
// diagonal scaling, and the rotation stays real. Jacobi is accurate to the
// last bits for small singular values and eigenvalues, and every step is a
// few vector updates, which suits matrices up to a few hundred rows.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// Eigenvalues (ascending, [batch..., n]) and eigenvectors (columns of
// [batch..., n, n]) of the symmetric matrix `a` reads from its lower
// triangle (or its upper one when !lower).
struct EighResult {
  hlo::Value eigenvalues, eigenvectors;
};
EighResult jacobi_eigh(hlo::Builder& b, hlo::Value a, bool lower);

// a = U diag(S) Vh with S descending ([batch..., k], k = min(m, n)); U is
// m x k (m x m when `full`), Vh k x n (n x n when `full`). Built only when
// `vectors`.
struct SvdResult {
  hlo::Value u, s, vh;
};
SvdResult jacobi_svd(hlo::Builder& b, hlo::Value a, bool full, bool vectors);

}  // namespace torch_tpu::ops

// Eigenvalues and eigenvectors of general (non-symmetric) square matrices
// on the device: the complex Schur form A = Z T Z^H by shifted QR
// iterations, then T's eigenvectors by back substitution. What
// torch.linalg.eig / eigvals compute with LAPACK's geev on CPU.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// For a batch of complex n x n matrices `a` ([batch..., n, n]): eigenvalues
// ([batch..., n], T's diagonal, in the order the iterations isolated them
// from the bottom up), eigenvectors (columns of [batch..., n, n], each of
// unit norm with its largest component real and positive; built only when
// `vectors`), and info (s32, [batch...]): 0, or as LAPACK's geev, the count
// of eigenvalues not yet isolated when the iterations stopped at their cap.
struct EigResult {
  hlo::Value eigenvalues, eigenvectors, info;
};
EigResult schur_eig(hlo::Builder& b, hlo::Value a, bool vectors);

}  // namespace torch_tpu::ops

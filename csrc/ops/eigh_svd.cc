// linalg.eigh/eigvalsh and linalg.svd/svdvals for real matrices (and what
// PyTorch builds on them: pinv, matrix_rank, cond, the nuclear and spectral
// norms, lowrank PCA), by Jacobi rotations on the device
// (ops/jacobi_lowering.h). Values match CPU's LAPACK to rounding;
// eigenvectors and singular vectors are unique only up to sign (per
// column), and their signs can differ from LAPACK's, as they differ between
// CPU and CUDA.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "ops/jacobi_lowering.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

void check_real(const at::Tensor& A, const char* f) {
  TORCH_CHECK_NOT_IMPLEMENTED(!A.is_complex(), f,
                              ": complex matrices are not implemented on the tpu device yet");
}

std::vector<int64_t> with_dims(at::IntArrayRef sizes, size_t drop,
                               std::initializer_list<int64_t> add) {
  std::vector<int64_t> out(sizes.begin(), sizes.end() - static_cast<std::ptrdiff_t>(drop));
  out.insert(out.end(), add);
  return out;
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> linalg_eigh_out(const at::Tensor& A, c10::string_view uplo,
                                                     bool compute_v, at::Tensor& eigenvalues,
                                                     at::Tensor& eigenvectors) {
  const char* f = "linalg.eigh";
  check_square(A, f);
  check_floating_or_complex(A, f);
  TORCH_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_lapack_dtype(A, "linalg_eigh_cpu");
  check_real(A, f);
  const int64_t n = A.size(-1);
  at::native::resize_output(eigenvalues, with_dims(A.sizes(), 1, {}));
  if (compute_v) {
    resize_column_major(eigenvectors, A.sizes());
  } else {
    at::native::resize_output(eigenvectors, {0});
  }
  if (A.numel() == 0) return {eigenvalues, eigenvectors};
  const bool lower = uplo == "L" || uplo == "l";
  TensorProgram program("linalg.eigh",
                        std::string("eigh:") + (lower ? "L" : "U") + (compute_v ? ":v" : ""));
  program.input(A);
  program.output(eigenvalues);
  if (compute_v) program.output(eigenvectors);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    EighResult r = jacobi_eigh(b, in[0], lower);
    return compute_v ? std::vector<hlo::Value>{r.eigenvalues, r.eigenvectors}
                     : std::vector<hlo::Value>{r.eigenvalues};
  });
  (void)n;
  return {eigenvalues, eigenvectors};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_svd_out(
    const at::Tensor& A, bool full_matrices, bool compute_uv,
    std::optional<c10::string_view> driver, at::Tensor& U, at::Tensor& S, at::Tensor& Vh) {
  const char* f = "linalg.svd";
  check_is_matrix(A, f);
  check_floating_or_complex(A, f);
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
              "cuSOLVER backend.");
  check_lapack_dtype(A, "linalg_svd_cpu");
  check_real(A, f);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool full = compute_uv && full_matrices;
  at::native::resize_output(S, with_dims(A.sizes(), 2, {k}));
  if (compute_uv) {
    resize_column_major(U, with_dims(A.sizes(), 2, {m, full ? m : k}));
    resize_column_major(Vh, with_dims(A.sizes(), 2, {full ? n : k, n}));
  } else {
    at::native::resize_output(U, {0});
    at::native::resize_output(Vh, {0});
  }
  if (A.numel() == 0) {
    // No singular value; the vectors are an identity's columns.
    if (compute_uv && U.numel() > 0)
      U.copy_(at::eye(U.size(-2), U.size(-1), A.options()).expand(U.sizes()));
    if (compute_uv && Vh.numel() > 0)
      Vh.copy_(at::eye(Vh.size(-2), Vh.size(-1), A.options()).expand(Vh.sizes()));
    return {U, S, Vh};
  }
  TensorProgram program("linalg.svd",
                        std::string("svd") + (full ? ":full" : "") + (compute_uv ? ":uv" : ""));
  program.input(A);
  if (compute_uv) program.output(U);
  program.output(S);
  if (compute_uv) program.output(Vh);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    SvdResult r = jacobi_svd(b, in[0], full, compute_uv);
    return compute_uv ? std::vector<hlo::Value>{r.u, r.s, r.vh} : std::vector<hlo::Value>{r.s};
  });
  return {U, S, Vh};
}

}  // namespace torch_tpu::ops

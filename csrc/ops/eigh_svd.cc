// linalg.eigh/eigvalsh and linalg.svd/svdvals for real and complex matrices
// (and what PyTorch builds on them: pinv, matrix_rank, cond, the nuclear and
// spectral norms, lowrank PCA), and linalg.lstsq through the SVD, by Jacobi
// rotations on the device (ops/jacobi_lowering.h). Values match CPU's LAPACK
// to rounding; eigenvectors and singular vectors are unique only up to sign
// (a unit phase for complex) per column, and theirs can differ from
// LAPACK's, as they differ between CPU and CUDA.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>
#include <limits>
#include <string>

#include "ops/jacobi_lowering.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

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
  // (no floating-point check of its own: CPU's dtype dispatch, below, is what
  // refuses an integer A, with NotImplementedError)
  TORCH_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_lapack_dtype(A, "linalg_eigh_cpu");
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

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_lstsq_out(
    const at::Tensor& A, const at::Tensor& B, std::optional<double> rcond,
    std::optional<c10::string_view> driver, at::Tensor& solution, at::Tensor& residuals,
    at::Tensor& rank, at::Tensor& singular_values) {
  const char* f = "torch.linalg.lstsq";
  TORCH_CHECK(A.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(B.dim() >= 1, f, ": other must have at least 1 dimension.");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(), f,
              ": Expected input and other to have the same dtype, but got input's dtype ",
              A.scalar_type(), " and other's dtype ", B.scalar_type());
  const bool vector_case = B.dim() == A.dim() - 1;
  const at::Tensor rhs = vector_case ? B.unsqueeze(-1) : B;
  TORCH_CHECK(A.size(-2) == rhs.size(-2), f,
              vector_case ? ": input.size(-2) should match other.size(-1)"
                          : ": input.size(-2) should match other.size(-2)");
  const std::string name = driver.has_value() ? std::string(*driver) : "gelsy";
  TORCH_CHECK(name == "gels" || name == "gelsy" || name == "gelsd" || name == "gelss", f,
              ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  const auto dtype = A.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kComplexFloat ||
                  dtype == at::kComplexDouble,
              f, ": This function doesn't handle types other than float and double");
  const int64_t m = A.size(-2), n = A.size(-1);
  const double eps = A.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                    : std::numeric_limits<float>::epsilon();
  const double cutoff = rcond.has_value() ? *rcond : eps * static_cast<double>(std::max(m, n));
  // The minimum-norm solution every driver gives (gels assumes full rank:
  // no singular value is cut), through the SVD.
  auto [U, S, Vh] = at::linalg_svd(A, /*full_matrices=*/false);
  at::Tensor keep = name == "gels" ? at::ones_like(S, S.options().dtype(at::kBool))
                                   : S > cutoff * std::get<0>(S.max(-1, /*keepdim=*/true));
  at::Tensor inverse = at::where(keep, S.reciprocal(), at::zeros_like(S));
  at::Tensor x = at::matmul(Vh.mH(), inverse.unsqueeze(-1) * at::matmul(U.mH(), rhs));
  write_result(solution, vector_case ? x.squeeze(-1) : x);
  const bool with_rank = name != "gels";
  at::Tensor r = keep.sum(-1);
  write_result(rank, with_rank ? r : at::empty({0}, r.options()));
  const bool with_values = name == "gelsd" || name == "gelss";
  write_result(singular_values, with_values ? S : at::empty({0}, S.options()));
  // Residuals as LAPACK's drivers leave them: for a tall A (m > n), not
  // gelsy, and only when every matrix has full rank (a host read, as CPU).
  bool with_residuals = m > n && name != "gelsy";
  if (with_residuals && name != "gels") with_residuals = (r == n).all().item<bool>();
  if (with_residuals) {
    at::Tensor res = (at::matmul(A, x) - rhs).abs().pow(2).sum(-2);
    write_result(residuals, vector_case ? res.squeeze(-1) : res);
  } else {
    write_result(residuals, at::empty({0}, A.options()));
  }
  return {solution, residuals, rank, singular_values};
}

}  // namespace torch_tpu::ops

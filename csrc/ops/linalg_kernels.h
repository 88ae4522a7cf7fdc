// Linear algebra on tpu: the Cholesky family (ops/cholesky.cc), triangular
// solves (ops/triangular_solve.cc), the LU family (ops/lu.cc), QR
// (ops/qr.cc) and the symmetric eigendecomposition and SVD
// (ops/eigh_svd.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

std::tuple<at::Tensor&, at::Tensor&> linalg_cholesky_ex_out(const at::Tensor& self, bool upper,
                                                            bool check_errors, at::Tensor& L,
                                                            at::Tensor& info);
at::Tensor cholesky(const at::Tensor& self, bool upper);
at::Tensor& cholesky_out(const at::Tensor& self, bool upper, at::Tensor& out);
at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper);
at::Tensor cholesky_inverse(const at::Tensor& self, bool upper);
at::Tensor& cholesky_inverse_out(const at::Tensor& self, bool upper, at::Tensor& out);

at::Tensor linalg_solve_triangular(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                   bool unitriangular);
at::Tensor& linalg_solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper,
                                        bool left, bool unitriangular, at::Tensor& out);
std::tuple<at::Tensor&, at::Tensor&> triangular_solve_out(const at::Tensor& self,
                                                          const at::Tensor& A, bool upper,
                                                          bool transpose, bool unitriangular,
                                                          at::Tensor& X, at::Tensor& M);

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_factor_ex_out(
    const at::Tensor& A, bool pivot, bool check_errors, at::Tensor& LU, at::Tensor& pivots,
    at::Tensor& info);
at::Tensor linalg_lu_solve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                           bool left, bool adjoint);
at::Tensor& linalg_lu_solve_out(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                                bool left, bool adjoint, at::Tensor& out);
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_solve_ex_out(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors, at::Tensor& result,
    at::Tensor& LU, at::Tensor& pivots, at::Tensor& info);
std::tuple<at::Tensor&, at::Tensor&> linalg_inv_ex_out(const at::Tensor& A, bool check_errors,
                                                       at::Tensor& inverse, at::Tensor& info);
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_det_out(const at::Tensor& A,
                                                                 at::Tensor& result, at::Tensor& LU,
                                                                 at::Tensor& pivots);
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_slogdet_out(
    const at::Tensor& A, at::Tensor& sign, at::Tensor& logabsdet, at::Tensor& LU,
    at::Tensor& pivots);

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_unpack_out(const at::Tensor& LU,
                                                                const at::Tensor& pivots,
                                                                bool unpack_data,
                                                                bool unpack_pivots, at::Tensor& P,
                                                                at::Tensor& L, at::Tensor& U);
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_out(const at::Tensor& A, bool pivot,
                                                                at::Tensor& P, at::Tensor& L,
                                                                at::Tensor& U);

std::tuple<at::Tensor&, at::Tensor&> geqrf_out(const at::Tensor& self, at::Tensor& a,
                                               at::Tensor& tau);
std::tuple<at::Tensor, at::Tensor> geqrf(const at::Tensor& self);
at::Tensor& linalg_householder_product_out(const at::Tensor& input, const at::Tensor& tau,
                                           at::Tensor& out);
at::Tensor linalg_householder_product(const at::Tensor& input, const at::Tensor& tau);
at::Tensor& ormqr_out(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                      bool left, bool transpose, at::Tensor& out);
at::Tensor ormqr(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                 bool transpose);
std::tuple<at::Tensor&, at::Tensor&> linalg_qr_out(const at::Tensor& A, c10::string_view mode,
                                                   at::Tensor& Q, at::Tensor& R);

std::tuple<at::Tensor&, at::Tensor&> linalg_eigh_out(const at::Tensor& A, c10::string_view uplo,
                                                     bool compute_v, at::Tensor& eigenvalues,
                                                     at::Tensor& eigenvectors);
std::tuple<at::Tensor&, at::Tensor&> linalg_eig_out(const at::Tensor& A, at::Tensor& eigenvalues,
                                                    at::Tensor& eigenvectors);
std::tuple<at::Tensor, at::Tensor> linalg_eig(const at::Tensor& A);
at::Tensor& linalg_eigvals_out(const at::Tensor& A, at::Tensor& out);
at::Tensor linalg_eigvals(const at::Tensor& A);
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_svd_out(
    const at::Tensor& A, bool full_matrices, bool compute_uv,
    std::optional<c10::string_view> driver, at::Tensor& U, at::Tensor& S, at::Tensor& Vh);

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_lstsq_out(
    const at::Tensor& A, const at::Tensor& B, std::optional<double> rcond,
    std::optional<c10::string_view> driver, at::Tensor& solution, at::Tensor& residuals,
    at::Tensor& rank, at::Tensor& singular_values);

at::Tensor linalg_matrix_exp(const at::Tensor& self);

}  // namespace torch_tpu::ops

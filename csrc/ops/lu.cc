// LU with partial pivoting and what is built on it: linalg.lu_factor(_ex),
// linalg.lu and lu_unpack, linalg.lu_solve, linalg.solve, linalg.inv, linalg.det and slogdet
// (torch.inverse, torch.det, logdet; Wishart's log_prob). The
// factorization is LAPACK's getrf, pivots and info included, computed
// column by column on the device (ops/linalg_lowering.h); solves are two
// StableHLO triangular solves. det and slogdet factorize A^T for a
// contiguous real A, as CPU does (their backward formulas read the saved
// factors so); linalg.solve factorizes A itself, as CPU's in this torch.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/linalg_lowering.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

std::vector<int64_t> leading(at::IntArrayRef sizes, size_t drop) {
  return std::vector<int64_t>(sizes.begin(), sizes.end() - static_cast<std::ptrdiff_t>(drop));
}

// Factorizes A into LU (A's shape), pivots and info.
void factorize(const at::Tensor& A, const at::Tensor& LU, const at::Tensor& pivots,
               const at::Tensor& info) {
  if (A.numel() == 0) {
    if (info.numel() > 0) info.zero_();
    if (pivots.numel() > 0) pivots.copy_(at::arange(1, pivots.size(-1) + 1, pivots.options()));
    return;
  }
  TensorProgram program("linalg.lu_factor", "lu_factor");
  program.input(A);
  program.output(LU);
  program.output(pivots);
  program.output(info);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    LuResult r = lu_factor(b, in[0]);
    return std::vector<Value>{r.lu, r.pivots, r.info};
  });
}

// out = op(A)^-1 B for A given by (LU, pivots) (broadcast to B's batch).
void solve_factored(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                    bool adjoint, const at::Tensor& out) {
  if (out.numel() == 0) return;
  TensorProgram program("linalg.lu_solve", adjoint ? "lu_solve:H" : "lu_solve");
  program.input(LU);
  program.input(pivots);
  program.input(B);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{lu_solve(b, in[0], in[1], in[2], adjoint)};
  });
}

// (LU, pivots) expanded to B's batch dims (B: [..., n, k]).
std::pair<at::Tensor, at::Tensor> broadcast_factors(const at::Tensor& LU, const at::Tensor& pivots,
                                                    at::IntArrayRef batch) {
  std::vector<int64_t> lu_shape(batch.begin(), batch.end()), piv_shape = lu_shape;
  lu_shape.insert(lu_shape.end(), {LU.size(-2), LU.size(-1)});
  piv_shape.push_back(pivots.size(-1));
  return {LU.expand(lu_shape), pivots.expand(piv_shape)};
}

// CPU's det and slogdet factorize A^T (the same determinant) when A is
// contiguous and real, and their backward formulas read the saved factors
// assuming it.
at::Tensor transposed_if_contiguous_real(const at::Tensor& A) {
  return A.is_contiguous() && !A.is_complex() ? A.mT() : A;
}

// The determinant of the row interchanges that `pivots` records: -1 for an
// odd number of swaps, else 1, in `dtype`.
at::Tensor permutation_sign(const at::Tensor& pivots, at::ScalarType dtype) {
  const at::Tensor swapped = pivots != at::arange(1, pivots.size(-1) + 1, pivots.options());
  return at::where(swapped.sum(-1).remainder(2) == 1, -1, 1).to(dtype);
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_factor_ex_out(
    const at::Tensor& A, bool pivot, bool check_errors, at::Tensor& LU, at::Tensor& pivots,
    at::Tensor& info) {
  const char* f = "torch.lu_factor";
  check_is_matrix(A, f);
  check_lapack_dtype(A, "lu_cpu");
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  check_out_dtype(f, LU, A.scalar_type());
  check_out_dtype(f, pivots, at::kInt);
  check_out_dtype(f, info, at::kInt);
  resize_column_major(LU, A.sizes());
  std::vector<int64_t> piv_shape = leading(A.sizes(), 2);
  piv_shape.push_back(std::min(A.size(-2), A.size(-1)));
  at::native::resize_output(pivots, piv_shape);
  at::native::resize_output(info, leading(A.sizes(), 2));
  factorize(A, LU, pivots, info);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
  return {LU, pivots, info};
}

at::Tensor& linalg_lu_solve_out(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                                bool left, bool adjoint, at::Tensor& out) {
  const char* f = "linalg.lu_solve";
  check_floating_or_complex(LU, "torch.linalg.lu_solve");
  TORCH_CHECK(LU.scalar_type() == B.scalar_type(), f,
              ": Expected LU and B to have the same dtype, but found LU of type ", LU.scalar_type(),
              " and B of type ", B.scalar_type(), " instead");
  TORCH_CHECK(pivots.scalar_type() == at::kInt, f,
              ": pivots should be a Tensor of scalar type torch.int32");
  check_square(LU, "torch.linalg.lu_solve");
  check_is_matrix(B, f, "B");
  TORCH_CHECK(left ? LU.size(-2) == B.size(-2) : LU.size(-1) == B.size(-1), f,
              ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
              " (", LU.size(-2), "x", LU.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  TORCH_CHECK(LU.size(-1) == pivots.size(-1), f,
              ": Number of pivots per batch should be same as the dimension of the matrix");
  TORCH_CHECK(LU.sizes().slice(0, LU.dim() - 1).equals(pivots.sizes()), f,
              ": Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
              "shape ",
              pivots.sizes(), " instead");
  check_lapack_dtype(LU, "linalg.lu_solve_cpu");
  check_out_dtype(f, out, B.scalar_type());
  std::vector<int64_t> batch =
      at::infer_size(LU.sizes().slice(0, LU.dim() - 2), B.sizes().slice(0, B.dim() - 2));
  std::vector<int64_t> shape = batch;
  shape.insert(shape.end(), {B.size(-2), B.size(-1)});
  if (left) {
    resize_column_major(out, shape);
  } else {
    at::native::resize_output(out, shape);
  }
  auto [lu, piv] = broadcast_factors(LU, pivots, batch);
  // X op(A) = B is op(A)^H X^H = B^H.
  const at::Tensor rhs = left ? B.expand(shape) : B.expand(shape).mH();
  const at::Tensor dst = left ? out : out.mH();
  solve_factored(lu, piv, rhs, left ? adjoint : !adjoint, dst);
  return out;
}

at::Tensor linalg_lu_solve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                           bool left, bool adjoint) {
  at::Tensor out = device_empty({0}, B.options());
  return linalg_lu_solve_out(LU, pivots, B, left, adjoint, out);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_solve_ex_out(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors, at::Tensor& result,
    at::Tensor& LU, at::Tensor& pivots, at::Tensor& info) {
  check_floating_or_complex(A, "linalg.solve");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              A.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  check_square(A, "linalg.solve");
  // NumPy's vector right-hand side: B of A's shape without its last dim.
  const bool vector_case =
      B.dim() == 1 || (A.dim() - 1 == B.dim() && B.sizes().equals(A.sizes().slice(0, A.dim() - 1)));
  TORCH_CHECK(left || !vector_case,
              "linalg.solve: Vector broadcasting of the left hand side is not supported for "
              "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)");
  linalg_lu_factor_ex_out(A, true, false, LU, pivots, info);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const at::Tensor rhs = vector_case ? B.unsqueeze(-1) : B;
  at::Tensor solved = ops::linalg_lu_solve(LU, pivots, rhs, left, false);
  write_result(result, vector_case ? solved.squeeze(-1) : solved);
  return {result, LU, pivots, info};
}

std::tuple<at::Tensor&, at::Tensor&> linalg_inv_ex_out(const at::Tensor& A, bool check_errors,
                                                       at::Tensor& inverse, at::Tensor& info) {
  check_square(A, "linalg.inv");
  check_floating_or_complex(A, "linalg.inv");
  check_lapack_dtype(A, "lu_cpu");
  at::Tensor LU = device_empty({0}, A.options());
  at::Tensor pivots = device_empty({0}, A.options().dtype(at::kInt));
  at::Tensor factor_info = device_empty({0}, A.options().dtype(at::kInt));
  linalg_lu_factor_ex_out(A, true, false, LU, pivots, factor_info);
  at::native::resize_output(info, factor_info.sizes());
  info.copy_(factor_info);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
  at::Tensor eye = at::eye(A.size(-1), A.options()).expand(A.sizes());
  write_result(inverse, ops::linalg_lu_solve(LU, pivots, eye, true, false));
  return {inverse, info};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_det_out(const at::Tensor& A,
                                                                 at::Tensor& result, at::Tensor& LU,
                                                                 at::Tensor& pivots) {
  check_square(A, "linalg.det");
  check_floating_or_complex(A, "linalg.det");
  at::Tensor info = device_empty({0}, A.options().dtype(at::kInt));
  linalg_lu_factor_ex_out(transposed_if_contiguous_real(A), true, false, LU, pivots, info);
  // det = sign(P) * prod(diag(U)); a zero pivot makes it 0 (as LAPACK's U).
  write_result(result, LU.diagonal(0, -2, -1).prod(-1) * permutation_sign(pivots, A.scalar_type()));
  return {result, LU, pivots};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_slogdet_out(
    const at::Tensor& A, at::Tensor& sign, at::Tensor& logabsdet, at::Tensor& LU,
    at::Tensor& pivots) {
  check_square(A, "linalg.slogdet");
  check_floating_or_complex(A, "linalg.slogdet");
  at::Tensor info = device_empty({0}, A.options().dtype(at::kInt));
  linalg_lu_factor_ex_out(transposed_if_contiguous_real(A), true, false, LU, pivots, info);
  const at::Tensor diag = LU.diagonal(0, -2, -1);
  // sgn: x / |x| (complex), the sign (real); 0 for a singular matrix.
  write_result(sign, diag.sgn().prod(-1) * permutation_sign(pivots, A.scalar_type()));
  write_result(logabsdet, diag.abs().log().sum(-1));
  return {sign, logabsdet, LU, pivots};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_unpack_out(const at::Tensor& LU,
                                                                const at::Tensor& pivots,
                                                                bool unpack_data,
                                                                bool unpack_pivots, at::Tensor& P,
                                                                at::Tensor& L, at::Tensor& U) {
  TORCH_CHECK(LU.dim() >= 2,
              "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU.sizes(),
              " instead");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  const std::vector<int64_t> batch = leading(LU.sizes(), 2);
  if (unpack_pivots) {
    TORCH_CHECK(pivots.scalar_type() == at::kInt,
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor");
    std::vector<int64_t> p_shape = batch;
    p_shape.insert(p_shape.end(), {m, m});
    at::native::resize_output(P, p_shape);
    if (P.numel() > 0) {
      const ElementType t = element_type_for(P.scalar_type(), "lu_unpack");
      TensorProgram program("lu_unpack", "lu_unpack:P");
      program.input(pivots);
      program.output(P);
      program.run([&](Builder& b, const std::vector<Value>& in) {
        return std::vector<Value>{permutation_matrix(b, in[0], m, t)};
      });
    }
  } else {
    at::native::resize_output(P, {0});
  }
  if (unpack_data) {
    // L: m x k, unit lower; U: k x n, upper.
    const at::Tensor l = LU.narrow(-1, 0, k).tril(-1) + at::eye(m, k, LU.options());
    write_result(L, l);
    write_result(U, LU.narrow(-2, 0, k).triu());
  } else {
    at::native::resize_output(L, {0});
    at::native::resize_output(U, {0});
  }
  return {P, L, U};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_out(const at::Tensor& A, bool pivot,
                                                                at::Tensor& P, at::Tensor& L,
                                                                at::Tensor& U) {
  check_is_matrix(A, "linalg.lu");
  at::Tensor LU = device_empty({0}, A.options());
  at::Tensor pivots = device_empty({0}, A.options().dtype(at::kInt));
  at::Tensor info = device_empty({0}, A.options().dtype(at::kInt));
  linalg_lu_factor_ex_out(A, pivot, false, LU, pivots, info);
  return lu_unpack_out(LU, pivots, true, true, P, L, U);
}

}  // namespace torch_tpu::ops

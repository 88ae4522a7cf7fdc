// Triangular solves: linalg.solve_triangular and the older
// torch.triangular_solve (MultivariateNormal's log_prob, Gaussian process
// posteriors, cholesky_solve's users). One stablehlo.triangular_solve over
// the broadcast batch; the result is laid out column-major as CPU's.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>

#include "core/dtype_map.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/linalg_lowering.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Value;

// Batch dims of A and B broadcast against each other: (A, B) expanded.
std::pair<at::Tensor, at::Tensor> broadcast_batches(const at::Tensor& A, const at::Tensor& B) {
  const auto a_batch = A.sizes().slice(0, A.dim() - 2);
  const auto b_batch = B.sizes().slice(0, B.dim() - 2);
  std::vector<int64_t> batch = at::infer_size(a_batch, b_batch);
  std::vector<int64_t> a_shape = batch, b_shape = batch;
  a_shape.insert(a_shape.end(), {A.size(-2), A.size(-1)});
  b_shape.insert(b_shape.end(), {B.size(-2), B.size(-1)});
  return {A.expand(a_shape), B.expand(b_shape)};
}

// out = op(A)^-1 B (left) or B op(A)^-1, in out's dtype (A's).
void solve(const at::Tensor& A, const at::Tensor& B, bool upper, bool left, bool unitriangular,
           bool adjoint_a, const at::Tensor& out) {
  if (out.numel() == 0) return;
  const hlo::ElementType t = element_type_for(out.scalar_type(), "linalg.solve_triangular");
  std::string key = std::string("solve_triangular:") + (upper ? "u" : "l") + (left ? "L" : "R") +
                    (unitriangular ? "1" : "") + (adjoint_a ? "H" : "");
  TensorProgram program("linalg.solve_triangular", key);
  program.input(A);
  program.input(B);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value a = b.convert(in[0], t), rhs = b.convert(in[1], t);
    return std::vector<Value>{triangular_solve(b, a, rhs, left, !upper, unitriangular, adjoint_a)};
  });
}

}  // namespace

at::Tensor& linalg_solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper,
                                        bool left, bool unitriangular, at::Tensor& out) {
  const char* f = "linalg.solve_triangular";
  check_square(A, f);
  check_is_matrix(B, f, "B");
  TORCH_CHECK(left ? A.size(-2) == B.size(-2) : A.size(-1) == B.size(-1), f,
              ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
              " (", A.size(-2), "x", A.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  check_lapack_dtype(A, "triangular_solve_cpu");
  check_out_dtype(f, out, A.scalar_type());
  auto [a, b] = broadcast_batches(A, B);
  resize_column_major(out, b.sizes());
  solve(a, b, upper, left, unitriangular, false, out);
  return out;
}

at::Tensor linalg_solve_triangular(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                   bool unitriangular) {
  at::Tensor out = at::empty({0}, A.options());
  return linalg_solve_triangular_out(A, B, upper, left, unitriangular, out);
}

std::tuple<at::Tensor&, at::Tensor&> triangular_solve_out(const at::Tensor& self,
                                                          const at::Tensor& A, bool upper,
                                                          bool transpose, bool unitriangular,
                                                          at::Tensor& X, at::Tensor& M) {
  TORCH_CHECK(self.dim() >= 2,
              "torch.triangular_solve: Expected b to have at least 2 dimensions, "
              "but it has ",
              self.dim(), " dimensions instead");
  TORCH_CHECK(A.dim() >= 2,
              "torch.triangular_solve: Expected A to have at least 2 dimensions, "
              "but it has ",
              A.dim(), " dimensions instead");
  TORCH_CHECK(self.scalar_type() == A.scalar_type(),
              "Expected b and A to have the same dtype, but found b of type ", self.scalar_type(),
              " and A of type ", A.scalar_type(), " instead.");
  TORCH_CHECK(A.size(-1) == A.size(-2), "A must be batches of square matrices, but they are ",
              A.size(-2), " by ", A.size(-1), " matrices");
  TORCH_CHECK(A.size(-1) == self.size(-2),
              "Incompatible matrix sizes for triangular_solve: each A ", "matrix is ", A.size(-1),
              " by ", A.size(-1), " but each b matrix is ", self.size(-2), " by ", self.size(-1));
  check_lapack_dtype(A, "triangular_solve_cpu");
  check_out_dtype("triangular_solve", X, A.scalar_type());
  check_out_dtype("triangular_solve", M, A.scalar_type());
  auto [a, b] = broadcast_batches(A, self);
  resize_column_major(X, b.sizes());
  resize_column_major(M, a.sizes());
  // The old API's transpose is a plain transpose, also for complex A.
  if (transpose && A.is_complex()) {
    solve(a.conj(), b, upper, true, unitriangular, true, X);
  } else {
    solve(a, b, upper, true, unitriangular, transpose, X);
  }
  M.copy_(a);
  return {X, M};
}

}  // namespace torch_tpu::ops

// The Cholesky factorization and what is built on it: linalg.cholesky(_ex),
// torch.cholesky, cholesky_solve and cholesky_inverse (MultivariateNormal,
// Gaussian processes, Wishart). The factor is StableHLO's cholesky (XLA's
// blocked algorithm), read from one triangle as LAPACK reads it; a matrix
// that is not positive definite gets LAPACK's info from a short loop on the
// device (ops/linalg_lowering.h), so no host read is needed unless the
// caller asks for the error (check_errors, linalg.cholesky), which reads
// info as CPU and CUDA do.
#include <ATen/ATen.h>
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
using hlo::Value;

std::vector<int64_t> batch_shape(const at::Tensor& A) {
  return std::vector<int64_t>(A.sizes().begin(), A.sizes().end() - 2);
}

// A = L L^H (or U^H U) into `factor` (A's shape) and `info` (the batch).
void factorize(const at::Tensor& A, bool upper, const at::Tensor& factor, const at::Tensor& info) {
  if (A.numel() == 0) {
    if (info.numel() > 0) info.zero_();
    return;
  }
  TensorProgram program("linalg_cholesky_ex", upper ? "cholesky:upper" : "cholesky:lower");
  program.input(A);
  program.output(factor);
  program.output(info);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // The upper factor of A is the adjoint of the lower factor of A^H
    // (LAPACK then reads A's upper triangle).
    auto [lower, order] = cholesky(b, upper ? adjoint(b, in[0]) : in[0]);
    return std::vector<Value>{upper ? adjoint(b, lower) : lower, order};
  });
}

// X with A X = B for A = L L^H (U^H U when upper), given the factor.
Value solve_with_factor(Builder& b, Value factor, Value rhs, bool upper) {
  Value y = triangular_solve(b, factor, rhs, true, !upper, false, /*adjoint_a=*/upper);
  return triangular_solve(b, factor, y, true, !upper, false, /*adjoint_a=*/!upper);
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> linalg_cholesky_ex_out(const at::Tensor& self, bool upper,
                                                            bool check_errors, at::Tensor& L,
                                                            at::Tensor& info) {
  const char* f = "linalg.cholesky";
  check_square(self, f);
  check_floating_or_complex(self, f);
  check_lapack_dtype(self, "cholesky_cpu");
  check_out_dtype(f, L, self.scalar_type());
  check_out_dtype(f, info, at::kInt);
  resize_column_major(L, self.sizes());
  at::native::resize_output(info, batch_shape(self));
  factorize(self, upper, L, info);
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", self.dim() == 2);
  return {L, info};
}

at::Tensor cholesky(const at::Tensor& self, bool upper) {
  TORCH_WARN_ONCE(
      "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
      "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
      "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
      "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
      "all valid (symmetric positive definite) inputs.");
  check_square(self, "cholesky");
  check_lapack_dtype(self, "cholesky_cpu");
  at::Tensor factor = device_empty({0}, self.options());
  resize_column_major(factor, self.sizes());
  at::Tensor info = device_empty(batch_shape(self), self.options().dtype(at::kInt));
  factorize(self, upper, factor, info);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return factor;
}

at::Tensor& cholesky_out(const at::Tensor& self, bool upper, at::Tensor& out) {
  write_result(out, ops::cholesky(self, upper));
  return out;
}

at::Tensor cholesky_solve_helper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  // cholesky_solve broadcast and checked both (same dtype, square A).
  check_lapack_dtype(self, "cholesky_solve_cpu");
  at::Tensor out = device_empty({0}, self.options());
  resize_column_major(out, self.sizes());
  if (out.numel() == 0) return out;
  TensorProgram program("cholesky_solve", upper ? "cholesky_solve:upper" : "cholesky_solve:lower");
  program.input(A);
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{solve_with_factor(b, in[0], in[1], upper)};
  });
  return out;
}

at::Tensor& cholesky_inverse_out(const at::Tensor& self, bool upper, at::Tensor& out) {
  check_square(self, "cholesky_inverse");
  check_lapack_dtype(self, "cholesky_inverse_out_cpu");
  check_out_dtype("cholesky_inverse", out, self.scalar_type());
  resize_column_major(out, self.sizes());
  if (out.numel() == 0) return out;
  const hlo::ElementType t = element_type_for(self.scalar_type(), "cholesky_inverse");
  TensorProgram program("cholesky_inverse",
                        upper ? "cholesky_inverse:upper" : "cholesky_inverse:lower");
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const auto& dims = in[0].type.dims;
    const size_t r = dims.size();
    Value eye =
        b.convert(b.compare(hlo::Compare::kEQ, b.iota({hlo::ElementType::kS64, dims}, r - 2),
                            b.iota({hlo::ElementType::kS64, dims}, r - 1)),
                  t);
    return std::vector<Value>{solve_with_factor(b, in[0], eye, upper)};
  });
  return out;
}

at::Tensor cholesky_inverse(const at::Tensor& self, bool upper) {
  at::Tensor out = device_empty({0}, self.options());
  return cholesky_inverse_out(self, upper, out);
}

}  // namespace torch_tpu::ops

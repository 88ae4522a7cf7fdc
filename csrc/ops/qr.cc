// linalg.qr (and torch.qr, nn.init.orthogonal_): LAPACK's Householder QR
// computed on the device (ops/linalg_lowering.h), so Q and R carry CPU's
// signs; modes 'reduced', 'complete' and 'r'. And LAPACK's pieces of it
// that PyTorch exposes: geqrf, linalg.householder_product (orgqr: the
// orthogonal parametrization's Householder map) and ormqr.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "core/dtype_map.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/linalg_lowering.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {

using hlo::Value;

std::tuple<at::Tensor&, at::Tensor&> linalg_qr_out(const at::Tensor& A, c10::string_view mode,
                                                   at::Tensor& Q, at::Tensor& R) {
  const char* f = "linalg.qr";
  check_is_matrix(A, f);
  check_floating_or_complex(A, f);
  const bool complete = mode == "complete", r_only = mode == "r";
  TORCH_CHECK(complete || r_only || mode == "reduced", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_lapack_dtype(A, "geqrf_cpu");
  check_out_dtype(f, Q, A.scalar_type());
  check_out_dtype(f, R, A.scalar_type());
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t q_cols = r_only ? 0 : (complete ? m : k), r_rows = complete ? m : k;
  std::vector<int64_t> q_shape(A.sizes().begin(), A.sizes().end() - 2), r_shape = q_shape;
  q_shape.insert(q_shape.end(), {m, q_cols});
  r_shape.insert(r_shape.end(), {r_rows, n});
  if (r_only) {
    at::native::resize_output(Q, {0});
  } else {
    resize_column_major(Q, q_shape);
  }
  resize_column_major(R, r_shape);
  if (A.numel() == 0) {
    // No reflector: Q is the identity's columns, R zeros.
    if (!r_only && Q.numel() > 0) Q.copy_(at::eye(m, q_cols, A.options()).expand(q_shape));
    if (R.numel() > 0) R.zero_();
    return {Q, R};
  }
  TensorProgram program("linalg.qr", "qr:" + std::to_string(q_cols) + ":" + std::to_string(r_rows));
  program.input(A);
  if (!r_only) program.output(Q);
  program.output(R);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    QrResult qr = householder_qr(b, in[0], q_cols, r_rows);
    return r_only ? std::vector<hlo::Value>{qr.r} : std::vector<hlo::Value>{qr.q, qr.r};
  });
  return {Q, R};
}

std::tuple<at::Tensor&, at::Tensor&> geqrf_out(const at::Tensor& self, at::Tensor& a,
                                               at::Tensor& tau) {
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  check_lapack_dtype(self, "geqrf_cpu");
  check_out_dtype("geqrf", a, self.scalar_type());
  check_out_dtype("geqrf", tau, self.scalar_type());
  const int64_t k = std::min(self.size(-2), self.size(-1));
  std::vector<int64_t> tau_shape(self.sizes().begin(), self.sizes().end() - 2);
  tau_shape.push_back(k);
  resize_column_major(a, self.sizes());
  at::native::resize_output(tau, tau_shape);
  if (self.numel() == 0) return {a, tau};
  TensorProgram program("geqrf", "geqrf");
  program.input(self);
  program.output(a);
  program.output(tau);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    HouseholderFactors f = geqrf(b, in[0]);
    return std::vector<hlo::Value>{f.packed, f.taus};
  });
  return {a, tau};
}

std::tuple<at::Tensor, at::Tensor> geqrf(const at::Tensor& self) {
  at::Tensor a = at::empty({0}, self.options()), tau = at::empty({0}, self.options());
  geqrf_out(self, a, tau);
  return {a, tau};
}

at::Tensor& linalg_householder_product_out(const at::Tensor& input, const at::Tensor& tau,
                                           at::Tensor& out) {
  const char* f = "torch.linalg.householder_product";
  TORCH_CHECK(input.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1), f,
              ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1), f,
              ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              ": Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), f, ": tau dtype ", tau.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  check_lapack_dtype(input, "orgqr_cpu");
  check_out_dtype(f, out, input.scalar_type());
  resize_column_major(out, input.sizes());
  if (out.numel() == 0) return out;
  const hlo::ElementType t = element_type_for(input.scalar_type(), "householder_product");
  TensorProgram program("linalg.householder_product", "householder_product");
  program.input(input);
  program.input(tau);
  program.output(out);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    const auto& dims = in[0].type.dims;
    const size_t r = dims.size();
    Value eye =
        b.convert(b.compare(hlo::Compare::kEQ,
                            b.iota({hlo::ElementType::kS64, dims}, static_cast<int64_t>(r - 2)),
                            b.iota({hlo::ElementType::kS64, dims}, static_cast<int64_t>(r - 1))),
                  t);
    return std::vector<hlo::Value>{apply_householder(b, in[0], in[1], eye, false)};
  });
  return out;
}

at::Tensor linalg_householder_product(const at::Tensor& input, const at::Tensor& tau) {
  at::Tensor out = at::empty({0}, input.options());
  return linalg_householder_product_out(input, tau, out);
}

at::Tensor& ormqr_out(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                      bool left, bool transpose, at::Tensor& out) {
  const char* f = "torch.ormqr";
  TORCH_CHECK(input.dim() >= 2, f, ": input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, f, ": other must have at least 2 dimensions.");
  const int64_t side = left ? -2 : -1;
  TORCH_CHECK(other.size(side) >= tau.size(-1), f, ": other.shape[", side,
              "] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(other.size(side) == input.size(-2), f, ": other.shape[", side,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= input.size(-1), f,
              ": tau.shape[-1] must be less than or equal to input.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              ": Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(input.dim() == other.dim(), f,
              ": Expected other to have the same number of dimensions as input, but got "
              "other.ndim equal to ",
              other.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(
      tau.scalar_type() == input.scalar_type() && other.scalar_type() == input.scalar_type(), f,
      ": Expected input, tau and other to have the same dtype");
  check_lapack_dtype(input, "ormqr_cpu");
  check_out_dtype(f, out, input.scalar_type());
  resize_column_major(out, other.sizes());
  if (out.numel() == 0) return out;
  // C op(Q) is (op(Q)^H C^H)^H: only left products are lowered.
  const at::Tensor c = left ? other : other.mH();
  const at::Tensor dst = left ? out : out.mH();
  const bool adjoint = left ? transpose : !transpose;
  TensorProgram program("ormqr", adjoint ? "ormqr:H" : "ormqr");
  program.input(input);
  program.input(tau);
  program.input(c);
  program.output(dst);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return std::vector<hlo::Value>{apply_householder(b, in[0], in[1], in[2], adjoint)};
  });
  return out;
}

at::Tensor ormqr(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                 bool transpose) {
  at::Tensor out = at::empty({0}, input.options());
  return ormqr_out(input, tau, other, left, transpose, out);
}

}  // namespace torch_tpu::ops

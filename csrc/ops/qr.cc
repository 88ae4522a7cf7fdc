// linalg.qr (and torch.qr, nn.init.orthogonal_): LAPACK's Householder QR
// computed on the device (ops/linalg_lowering.h), so Q and R carry CPU's
// signs; modes 'reduced', 'complete' and 'r'.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/linalg_lowering.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {

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

}  // namespace torch_tpu::ops

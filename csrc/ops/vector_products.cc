// Products written with other tpu kernels: vdot (linalg.vecdot's), the cross
// product (linalg.cross, torch.cross) and addbmm, each with the CPU's
// argument checks and messages.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>

#include "ops/out_checks.h"
#include "ops/vector_product_kernels.h"

namespace torch_tpu::ops {
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  // dot of the conjugate view (a bit on the view; tpu programs read it), so
  // dot's checks, in CPU's words, are vdot's too.
  return at::dot(self.conj(), other);
}

at::Tensor& vdot_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  write_result(out, ops::vdot(self, other));
  return out;
}

at::Tensor linalg_cross(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  TORCH_CHECK(self.dim() == other.dim(),
              "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "expected scalar type ",
              self.scalar_type(), " but found ", other.scalar_type());
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const at::Tensor a = self.expand(shape), b = other.expand(shape);
  // c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1} (indices mod 3): rolls along dim.
  return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d);
}

at::Tensor& linalg_cross_out(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                             at::Tensor& out) {
  write_result(out, ops::linalg_cross(self, other, dim));
  return out;
}

at::Tensor addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0),
              "batch1 and batch2 must have same number of batches, got ", batch1.size(0), " and ",
              batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (",
              batch1.size(1), "x", batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2),
              ")");
  // Integer inputs take beta and alpha as integers (CPU truncates them).
  const bool integral = at::isIntegralType(batch1.scalar_type(), /*includeBool=*/true);
  const at::Scalar b = integral ? at::Scalar(beta.to<int64_t>()) : beta;
  const at::Scalar a = integral ? at::Scalar(alpha.to<int64_t>()) : alpha;
  // Half and bfloat16 accumulate in float and round once at the end.
  const at::ScalarType dtype = batch1.scalar_type();
  const bool widen = dtype == at::kHalf || dtype == at::kBFloat16;
  auto wide = [&](const at::Tensor& t) { return widen ? t.to(at::kFloat) : t; };
  const at::Tensor base = wide(self).expand({batch1.size(1), batch2.size(2)});
  at::Tensor result = at::bmm(wide(batch1), wide(batch2)).sum(0, false, wide(batch1).scalar_type());
  if (!a.equal(1)) result = result * a;
  // beta == 0 ignores self, NaN included, as addmm does.
  if (b.equal(0)) {
    result = result + at::zeros_like(base);
  } else {
    result = b.equal(1) ? base + result : base * b + result;
  }
  return widen ? result.to(dtype) : result;
}

at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  write_result(out, ops::addbmm(self, batch1, batch2, beta, alpha));
  return out;
}

at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                    const at::Scalar& beta, const at::Scalar& alpha) {
  const at::Tensor value = ops::addbmm(self, batch1, batch2, beta, alpha);
  TORCH_CHECK(value.sizes() == self.sizes(), "addbmm_: self must have the sizes ", value.sizes(),
              ", got ", self.sizes());
  self.copy_(value);
  return self;
}

}  // namespace torch_tpu::ops

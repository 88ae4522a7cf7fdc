// torch.cdist, and F.pdist (the condensed distances of one set's rows,
// i < j, from the same kernels): the differences of every pair of rows,
// [..., P, R, M], reduced with the p-norm. Computing the differences (not CPU's |a|^2 + |b|^2 - 2ab
// shortcut for large Euclidean problems) keeps small distances exact. The
// backward follows CPU's formulas case by case, including its zeros where a
// distance or a difference is zero (so no NaN comes out of 0/0).
#include <ATen/ATen.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

#include <cmath>

#include "ops/distance_kernels.h"

namespace torch_tpu::ops {
namespace {

void check_operands(const at::Tensor& x1, const at::Tensor& x2, double p) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
}

// x1[..., P, 1, M] - x2[..., 1, R, M]
at::Tensor pairwise_differences(const at::Tensor& x1, const at::Tensor& x2) {
  return x1.unsqueeze(-2) - x2.unsqueeze(-3);
}

}  // namespace

at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> /*compute_mode*/) {
  check_operands(x1, x2, p);
  const at::Tensor diff = pairwise_differences(x1, x2).abs();
  if (p == 0) return diff.ne(0).to(x1.scalar_type()).sum(-1);
  if (std::isinf(p)) return diff.amax(-1);
  if (p == 1) return diff.sum(-1);
  if (p == 2) return diff.pow(2).sum(-1).sqrt();
  return diff.pow(p).sum(-1).pow(1.0 / p);
}

at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                          double p, const at::Tensor& cdist) {
  if (p == 0 || x1.numel() == 0 || x2.numel() == 0) return at::zeros_like(x1);
  const at::Tensor diff = pairwise_differences(x1, x2);  // [..., P, R, M]
  const at::Tensor g = grad.unsqueeze(-1);
  const at::Tensor dist = cdist.unsqueeze(-1);
  const at::Tensor zero = at::zeros({}, diff.options());
  at::Tensor per_pair;
  if (p == 1) {
    per_pair = diff.sign() * g;
  } else if (std::isinf(p)) {
    per_pair = diff.sign() * diff.abs().eq(dist).to(diff.scalar_type()) * g;
  } else if (p == 2) {
    per_pair = at::where(dist.eq(0), zero, diff * g / dist);
  } else if (p < 2) {
    const at::Tensor skip = dist.eq(0).logical_or(
        diff.eq(0).logical_and(at::scalar_tensor(p < 1, diff.options().dtype(at::kBool))));
    per_pair = at::where(skip, zero, diff.sign() * diff.abs().pow(p - 1) * g / dist.pow(p - 1));
  } else {
    per_pair = at::where(dist.eq(0), zero, diff * diff.abs().pow(p - 2) * g / dist.pow(p - 1));
  }
  return per_pair.sum(-2);
}

namespace {

// The (i, j) pairs i < j of n rows in pdist's order, as flat indices i * n + j.
at::Tensor upper_pairs(int64_t n, const at::TensorOptions& options) {
  const at::Tensor ij = at::triu_indices(n, n, 1, options.dtype(at::kLong));
  return ij[0] * n + ij[1];
}

void check_pdist(const at::Tensor& self, double p) {
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
}

}  // namespace

at::Tensor pdist_forward(const at::Tensor& self, double p) {
  check_pdist(self, p);
  const int64_t n = self.size(0);
  if (n < 2) return at::empty({0}, self.options());
  const at::Tensor full = cdist_forward(self, self, p, std::nullopt);
  return full.reshape({-1}).index_select(0, upper_pairs(n, self.options()));
}

at::Tensor pdist_backward(const at::Tensor& grad, const at::Tensor& self, double p,
                          const at::Tensor& pdist) {
  check_pdist(self, p);
  const int64_t n = self.size(0);
  if (n < 2 || self.size(1) == 0) return at::zeros_like(self);
  // sum_{i<j} g_ij d(x_i, x_j) is half the sum over all (i, j) with g
  // mirrored: its gradient is cdist's for the first operand.
  const at::Tensor pairs = upper_pairs(n, self.options());
  auto mirrored = [&](const at::Tensor& condensed) {
    at::Tensor m = at::zeros({n * n}, condensed.options()).index_copy(0, pairs, condensed);
    m = m.reshape({n, n});
    return m + m.t();
  };
  return cdist_backward(mirrored(grad), self, self, p, mirrored(pdist));
}

}  // namespace torch_tpu::ops

// histc: counts of the elements in `bins` equal bins over [min, max]. Each
// element's bin is computed as CPU's kernel computes it,
// (x - min) * bins / (max - min) truncated (x == max goes to the last bin),
// and the counts are one index_add; elements outside the range (and NaN)
// count nowhere.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/aminmax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cmath>

#include "ops/device_empty.h"
#include "ops/histogram_kernels.h"

namespace torch_tpu::ops {

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                      const at::Scalar& max, at::Tensor& out) {
  // Integers are counted as CUDA counts them (CPU refuses them, but
  // Transformers' mixture-of-experts routing passes integer expert ids to
  // histc on every device but the CPU, as CUDA requires).
  const at::ScalarType type = self.scalar_type();
  const bool integral = at::isIntegralType(type, /*includeBool=*/false);
  // (CPU's bool refusal comes from the linspace of its bin edges)
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(type) || integral, "\"",
                              type == at::kBool ? "linspace_cpu" : "histogram_cpu",
                              "\" not implemented for '", c10::toString(type), "'");
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ",
              self.scalar_type(), " and hist ", out.scalar_type());
  double lo = min.toDouble(), hi = max.toDouble();
  TORCH_CHECK(lo <= hi || std::isnan(lo) || std::isnan(hi),
              "torch.histc: max must be larger than min");
  if (lo == hi && self.numel() > 0) {
    // The data's own range, read back as CPU reads it (one small host read).
    const auto [low, high] = at::aminmax(self);
    const at::Tensor range = at::stack({low, high}).cpu().to(at::kDouble);
    lo = range[0].item<double>();
    hi = range[1].item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi,
              "] is not finite");
  at::native::resize_output(out, {bins});
  // counted in float for half and bfloat16 (as CPU counts: 300 stays 300),
  // in int64 for integers
  at::Tensor counts =
      at::zeros({bins}, self.options().dtype(integral ? at::kLong : at::toOpMathType(type)));
  if (self.numel() > 0) {
    at::Tensor x = self.reshape({-1});
    at::Tensor bin;
    if (integral) {
      // in integer arithmetic, as CUDA's kernel computes an integer's bin
      const auto first = static_cast<int64_t>(lo), last = static_cast<int64_t>(hi);
      x = x.to(at::kLong);
      bin = ((x - first) * bins).div(std::max<int64_t>(last - first, 1), "floor");
      lo = static_cast<double>(first);
      hi = static_cast<double>(last);
    } else {
      bin = ((x - lo) * static_cast<double>(bins) / (hi - lo)).to(at::kLong);
    }
    const at::Tensor inside = x.ge(lo).logical_and(x.le(hi));
    bin = bin.clamp(0, bins - 1);  // x == max falls in the last bin
    counts.index_add_(0, bin, inside.to(counts.scalar_type()));
  }
  return out.copy_(counts);
}

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                 const at::Scalar& max) {
  at::Tensor out = device_empty({0}, self.options());
  return histc_out(self, bins, min, max, out);
}

}  // namespace torch_tpu::ops

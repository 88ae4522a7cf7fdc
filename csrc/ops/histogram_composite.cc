// torch.histogram with a bin count or explicit edges, written with other tpu
// kernels. An element's bin is the number of edges at or below it, minus
// one (CPU's upper_bound; an element on the last edge counts in the last
// bin, and one outside the edges or NaN in none), found with searchsorted
// and summed with index_add. With a bin count and no range, the range is
// the data's: its min and max are read back to the host once, since CPU
// raises for a range that is not finite and builds the edges from it.
#include <ATen/ATen.h>

#include <cmath>

#include "ops/histogram_kernels.h"

namespace torch_tpu::ops {
namespace {

void check_histogram_input(const at::Tensor& self, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"histogramdd\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->sizes() == self.sizes(),
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape ",
                self.reshape({-1, 1}).sizes(), " and weight with shape ", weight->sizes());
  }
}

at::Tensor count_into_bins(const at::Tensor& self, const at::Tensor& edges,
                           const std::optional<at::Tensor>& weight, bool density) {
  const int64_t bins = edges.numel() - 1;
  const at::Tensor x = self.reshape({-1});
  at::Tensor hist = at::zeros({bins}, self.options());
  if (x.numel() > 0 && bins > 0) {
    const at::Tensor inside = x.ge(edges.select(0, 0)).logical_and(x.le(edges.select(0, bins)));
    const at::Tensor bin =
        at::searchsorted(edges, x, /*out_int32=*/false, /*right=*/true).sub(1).clamp(0, bins - 1);
    at::Tensor amount = weight.has_value() && weight->defined()
                            ? weight->reshape({-1}).to(self.scalar_type())
                            : at::ones_like(x);
    amount = at::where(inside, amount, at::zeros_like(amount));
    hist = hist.index_add(0, bin, amount);
  }
  if (density) {
    const at::Tensor widths = edges.narrow(0, 1, bins) - edges.narrow(0, 0, bins);
    hist = hist / (hist.sum() * widths);
  }
  return hist;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> histogram_bin_ct(const at::Tensor& self, int64_t bins,
                                                    std::optional<at::ArrayRef<double>> range,
                                                    const std::optional<at::Tensor>& weight,
                                                    bool density) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  check_histogram_input(self, weight);
  double lo = 0, hi = 1;  // an empty input without a range: [0, 1], as CPU
  if (range.has_value()) {
    TORCH_CHECK(range->size() == 2, "torch.histogram(): range should have 2 elements, got ",
                range->size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (self.numel() > 0) {
    const at::Tensor bounds = at::stack({self.min(), self.max()}).to(at::kDouble).cpu();
    lo = bounds[0].item<double>();
    hi = bounds[1].item<double>();
  }
  TORCH_CHECK(lo <= hi || std::isnan(lo) || std::isnan(hi),
              "torch.histogramdd: min should not exceed max, but got min ", lo, " max ", hi,
              " for dimension 0");
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd: dimension 0's range [",
              lo, ", ", hi, "] is not finite");
  if (lo == hi) {  // one value: a bin of width 1 around it
    lo -= 0.5;
    hi += 0.5;
  }
  const at::Tensor edges = at::linspace(lo, hi, bins + 1, self.options());
  return {count_into_bins(self, edges, weight, density), edges};
}

std::tuple<at::Tensor, at::Tensor> histogram_bins_tensor(const at::Tensor& self,
                                                         const at::Tensor& bins,
                                                         const std::optional<at::Tensor>& weight,
                                                         bool density) {
  TORCH_CHECK(bins.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
              bins.dim(), " dimensions in the bins tensor for dimension 0");
  TORCH_CHECK(bins.numel() > 1, "torch.histogram(): bins must be > 0, but got ", bins.numel() - 1,
              " for dimension 0");
  check_histogram_input(self, weight);
  TORCH_CHECK(self.scalar_type() == bins.scalar_type(),
              "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
              "got input with dtype ",
              self.scalar_type(), " and bins for dimension 0 with dtype ", bins.scalar_type());
  const at::Tensor edges = bins.to(self.device()).contiguous();
  return {count_into_bins(self, edges, weight, density), edges.clone()};
}

}  // namespace torch_tpu::ops

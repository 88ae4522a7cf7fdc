// torch.histogram and torch.histogramdd with bin counts or explicit edges,
// written with other tpu kernels (one D-dimensional core: a 1-d histogram
// is the D = 1 case, as on CPU, whose messages say "histogramdd" for both).
#include <ATen/ATen.h>

#include <cmath>

#include "ops/histogram_kernels.h"

namespace torch_tpu::ops {
namespace {

// CPU's checks of the points ([..., D]) and weights (the points' shape
// without D, the same dtype).
void check_histogram_input(const at::Tensor& points, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(points.scalar_type()),
                              "\"histogramdd\" not implemented for '",
                              c10::toString(points.scalar_type()), "'");
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->sizes() == points.sizes().slice(0, points.dim() - 1),
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape ",
                points.sizes(), " and weight with shape ", weight->sizes());
    TORCH_CHECK(weight->scalar_type() == points.scalar_type(),
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype, but got input(",
                points.dtype(), "), and weight(", weight->dtype(), ")");
  }
}

// histogramdd's own checks of a [..., D] input and D bin counts.
void check_dd_input(const at::Tensor& self, size_t dims) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  TORCH_CHECK(static_cast<size_t>(self.size(-1)) == dims,
              "histogramdd: The size of bins must be equal to the innermost dimension of the "
              "input.");
}

// Each dim's edges from its bin count: `range`'s (min, max) pairs, or the
// points' own min and max (read back to the host once for every dim:
// CPU refuses a range that is not finite and builds the edges from it);
// [0, 1] for no points, a width of 1 around a single value.
std::vector<at::Tensor> edges_from_counts(const at::Tensor& points, at::IntArrayRef bins,
                                          std::optional<at::ArrayRef<double>> range) {
  const auto dims = static_cast<int64_t>(bins.size());
  for (int64_t d = 0; d < dims; ++d) {
    TORCH_CHECK(bins[d] > 0, "torch.histogram(): bins must be > 0, but got ", bins[d],
                " for dimension ", d);
  }
  std::vector<double> lo(dims, 0.0), hi(dims, 1.0);
  if (range.has_value()) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * dims, "torch.histogramdd: for a ", dims,
                "-dimensional histogram range should have ", 2 * dims, " elements, but got ",
                range->size());
    for (int64_t d = 0; d < dims; ++d) {
      lo[d] = (*range)[2 * d];
      hi[d] = (*range)[2 * d + 1];
    }
  } else if (points.numel() > 0) {
    const at::Tensor bounds =
        at::stack({points.amin(0), points.amax(0)}).to(at::kDouble).cpu().contiguous();
    const double* b = bounds.data_ptr<double>();
    for (int64_t d = 0; d < dims; ++d) {
      lo[d] = b[d];
      hi[d] = b[dims + d];
    }
  }
  std::vector<at::Tensor> edges;
  for (int64_t d = 0; d < dims; ++d) {
    TORCH_CHECK(lo[d] <= hi[d] || std::isnan(lo[d]) || std::isnan(hi[d]),
                "torch.histogramdd: min should not exceed max, but got min ", lo[d], " max ", hi[d],
                " for dimension ", d);
    TORCH_CHECK(std::isfinite(lo[d]) && std::isfinite(hi[d]), "torch.histogramdd: dimension ", d,
                "'s range [", lo[d], ", ", hi[d], "] is not finite");
    if (lo[d] == hi[d]) {  // one value: a bin of width 1 around it
      lo[d] -= 0.5;
      hi[d] += 0.5;
    }
    edges.push_back(at::linspace(lo[d], hi[d], bins[d] + 1, points.options()));
  }
  return edges;
}

// The histogram of points [N, D] over each dim's edges: a point's bin along
// a dim is the number of edges at or below it, minus one (CPU's
// upper_bound; a point on the last edge counts in the last bin, one outside
// the edges or NaN in none), found with searchsorted; the bins' flat
// indices are summed with index_add.
at::Tensor count_into_bins(const at::Tensor& points, const std::vector<at::Tensor>& edges,
                           const std::optional<at::Tensor>& weight, bool density) {
  std::vector<int64_t> shape;
  for (const auto& e : edges) shape.push_back(e.numel() - 1);
  const int64_t cells = c10::multiply_integers(shape);
  at::Tensor hist = at::zeros({cells}, points.options());
  if (points.size(0) > 0 && cells > 0) {
    at::Tensor inside = at::ones({points.size(0)}, points.options().dtype(at::kBool));
    at::Tensor flat = at::zeros({points.size(0)}, points.options().dtype(at::kLong));
    for (size_t d = 0; d < edges.size(); ++d) {
      const at::Tensor x = points.select(1, static_cast<int64_t>(d)).contiguous();
      const int64_t bins = shape[d];
      inside = inside.logical_and(x.ge(edges[d].select(0, 0)))
                   .logical_and(x.le(edges[d].select(0, bins)));
      const at::Tensor bin = at::searchsorted(edges[d], x, /*out_int32=*/false, /*right=*/true)
                                 .sub(1)
                                 .clamp(0, bins - 1);
      flat = flat.mul(bins).add(bin);
    }
    at::Tensor amount = weight.has_value() && weight->defined()
                            ? weight->reshape({-1})
                            : at::ones_like(inside, points.options());
    amount = at::where(inside, amount, at::zeros_like(amount));
    hist = hist.index_add(0, flat, amount);
  }
  hist = hist.reshape(shape);
  if (density) {
    // CPU's order: by the total, then by each dim's bin widths
    hist = hist / hist.sum();
    for (size_t d = 0; d < edges.size(); ++d) {
      const int64_t bins = shape[d];
      std::vector<int64_t> along(shape.size(), 1);
      along[d] = bins;
      hist = hist / (edges[d].narrow(0, 1, bins) - edges[d].narrow(0, 0, bins)).reshape(along);
    }
  }
  return hist;
}

// Checks histogramdd's explicit edges ([D] one-dimensional tensors of the
// points' dtype), on the points' device.
std::vector<at::Tensor> checked_edges(const at::Tensor& points, at::TensorList bins) {
  std::vector<at::Tensor> edges;
  for (size_t d = 0; d < bins.size(); ++d) {
    const at::Tensor& b = bins[d];
    TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
                b.dim(), " dimensions in the bins tensor for dimension ", d);
    TORCH_CHECK(b.numel() > 1, "torch.histogram(): bins must be > 0, but got ", b.numel() - 1,
                " for dimension ", d);
    TORCH_CHECK(points.scalar_type() == b.scalar_type(),
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                "got input with dtype ",
                points.dtype(), " and bins for dimension ", d, " with dtype ", b.dtype());
    edges.push_back(b.to(points.device()).contiguous());
  }
  return edges;
}

// The [N, D] points of a [..., D] input, and its weights flattened.
at::Tensor flat_points(const at::Tensor& self) { return self.reshape({-1, self.size(-1)}); }
std::optional<at::Tensor> flat_weight(const std::optional<at::Tensor>& weight) {
  if (!weight.has_value() || !weight->defined()) return std::nullopt;
  return weight->reshape({-1});
}

// A 1-d histogram's checks: the weights take the input's shape (CPU's
// message shows the input as the [N, 1] points it histograms).
void check_histogram_1d(const at::Tensor& self, const at::Tensor& points,
                        const std::optional<at::Tensor>& weight) {
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->sizes() == self.sizes(),
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape ",
                points.sizes(), " and weight with shape ", weight->sizes());
  }
  check_histogram_input(points, flat_weight(weight));
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> histogram_bin_ct(const at::Tensor& self, int64_t bins,
                                                    std::optional<at::ArrayRef<double>> range,
                                                    const std::optional<at::Tensor>& weight,
                                                    bool density) {
  const at::Tensor points = self.reshape({-1, 1});
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  check_histogram_1d(self, points, weight);
  TORCH_CHECK(!range.has_value() || range->size() == 2,
              "torch.histogram(): range should have 2 elements, got ", range->size());
  const std::vector<int64_t> counts{bins};
  std::vector<at::Tensor> edges = edges_from_counts(points, counts, range);
  return {count_into_bins(points, edges, flat_weight(weight), density), edges[0]};
}

std::tuple<at::Tensor, at::Tensor> histogram_bins_tensor(const at::Tensor& self,
                                                         const at::Tensor& bins,
                                                         const std::optional<at::Tensor>& weight,
                                                         bool density) {
  const at::Tensor points = self.reshape({-1, 1});
  TORCH_CHECK(bins.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
              bins.dim(), " dimensions in the bins tensor for dimension 0");
  TORCH_CHECK(bins.numel() > 1, "torch.histogram(): bins must be > 0, but got ", bins.numel() - 1,
              " for dimension 0");
  check_histogram_1d(self, points, weight);
  std::vector<at::Tensor> edges = checked_edges(points, {bins});
  return {count_into_bins(points, edges, flat_weight(weight), density), edges[0].clone()};
}

std::vector<at::Tensor> histogramdd_bin_edges(const at::Tensor& self, at::IntArrayRef bins,
                                              std::optional<at::ArrayRef<double>> range,
                                              const std::optional<at::Tensor>& weight,
                                              bool density) {
  check_dd_input(self, bins.size());
  check_histogram_input(self, weight);
  return edges_from_counts(flat_points(self), bins, range);
}

at::Tensor histogramdd_from_bin_cts(const at::Tensor& self, at::IntArrayRef bins,
                                    std::optional<at::ArrayRef<double>> range,
                                    const std::optional<at::Tensor>& weight, bool density) {
  check_dd_input(self, bins.size());
  check_histogram_input(self, weight);
  const at::Tensor points = flat_points(self);
  return count_into_bins(points, edges_from_counts(points, bins, range), flat_weight(weight),
                         density);
}

at::Tensor histogramdd_from_bin_tensors(const at::Tensor& self, at::TensorList bins,
                                        const std::optional<at::Tensor>& weight, bool density) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == self.size(-1), "torch.histogramdd: expected ",
              self.size(-1), " sequences of bin edges for a ", self.size(-1),
              "-dimensional histogram but got ", bins.size());
  check_histogram_input(self, weight);
  const at::Tensor points = flat_points(self);
  return count_into_bins(points, checked_edges(points, bins), flat_weight(weight), density);
}

}  // namespace torch_tpu::ops

// nn.EmbeddingBag, composed of the indexing kernels: the rows are gathered
// with index_select, each position's bag is found by searchsorted on the
// offsets, and the bags are reduced with index_add (sum, mean) or
// scatter_reduce (max). Everything stays on the device: a bad index or
// offset is reported through the device findings (ops/index_bounds.h) as the
// RuntimeError CPU raises, at the next host read.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/TensorUtils.h>
#include <ATen/ops/_embedding_bag_sparse_backward.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include "exec/async_errors.h"
#include "ops/device_empty.h"
#include "ops/embedding_bag_kernels.h"
#include "ops/index_kernels.h"

namespace torch_tpu::ops {
namespace {

constexpr const char* kOp = "embedding_bag";
constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

void check_arguments(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                     int64_t mode, bool sparse,
                     const std::optional<at::Tensor>& per_sample_weights) {
  at::checkScalarTypes(kOp, at::TensorArg(indices, "indices", 1), {at::kLong, at::kInt});
  at::checkScalarTypes(kOp, at::TensorArg(offsets, "offsets", 1), {at::kLong, at::kInt});
  at::checkScalarTypes(kOp, at::TensorArg(weight, "weight", 1),
                       {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(weight.dim() == 2,
              "embedding_bag: weight has to be a 2D Tensor, but got Tensor of "
              "dimension ",
              weight.dim());
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D Tensor, but got Tensor of dimension ",
              indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  TORCH_CHECK(mode == kSum || mode == kMean || mode == kMax, "embedding_bag: unknown mode ", mode);
  (void)sparse;  // (it only chooses the gradient's layout)
  if (per_sample_weights && per_sample_weights->defined()) {
    TORCH_CHECK(mode == kSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(per_sample_weights->scalar_type() == weight.scalar_type(),
                "expected per_sample_weights to have the dtype of weight (", weight.scalar_type(),
                "), got ", per_sample_weights->scalar_type());
    TORCH_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->numel() == indices.numel(),
                "embedding_bag: expected per_sample_weights to be 1D tensor and have the same "
                "size as indices, but got ",
                per_sample_weights->sizes());
  }
}

// CPU checks offsets[0] == 0 and offsets[-1] <= len(indices) on the host;
// here both are index checks on the device (no sync): offsets[0] against a
// one-element range, every offset against [0, len(indices)].
void check_offsets(const at::Tensor& offsets, int64_t n) {
  const at::Scalar zero(0);
  at::Tensor first = at::zeros({1}, offsets.options().dtype(at::kLong));
  scatter_as(kOp, IndexErrorClass::kRuntimeError, first, 0, offsets.slice(0, 0, 1).to(at::kLong),
             nullptr, &zero, first);
  at::Tensor all = at::zeros({n + 1}, offsets.options().dtype(at::kLong));
  scatter_as(kOp, IndexErrorClass::kRuntimeError, all, 0, offsets.to(at::kLong), nullptr, &zero,
             all);
}

// The bag of each position: the number of bag starts at or before it, less one.
at::Tensor offset_to_bag(const at::Tensor& offsets, int64_t bags, int64_t n) {
  at::Tensor starts = offsets.slice(0, 0, bags).to(at::kLong);
  at::Tensor positions = at::arange(n, offsets.options().dtype(at::kLong));
  return at::searchsorted(starts, positions, /*out_int32=*/false, /*right=*/true) - 1;
}

// 1 where a position counts (not padding_idx), else 0, in `dtype`.
at::Tensor counted(const at::Tensor& indices, int64_t padding_idx, at::ScalarType dtype) {
  if (padding_idx < 0) return at::ones({indices.numel()}, indices.options().dtype(dtype));
  return indices.ne(padding_idx).to(dtype);
}

// What each position's row is scaled by in a sum: 0 for padding_idx, else
// its per_sample_weight (or 1).
at::Tensor position_weights(const at::Tensor& indices, int64_t padding_idx,
                            const std::optional<at::Tensor>& per_sample_weights,
                            at::ScalarType dtype) {
  at::Tensor weights = counted(indices, padding_idx, dtype);
  if (per_sample_weights && per_sample_weights->defined()) {
    weights = weights * per_sample_weights->to(dtype);
  }
  return weights;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_forward(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
    bool /*scale_grad_by_freq*/, int64_t mode, bool sparse,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  check_arguments(weight, indices, offsets, mode, sparse, per_sample_weights);
  const int64_t n = indices.numel();
  const int64_t dim = weight.size(1);
  const int64_t bags = std::max<int64_t>(offsets.numel() - (include_last_offset ? 1 : 0), 0);
  const at::TensorOptions longs = weight.options().dtype(at::kLong);
  // Reduced-precision weights are summed in float, as CPU's kernel does.
  const at::ScalarType acc = at::toOpMathType(weight.scalar_type());
  if (offsets.numel() > 0) check_offsets(offsets, n);
  at::Tensor rows = device_empty({0}, weight.options());
  index_select_as(kOp, IndexErrorClass::kRuntimeError, weight, 0, indices, rows);
  at::Tensor bag = n > 0 && bags > 0 ? offset_to_bag(offsets, bags, n) : at::zeros({n}, longs);
  at::Tensor keep = counted(indices, padding_idx, acc);
  at::Tensor bag_size = at::zeros({bags}, weight.options().dtype(acc));
  if (n > 0 && bags > 0) bag_size.index_add_(0, bag, keep);

  at::Tensor out;
  at::Tensor max_indices;
  if (mode == kMax) {
    // Padding rows never win; an empty bag is 0; ties go to the first
    // position (CPU replaces its running maximum only when strictly greater).
    const double lowest = -std::numeric_limits<double>::infinity();
    at::Tensor masked = at::where(keep.unsqueeze(1).to(at::kBool), rows, lowest);
    at::Tensor bag_rows = bag.unsqueeze(1).expand({n, dim});
    out = at::full({bags, dim}, lowest, weight.options());
    at::Tensor first = at::full({bags, dim}, n, longs);
    if (n > 0 && bags > 0) {
      out.scatter_reduce_(0, bag_rows, masked, "amax", /*include_self=*/true);
      at::Tensor is_max = masked.eq(out.index_select(0, bag)) & keep.unsqueeze(1).to(at::kBool);
      at::Tensor position = at::arange(n, longs).unsqueeze(1).expand({n, dim});
      first.scatter_reduce_(0, bag_rows, at::where(is_max, position, n), "amin", true);
    }
    at::Tensor empty_bag = bag_size.eq(0).unsqueeze(1);
    out = at::where(empty_bag, at::zeros({}, weight.options()), out);
    at::Tensor picked = n > 0 ? indices.to(at::kLong)
                                    .index_select(0, first.clamp_max(n - 1).reshape({-1}))
                                    .reshape({bags, dim})
                              : at::zeros({bags, dim}, longs);
    max_indices = at::where(first.eq(n), at::zeros({}, longs), picked);
  } else {
    const at::Tensor weights = position_weights(indices, padding_idx, per_sample_weights, acc);
    at::Tensor sums = at::zeros({bags, dim}, weight.options().dtype(acc));
    if (n > 0 && bags > 0) sums.index_add_(0, bag, rows.to(acc) * weights.unsqueeze(1));
    if (mode == kMean) sums = sums / bag_size.clamp_min(1).unsqueeze(1);
    out = sums.to(weight.scalar_type());
    max_indices = bag_size.to(at::kLong);
  }
  return {out, bag, bag_size.to(at::kLong), max_indices};
}

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                        const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                        const at::Tensor& maximum_indices, c10::SymInt num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights,
                                        int64_t padding_idx) {
  const int64_t rows = num_weights.expect_int();
  const int64_t dim = grad.size(1);
  const int64_t n = indices.numel();
  const at::ScalarType acc = at::toOpMathType(grad.scalar_type());
  at::Tensor grad_weight = at::zeros({rows, dim}, grad.options().dtype(acc));
  if (n == 0 || grad.numel() == 0) return grad_weight.to(grad.scalar_type());
  if (mode == kMax) {
    // Each (bag, column) sends its gradient to the row that was its maximum.
    at::Tensor filled = bag_size.gt(0).unsqueeze(1);
    at::Tensor g = at::where(filled, grad.to(acc), 0);
    grad_weight.scatter_add_(0, maximum_indices.to(at::kLong), g);
    return grad_weight.to(grad.scalar_type());
  }
  at::Tensor weights = position_weights(indices, padding_idx, per_sample_weights, acc);
  if (mode == kMean) {
    weights = weights / bag_size.index_select(0, offset2bag).clamp_min(1).to(acc);
  }
  at::Tensor idx = indices.to(at::kLong);
  if (scale_grad_by_freq) {
    at::Tensor freq = at::zeros({rows}, grad.options().dtype(acc));
    freq.index_add_(0, idx, at::ones({n}, freq.options()));
    weights = weights / freq.index_select(0, idx);
  }
  at::Tensor g = grad.to(acc).index_select(0, offset2bag) * weights.unsqueeze(1);
  grad_weight.index_add_(0, idx, g);
  return grad_weight.to(grad.scalar_type());
}

at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices,
                                  const at::Tensor& offsets, const at::Tensor& offset2bag,
                                  const at::Tensor& bag_size, const at::Tensor& maximum_indices,
                                  c10::SymInt num_weights, bool scale_grad_by_freq, int64_t mode,
                                  bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                                  int64_t padding_idx) {
  if (sparse) {
    // PyTorch's composite: the bags' gradients spread to their indices' rows
    // (dense tpu ops), as a sparse tensor over the weight's rows.
    return at::_embedding_bag_sparse_backward_symint(grad, indices, offsets, offset2bag, bag_size,
                                                     std::move(num_weights), scale_grad_by_freq,
                                                     mode, per_sample_weights, padding_idx);
  }
  return embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                      std::move(num_weights), scale_grad_by_freq, mode,
                                      per_sample_weights, padding_idx);
}

at::Tensor embedding_bag_per_sample_weights_backward(const at::Tensor& grad,
                                                     const at::Tensor& weight,
                                                     const at::Tensor& indices,
                                                     const at::Tensor& /*offsets*/,
                                                     const at::Tensor& offset2bag, int64_t mode,
                                                     int64_t padding_idx) {
  TORCH_CHECK(mode == kSum,
              "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  const at::ScalarType acc = at::toOpMathType(grad.scalar_type());
  if (indices.numel() == 0) return at::zeros({0}, grad.options());
  at::Tensor rows = weight.to(acc).index_select(0, indices.to(at::kLong));
  at::Tensor g = grad.to(acc).index_select(0, offset2bag);
  at::Tensor r = (rows * g).sum(1) * counted(indices, padding_idx, acc);
  return r.to(grad.scalar_type());
}

}  // namespace torch_tpu::ops

// torch.segment_reduce and its backward, written with other tpu kernels:
// each position along `axis` finds its segment among the offsets (lengths
// become offsets by a cumulative sum) with searchsorted, and one
// scatter_reduce gathers the segments, started from `initial` (or the
// reduction's identity) as CPU's kernel starts them. Positions outside
// every segment (offsets need not start at 0 nor end at the data's size)
// reduce into a slot that is dropped.
#include <ATen/ATen.h>

#include <limits>
#include <string>

#include "ops/segment_reduce_kernels.h"

namespace torch_tpu::ops {
namespace {

const char* scatter_name(c10::string_view reduce) {
  if (reduce == "sum" || reduce == "mean") return "sum";
  if (reduce == "prod") return "prod";
  if (reduce == "max") return "amax";
  if (reduce == "min") return "amin";
  TORCH_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
}

// The segments along `axis` as offsets [..., S + 1] (data.shape[:axis] then
// the segment bounds), from whichever of lengths or offsets was given.
at::Tensor segment_offsets(const at::Tensor& data, const std::optional<at::Tensor>& lengths,
                           const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe) {
  const bool by_lengths = lengths.has_value() && lengths->defined();
  TORCH_CHECK(by_lengths || (offsets.has_value() && offsets->defined()),
              "segment_reduce(): Either lengths or offsets must be defined.");
  const at::Tensor& given = by_lengths ? *lengths : *offsets;
  TORCH_CHECK_NOT_IMPLEMENTED(given.scalar_type() == at::kLong || given.scalar_type() == at::kInt,
                              "\"segment_reduce\" ", by_lengths ? "lengths" : "offsets",
                              " not implemented for '", c10::toString(given.scalar_type()), "'");
  TORCH_CHECK(given.dim() - 1 == axis,
              "segment_reduce(): Expected axis to be the last dimension of ",
              by_lengths ? "lengths" : "offsets", " but got ", axis, ".");
  const at::Tensor bounds = given.to(data.device(), at::kLong);
  if (!by_lengths) return bounds;
  if (!unsafe) {
    // CPU's checks read the lengths on the host; CUDA's do too.
    TORCH_CHECK(bounds.numel() == 0 || bounds.min().item<int64_t>() >= 0,
                "lengths contains negative value!");
    TORCH_CHECK(bounds.sum(-1).eq(data.size(axis)).all().item<bool>(),
                "segment_reduce(): Expected all rows of lengths along axis to sum to "
                "data.size(lengths.dim()-1) when !unsafe.");
  }
  std::vector<int64_t> zero_shape = bounds.sizes().vec();
  zero_shape.back() = 1;
  return at::cat({at::zeros(zero_shape, bounds.options()), bounds.cumsum(-1)}, -1);
}

// For each position along `axis`: its segment (S, one past the last, for a
// position in none), shaped [..., N] like data.shape[:axis + 1].
at::Tensor segment_ids(const at::Tensor& data, const at::Tensor& offsets, int64_t axis) {
  const int64_t n = data.size(axis), segments = offsets.size(-1) - 1;
  std::vector<int64_t> shape = offsets.sizes().vec();
  shape.back() = n;
  const at::Tensor positions = at::arange(n, offsets.options()).expand(shape).contiguous();
  at::Tensor ends = offsets.narrow(-1, 1, segments).contiguous();
  at::Tensor id = at::searchsorted(ends, positions, /*out_int32=*/false, /*right=*/true);
  const at::Tensor inside = positions.ge(offsets.narrow(-1, 0, 1))
                                .logical_and(positions.lt(offsets.narrow(-1, segments, 1)));
  return at::where(inside, id, at::full_like(id, segments));
}

// ids [..., N] broadcast over data's dims after `axis`.
at::Tensor spread(const at::Tensor& ids, const at::Tensor& data) {
  at::Tensor x = ids;
  while (x.dim() < data.dim()) x = x.unsqueeze(-1);
  return x.expand(data.sizes());
}

// data's shape with `axis` of size `size`.
std::vector<int64_t> with_axis(const at::Tensor& data, int64_t axis, int64_t size) {
  std::vector<int64_t> shape = data.sizes().vec();
  shape[axis] = size;
  return shape;
}

// lengths [..., S] expanded over the output's dims after `axis`.
at::Tensor segment_counts(const at::Tensor& offsets, const at::Tensor& like) {
  const int64_t segments = offsets.size(-1) - 1;
  at::Tensor counts = offsets.narrow(-1, 1, segments) - offsets.narrow(-1, 0, segments);
  while (counts.dim() < like.dim()) counts = counts.unsqueeze(-1);
  return counts.to(like.scalar_type()).expand(like.sizes());
}

}  // namespace

at::Tensor segment_reduce(const at::Tensor& data, c10::string_view reduce,
                          const std::optional<at::Tensor>& lengths,
                          const std::optional<at::Tensor>& indices,
                          const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                          const std::optional<at::Scalar>& initial) {
  axis = c10::maybe_wrap_dim(axis, data.dim());
  TORCH_CHECK(!(indices.has_value() && indices->defined()),
              "segment_reduce(): indices based reduction is not supported yet.");
  const char* scatter = scatter_name(reduce);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(data.scalar_type()),
                              "\"segment_reduce\" not implemented for '",
                              c10::toString(data.scalar_type()), "'");
  const at::Tensor bounds = segment_offsets(data, lengths, offsets, axis, unsafe);
  const int64_t segments = bounds.size(-1) - 1;
  const at::Tensor ids = spread(segment_ids(data, bounds, axis), data);
  double start = 0;
  if (initial.has_value()) {
    start = initial->toDouble();
  } else if (reduce == "prod") {
    start = 1;
  } else if (reduce == "max") {
    start = -std::numeric_limits<double>::infinity();
  } else if (reduce == "min") {
    start = std::numeric_limits<double>::infinity();
  }
  at::Tensor out = at::full(with_axis(data, axis, segments + 1), start, data.options())
                       .scatter_reduce(axis, ids, data, scatter, /*include_self=*/true)
                       .narrow(axis, 0, segments);
  if (reduce == "mean") {
    // (initial + sum) / length; an empty segment is `initial`, or 0 / 0
    const at::Tensor counts = segment_counts(bounds, out);
    out = out / counts;
    if (initial.has_value()) out = at::where(counts.eq(0), at::full_like(out, start), out);
  }
  return out.contiguous();
}

at::Tensor segment_reduce_backward(const at::Tensor& grad, const at::Tensor& output,
                                   const at::Tensor& data, c10::string_view reduce,
                                   const std::optional<at::Tensor>& lengths,
                                   const std::optional<at::Tensor>& offsets, int64_t axis,
                                   const std::optional<at::Scalar>& initial) {
  axis = c10::maybe_wrap_dim(axis, data.dim());
  scatter_name(reduce);
  const at::Tensor bounds = segment_offsets(data, lengths, offsets, axis, /*unsafe=*/true);
  const int64_t segments = bounds.size(-1) - 1;
  const at::Tensor ids = spread(segment_ids(data, bounds, axis), data);
  const at::Tensor inside = ids.lt(segments);
  const at::Tensor at_id = ids.clamp_max(std::max<int64_t>(segments - 1, 0));
  auto per_position = [&](const at::Tensor& per_segment) {
    if (segments == 0) return at::zeros_like(data);
    return at::where(inside, per_segment.gather(axis, at_id), at::zeros_like(data));
  };
  // per-segment sums of `values` (positions outside every segment dropped)
  auto segment_sum = [&](const at::Tensor& values) {
    return at::zeros(with_axis(data, axis, segments + 1), values.options())
        .scatter_add(axis, ids, values)
        .narrow(axis, 0, segments);
  };
  const at::Tensor g = per_position(grad);
  if (reduce == "sum") return g;
  if (reduce == "mean") return g / per_position(segment_counts(bounds, grad));
  if (reduce == "max" || reduce == "min") {
    // the gradient is shared among the positions that hold the extreme
    const at::Tensor extreme = per_position(output);
    const at::Tensor hit =
        inside.logical_and(data.eq(extreme).logical_or(data.isnan().logical_and(extreme.isnan())));
    const at::Tensor share = per_position(segment_sum(hit.to(data.scalar_type())));
    return at::where(hit, g / share, at::zeros_like(data));
  }
  // prod: output / x for a nonzero x; for the one zero of a segment, the
  // product of the rest (initial included); 0 where a segment has two zeros
  const at::Tensor zero = data.eq(0);
  const at::Tensor zeros = per_position(segment_sum(zero.to(data.scalar_type())));
  const double start = initial.has_value() ? initial->toDouble() : 1.0;
  const at::Tensor others =
      per_position(at::full(with_axis(data, axis, segments + 1), start, data.options())
                       .scatter_reduce(axis, ids, at::where(zero, at::ones_like(data), data),
                                       "prod", /*include_self=*/true)
                       .narrow(axis, 0, segments));
  const at::Tensor nonzero_grad =
      g * per_position(output) / at::where(zero, at::ones_like(data), data);
  return at::where(zero, at::where(zeros.eq(1), g * others, at::zeros_like(data)), nonzero_grad);
}

}  // namespace torch_tpu::ops

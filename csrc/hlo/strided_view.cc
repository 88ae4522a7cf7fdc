#include "hlo/strided_view.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace torch_tpu::hlo {

int64_t StridedView::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool StridedView::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

int64_t view_span(const int64_t* sizes, const int64_t* strides, size_t rank) {
  int64_t last = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0) return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  return last + 1;
}

int64_t StridedView::span() const { return view_span(sizes.data(), strides.data(), sizes.size()); }

namespace {

// Element types bitcast_convert cannot take directly, and the type whose
// bytes stand for them: bool is one byte 0/1 (as PyTorch stores it), a
// complex number is its real and imaginary parts side by side.
ElementType bitcast_proxy(ElementType t) {
  switch (t) {
    case ElementType::kPred:
      return ElementType::kU8;
    case ElementType::kC64:
      return ElementType::kF32;
    case ElementType::kC128:
      return ElementType::kF64;
    default:
      return t;
  }
}

Value to_proxy(Builder& b, Value flat) {
  const ElementType t = flat.type.element;
  const int64_t n = flat.type.dims.at(0);
  if (t == ElementType::kPred) return b.convert(flat, ElementType::kU8);
  if (!is_complex(t)) return flat;
  const ElementType part = bitcast_proxy(t);
  Value re = b.reshape(b.op("stablehlo.real", {flat}, {part, {n}}), {n, 1});
  Value im = b.reshape(b.op("stablehlo.imag", {flat}, {part, {n}}), {n, 1});
  return b.reshape(b.concatenate({re, im}, 1), {2 * n});
}

Value from_proxy(Builder& b, Value flat, ElementType to) {
  if (to == ElementType::kPred) return b.convert(flat, ElementType::kPred);
  if (!is_complex(to)) return flat;
  const int64_t n = flat.type.dims.at(0) / 2;
  Value pairs = b.reshape(flat, {n, 2});
  Value re = b.reshape(b.slice(pairs, {0, 0}, {n, 1}, {1, 1}), {n});
  Value im = b.reshape(b.slice(pairs, {0, 1}, {n, 2}, {1, 1}), {n});
  return b.op("stablehlo.complex", {re, im}, {to, {n}});
}

Value bitcast_plain(Builder& b, Value flat, ElementType to);

}  // namespace

Value bitcast_flat(Builder& b, Value flat, ElementType to) {
  const ElementType from = flat.type.element;
  if (from == to) return flat;
  if (bitcast_proxy(from) != from || bitcast_proxy(to) != to) {
    Value proxy = to_proxy(b, flat);
    Value cast = bitcast_plain(b, proxy, bitcast_proxy(to));
    return from_proxy(b, cast, to);
  }
  return bitcast_plain(b, flat, to);
}

namespace {
Value bitcast_plain(Builder& b, Value flat, ElementType to) {
  const ElementType from = flat.type.element;
  if (from == to) return flat;
  const int64_t n = flat.type.dims.at(0);
  const int64_t from_size = static_cast<int64_t>(byte_size(from));
  const int64_t to_size = static_cast<int64_t>(byte_size(to));
  if (from_size == to_size) return b.bitcast_convert(flat, {to, {n}});
  if (from_size > to_size) {
    // One wide element becomes k narrow ones along a new minor dimension.
    const int64_t k = from_size / to_size;
    Value split = b.bitcast_convert(flat, {to, {n, k}});
    return b.reshape(split, {n * k});
  }
  const int64_t k = to_size / from_size;
  if (n % k != 0) {
    throw std::invalid_argument(
        "bitcast of a buffer whose size is not a multiple of the new element size");
  }
  Value grouped = b.reshape(flat, {n / k, k});
  return b.bitcast_convert(grouped, {to, {n / k}});
}
}  // namespace

namespace {

// A view expressible without gather: dims with stride 0 are broadcast, dims of
// size 1 are inserted, and the remaining dims, sorted by decreasing stride,
// form a nest where each stride is a multiple of the next and each size fits
// inside the enclosing stride. Then the elements are a strided block:
//   flat[offset : offset + n0*s0] reshaped to [n0, s0/s1, ..., s_{k-1}/s_k, s_k]
//   and sliced to [n0, n1, ..., n_k, 1].
struct BlockPlan {
  std::vector<int64_t> order;  // non-trivial dims, by decreasing stride
  std::vector<int64_t> block_dims;
  std::vector<int64_t> slice_limits;
  int64_t block_len = 0;
};

bool plan_block(const StridedView& v, BlockPlan* plan) {
  for (size_t i = 0; i < v.sizes.size(); ++i) {
    if (v.sizes[i] != 1 && v.strides[i] != 0) plan->order.push_back(i);
    if (v.strides[i] < 0) return false;
  }
  std::stable_sort(plan->order.begin(), plan->order.end(),
                   [&](int64_t a, int64_t b) { return v.strides[a] > v.strides[b]; });
  const auto& ord = plan->order;
  if (ord.empty()) {
    plan->block_dims = {1};
    plan->slice_limits = {1};
    plan->block_len = 1;
    return true;
  }
  for (size_t j = 0; j + 1 < ord.size(); ++j) {
    const int64_t s = v.strides[ord[j]], s_next = v.strides[ord[j + 1]];
    if (s % s_next != 0 || v.sizes[ord[j + 1]] > s / s_next) return false;
  }
  plan->block_dims.push_back(v.sizes[ord[0]]);
  plan->slice_limits.push_back(v.sizes[ord[0]]);
  for (size_t j = 0; j + 1 < ord.size(); ++j) {
    plan->block_dims.push_back(v.strides[ord[j]] / v.strides[ord[j + 1]]);
    plan->slice_limits.push_back(v.sizes[ord[j + 1]]);
  }
  plan->block_dims.push_back(v.strides[ord.back()]);
  plan->slice_limits.push_back(1);
  plan->block_len = v.sizes[ord[0]] * v.strides[ord[0]];
  return true;
}

// Flat element index of every view position, as an s64 tensor of view.sizes,
// from the scalar s64 `offset` (computed on the device: nothing per call is
// uploaded, and a new offset does not change the program).
Value flat_indices(Builder& b, const StridedView& v, Value offset) {
  TensorType idx_type{ElementType::kS64, v.sizes};
  Value acc = b.splat(offset, v.sizes);
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] == 1 || v.strides[d] == 0) continue;
    Value term = b.iota(idx_type, static_cast<int64_t>(d));
    if (v.strides[d] != 1) {
      term = b.binary("multiply", term,
                      b.splat(b.constant_int(ElementType::kS64, v.strides[d]), v.sizes));
    }
    acc = b.binary("add", acc, term);
  }
  return acc;
}

// The block as a box of the whole buffer reshaped to [n / s0, s0 / s1, ...,
// s_k], when n is a multiple of the outermost stride s0 and the view does
// not wrap around a row of that shape: one static slice of a reshape, which
// XLA fuses into its readers (a slice and a pad to the block's length would
// be materialized). The starts of the slice, or nothing.
std::optional<std::vector<int64_t>> box_starts(int64_t n, const StridedView& v,
                                               const BlockPlan& plan) {
  if (plan.order.empty()) return std::nullopt;
  const int64_t s0 = v.strides[plan.order[0]];
  if (n % s0 != 0) return std::nullopt;
  std::vector<int64_t> starts;
  int64_t rest = v.offset;
  for (size_t j = 0; j < plan.block_dims.size(); ++j) {
    const int64_t stride = j < plan.order.size() ? v.strides[plan.order[j]] : 1;
    const int64_t extent = j == 0 ? n / s0 : plan.block_dims[j];
    const int64_t start = rest / stride;
    rest %= stride;
    if (start + plan.slice_limits[j] > extent) return std::nullopt;
    starts.push_back(start);
  }
  return starts;
}

Value read_block(Builder& b, Value flat, const StridedView& v, const BlockPlan& plan) {
  const int64_t n = flat.type.dims[0];
  std::vector<int64_t> starts(plan.block_dims.size(), 0), ones(plan.block_dims.size(), 1);
  Value block;
  if (auto box = box_starts(n, v, plan)) {
    std::vector<int64_t> dims = plan.block_dims;
    dims[0] = n / v.strides[plan.order[0]];
    block = b.reshape(flat, dims);
    starts = *box;
  } else {
    Value region;
    if (v.offset + plan.block_len <= n) {
      region = b.slice(flat, {v.offset}, {v.offset + plan.block_len}, {1});
    } else {
      // The last row of the block runs past the buffer; those elements are
      // never selected, so any padding value will do.
      Value tail = b.slice(flat, {v.offset}, {n}, {1});
      region =
          b.pad(tail, b.constant_int(flat.type.element, 0), {0}, {v.offset + plan.block_len - n});
    }
    block = b.reshape(region, plan.block_dims);
  }
  std::vector<int64_t> limits(starts.size());
  for (size_t j = 0; j < starts.size(); ++j) limits[j] = starts[j] + plan.slice_limits[j];
  Value picked = b.slice(block, starts, limits, ones);
  // Drop the trailing unit dim; dims are now the view's non-trivial dims in
  // decreasing-stride order.
  std::vector<int64_t> sorted_dims(plan.slice_limits.begin(), plan.slice_limits.end() - 1);
  Value sorted = b.reshape(picked, sorted_dims);
  // Transpose into the view's own order, then broadcast into the full shape
  // (re-inserting size-1 and stride-0 dims).
  std::vector<int64_t> by_position(plan.order.begin(), plan.order.end());
  std::sort(by_position.begin(), by_position.end());
  std::vector<int64_t> perm;
  for (int64_t dim : by_position) {
    perm.push_back(std::find(plan.order.begin(), plan.order.end(), dim) - plan.order.begin());
  }
  Value ordered = b.transpose(sorted, perm);
  if (by_position.size() == v.sizes.size()) return ordered;
  return b.broadcast_in_dim(ordered, v.sizes, by_position);
}

}  // namespace

Value read_view(Builder& b, Value base, const StridedView& v) {
  Value flat = bitcast_flat(b, base, v.element);
  const int64_t numel = v.numel();
  if (numel == 0) return b.zeros({v.element, v.sizes});
  if (v.is_contiguous()) {
    if (v.offset == 0 && numel == flat.type.dims[0]) return b.reshape(flat, v.sizes);
    Value part = b.slice(flat, {v.offset}, {v.offset + numel}, {1});
    return b.reshape(part, v.sizes);
  }
  BlockPlan plan;
  if (plan_block(v, &plan)) return read_block(b, flat, v, plan);
  return b.gather_1d(flat, flat_indices(b, v, b.constant_int(ElementType::kS64, v.offset)));
}

Value read_view_at(Builder& b, Value base, const StridedView& v, Value offset) {
  Value flat = bitcast_flat(b, base, v.element);
  const int64_t span = v.span();
  if (span == 0) return b.zeros({v.element, v.sizes});
  // A view reaching the whole storage can only start at 0.
  StridedView at_zero = v;
  at_zero.offset = 0;
  if (span == flat.type.dims.at(0)) return read_view(b, flat, at_zero);
  // The span at the runtime offset, then the view read statically inside it.
  return read_view(b, b.dynamic_slice(flat, {offset}, {span}), at_zero);
}

ElementType written_storage_element(ElementType storage, ElementType view) {
  return storage == ElementType::kPred && view != ElementType::kPred ? view : storage;
}

Value dense_to_flat(Builder& b, Value value, const StridedView& v) {
  const int64_t numel = v.numel();
  if (v.is_contiguous()) return b.reshape(value, {numel});
  // Dims in storage order: decreasing stride, ties (size-1 dims) kept in
  // their own order, which a reshape does not care about.
  std::vector<int64_t> order(v.sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t c) { return v.strides[a] > v.strides[c]; });
  return b.reshape(b.transpose(value, order), {numel});
}

Value write_view(Builder& b, Value base, const StridedView& v, Value value) {
  const ElementType storage_type = written_storage_element(base.type.element, v.element);
  Value flat = bitcast_flat(b, base, v.element);
  const int64_t numel = v.numel();
  if (numel == 0) return base;
  Value updated;
  if (v.is_contiguous()) {
    Value flat_value = b.reshape(value, {numel});
    if (v.offset == 0 && numel == flat.type.dims[0]) {
      updated = flat_value;
    } else {
      updated = b.dynamic_update_slice(flat, flat_value, {v.offset});
    }
  } else {
    updated =
        b.scatter_1d(flat, flat_indices(b, v, b.constant_int(ElementType::kS64, v.offset)), value);
  }
  return bitcast_flat(b, updated, storage_type);
}

Value write_view_at(Builder& b, Value base, const StridedView& v, Value value, Value offset) {
  const ElementType storage_type = written_storage_element(base.type.element, v.element);
  Value flat = bitcast_flat(b, base, v.element);
  if (v.numel() == 0) return base;
  StridedView at_zero = v;
  at_zero.offset = 0;
  if (v.span() == flat.type.dims.at(0)) return write_view(b, base, at_zero, value);
  // In place when the storage's buffer is donated: an update of the view's
  // elements only, whatever the storage's size.
  Value updated = v.is_contiguous()
                      ? b.dynamic_update_slice_at(flat, b.reshape(value, {v.numel()}), {offset})
                      : b.scatter_1d(flat, flat_indices(b, v, offset), value);
  return bitcast_flat(b, updated, storage_type);
}

}  // namespace torch_tpu::hlo

// Writes into self at positions given by an index or a mask: index_copy,
// index_fill (composed from the scatter kernels of ops/index_ops.cc, so their
// out-of-range index checks apply here too) and masked_scatter (one program:
// positions from a cumulative sum of the mask, a gather from source, a
// select; no host sync).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>

#include <sstream>

#include "core/dtype_map.h"
#include "exec/eager_mode.h"
#include "hlo/scan.h"
#include "ops/device_empty.h"
#include "ops/device_findings.h"
#include "ops/expanded_writes.h"
#include "ops/index_kernels.h"
#include "ops/index_write_kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// A 0-d tensor as a 1-element vector (a view), so one dim can be indexed.
at::Tensor at_least_1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// index (0-d or 1-d, k entries) laid along `dim` of a tensor of `shape`
// (whose size along dim is k): a view with every other dim broadcast.
at::Tensor index_along(const at::Tensor& index, int64_t dim, at::IntArrayRef shape) {
  std::vector<int64_t> along(shape.size(), 1);
  along[dim] = index.numel();
  return index.reshape(along).expand(shape);
}

// index with negative entries counted from the end of a dim of `size`
// (index_fill's rule), as a new s64 tensor.
at::Tensor wrap_negative_index(const at::Tensor& index, int64_t size, const char* op) {
  at::Tensor out = device_empty(index.sizes(), index.options().dtype(at::kLong));
  if (out.numel() == 0) return out;
  TensorProgram program(op, "wrap_negative_index");
  program.input(index);
  program.scalar(size, ElementType::kS64);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value i = b.convert(in[0], ElementType::kS64);
    Value neg = b.compare(Compare::kLT, i, b.zeros(i.type));
    return std::vector<Value>{b.select(neg, b.binary("add", i, b.splat(in[1], i.type.dims)), i)};
  });
  return out;
}

// True for a view with a dim of stride 0 and size > 1 (expanded).
bool is_expanded(const at::Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  }
  return false;
}

// index_fill_ into an expanded view, which CPU allows (with a deprecation
// warning): a memory location takes the value when any element mapping to
// it is filled. The filled positions become a mask over the view, written
// once per location (ops/expanded_writes.h).
at::Tensor& index_fill_expanded(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Tensor& value) {
  TORCH_WARN_ONCE(
      "Use of index_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
      "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
      "scalar");
  at::Tensor mask = at::zeros(self.sizes(), self.options().dtype(at::kBool));
  mask.index_fill_(dim, index, true);
  DistinctWrite w = distinct_masked_write(self, mask);
  w.dst.masked_fill_(w.mask, value);
  return self;
}

}  // namespace

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out) {
  // ATen's checks (TORCH_PRECOMPUTE_META_FUNC(index_copy)), in its order.
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() < 2, "index_copy_(): Index should have dimension 1 or 0 (got ",
                    index.dim(), ")");
  const int64_t num_indices = index.numel();
  if (source.dim() == 0 && num_indices != 1) {
    TORCH_CHECK_INDEX(false, "index_copy_(): When source is scalar, index should have one ",
                      "element (got ", num_indices, ")");
  } else if (source.dim() != self.dim() && source.dim() != 0 && self.dim() != 0) {
    TORCH_CHECK_INDEX(false, "index_copy_(): When source and destination are not scalars, their ",
                      "dimensionality must match. Source dimensionality (", source.dim(),
                      "), destination dimensionality (", self.dim(), ")");
  }
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "index_copy_(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "index_copy_(): self and source expected to have the same dtype, but got (self) ",
              self.scalar_type(), " and (source) ", source.scalar_type());
  std::vector<int64_t> self_slice = self.sizes().vec(), source_slice = source.sizes().vec();
  if (!self_slice.empty()) self_slice.erase(self_slice.begin() + dim);
  if (!source_slice.empty()) source_slice.erase(source_slice.begin() + dim);
  if (self_slice != source_slice) {
    std::stringstream ss;
    ss << "index_copy_(): Source/destination tensor must have same slice shapes. "
       << "Destination slice shape: " << at::IntArrayRef(self_slice) << " at dimension " << dim
       << " and source slice shape: " << at::IntArrayRef(source_slice) << " at dimension 0.";
    TORCH_CHECK(false, ss.str());
  }
  TORCH_CHECK_INDEX(source.dim() == 0 || num_indices == source.size(dim),
                    "index_copy_(): Number of indices (", num_indices,
                    ") should be equal to source.size(dim) (", source.size(dim), ")");
  at::native::resize_output(out, self.sizes());
  if (!out.is_same(self)) {
    at::assert_no_internal_overlap(out);
    at::assert_no_overlap(out, index);
    at::assert_no_overlap(out, source);
  }
  if (out.numel() == 0) return out;
  // out = self, then out[..., index[i], ...] = source[..., i, ...]: a scatter
  // along dim with the index broadcast over source's shape.
  const at::Tensor self_1d = at_least_1d(self), source_1d = at_least_1d(source);
  at::Tensor out_1d = at_least_1d(out);
  scatter_as("index_copy_", IndexErrorClass::kIndexError, self_1d, dim,
             index_along(index, dim, source_1d.sizes()), &source_1d, nullptr, out_1d);
  return out;
}

at::Tensor& index_fill_scalar_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Scalar& value) {
  const char* op = "index_fill_";
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for ",
                    "index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0 || index.numel() == 0) return self;
  if (is_expanded(self)) {
    return index_fill_expanded(self, dim, index, at::scalar_tensor(value, self.options()));
  }
  at::assert_no_internal_overlap(self);
  at::Tensor self_1d = at_least_1d(self);
  std::vector<int64_t> shape = self_1d.sizes().vec();
  shape[dim] = index.numel();
  const at::Tensor wrapped = wrap_negative_index(index, self_1d.size(dim), op);
  scatter_as(op, IndexErrorClass::kIndexError, self_1d, dim, index_along(wrapped, dim, shape),
             nullptr, &value, self_1d);
  return self;
}

at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value) {
  const char* op = "index_fill_";
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but ",
              "got tensor with ", value.dim(), " dimension(s).");
  // A CPU value is a host number already; a tpu value stays on the device
  // (CPU's kernel reads it with item(), which here would be a sync).
  if (value.device().is_cpu()) return index_fill_scalar_(self, dim, index, value.item());
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for ",
                    "index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0 || index.numel() == 0) return self;
  if (is_expanded(self)) return index_fill_expanded(self, dim, index, value);
  at::assert_no_internal_overlap(self);
  at::Tensor self_1d = at_least_1d(self);
  std::vector<int64_t> shape = self_1d.sizes().vec();
  shape[dim] = index.numel();
  const at::Tensor wrapped = wrap_negative_index(index, self_1d.size(dim), op);
  at::Tensor fill = value.to(self.scalar_type()).expand(shape);
  scatter_as(op, IndexErrorClass::kIndexError, self_1d, dim, index_along(wrapped, dim, shape),
             &fill, nullptr, self_1d);
  return self;
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  const char* op = "masked_scatter_";
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, ",
              "but got mask with dtype ", mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  at::assert_no_internal_overlap(self);
  c10::MaybeOwned<at::Tensor> mask_b = at::expand_inplace(self, mask, op);
  const int64_t n = self.numel();
  if (n == 0) return self;
  const int64_t available = source.numel();
  // Too few source elements is an error CPU finds while copying. The program
  // finds it on the device (raised at the next host read); Debug mode and an
  // empty source (nothing to gather from) read the mask's count at once.
  if (available == 0 || current_eager_mode() == EagerMode::kDebug) {
    at::Tensor count = mask_b->sum(at::kLong);
    TORCH_CHECK(count.item<int64_t>() <= available,
                "Number of elements of source < number of ones in mask");
    if (available == 0) return self;
  }
  TensorProgram program(op, "masked_scatter");
  program.input(self);
  program.input(*mask_b);
  program.input(source);
  program.output(self);
  program.report_findings(op, IndexErrorClass::kRuntimeError);
  const std::vector<int64_t> shape = self.sizes().vec();
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value flags = b.reshape(in[1], {n});
    // The k-th selected position takes source's k-th element (clamped for the
    // unselected positions, whose gathered value is not used).
    Value pos = hlo::inclusive_scan(b, b.convert(flags, ElementType::kS64), 0, "add");
    Value needed = b.reshape(b.slice(pos, {n - 1}, {n}, {1}), {});
    pos = b.binary("subtract", pos, b.splat(b.constant_int(ElementType::kS64, 1), {n}));
    pos = b.binary("maximum", pos, b.zeros(pos.type));
    pos = b.binary("minimum", pos, b.splat(b.constant_int(ElementType::kS64, available - 1), {n}));
    Value taken = b.gather_1d(b.reshape(in[2], {available}), pos);
    return std::vector<Value>{b.reshape(b.select(flags, taken, b.reshape(in[0], {n})), shape),
                              too_few_elements_finding(b, needed, available)};
  });
  return self;
}

}  // namespace torch_tpu::ops

// Ops whose result size depends on the data: nonzero, masked_select,
// repeat_interleave(repeats), unique and its variants, bincount.
//
// Everything is computed on the device; the host reads back only the size
// (one blocking download of a few bytes, the same sync CUDA makes), never the
// data. Selected elements are compacted with a cumulative sum of the
// selection flags (each selected element's slot among the selected ones) and
// one scatter; unselected elements scatter out of range, which XLA drops.
//
// The result size must not be baked into a program, or a loop over masks of
// varying density would compile once per count. Two shapes of this:
//  - nonzero, masked_select, repeat_interleave and bincount first count on
//    the device (a cheap reduction), read the count, then fill a result of
//    `bucket` rows, the next power of two at or above the count (capped by
//    the input size). One fill program serves every count in a bucket, so an
//    input shape compiles at most log2(numel) + 1 fills, and the result's
//    storage is at most twice what it needs.
//  - unique and its variants need a sort before anything can be counted, so
//    they compute padded results of the input's size and the count in one
//    program (one compile per input shape), then, when the count is below
//    half the input's size, keep a bucket of rows (one more small program,
//    one compile per bucket).
// Either way the returned tensor is its buffer's first `count` rows (a
// resize that only shrinks, which moves no data), and its storage's size
// says `count` rows (keep_first_rows).
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstdint>

#include "core/dtype_map.h"
#include "exec/eager_mode.h"
#include "hlo/int_constants.h"
#include "hlo/scan.h"
#include "ops/data_dependent_kernels.h"
#include "ops/device_empty.h"
#include "ops/index_kernels.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64_splat;
using hlo::Value;

// x != 0, flattened (NaN counts as nonzero, as on CPU).
Value nonzero_flags(Builder& b, Value x, int64_t n) {
  Value flat = b.reshape(x, {n});
  if (flat.type.element == ElementType::kPred) return flat;
  return b.compare(Compare::kNE, flat, b.zeros(flat.type));
}

Value count_flags(Builder& b, Value flags) {
  Value ones = b.convert(flags, ElementType::kS64);
  return b.reduce(ones, b.constant_int(ElementType::kS64, 0), {0}, "add");
}

// Each selected element's slot among the selected ones (in order); `past`
// for the others, which a scatter into `past` slots then drops.
Value compact_slots(Builder& b, Value flags, int64_t past) {
  const std::vector<int64_t> dims = flags.type.dims;
  Value pos = hlo::inclusive_scan(b, b.convert(flags, ElementType::kS64), 0, "add");
  pos = b.binary("subtract", pos, s64_splat(b, 1, dims));
  return b.select(flags, pos, s64_splat(b, past, dims));
}

// The smallest power of two >= count, at most `limit`.
int64_t bucket_for(int64_t count, int64_t limit) {
  int64_t bucket = 1;
  while (bucket < count) bucket <<= 1;
  return std::min(bucket, limit);
}

// Makes `result` (a fresh bucket-sized tensor) its first rows, `sizes`. The
// device buffer keeps its bucket; the storage reports the bytes the result
// uses, as a CPU result's would: code that reads a tensor's size from its
// storage (a nested tensor's buffer, torch.save) must not see the rows past
// the count.
void keep_first_rows(at::Tensor& result, at::IntArrayRef sizes) {
  resize_(result, sizes, std::nullopt);
  result.storage().unsafeGetStorageImpl()->set_nbytes(static_cast<size_t>(result.numel()) *
                                                      result.element_size());
}

// Reads a small s64 tensor: the op's one blocking device-to-host read.
std::vector<int64_t> read_small(const at::Tensor& t) {
  at::Tensor host = t.cpu();
  const int64_t* p = host.const_data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + host.numel());
}

at::Tensor long_tensor(at::IntArrayRef sizes, const at::Tensor& like) {
  return device_empty(sizes, like.options().dtype(at::kLong));
}

// The number of nonzero elements of `self` (read on the host).
int64_t count_nonzero_on_device(const at::Tensor& self, const char* op) {
  const int64_t n = self.numel();
  at::Tensor count = long_tensor({}, self);
  TensorProgram program(op, "count_nonzero_all");
  program.input(self);
  program.output(count);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{count_flags(b, nonzero_flags(b, in[0], n))};
  });
  return read_small(count)[0];
}

// Makes `out` hold `result` (computed into a fresh tensor): the out= forms.
// The copy is keyed by the result's size, so unlike the functional forms an
// out= call compiles once per distinct size.
at::Tensor& write_out(at::Tensor& out, const at::Tensor& result, const char* op) {
  at::native::resize_output(out, result.sizes());
  if (result.numel() > 0) copy_on_device(out, result, op);
  return out;
}

}  // namespace

at::Tensor nonzero(const at::Tensor& self) {
  const char* op = "nonzero";
  const int64_t ndim = self.dim();
  const int64_t n = self.numel();
  if (n == 0) return long_tensor({0, ndim}, self);
  const int64_t count = count_nonzero_on_device(self, op);
  if (count == 0 || ndim == 0) return long_tensor({count, ndim}, self);
  const int64_t bucket = bucket_for(count, n);
  at::Tensor result = long_tensor({bucket, ndim}, self);
  const std::vector<int64_t> shape = self.sizes().vec();
  TensorProgram program(op, program_key("nonzero", bucket));
  program.input(self);
  program.output(result);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value flags = nonzero_flags(b, in[0], n);
    Value flat = b.scatter_1d(b.zeros({ElementType::kS64, {bucket}}),
                              compact_slots(b, flags, bucket), b.iota({ElementType::kS64, {n}}, 0));
    // Flat positions to coordinates, one column per dim.
    std::vector<Value> columns;
    int64_t stride = n;
    for (int64_t d = 0; d < ndim; ++d) {
      stride /= shape[d];
      Value c = b.binary("divide", flat, s64_splat(b, stride, {bucket}));
      c = b.binary("remainder", c, s64_splat(b, shape[d], {bucket}));
      columns.push_back(b.reshape(c, {bucket, 1}));
    }
    return std::vector<Value>{b.concatenate(columns, 1)};
  });
  keep_first_rows(result, {count, ndim});
  return result;
}

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type ",
              "Long but got scalar type", out.scalar_type());
  return write_out(out, ops::nonzero(self), "nonzero");
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  const char* op = "masked_select";
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  auto [self_b, mask_b] = at::expand_outplace(self, mask);
  const int64_t n = self_b->numel();
  if (n == 0) return device_empty({0}, self.options());
  const int64_t count = count_nonzero_on_device(*mask_b, op);
  if (count == 0) return device_empty({0}, self.options());
  const int64_t bucket = bucket_for(count, n);
  at::Tensor result = device_empty({bucket}, self.options());
  TensorProgram program(op, program_key("masked_select", bucket));
  program.input(*self_b);
  program.input(*mask_b);
  program.output(result);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value values = b.reshape(in[0], {n});
    Value slots = compact_slots(b, b.reshape(in[1], {n}), bucket);
    return std::vector<Value>{
        b.scatter_1d(b.zeros({values.type.element, {bucket}}), slots, values)};
  });
  keep_first_rows(result, {count});
  return result;
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "masked_select(): self and result must have the same scalar type");
  return write_out(out, ops::masked_select(self, mask), "masked_select");
}

at::Tensor repeat_interleave_counts(const at::Tensor& repeats, std::optional<int64_t> output_size) {
  const char* op = "repeat_interleave";
  TORCH_CHECK_NOT_IMPLEMENTED(
      repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
      "\"repeat_interleave_cpu\" not implemented for '", c10::toString(repeats.scalar_type()), "'");
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  const int64_t n = repeats.numel();
  if (n == 0) return device_empty({0}, repeats.options());
  // Without output_size the total is read back (with the smallest count, to
  // reject negative ones, as CPU does); with it nothing is read, as on CUDA,
  // except in Debug mode, which checks it like CPU.
  int64_t total = output_size.value_or(-1);
  if (!output_size.has_value() || current_eager_mode() == EagerMode::kDebug) {
    at::Tensor stats = long_tensor({2}, repeats);
    TensorProgram program(op, "repeat_interleave_total");
    program.input(repeats);
    program.output(stats);
    program.run([&](Builder& b, const std::vector<Value>& in) {
      Value r = b.convert(in[0], ElementType::kS64);
      Value sum = b.reduce(r, b.constant_int(ElementType::kS64, 0), {0}, "add");
      Value min = b.reduce(r, b.constant_int(ElementType::kS64, INT64_MAX), {0}, "minimum");
      return std::vector<Value>{b.concatenate({b.reshape(sum, {1}), b.reshape(min, {1})}, 0)};
    });
    const auto host = read_small(stats);
    TORCH_CHECK(host[1] >= 0, "repeats can not be negative");
    TORCH_CHECK(!output_size.has_value() || *output_size == host[0],
                "allocated size does not match required size");
    total = host[0];
  }
  TORCH_CHECK(total >= 0, "Trying to create tensor with negative dimension ", total);
  if (total == 0) return device_empty({0}, repeats.options());
  // An explicit output_size is the program's size (the caller fixed it);
  // a size read back is bucketed.
  const int64_t rows = output_size.has_value() ? total : bucket_for(total, INT64_MAX);
  at::Tensor result = device_empty({rows}, repeats.options());
  TensorProgram program(op, program_key("repeat_interleave", rows));
  program.input(repeats);
  program.output(result);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Output j holds the number of repeat runs that end at or before j.
    Value ends = hlo::inclusive_scan(b, b.convert(in[0], ElementType::kS64), 0, "add");
    Value marks =
        b.scatter_1d(b.zeros({ElementType::kS64, {rows}}), ends, s64_splat(b, 1, {n}), "add");
    return std::vector<Value>{hlo::inclusive_scan(b, marks, 0, "add")};
  });
  keep_first_rows(result, {total});
  return result;
}

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_in,
                    int64_t minlength) {
  const char* op = "bincount";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(self.scalar_type(), /*includeBool=*/false),
                              "\"bincount_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  const bool weighted = weights_in.has_value() && weights_in->defined();
  if (weighted) {
    TORCH_CHECK(weights_in->dim() == 1 && weights_in->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  }
  // Float weights sum in float, any other weights in double; counts are long.
  const at::ScalarType dtype = !weighted                                 ? at::kLong
                               : weights_in->scalar_type() == at::kFloat ? at::kFloat
                                                                         : at::kDouble;
  const int64_t n = self.numel();
  if (n == 0) return at::zeros({minlength}, self.options().dtype(dtype));
  at::Tensor stats = long_tensor({2}, self);
  {
    TensorProgram program(op, "bincount_range");
    program.input(self);
    program.output(stats);
    program.run([&](Builder& b, const std::vector<Value>& in) {
      Value x = b.convert(in[0], ElementType::kS64);
      Value lo = b.reduce(x, b.constant_int(ElementType::kS64, INT64_MAX), {0}, "minimum");
      Value hi = b.reduce(x, b.constant_int(ElementType::kS64, INT64_MIN), {0}, "maximum");
      return std::vector<Value>{b.concatenate({b.reshape(lo, {1}), b.reshape(hi, {1})}, 0)};
    });
  }
  const auto range = read_small(stats);
  TORCH_CHECK(range[0] >= 0, "bincount only supports 1-d non-negative integral inputs.");
  const int64_t size = std::max(range[1] + 1, minlength);
  const int64_t rows = bucket_for(size, INT64_MAX);
  at::Tensor result = device_empty({rows}, self.options().dtype(dtype));
  TensorProgram program(op, program_key("bincount", rows, weighted));
  program.input(self);
  if (weighted) program.input(*weights_in);
  program.output(result);
  const ElementType t = element_type_for(dtype, op);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value updates = weighted ? b.convert(in[1], t) : b.splat(b.constant_int(t, 1), {n});
    return std::vector<Value>{
        b.scatter_1d(b.zeros({t, {rows}}), b.convert(in[0], ElementType::kS64), updates, "add")};
  });
  keep_first_rows(result, {size});
  return result;
}

namespace {

// unique over the rows of `rows_view` ([n, ...] read as n rows of m
// elements): the unique rows in order (sorted, or as they come when
// `consecutive`), each input row's group and each group's size. Rows are
// equal when every element compares equal, so NaNs are never equal (each NaN
// is its own group, as on CPU) and -0.0 == 0.0 (the group shows its first
// member in input order).
struct UniqueResult {
  at::Tensor values;   // [count, ...] (the storage holds n rows)
  at::Tensor inverse;  // [n]
  at::Tensor counts;   // [count]
};

UniqueResult unique_rows(const at::Tensor& rows_view, bool consecutive, const char* op) {
  const int64_t n = rows_view.size(0);
  const int64_t m = n == 0 ? 0 : rows_view.numel() / n;
  UniqueResult r;
  r.values = device_empty(rows_view.sizes(), rows_view.options());
  r.inverse = long_tensor({n}, rows_view);
  r.counts = long_tensor({n}, rows_view);
  if (n == 0) return r;
  at::Tensor count = long_tensor({}, rows_view);
  TensorProgram program(op, program_key("unique_rows", consecutive));
  program.input(rows_view);
  program.output(r.values);
  program.output(r.inverse);
  program.output(r.counts);
  program.output(count);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.reshape(in[0], {n, m});
    Value perm = b.iota({ElementType::kS64, {n}}, 0);
    if (!consecutive) {
      // Lexicographic order by stable sorts from the last column to the first.
      for (int64_t c = m - 1; c >= 0; --c) {
        Value column = b.reshape(b.slice(x, {0, c}, {n, c + 1}, {1, 1}), {n});
        perm = b.sort({b.gather_1d(column, perm), perm}, 0, false)[1];
      }
    }
    // sorted[i, c] = x[perm[i], c]
    Value element = b.binary(
        "add", b.binary("multiply", b.broadcast_in_dim(perm, {n, m}, {0}), s64_splat(b, m, {n, m})),
        b.iota({ElementType::kS64, {n, m}}, 1));
    Value sorted = b.gather_1d(b.reshape(x, {n * m}), element);
    // A row starts a group when it differs from the one before it.
    Value differs = b.compare(Compare::kNE, b.slice(sorted, {1, 0}, {n, m}, {1, 1}),
                              b.slice(sorted, {0, 0}, {n - 1, m}, {1, 1}));
    differs = b.reduce(differs, b.constant_int(ElementType::kPred, 0), {1}, "or");
    Value start = b.concatenate({b.splat(b.constant_int(ElementType::kPred, 1), {1}), differs}, 0);
    Value group = hlo::inclusive_scan(b, b.convert(start, ElementType::kS64), 0, "add");
    group = b.binary("subtract", group, s64_splat(b, 1, {n}));
    // Group starts write their row to the group's slot; the rest go past the end.
    Value slot = b.select(start, group, s64_splat(b, n, {n}));
    Value dest = b.binary(
        "add", b.binary("multiply", b.broadcast_in_dim(slot, {n, m}, {0}), s64_splat(b, m, {n, m})),
        b.iota({ElementType::kS64, {n, m}}, 1));
    Value values = b.scatter_1d(b.zeros({sorted.type.element, {n * m}}), dest, sorted);
    Value inverse = b.scatter_1d(b.zeros({ElementType::kS64, {n}}), perm, group);
    Value counts =
        b.scatter_1d(b.zeros({ElementType::kS64, {n}}), group, s64_splat(b, 1, {n}), "add");
    return std::vector<Value>{values, inverse, counts, count_flags(b, start)};
  });
  const int64_t groups = read_small(count)[0];
  std::vector<int64_t> sizes = rows_view.sizes().vec();
  // Few groups: keep only a bucket of rows (one program per bucket), so the
  // results hold at most twice the storage they need.
  const int64_t keep = bucket_for(groups, n);
  if (keep < n) {
    sizes[0] = keep;
    at::Tensor values = device_empty(sizes, rows_view.options());
    at::Tensor counts = long_tensor({keep}, rows_view);
    TensorProgram compact(op, program_key("unique_keep", keep));
    compact.input(r.values);
    compact.input(r.counts);
    compact.output(values);
    compact.output(counts);
    compact.run([&](Builder& b, const std::vector<Value>& in) {
      Value rows = b.reshape(in[0], {n, m});
      return std::vector<Value>{b.slice(rows, {0, 0}, {keep, m}, {1, 1}),
                                b.slice(in[1], {0}, {keep}, {1})};
    });
    r.values = values;
    r.counts = counts;
  }
  sizes[0] = groups;
  keep_first_rows(r.values, sizes);
  keep_first_rows(r.counts, {groups});
  return r;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_flat(const at::Tensor& self, bool consecutive,
                                                           bool return_inverse, bool return_counts,
                                                           const char* op) {
  UniqueResult r = unique_rows(self.reshape({-1}), consecutive, op);
  at::Tensor inverse = return_inverse ? r.inverse.view(self.sizes()) : long_tensor({0}, self);
  at::Tensor counts = return_counts ? r.counts : long_tensor({0}, self);
  return {r.values, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_along(const at::Tensor& self, int64_t dim,
                                                            bool consecutive, const char* op) {
  TORCH_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim,
                    " but tensor has no dimensions");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (self.size(dim) > 0) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      TORCH_CHECK(d == dim || self.size(d) > 0, "There are 0 sized dimensions, and they aren't ",
                  "selected, so unique cannot be applied");
    }
  }
  if (self.numel() == 0) {
    return {device_empty(self.sizes(), self.options()), long_tensor({0}, self),
            long_tensor({0}, self)};
  }
  // The unique slices come out as rows of a [count, rest...] tensor, viewed
  // with `dim` moved back into place (CPU's layout too).
  UniqueResult r = unique_rows(self.movedim(dim, 0), consecutive, op);
  return {r.values.movedim(0, dim), r.inverse, r.counts};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool /*sorted*/,
                                                       bool return_inverse, bool return_counts) {
  // Always sorted, as CPU's kernel is.
  return unique_flat(self, false, return_inverse, return_counts, "_unique2");
}

std::tuple<at::Tensor, at::Tensor> unique(const at::Tensor& self, bool /*sorted*/,
                                          bool return_inverse) {
  auto [values, inverse, counts] = unique_flat(self, false, return_inverse, false, "_unique");
  return {values, inverse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self,
                                                                  bool return_inverse,
                                                                  bool return_counts,
                                                                  std::optional<int64_t> dim) {
  const char* op = "unique_consecutive";
  if (!dim.has_value() || (self.dim() == 1 && c10::maybe_wrap_dim(*dim, 1) == 0)) {
    return unique_flat(self, true, return_inverse, return_counts, op);
  }
  return unique_along(self, *dim, true, op);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim(const at::Tensor& self, int64_t dim,
                                                          bool /*sorted*/, bool /*return_inverse*/,
                                                          bool /*return_counts*/) {
  // CPU returns the inverse and the counts whether asked for or not.
  return unique_along(self, dim, false, "unique_dim");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim_consecutive(const at::Tensor& self,
                                                                      int64_t dim,
                                                                      bool /*return_inverse*/,
                                                                      bool /*return_counts*/) {
  return unique_along(self, dim, true, "unique_dim_consecutive");
}

}  // namespace torch_tpu::ops

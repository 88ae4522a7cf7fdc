// Order statistics along a dim: median, nanmedian, kthvalue, mode. Each is
// one program over the input laid out as rows ([outer, n] with the reduced
// dim last) and sorted per row by a stable sort with NaN last.
//
// Indices among equal values: CPU's median orders by (value, index), which
// is exactly the stable sort, so median's and nanmedian's indices match it.
// mode returns the last occurrence of the mode (CPU does too, for rows of up
// to 16 elements, where its std::sort is an insertion sort). kthvalue's CPU
// kernel is a quickselect whose choice among equal values follows from its
// partitioning; here it is the stable sort's, a valid kthvalue index too.
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>

#include <functional>
#include <limits>
#include <utility>

#include "core/dtype_map.h"
#include "hlo/int_constants.h"
#include "hlo/scan.h"
#include "ops/device_empty.h"
#include "ops/order_stat_kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64_splat;
using hlo::Value;

// self (read as `x`) as [rows, n] with `dim` last.
Value as_rows(Builder& b, Value x, int64_t dim, int64_t rows, int64_t n) {
  const int64_t rank = static_cast<int64_t>(x.type.dims.size());
  if (rank > 0 && dim != rank - 1) {
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim) perm.push_back(d);
    }
    perm.push_back(dim);
    x = b.transpose(x, perm);
  }
  return b.reshape(x, {rows, n});
}

// rows[r, col[r]] for each row.
Value pick(Builder& b, Value rows, Value col) {
  const int64_t m = rows.type.dims[0], n = rows.type.dims[1];
  Value flat = b.binary(
      "add", b.binary("multiply", b.iota({ElementType::kS64, {m}}, 0), s64_splat(b, n, {m})), col);
  return b.gather_1d(b.reshape(rows, {m * n}), flat);
}

struct Reduced {
  int64_t dim = 0;
  int64_t n = 1;     // size of the reduced dim
  int64_t rows = 1;  // number of results
  std::vector<int64_t> shape;
};

Reduced reduced_along(const at::Tensor& self, int64_t dim, bool keepdim, const char* op) {
  Reduced r;
  r.dim = c10::maybe_wrap_dim(dim, self.dim());
  r.n = self.dim() == 0 ? 1 : self.size(r.dim);
  if (self.numel() == 0 && self.dim() > 0) {
    TORCH_CHECK_INDEX(self.size(r.dim) != 0, op, ": Expected reduction dim ", r.dim,
                      " to have non-zero size.");
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != r.dim) {
      r.shape.push_back(self.size(d));
    } else if (keepdim) {
      r.shape.push_back(1);
    }
  }
  r.rows = r.n == 0 ? 0 : self.numel() / r.n;
  return r;
}

void check_not_bool(const at::Tensor& self, const char* kernel) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"", kernel,
                              "\" not implemented for 'Bool'");
}

void prepare_outputs(const at::Tensor& self, const Reduced& r, at::Tensor& values,
                     at::Tensor& indices, const char* op) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), op, ": Expected out tensor to have ",
              "dtype ", self.scalar_type(), ", but got ", values.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": Expected out tensor to have dtype ",
              "Long, but got ", indices.scalar_type(), " instead");
  at::native::resize_output(values, r.shape);
  at::native::resize_output(indices, r.shape);
}

// What each row reduces to, from its sorted values and their positions
// (both [rows, n]) and the unsorted row.
using RowRule =
    std::function<std::pair<Value, Value>(Builder&, Value sorted, Value positions, Value unsorted)>;

void run_rows(const char* op, const std::string& key, const at::Tensor& self, const Reduced& r,
              at::Tensor& values, at::Tensor& indices, const RowRule& rule) {
  if (values.numel() == 0) return;
  TensorProgram program(op, key);
  program.input(self);
  program.output(values);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = as_rows(b, in[0], r.dim, r.rows, r.n);
    auto sorted = b.sort({x, b.iota({ElementType::kS64, {r.rows, r.n}}, 1)}, 1, false);
    auto [v, i] = rule(b, sorted[0], sorted[1], x);
    return std::vector<Value>{b.reshape(v, r.shape), b.reshape(i, r.shape)};
  });
}

Value is_nan(Builder& b, Value x) { return b.compare(Compare::kNE, x, x); }

// Per row: the number of NaNs.
Value nan_count(Builder& b, Value rows) {
  Value ones = b.convert(is_nan(b, rows), ElementType::kS64);
  return b.reduce(ones, b.constant_int(ElementType::kS64, 0), {1}, "add");
}

std::tuple<at::Tensor&, at::Tensor&> median_rows(const at::Tensor& self, int64_t dim, bool keepdim,
                                                 bool ignore_nan, at::Tensor& values,
                                                 at::Tensor& indices) {
  const char* op = ignore_nan ? "nanmedian()" : "median()";
  check_not_bool(self, "median_out");
  const Reduced r = reduced_along(self, dim, keepdim, op);
  prepare_outputs(self, r, values, indices, op);
  const bool fp = at::isFloatingType(self.scalar_type());
  run_rows(op, program_key("median_rows", r.dim, keepdim, ignore_nan), self, r, values, indices,
           [&](Builder& b, Value sorted, Value positions, Value unsorted) {
             const int64_t m = r.rows, n = r.n;
             Value col;
             if (ignore_nan && fp) {
               // The lower median of the values that are not NaN (NaN sorts
               // last); an all-NaN row gives position 0, a NaN.
               Value k = b.binary("subtract", s64_splat(b, n, {m}), nan_count(b, unsorted));
               col = b.binary("divide", b.binary("subtract", k, s64_splat(b, 1, {m})),
                              s64_splat(b, 2, {m}));
               col = b.binary("maximum", col, b.zeros(col.type));
             } else {
               col = s64_splat(b, (n - 1) / 2, {m});
             }
             Value v = pick(b, sorted, col), i = pick(b, positions, col);
             if (!ignore_nan && fp) {
               // median: a row with a NaN gives its first NaN.
               Value iota = b.iota({ElementType::kS64, {m, n}}, 1);
               Value first = b.reduce(b.select(is_nan(b, unsorted), iota, s64_splat(b, n, {m, n})),
                                      b.constant_int(ElementType::kS64, n), {1}, "minimum");
               Value has_nan = b.compare(Compare::kLT, first, s64_splat(b, n, {m}));
               Value safe = b.binary("minimum", first, s64_splat(b, n - 1, {m}));
               v = b.select(has_nan, pick(b, unsorted, safe), v);
               i = b.select(has_nan, first, i);
             }
             return std::make_pair(v, i);
           });
  return {values, indices};
}

at::Tensor median_all(const at::Tensor& self, bool ignore_nan) {
  check_not_bool(self, "median_cpu");  // nanmedian's too, as CPU names it
  if (self.numel() == 0) {
    return at::full({}, std::numeric_limits<double>::quiet_NaN(), self.options());
  }
  at::Tensor flat = self.reshape({-1});
  at::Tensor values = device_empty({}, self.options());
  at::Tensor indices = device_empty({}, self.options().dtype(at::kLong));
  median_rows(flat, 0, false, ignore_nan, values, indices);
  return values;
}

}  // namespace

at::Tensor median(const at::Tensor& self) { return median_all(self, false); }
at::Tensor nanmedian(const at::Tensor& self) { return median_all(self, true); }

std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, at::Tensor& values,
                                                    at::Tensor& indices) {
  return median_rows(self, dim, keepdim, false, values, indices);
}

std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices) {
  return median_rows(self, dim, keepdim, true, values, indices);
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k, int64_t dim,
                                                  bool keepdim, at::Tensor& values,
                                                  at::Tensor& indices) {
  const char* op = "kthvalue()";
  const Reduced r = reduced_along(self, dim, keepdim, op);
  TORCH_CHECK(k >= 1 && k <= r.n, "kthvalue(): selected number k out of range for dimension ",
              r.dim);
  // CPU answers a 0-d input before its typed kernel, so a 0-d bool works.
  if (self.dim() > 0) check_not_bool(self, "kthvalue_cpu");
  prepare_outputs(self, r, values, indices, op);
  run_rows(op, program_key("kthvalue_rows", k, r.dim, keepdim), self, r, values, indices,
           [&](Builder& b, Value sorted, Value positions, Value /*unsorted*/) {
             Value col = s64_splat(b, k - 1, {r.rows});
             return std::make_pair(pick(b, sorted, col), pick(b, positions, col));
           });
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                              at::Tensor& values, at::Tensor& indices) {
  const char* op = "mode()";
  const Reduced r = reduced_along(self, dim, keepdim, op);
  prepare_outputs(self, r, values, indices, op);
  run_rows(op, program_key("mode_rows", r.dim, keepdim), self, r, values, indices,
           [&](Builder& b, Value sorted, Value positions, Value /*unsorted*/) {
             const int64_t m = r.rows, n = r.n;
             const std::vector<int64_t> mn{m, n};
             Value iota = b.iota({ElementType::kS64, mn}, 1);
             // Runs of equal values in the sorted row (NaN equals nothing).
             Value t = b.constant_int(ElementType::kPred, 1);
             Value differs = b.compare(Compare::kNE, b.slice(sorted, {0, 1}, {m, n}, {1, 1}),
                                       b.slice(sorted, {0, 0}, {m, n - 1}, {1, 1}));
             Value starts = b.concatenate({b.splat(t, {m, 1}), differs}, 1);
             Value ends = b.concatenate({differs, b.splat(t, {m, 1})}, 1);
             Value run_start =
                 hlo::inclusive_scan(b, b.select(starts, iota, b.zeros(iota.type)), 1, "maximum");
             Value length =
                 b.binary("add", b.binary("subtract", iota, run_start), s64_splat(b, 1, mn));
             Value scored = b.select(ends, length, b.zeros(length.type));
             Value best = b.reduce(scored, b.constant_int(ElementType::kS64, 0), {1}, "maximum");
             // The first longest run (the smallest value), at its last element.
             Value is_best = b.binary(
                 "and", ends, b.compare(Compare::kEQ, scored, b.broadcast_in_dim(best, mn, {0})));
             Value col = b.reduce(b.select(is_best, iota, s64_splat(b, n, mn)),
                                  b.constant_int(ElementType::kS64, n), {1}, "minimum");
             return std::make_pair(pick(b, sorted, col), pick(b, positions, col));
           });
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = device_empty({0}, self.options());
  at::Tensor indices = device_empty({0}, self.options().dtype(at::kLong));
  mode_out(self, dim, keepdim, values, indices);
  return {values, indices};
}

}  // namespace torch_tpu::ops

#include "ops/device_findings.h"

#include <cmath>
#include <vector>

#include "exec/async_errors.h"
#include "hlo/int_constants.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::s64_splat;
using hlo::Value;

// {kind, a, b, c} where `found`, else zeros.
Value finding_if(Builder& b, Value found, DeviceFinding kind, Value a, int64_t dim, int64_t c) {
  Value mine = b.concatenate({b.reshape(s64(b, static_cast<int64_t>(kind)), {1}), b.reshape(a, {1}),
                              b.reshape(s64(b, dim), {1}), b.reshape(s64(b, c), {1})},
                             0);
  return b.select(b.splat(found, {kIndexFindingLength}), mine,
                  s64_splat(b, 0, {kIndexFindingLength}));
}

}  // namespace

Value zero_divisor_finding(Builder& b, Value divisor) {
  int64_t n = 1;
  for (int64_t d : divisor.type.dims) n *= d;
  if (n == 0) return s64_splat(b, 0, {kIndexFindingLength});
  Value is_zero = b.compare(Compare::kEQ, divisor, b.zeros(divisor.type));
  const std::vector<int64_t> all_dims = [&] {
    std::vector<int64_t> dims(divisor.type.dims.size());
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
    return dims;
  }();
  Value zeros = b.convert(is_zero, ElementType::kS64);
  Value any = all_dims.empty() ? zeros : b.reduce(zeros, s64(b, 0), all_dims, "maximum");
  Value found = b.compare(Compare::kNE, any, s64(b, 0));
  return finding_if(b, found, DeviceFinding::kZeroDivision, s64(b, 0), -1, 0);
}

Value too_few_elements_finding(Builder& b, Value needed, int64_t available) {
  Value needed64 = b.convert(needed, ElementType::kS64);
  Value found = b.compare(Compare::kGT, needed64, s64(b, available));
  return finding_if(b, found, DeviceFinding::kTooFewElements, needed64, -1, available);
}

Value invalid_distribution_finding(Builder& b, Value p) {
  const std::vector<int64_t> dims = p.type.dims;  // [rows, n]
  Value zero = b.zeros(p.type);
  Value finite = b.compare(Compare::kLT, b.unary("abs", p),
                           b.splat(b.constant(p.type.element, INFINITY), dims));
  Value bad = b.binary("or", b.unary("not", finite), b.compare(Compare::kLT, p, zero));
  Value any_bad = b.reduce(b.convert(bad, ElementType::kS64), s64(b, 0), {0, 1}, "maximum");
  Value sums = b.reduce(p, b.constant(p.type.element, 0), {1}, "add");
  Value empty_row = b.compare(Compare::kLE, sums, b.zeros(sums.type));
  Value any_empty = b.reduce(b.convert(empty_row, ElementType::kS64), s64(b, 0), {0}, "maximum");
  Value has_bad = b.compare(Compare::kNE, any_bad, s64(b, 0));
  Value found = b.binary("or", has_bad, b.compare(Compare::kNE, any_empty, s64(b, 0)));
  // which message: 0 for bad elements (checked first, as CPU does), 1 for a sum
  Value which = b.select(has_bad, s64(b, 0), s64(b, 1));
  return finding_if(b, found, DeviceFinding::kInvalidDistribution, which, -1, 0);
}

Value assertion_finding(Builder& b, Value condition) {
  Value c = b.reshape(condition, {});
  Value zero = b.compare(Compare::kEQ, c, b.zeros(c.type));
  if (hlo::is_complex(c.type.element)) zero = b.reshape(zero, {});
  return finding_if(b, zero, DeviceFinding::kAssertionFailed, s64(b, 0), -1, 0);
}

std::pair<Value, Value> flagged_value(Builder& b, Value flagged, Value values, bool last) {
  const int64_t n = values.type.dims.at(0);
  Value iota = b.iota({ElementType::kS64, {n}}, 0);
  // The flagged position (none: n for the first, -1 for the last), then its value.
  const int64_t none = last ? -1 : n;
  Value at = b.reduce(b.select(flagged, iota, s64_splat(b, none, {n})), s64(b, none), {0},
                      last ? "maximum" : "minimum");
  Value found = b.compare(Compare::kNE, at, s64(b, none));
  Value here = b.compare(Compare::kEQ, iota, b.splat(at, {n}));
  Value value = b.reduce(b.select(here, values, s64_splat(b, 0, {n})), s64(b, 0), {0}, "add");
  return {found, value};
}

Value invalid_max_index_finding(Builder& b, Value indices, const std::vector<int64_t>& plane) {
  const int64_t n = indices.type.dims.at(0);
  if (n == 0) return s64_splat(b, 0, {kIndexFindingLength});
  int64_t volume = 1;
  for (int64_t d : plane) volume *= d;
  Value bad = b.binary("or", b.compare(Compare::kLT, indices, s64_splat(b, 0, {n})),
                       b.compare(Compare::kGE, indices, s64_splat(b, volume, {n})));
  // The last, as the CPU kernel's loop reports it.
  auto [found, value] = flagged_value(b, bad, indices, /*last=*/true);
  const size_t k = plane.size();
  const int64_t depth = k == 3 ? plane[0] : -1;
  const int64_t height_width = (plane[k - 2] << 32) | plane[k - 1];
  return finding_if(b, found, DeviceFinding::kInvalidMaxIndex, value, depth, height_width);
}

}  // namespace torch_tpu::ops

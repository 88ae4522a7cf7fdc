#include "ops/index_bounds.h"

#include "exec/async_errors.h"
#include "hlo/int_constants.h"
#include "ops/device_findings.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::s64_splat;
using hlo::Value;

Value as_vector(Builder& b, Value scalar) { return b.reshape(scalar, {1}); }

}  // namespace

void IndexBounds::check(Builder& b, Value index, int64_t dim, int64_t size, bool allow_negative,
                        const Value* checked) {
  int64_t n = 1;
  for (int64_t d : index.type.dims) n *= d;
  if (n == 0) return;
  Value idx = b.reshape(b.convert(index, ElementType::kS64), {n});
  const int64_t lower = allow_negative ? -size : 0;
  Value bad = b.binary("or", b.compare(Compare::kLT, idx, s64_splat(b, lower, {n})),
                       b.compare(Compare::kGE, idx, s64_splat(b, size, {n})));
  if (checked != nullptr) bad = b.binary("and", bad, b.reshape(*checked, {n}));
  auto [found, value] = flagged_value(b, bad, idx, /*last=*/false);
  Value mine =
      b.concatenate({as_vector(b, b.convert(found, ElementType::kS64)), as_vector(b, value),
                     as_vector(b, s64(b, dim)), as_vector(b, s64(b, size))},
                    0);
  if (!finding_) {
    finding_ = mine;
    return;
  }
  Value had = b.compare(Compare::kNE, b.reshape(b.slice(*finding_, {0}, {1}, {1}), {}), s64(b, 0));
  finding_ = b.select(b.splat(had, {kIndexFindingLength}), *finding_, mine);
}

Value IndexBounds::finding(Builder& b) const {
  if (finding_) return *finding_;
  return s64_splat(b, 0, {kIndexFindingLength});
}

void check_index_range_on_host(const char* op, const at::Tensor& index, int64_t dim, int64_t size,
                               bool allow_negative, IndexErrorClass error_class,
                               std::optional<int64_t> ignore) {
  if (index.numel() == 0) return;
  const at::Tensor host = index.cpu().to(at::kLong).reshape({-1});
  const int64_t lower = allow_negative ? -size : 0;
  const int64_t* v = host.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (ignore && v[i] == *ignore) continue;
    if (v[i] >= lower && v[i] < size) continue;
    const std::string message =
        std::string(op) + ": index " + std::to_string(v[i]) + " is out of bounds for " +
        (dim < 0 ? "a tensor of " + std::to_string(size) + " elements"
                 : "dimension " + std::to_string(dim) + " with size " + std::to_string(size));
    TORCH_CHECK(error_class != IndexErrorClass::kRuntimeError, message);
    TORCH_CHECK_INDEX(false, message);
  }
}

std::vector<Value> clamp_coords(Builder& b, const std::vector<Value>& coords,
                                const std::vector<int64_t>& shape) {
  std::vector<Value> out;
  for (size_t d = 0; d < coords.size(); ++d) {
    const auto& dims = coords[d].type.dims;
    Value lo = s64_splat(b, 0, dims);
    Value hi = s64_splat(b, shape[d] - 1, dims);
    out.push_back(b.binary("minimum", b.binary("maximum", coords[d], lo), hi));
  }
  return out;
}

Value coords_in_range(Builder& b, const std::vector<Value>& coords,
                      const std::vector<int64_t>& shape) {
  std::optional<Value> ok;
  for (size_t d = 0; d < coords.size(); ++d) {
    const auto& dims = coords[d].type.dims;
    Value in = b.binary("and", b.compare(Compare::kGE, coords[d], s64_splat(b, 0, dims)),
                        b.compare(Compare::kLT, coords[d], s64_splat(b, shape[d], dims)));
    ok = ok ? b.binary("and", *ok, in) : in;
  }
  return *ok;
}

}  // namespace torch_tpu::ops

// Ordering (sort, topk), scans (cumsum, cumprod, cummax, cummin) and
// structural ops (flip, roll, tril, triu), each one lowered program.
#include <ATen/OpMathType.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "hlo/reduce_identity.h"
#include "hlo/scan.h"
#include "ops/device_empty.h"
#include "ops/out_checks.h"
#include "ops/program_key.h"
#include "ops/shape_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// Sorted values and s64 positions of `x` along `dim` (stable).
std::pair<Value, Value> sort_along(Builder& b, Value x, int64_t dim, bool descending) {
  if (x.type.dims.empty()) return {x, b.constant_int(ElementType::kS64, 0)};
  Value idx = b.iota({ElementType::kS64, x.type.dims}, dim);
  auto r = b.sort({x, idx}, dim, descending);
  return {r[0], r[1]};
}

at::Tensor& scan_out(const char* op, const char* body, double init, const at::Tensor& self,
                     int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  // CPU's dtype rule: `dtype` when given (out must have it), else out's own
  // dtype (so in-place int32 stays int32), else int64 for integer and bool
  // inputs. The input is cast to that dtype before it accumulates.
  const at::ScalarType result = dtype.value_or(out.scalar_type());
  if (dtype) check_out_dtype(op, out, *dtype);
  // (CPU's typed kernel sees only inputs with dims and elements.)
  TORCH_CHECK_NOT_IMPLEMENTED(result != at::kBool || self.dim() == 0 || self.numel() == 0, "\"", op,
                              "_out_cpu\" not implemented for 'Bool'");
  check_out_overlap(out, {self});
  at::native::resize_output(out, self.sizes());
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(result, op);
  const ElementType acc = opmath_element_type_for(result, op);
  TensorProgram program(op, program_key(op, dim));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.convert(b.convert(in[0], t), acc);
    return std::vector<Value>{
        b.convert(hlo::inclusive_scan(b, x, dim, body, b.constant(acc, init)), t)};
  });
  return out;
}

// cummax/cummin along `dim` into `values` and `indices`. CPU's rule: an
// element takes over from the running extreme if it is NaN or >= it (<= for
// cummin; nothing is >= NaN), so ties and NaNs take the latest index, and the
// value is that element (-0.0 after 0.0 included).
//
// Two single-operand scans, which XLA turns into trees for long dims: the
// running extreme (NaN-propagating), then the latest index where an element
// took over; the values are gathered at those indices. (One variadic scan
// over (value, index) pairs breaks XLA's tree rewrite: a compile error on one
// CPU plugin, std::bad_alloc on another.) Values compare in the input's own
// type, exactly.
void cumulative_extreme(const char* op, bool is_max, const at::Tensor& self, at::Tensor& values,
                        at::Tensor& indices, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(!self.is_complex(), op, "(): does not support complex input");
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  if (self.numel() == 0) return;
  TensorProgram program(op, program_key(op, dim));
  program.input(self);
  program.output(values);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = in[0];
    if (x.type.dims.empty()) return std::vector<Value>{x, b.constant_int(ElementType::kS64, 0)};
    const std::vector<int64_t> dims = x.type.dims;
    const char* body = is_max ? "maximum" : "minimum";
    Value none = hlo::reduce_identity(b, body, x.type.element);
    Value running = hlo::inclusive_scan(b, x, dim, body, none);
    // The running extreme before each element.
    std::vector<int64_t> low(dims.size(), 0), high(dims.size(), 0);
    low[dim] = 1;
    high[dim] = -1;
    Value before = b.pad(running, none, low, high);
    Value takes = b.compare(is_max ? Compare::kGE : Compare::kLE, x, before);
    if (hlo::is_float(x.type.element)) {
      takes = b.binary("or", takes, b.compare(Compare::kNE, x, x));
    }
    const ElementType s64 = ElementType::kS64;
    Value iota = b.iota({s64, dims}, dim);
    Value minus_one = b.constant_int(s64, -1);
    Value index = hlo::inclusive_scan(b, b.select(takes, iota, b.splat(minus_one, dims)), dim,
                                      "maximum", minus_one);
    // Element index[...] of x: its flat position is this position's, moved
    // along `dim` by (index - iota) rows of `stride` elements.
    int64_t numel = 1, stride = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
      numel *= dims[d];
      if (static_cast<int64_t>(d) > dim) stride *= dims[d];
    }
    Value flat = b.reshape(b.iota({s64, {numel}}, 0), dims);
    Value shift = b.binary("multiply", b.binary("subtract", index, iota),
                           b.splat(b.constant_int(s64, stride), dims));
    Value at = b.reshape(b.binary("add", flat, shift), {numel});
    Value picked = b.reshape(b.gather_1d(b.reshape(x, {numel}), at), dims);
    return std::vector<Value>{picked, index};
  });
}

at::Tensor& triangle_out(const char* op, bool lower, const at::Tensor& self, int64_t diagonal,
                         at::Tensor& out) {
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
  at::native::resize_output(out, self.sizes());
  if (out.numel() == 0) return out;
  const auto dims = self.sizes().vec();
  const int64_t r = self.dim() - 2, c = self.dim() - 1;
  TensorProgram program(op, program_key(op, diagonal));
  program.input(self);
  program.scalar(diagonal, ElementType::kS64);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Keep col - row <= diagonal (tril) or >= diagonal (triu).
    Value diff = b.binary("subtract", b.iota({ElementType::kS64, dims}, c),
                          b.iota({ElementType::kS64, dims}, r));
    Value keep = b.compare(lower ? Compare::kLE : Compare::kGE, diff, b.splat(in[1], dims));
    return std::vector<Value>{b.select(keep, in[0], b.zeros(in[0].type))};
  });
  return out;
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> sort_stable_out(const at::Tensor& self,
                                                     std::optional<bool> /*stable*/, int64_t dim,
                                                     bool descending, at::Tensor& values,
                                                     at::Tensor& indices) {
  const char* op = "sort";
  dim = c10::maybe_wrap_dim(dim, self.dim());
  (void)element_type_for(self.scalar_type(), op);  // orders values: no float4 (as CPU)
  check_out_dtype(op, values, self.scalar_type());
  check_out_dtype(op, indices, at::kLong);
  check_out_overlap(values, {self});
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  if (self.numel() == 0) return {values, indices};
  // Always stable: a stable order is one of the orders an unstable sort may give.
  TensorProgram program(op, program_key("sort", dim, descending));
  program.input(self);
  program.output(values);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    auto [v, i] = sort_along(b, in[0], dim, descending);
    return std::vector<Value>{v, i};
  });
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, int64_t k, int64_t dim,
                                              bool largest, bool /*sorted*/, at::Tensor& values,
                                              at::Tensor& indices) {
  const char* op = "topk";
  dim = c10::maybe_wrap_dim(dim, self.dim());
  (void)element_type_for(self.scalar_type(), op);  // orders values: no float4 (as CPU)
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 0 && k <= n, "selected index k out of range");
  check_out_dtype(op, values, self.scalar_type());
  check_out_dtype(op, indices, at::kLong);
  check_out_overlap(values, {self});
  check_out_overlap(indices, {self});
  std::vector<int64_t> shape = self.sizes().vec();
  if (!shape.empty()) shape[dim] = k;
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (values.numel() == 0) return {values, indices};
  // Results come sorted (a valid answer for sorted=False too).
  TensorProgram program(op, program_key("topk", k, dim, largest));
  program.input(self);
  program.output(values);
  program.output(indices);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    auto [v, i] = sort_along(b, in[0], dim, largest);
    if (shape.empty()) return std::vector<Value>{v, i};
    std::vector<int64_t> start(shape.size(), 0), step(shape.size(), 1);
    return std::vector<Value>{b.slice(v, start, shape, step), b.slice(i, start, shape, step)};
  });
  return {values, indices};
}

at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                       at::Tensor& out) {
  return scan_out("cumsum", "add", 0, self, dim, dtype, out);
}

at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                        at::Tensor& out) {
  return scan_out("cumprod", "multiply", 1, self, dim, dtype, out);
}

void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  cumulative_extreme("cummax", true, self, values, indices, dim);
}

void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  cumulative_extreme("cummin", false, self, values, indices, dim);
}

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  at::Tensor out = device_empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) {
    d = c10::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(std::find(wrapped.begin(), wrapped.end(), d) == wrapped.end(), "flip: dim ", d,
                " appears multiple times in the list of dims");
    wrapped.push_back(d);
  }
  TensorProgram program("flip", program_key("flip", wrapped));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{self.dim() == 0 ? in[0] : b.reverse(in[0], wrapped)};
  });
  return out;
}

at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  TORCH_CHECK(dims.empty() || shifts.size() == dims.size(), "shifts and dimensions must align. ",
              "shifts: ", shifts.size(), ", dims:", dims.size());
  at::Tensor out = device_empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const bool flat = dims.empty();
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(c10::maybe_wrap_dim(d, self.dim()));
  TensorProgram program("roll", program_key("roll", shifts.vec(), wrapped));
  program.input(self);
  program.output(out);
  const auto sizes = self.sizes().vec();
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = flat ? b.reshape(in[0], {self.numel()}) : in[0];
    const std::vector<int64_t> roll_dims = flat ? std::vector<int64_t>{0} : wrapped;
    for (size_t i = 0; i < roll_dims.size(); ++i) {
      const int64_t d = roll_dims[i], n = x.type.dims[d];
      const int64_t s = ((shifts[i] % n) + n) % n;
      if (s == 0) continue;
      // Rolling right by s: the last s elements move to the front.
      std::vector<int64_t> start(x.type.dims.size(), 0), limit = x.type.dims,
                                                         step(x.type.dims.size(), 1);
      start[d] = n - s;
      Value tail = b.slice(x, start, limit, step);
      start[d] = 0;
      limit[d] = n - s;
      Value head = b.slice(x, start, limit, step);
      x = b.concatenate({tail, head}, d);
    }
    return std::vector<Value>{b.reshape(x, sizes)};
  });
  return out;
}

at::Tensor& eye_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  at::native::resize_output(out, {n, m});
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), "eye");
  TensorProgram program("eye", "eye");
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>&) {
    Value diag = b.compare(Compare::kEQ, b.iota({ElementType::kS64, {n, m}}, 0),
                           b.iota({ElementType::kS64, {n, m}}, 1));
    return std::vector<Value>{b.convert(diag, t)};
  });
  return out;
}

at::Tensor& eye_n_out(int64_t n, at::Tensor& out) { return eye_out(n, n, out); }

at::Tensor& tril_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  return triangle_out("tril", true, self, diagonal, out);
}

at::Tensor& triu_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  return triangle_out("triu", false, self, diagonal, out);
}

}  // namespace torch_tpu::ops

// Reductions with signatures of their own, outside the boxed reduction kernel
// of ops/reduction.cc: aminmax (two results), nansum (NaN as 0),
// var_mean/std_mean (two results), equal (a bool on the host) and
// logcumsumexp (a scan). Each is one program.
#include <ATen/MemoryOverlap.h>
#include <ATen/OpMathType.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>

#include <cmath>
#include <limits>

#include "core/dtype_map.h"
#include "hlo/reduce_identity.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/program_key.h"
#include "ops/reduction_variant_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// The dims a reduction covers: all of them for no dim or an empty list (ATen's
// convention), else the listed ones, wrapped and sorted.
std::vector<int64_t> reduced_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  std::vector<int64_t> dims;
  const int64_t rank = self.dim();
  if (dim.has_value() && !dim->empty()) {
    auto bits = at::dim_list_to_bitset(*dim, rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (bits[d]) dims.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  return dims;
}

std::vector<int64_t> reduced_shape(const at::Tensor& self, const std::vector<int64_t>& dims,
                                   bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) {
      shape.push_back(self.size(d));
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

// Shape of `shape` with `dims` kept as size 1 (for broadcasting back).
std::vector<int64_t> kept_shape(std::vector<int64_t> shape, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) shape[d] = 1;
  return shape;
}

int64_t count_of(const at::Tensor& self, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= self.size(d);
  return n;
}

Value reduce(Builder& b, Value x, const std::vector<int64_t>& dims, const char* body) {
  if (dims.empty()) return x;
  return b.reduce(x, hlo::reduce_identity(b, body, x.type.element), dims, body);
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim,
                                                 bool keepdim, at::Tensor& min, at::Tensor& max) {
  const char* op = "aminmax";
  std::vector<int64_t> dims;
  if (dim.has_value()) {
    const int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
    if (self.dim() > 0) {
      TORCH_CHECK_INDEX(self.size(d) != 0, "aminmax: Expected reduction dim ", d,
                        " to have non-zero size.");
      dims.push_back(d);
    }
  } else {
    TORCH_CHECK(self.numel() > 0, "aminmax(): cannot compute aminmax over an empty dimension as ",
                "the operation has no identity.");
    dims = reduced_dims(self, std::nullopt);
  }
  TORCH_CHECK(min.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", min.scalar_type(), " instead");
  TORCH_CHECK(max.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", max.scalar_type(), " instead");
  const auto shape = reduced_shape(self, dims, keepdim);
  at::native::resize_output(min, shape);
  at::native::resize_output(max, shape);
  if (min.numel() == 0) return {min, max};
  TensorProgram program(op, program_key("aminmax", dims, keepdim));
  program.input(self);
  program.output(min);
  program.output(max);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // min/max of bools are and/or.
    const bool pred = in[0].type.element == ElementType::kPred;
    Value lo = reduce(b, in[0], dims, pred ? "and" : "minimum");
    Value hi = reduce(b, in[0], dims, pred ? "or" : "maximum");
    if (hlo::is_float(in[0].type.element)) {
      // A NaN anywhere in a slice makes both NaN. (The plugin's
      // minimum/maximum return the other operand when the second is NaN.)
      Value nan = reduce(b, b.compare(Compare::kNE, in[0], in[0]), dims, "or");
      Value nan_value = b.splat(b.constant(in[0].type.element, std::nan("")), lo.type.dims);
      lo = b.select(nan, nan_value, lo);
      hi = b.select(nan, nan_value, hi);
    }
    return std::vector<Value>{b.reshape(lo, shape), b.reshape(hi, shape)};
  });
  return {min, max};
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const char* op = "nansum";
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), "nansum on CPU does not support complex ",
              "inputs");
  const at::ScalarType result = dtype.value_or(
      at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong
                                                                   : self.scalar_type());
  TORCH_CHECK(!dtype.has_value() || out.scalar_type() == *dtype,
              "Expected out tensor to have dtype ", *dtype, ", but got ", out.scalar_type(),
              " instead");
  const auto dims = reduced_dims(self, dim);
  const auto shape = reduced_shape(self, dims, keepdim);
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  const ElementType acc = opmath_element_type_for(result, op);
  TensorProgram program(op, program_key("nansum", dims, keepdim));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.convert(in[0], acc);
    if (hlo::is_float(acc)) {
      x = b.select(b.compare(Compare::kNE, x, x), b.zeros(x.type), x);
    }
    return std::vector<Value>{b.reshape(reduce(b, x, dims, "add"), shape)};
  });
  return out;
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype) {
  const at::ScalarType result = dtype.value_or(
      at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong
                                                                   : self.scalar_type());
  at::Tensor out = device_empty({0}, self.options().dtype(result));
  return nansum_out(self, dim, keepdim, dtype, out);
}

namespace {

std::tuple<at::Tensor, at::Tensor> moments(const char* op, bool take_sqrt, const at::Tensor& self,
                                           at::OptionalIntArrayRef dim,
                                           const std::optional<at::Scalar>& correction_in,
                                           bool keepdim) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()), op,
              " only support floating point and complex dtypes");
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), op,
              ": complex inputs are not supported on tpu yet");
  const auto dims = reduced_dims(self, dim);
  const auto shape = reduced_shape(self, dims, keepdim);
  const double correction = correction_in.has_value() ? correction_in->toDouble() : 1.0;
  const int64_t count = count_of(self, dims);
  if (count - correction <= 0) {
    TORCH_WARN(op, "(): degrees of freedom is <= 0. Correction should be strictly less than the ",
               "reduction factor (input numel divided by output numel).");
  }
  at::Tensor spread = device_empty(shape, self.options());
  at::Tensor mean = device_empty(shape, self.options());
  if (spread.numel() == 0) return {spread, mean};
  const ElementType acc = opmath_element_type_for(self.scalar_type(), op);
  const auto in_shape = self.sizes().vec();
  TensorProgram program(op, program_key("moments", dims, keepdim, take_sqrt));
  program.input(self);
  // The correction is a runtime scalar: a new value does not recompile.
  program.scalar(std::max(0.0, double(count) - correction), acc);
  program.output(spread);
  program.output(mean);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Two passes, as CPU: the mean, then the squared deviations from it.
    Value x = b.convert(in[0], acc);
    Value sum = reduce(b, x, dims, "add");
    Value mu = b.binary("divide", sum, b.splat(b.constant(acc, double(count)), sum.type.dims));
    Value mub = broadcast_to(b, b.reshape(mu, kept_shape(in_shape, dims)), in_shape);
    Value dev = b.binary("subtract", x, mub);
    Value ss = reduce(b, b.binary("multiply", dev, dev), dims, "add");
    Value var = b.binary("divide", ss, b.splat(in[1], ss.type.dims));
    if (take_sqrt) var = b.unary("sqrt", var);
    return std::vector<Value>{b.reshape(var, shape), b.reshape(mu, shape)};
  });
  return {spread, mean};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim) {
  return moments("var_mean", false, self, dim, correction, keepdim);
}

std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim) {
  return moments("std_mean", true, self, dim, correction, keepdim);
}

bool equal(const at::Tensor& self, const at::Tensor& other) {
  const char* op = "equal";
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. ",
              "Got: ", self.device(), " and ", other.device());
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  // Compared in the promoted dtype, as CPU does; NaN equals nothing. The one
  // host read is the answer.
  const at::ScalarType common = at::promote_types(self.scalar_type(), other.scalar_type());
  const ElementType t = element_type_for(common, op);
  at::Tensor result = device_empty({}, self.options().dtype(at::kBool));
  TensorProgram program(op, "equal");
  program.input(self);
  program.input(other);
  program.output(result);
  const int64_t n = self.numel();
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value same = b.compare(Compare::kEQ, b.reshape(b.convert(in[0], t), {n}),
                           b.reshape(b.convert(in[1], t), {n}));
    return std::vector<Value>{b.reduce(same, b.constant_int(ElementType::kPred, 1), {0}, "and")};
  });
  return result.item<bool>();
}

at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  const char* op = "logcumsumexp";
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"logcumsumexp_out_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(out, self.sizes());
  if (out.numel() == 0) return out;
  const ElementType acc = opmath_element_type_for(self.scalar_type(), op);
  TensorProgram program(op, program_key("logcumsumexp", dim));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.convert(in[0], acc);
    if (x.type.dims.empty()) return std::vector<Value>{x};
    const auto shape = x.type.dims;
    const int64_t n = shape[dim];
    const double inf = std::numeric_limits<double>::infinity();
    Value neg_inf = b.constant(acc, -inf);
    // CPU's log-add-exp step: max + log1p(exp(min - max)), NaN if either
    // is NaN (the plugin's minimum/maximum drop a NaN second operand), and
    // two equal infinities left as they are.
    auto combine = [&](Value acc_value, Value next) {
      Value lo = b.binary("minimum", acc_value, next);
      Value hi = b.binary("maximum", acc_value, next);
      Value r = b.binary(
          "add", b.unary("log_plus_one", b.unary("exponential", b.binary("subtract", lo, hi))), hi);
      Value finite =
          b.compare(Compare::kLT, b.unary("abs", lo), b.splat(b.constant(acc, inf), shape));
      Value special = b.binary("and", b.compare(Compare::kEQ, lo, hi), b.unary("not", finite));
      Value nan = b.binary("or", b.compare(Compare::kNE, acc_value, acc_value),
                           b.compare(Compare::kNE, next, next));
      return b.select(nan, b.binary("add", acc_value, next), b.select(special, acc_value, r));
    };
    // Inclusive scan in log2(n) steps: each element combines with the partial
    // result `step` places before it (-inf, the identity, before the start).
    std::vector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
    for (int64_t step = 1; step < n; step *= 2) {
      std::vector<int64_t> low(shape.size(), 0), high(shape.size(), 0), limit = shape;
      low[dim] = step;
      limit[dim] = n;
      Value shifted = b.slice(b.pad(x, neg_inf, low, high), zeros, limit, ones);
      x = combine(shifted, x);
    }
    return std::vector<Value>{x};
  });
  return out;
}

at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim) {
  at::Tensor out = device_empty({0}, self.options());
  return logcumsumexp_out(self, dim, out);
}

}  // namespace torch_tpu::ops

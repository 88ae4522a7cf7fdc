// Elementwise arithmetic on f64 values of one shape, for the special
// functions that compute in double whatever their input's type (a
// tail-accurate formula written as a chain of builder calls reads better
// as d.mul(x, d.c(2)) than as b.binary("multiply", x, b.splat(...))).
#pragma once

#include <string>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

class Doubles {
 public:
  Doubles(Builder& b, const std::vector<int64_t>& dims) : b_(b), dims_(dims) {}

  Value c(double v) const { return b_.splat(b_.constant(ElementType::kF64, v), dims_); }
  Value add(Value x, Value y) const { return b_.binary("add", x, y); }
  Value sub(Value x, Value y) const { return b_.binary("subtract", x, y); }
  Value mul(Value x, Value y) const { return b_.binary("multiply", x, y); }
  Value div(Value x, Value y) const { return b_.binary("divide", x, y); }
  Value lt(Value x, Value y) const { return b_.compare(Compare::kLT, x, y); }
  Value le(Value x, Value y) const { return b_.compare(Compare::kLE, x, y); }
  Value gt(Value x, Value y) const { return b_.compare(Compare::kGT, x, y); }
  Value eq(Value x, Value y) const { return b_.compare(Compare::kEQ, x, y); }
  Value is_nan(Value x) const { return b_.compare(Compare::kNE, x, x); }
  Value unary(const char* op, Value x) const { return b_.unary(op, x); }
  Value chlo(const char* op, Value x) const {
    return b_.op(std::string("chlo.") + op, {x}, x.type);
  }
  Value select(Value p, Value x, Value y) const { return b_.select(p, x, y); }
  Value any(Value p, Value q) const { return b_.binary("or", p, q); }

  // f computed in double on x, rounded back to x's type.
  template <typename F>
  static Value in_double(Builder& b, Value x, F f) {
    const Doubles d(b, x.type.dims);
    return b.convert(f(d, b.convert(x, ElementType::kF64)), x.type.element);
  }

 private:
  Builder& b_;
  std::vector<int64_t> dims_;
};

}  // namespace torch_tpu::hlo

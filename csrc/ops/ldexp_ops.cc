// ldexp(x, e) = x * 2**e. PyTorch's composite computes exactly that product,
// whose 2**e overflows before x scales it down (ldexp(0.0, 256) would be
// NaN); CPU's kernel for an integer exponent is std::ldexp, exact. Here an
// integer exponent scales x in float64 by powers of two built from their
// bits (each product exact), then rounds once to the result's dtype; a
// floating exponent keeps the composite's product, as CPU does.
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>

#include <vector>

#include "core/dtype_map.h"
#include "hlo/int_constants.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/ldexp_kernels.h"
#include "ops/result_layout.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::s64_splat;
using hlo::Value;

// 2**k as float64 for s64 k in [-1022, 1023]: the exponent field alone.
Value power_of_two(Builder& b, Value k) {
  const std::vector<int64_t> dims = k.type.dims;
  Value biased = b.binary("add", k, s64_splat(b, 1023, dims));
  Value bits = b.binary("shift_left", biased, s64_splat(b, 52, dims));
  return b.bitcast_convert(bits, {ElementType::kF64, dims});
}

at::ScalarType result_dtype(const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType t = at::result_type(self, other);
  return at::isIntegralType(t, /*includeBool=*/true)
             ? c10::typeMetaToScalarType(c10::get_default_dtype())
             : t;
}

// (An integer self takes CPU's composite product too: ldexp(0, 255) is
// 0 * inf, NaN, there.)
bool exact_path(const at::Tensor& self, const at::Tensor& other, at::ScalarType result) {
  return at::isFloatingType(self.scalar_type()) &&
         at::isIntegralType(other.scalar_type(), /*includeBool=*/false) &&
         at::isFloatingType(result);
}

}  // namespace

at::Tensor& ldexp_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  const at::ScalarType result = result_dtype(self, other);
  if (!exact_path(self, other, result)) return at::mul_out(out, self, at::pow(2.0, other));
  TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
  // laid out as CPU's self * 2**other is (a transposed self, a transposed result)
  resize_out(out, shape, {&self, &other});
  if (out.numel() == 0) return out;
  // float64 results scale in three steps of at most 2**700 each (so no
  // factor overflows); narrower ones need one (their range is far smaller).
  const bool wide = result == at::kDouble;
  const int64_t limit = wide ? 2100 : 400;
  const int steps = wide ? 3 : 1;
  TensorProgram program("ldexp", std::string("ldexp:") + (wide ? "3" : "1"));
  program.input(self);
  program.input(other);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // x in the result's dtype first (an integer x converts as CPU casts it)
    Value x = b.convert(broadcast_to(b, b.convert(in[0], element_type_for(result, "ldexp")), shape),
                        ElementType::kF64);
    Value e = broadcast_to(b, b.convert(in[1], ElementType::kS64), shape);
    e = b.binary("maximum", e, s64_splat(b, -limit, shape));
    e = b.binary("minimum", e, s64_splat(b, limit, shape));
    for (int i = steps; i >= 1; --i) {
      // e / i of what is left, so the parts add up to e
      Value part = b.binary("divide", e, s64_splat(b, i, shape));
      x = b.binary("multiply", x, power_of_two(b, part));
      e = b.binary("subtract", e, part);
    }
    return std::vector<Value>{x};
  });
  return out;
}

at::Tensor ldexp(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = device_empty({0}, self.options().dtype(result_dtype(self, other)));
  return ops::ldexp_out(self, other, out);
}

at::Tensor& ldexp_(at::Tensor& self, const at::Tensor& other) {
  return ops::ldexp_out(self, other, self);
}

}  // namespace torch_tpu::ops

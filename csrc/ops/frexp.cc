// frexp(x) = (mantissa, exponent) with x = mantissa * 2**exponent and
// |mantissa| in [0.5, 1): ldexp's inverse. Read from the bits of x in its
// own type: the exponent field less the bias of [0.5, 1), and the fraction
// under that field; a subnormal's fraction is shifted up to its leading bit
// first. Zeros, infinities and NaN keep x with exponent 0, as std::frexp.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/ldexp_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// The bit layout of a float type: its width's unsigned type, fraction
// bits, and the exponent field's value for [0.5, 1) (the IEEE bias less 1).
struct FloatBits {
  ElementType word;
  int width, fraction;
  uint64_t half_bias;
};

FloatBits float_bits(ElementType t) {
  switch (t) {
    case ElementType::kF64:
      return {ElementType::kU64, 64, 52, 1022};
    case ElementType::kF16:
      return {ElementType::kU16, 16, 10, 14};
    case ElementType::kBF16:
      return {ElementType::kU16, 16, 7, 126};
    default:
      return {ElementType::kU32, 32, 23, 126};
  }
}

void frexp_into(const at::Tensor& self, const at::Tensor& mantissa, const at::Tensor& exponent) {
  if (self.numel() == 0) return;
  const ElementType t = element_type_for(self.scalar_type(), "frexp");
  const FloatBits f = float_bits(t);
  const auto dims = self.sizes().vec();
  TensorProgram program("frexp", "frexp");
  program.input(self);
  program.output(mantissa);
  program.output(exponent);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    // Integer operations on the bits only: the CPU plugin flushes subnormal
    // floats to zero in float arithmetic, and frexp must see them.
    const ElementType u = f.word, s32 = ElementType::kS32;
    auto word = [&](uint64_t v) {
      return b.splat(b.constant_int(u, static_cast<int64_t>(v)), dims);
    };
    auto int32 = [&](int64_t v) { return b.splat(b.constant_int(s32, v), dims); };
    const uint64_t sign_mask = 1ULL << (f.width - 1);
    const uint64_t fraction_mask = (1ULL << f.fraction) - 1;
    const uint64_t field_ones = (sign_mask - 1) >> f.fraction;
    Value x = in[0];
    Value bits = b.bitcast_convert(x, {u, dims});
    Value sign = b.binary("and", bits, word(sign_mask));
    Value magnitude = b.binary("and", bits, word(~sign_mask & (sign_mask | (sign_mask - 1))));
    Value field =
        b.binary("shift_right_logical", magnitude, word(static_cast<uint64_t>(f.fraction)));
    Value fraction = b.binary("and", magnitude, word(fraction_mask));
    Value keep = b.binary("or", b.compare(Compare::kEQ, magnitude, word(0)),
                          b.compare(Compare::kEQ, field, word(field_ones)));
    Value subnormal = b.compare(Compare::kEQ, field, word(0));
    // A subnormal's leading bit p moves to the implicit position.
    Value lead = b.binary("subtract", word(static_cast<uint64_t>(f.width - 1)),
                          b.unary("count_leading_zeros", fraction));
    Value shift = b.binary("subtract", word(static_cast<uint64_t>(f.fraction)), lead);
    Value normalized =
        b.binary("and", b.binary("shift_left", fraction, shift), word(fraction_mask));
    Value new_fraction = b.select(subnormal, normalized, fraction);
    Value m_bits =
        b.binary("or", b.binary("or", sign, word(f.half_bias << f.fraction)), new_fraction);
    Value e_normal =
        b.binary("subtract", b.convert(field, s32), int32(static_cast<int64_t>(f.half_bias)));
    Value e_sub = b.binary("add", b.convert(lead, s32),
                           int32(1 - static_cast<int64_t>(f.half_bias) - f.fraction));
    Value e = b.select(subnormal, e_sub, e_normal);
    Value m = b.select(keep, x, b.bitcast_convert(m_bits, {t, dims}));
    return std::vector<Value>{m, b.select(keep, int32(0), e)};
  });
}

void check_frexp(const at::Tensor& self) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "torch.frexp() only supports floating-point dtypes");
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> frexp(const at::Tensor& self) {
  check_frexp(self);
  at::Tensor mantissa = device_empty(self.sizes(), self.options());
  at::Tensor exponent = device_empty(self.sizes(), self.options().dtype(at::kInt));
  frexp_into(self, mantissa, exponent);
  return {mantissa, exponent};
}

std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& self, at::Tensor& mantissa,
                                               at::Tensor& exponent) {
  check_frexp(self);
  TORCH_CHECK(mantissa.scalar_type() == self.scalar_type(),
              "torch.frexp() expects mantissa to have dtype ", self.scalar_type(), " but got ",
              mantissa.scalar_type());
  TORCH_CHECK(exponent.scalar_type() == at::kInt,
              "torch.frexp() expects exponent to have int dtype but got ", exponent.scalar_type());
  at::native::resize_output(mantissa, self.sizes());
  at::native::resize_output(exponent, self.sizes());
  frexp_into(self, mantissa, exponent);
  return {mantissa, exponent};
}

}  // namespace torch_tpu::ops

#include "ops/elementwise_dtypes.h"

#include <c10/util/Exception.h>

#include <unordered_map>
#include <unordered_set>

#include "ops/orthogonal_polynomials.h"

namespace torch_tpu::ops {

DtypeClass dtype_class(c10::ScalarType dtype) {
  if (dtype == c10::kBool) return kBoolClass;
  if (c10::isComplexType(dtype)) return kComplexClass;
  if (dtype == c10::kHalf || dtype == c10::kBFloat16) return kHalfClass;
  if (c10::isFloatingType(dtype)) return kFloatClass;
  return kIntegerClass;
}

namespace {

// F: every float type; W: float32 and float64 only (kernels CPU has no
// half or bfloat16 version of).
constexpr uint8_t B = kBoolClass, I = kIntegerClass, W = kFloatClass, F = kFloatClass | kHalfClass,
                  C = kComplexClass;

// What the CPU kernels take, by the dtype they compute in (after type
// promotion, before integers are promoted to float for ops such as sqrt).
// Ops not listed take every dtype.
const std::unordered_map<std::string, DtypeRule>& rules() {
  static auto* const table = new std::unordered_map<std::string, DtypeRule>{
      {"abs", {I | F | C}},
      {"neg",
       {I | F | C, B,
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead."}},
      {"sign", {B | I | F}},
      {"ceil", {I | F}},
      {"floor", {I | F}},
      {"trunc", {I | F}},
      {"round", {I | F}},
      {"frac", {F}},
      {"bitwise_not", {B | I}},
      {"bitwise_and", {B | I}},
      {"bitwise_or", {B | I}},
      {"bitwise_xor", {B | I}},
      {"relu", {I | F, B, "Boolean inputs not supported for relu"}},
      {"erf", {B | I | F}},
      {"erfinv", {B | I | F}},
      {"logit", {B | I | F}},
      {"gelu", {F}},
      {"gelu_backward", {F}},
      {"silu", {F | C}},
      {"silu_backward", {F | C}},
      {"mish", {F}},
      {"sigmoid_backward", {F | C}},
      {"tanh_backward", {F | C}},
      {"threshold_backward", {I | F}},
      {"leaky_relu", {F}},
      {"leaky_relu_backward", {F}},
      {"elu", {F}},
      {"elu_backward", {F}},
      {"hardtanh", {I | F, B, "Bool inputs not supported for hardtanh"}},
      {"hardtanh_backward", {F}},
      {"hardsigmoid", {F}},
      {"hardsigmoid_backward", {F}},
      {"hardswish", {F}},
      {"hardswish_backward", {F}},
      {"softplus", {F}},
      {"softplus_backward", {F}},
      {"logit_backward", {F}},
      {"xlogy", {B | I | F}},
      {"isneginf", {B | I | F, C, "isneginf does not support complex inputs."}},
      {"isposinf", {B | I | F, C, "isposinf does not support complex inputs."}},
      // div with a rounding mode (div itself takes every dtype)
      {"div_rounding", {I | F}},
      {"floor_divide", {I | F}},
      {"remainder", {I | F}},
      {"fmod", {I | F}},
      {"atan2", {B | I | F}},
      {"hypot", {F}},
      {"nextafter", {F}},
      {"igamma", {F}},
      {"igammac", {F}},
      {"copysign", {B | I | F}},
      {"maximum", {B | I | F, C, "maximum not implemented for complex tensors."}},
      {"minimum", {B | I | F, C, "minimum not implemented for complex tensors."}},
      {"fmax", {B | I | F, C, "fmax not implemented for complex tensors."}},
      {"fmin", {B | I | F, C, "fmin not implemented for complex tensors."}},
      {"lt", {B | I | F}},
      {"le", {B | I | F}},
      {"gt", {B | I | F}},
      {"ge", {B | I | F}},
      {"clamp", {B | I | F}},
      {"clamp_min", {B | I | F}},
      {"clamp_max", {B | I | F}},
      {"lerp", {F | C}},
      {"addcmul", {I | F | C}},
      {"digamma", {B | I | F}},
      {"erfc", {B | I | F}},
      {"lgamma", {B | I | F}},
      {"i0", {B | I | F}},
      {"special_i1", {B | I | F}},
      {"special_i0e", {B | I | F}},
      {"special_modified_bessel_i0", {B | I | W}},
      {"special_modified_bessel_i1", {B | I | W}},
      {"special_i1e", {B | I | F}},
      {"special_entr", {B | I | F}},
      {"special_spherical_bessel_j0", {B | I | W}},
      {"special_xlog1py", {B | I | F}},
      {"special_zeta", {B | I | W}},
      {"special_bessel_j0", {B | I | W}},
      {"special_bessel_j1", {B | I | W}},
      {"special_bessel_y0", {B | I | W}},
      {"special_bessel_y1", {B | I | W}},
      {"special_modified_bessel_k0", {B | I | W}},
      {"special_modified_bessel_k1", {B | I | W}},
      {"special_scaled_modified_bessel_k0", {B | I | W}},
      {"special_scaled_modified_bessel_k1", {B | I | W}},
      {"special_erfcx", {B | I | W}},
      {"special_log_ndtr", {B | I | W}},
      {"special_ndtri", {B | I | W}},
      {"threshold", {I | F}},
      {"heaviside", {B | I | F, C, "heaviside is not yet implemented for complex tensors."}},
  };
  static const bool polynomials_added = [] {
    for (const auto& name : orthogonal_polynomial_ops()) (*table)[name] = {B | I | W};
    return true;
  }();
  (void)polynomials_added;
  return *table;
}

}  // namespace

const DtypeRule& dtype_rule(const std::string& name) {
  static const DtypeRule any;
  auto it = rules().find(name);
  return it == rules().end() ? any : it->second;
}

void refuse_dtype(const DtypeRule& rule, const std::string& op_name, c10::ScalarType dtype) {
  TORCH_CHECK(!(rule.runtime_error_classes & dtype_class(dtype)), rule.runtime_error_message);
  refuse_dtype(op_name, dtype);
}

void refuse_dtype(const std::string& op_name, c10::ScalarType dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", op_name, "\" not implemented for '",
                              c10::toString(dtype), "'");
}

bool out_dtype_must_match(const std::string& overload_name) {
  static const auto* strict = new std::unordered_set<std::string>{
      "abs.out",
      "neg.out",
      "conj_physical.out",
      "sign.out",
      "sgn.out",
      "ceil.out",
      "floor.out",
      "trunc.out",
      "round.out",
      "round.decimals_out",
      "frac.out",
      "bitwise_not.out",
      "clamp.out",
      "clamp_min.out",
      "clamp_max.out",
      "gelu.out",
      "gelu_backward.grad_input",
      "silu.out",
      "mish.out",
      "elu.out",
      "hardtanh.out",
      "hardsigmoid.out",
      "hardswish.out",
      "leaky_relu.out",
      "softplus.out",
      "lerp.Tensor_out",
      "nan_to_num.out",
      "masked_fill.Scalar_out",
      "masked_fill.Tensor_out",
      "where.self_out",
      "floor_divide.Scalar_out",
  };
  return strict->count(overload_name) > 0;
}

}  // namespace torch_tpu::ops

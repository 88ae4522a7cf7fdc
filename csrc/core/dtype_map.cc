#include "core/dtype_map.h"

#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>

#include <string_view>

namespace torch_tpu {

using hlo::ElementType;

namespace {
bool lookup(c10::ScalarType t, ElementType* out) {
  switch (t) {
    case c10::kBool:
      *out = ElementType::kPred;
      return true;
    case c10::kChar:
      *out = ElementType::kS8;
      return true;
    case c10::kShort:
      *out = ElementType::kS16;
      return true;
    case c10::kInt:
      *out = ElementType::kS32;
      return true;
    case c10::kLong:
      *out = ElementType::kS64;
      return true;
    case c10::kByte:
      *out = ElementType::kU8;
      return true;
    case c10::kUInt16:
      *out = ElementType::kU16;
      return true;
    case c10::kUInt32:
      *out = ElementType::kU32;
      return true;
    case c10::kUInt64:
      *out = ElementType::kU64;
      return true;
    case c10::kHalf:
      *out = ElementType::kF16;
      return true;
    case c10::kBFloat16:
      *out = ElementType::kBF16;
      return true;
    case c10::kFloat:
      *out = ElementType::kF32;
      return true;
    case c10::kDouble:
      *out = ElementType::kF64;
      return true;
    case c10::kComplexFloat:
      *out = ElementType::kC64;
      return true;
    case c10::kComplexDouble:
      *out = ElementType::kC128;
      return true;
    case c10::kFloat8_e4m3fn:
      *out = ElementType::kF8E4M3FN;
      return true;
    case c10::kFloat8_e5m2:
      *out = ElementType::kF8E5M2;
      return true;
    case c10::kFloat8_e4m3fnuz:
      *out = ElementType::kF8E4M3FNUZ;
      return true;
    case c10::kFloat8_e5m2fnuz:
      *out = ElementType::kF8E5M2FNUZ;
      return true;
    case c10::kFloat8_e8m0fnu:
      *out = ElementType::kF8E8M0FNU;
      return true;
    // Two 4-bit floats per byte: PyTorch defines no arithmetic on it, only
    // storage and data movement, so programs carry its bytes (below).
    case c10::kFloat4_e2m1fn_x2:
      *out = ElementType::kU8;
      return true;
    default:
      return false;
  }
}
}  // namespace

bool is_supported_dtype(c10::ScalarType type) {
  ElementType unused;
  return lookup(type, &unused);
}

namespace {
// The ops that take float4_e2m1fn_x2 tensors: those that move or compare
// bytes, which CPU has for it ("tpu" is reading an operand's view; an op
// that computes on it names itself, and is refused below). `op` may be an
// overload's full name ("aten::eq.Tensor").
bool moves_bytes(std::string_view op) {
  const size_t colons = op.find("::");
  if (colons != std::string_view::npos) op.remove_prefix(colons + 2);
  op = op.substr(0, op.find('.'));
  static const char* const kOps[] = {"tpu", "copy_", "empty", "empty_strided", "cat",  "eq",
                                     "eq_", "ne",    "ne_",   "where",         "isnan"};
  for (const char* name : kOps) {
    if (op == name) return true;
  }
  return false;
}
}  // namespace

ElementType element_type_for(c10::ScalarType type, const char* op) {
  ElementType out;
  TORCH_CHECK_TYPE(lookup(type, &out), op, ": dtype ", type, " is not supported on the tpu device");
  // as CPU: "abs_cpu" not implemented for 'Float4_e2m1fn_x2'
  TORCH_CHECK_NOT_IMPLEMENTED(type != c10::kFloat4_e2m1fn_x2 || moves_bytes(op), "\"", op,
                              "\" not implemented for '", c10::toString(type), "'");
  return out;
}

ElementType opmath_element_type_for(c10::ScalarType type, const char* op) {
  (void)element_type_for(type, op);  // (toOpMathType asserts on float4_e2m1fn_x2)
  return element_type_for(at::toOpMathType(type), op);
}

pjrt::BufferType buffer_type_for(ElementType type) {
  switch (type) {
    case ElementType::kPred:
      return PJRT_Buffer_Type_PRED;
    case ElementType::kS8:
      return PJRT_Buffer_Type_S8;
    case ElementType::kS16:
      return PJRT_Buffer_Type_S16;
    case ElementType::kS32:
      return PJRT_Buffer_Type_S32;
    case ElementType::kS64:
      return PJRT_Buffer_Type_S64;
    case ElementType::kU8:
      return PJRT_Buffer_Type_U8;
    case ElementType::kU16:
      return PJRT_Buffer_Type_U16;
    case ElementType::kU32:
      return PJRT_Buffer_Type_U32;
    case ElementType::kU64:
      return PJRT_Buffer_Type_U64;
    case ElementType::kF16:
      return PJRT_Buffer_Type_F16;
    case ElementType::kBF16:
      return PJRT_Buffer_Type_BF16;
    case ElementType::kF32:
      return PJRT_Buffer_Type_F32;
    case ElementType::kF64:
      return PJRT_Buffer_Type_F64;
    case ElementType::kC64:
      return PJRT_Buffer_Type_C64;
    case ElementType::kC128:
      return PJRT_Buffer_Type_C128;
    case ElementType::kF8E4M3FN:
      return PJRT_Buffer_Type_F8E4M3FN;
    case ElementType::kF8E5M2:
      return PJRT_Buffer_Type_F8E5M2;
    case ElementType::kF8E4M3FNUZ:
      return PJRT_Buffer_Type_F8E4M3FNUZ;
    case ElementType::kF8E5M2FNUZ:
      return PJRT_Buffer_Type_F8E5M2FNUZ;
    case ElementType::kF8E8M0FNU:
      return PJRT_Buffer_Type_F8E8M0FNU;
  }
  return PJRT_Buffer_Type_INVALID;
}

ElementType element_type_from_buffer(pjrt::BufferType type) {
  for (int i = 0; i <= static_cast<int>(ElementType::kLast); ++i) {
    auto e = static_cast<ElementType>(i);
    if (buffer_type_for(e) == type) return e;
  }
  TORCH_CHECK(false, "tpu: unexpected PJRT buffer type ", pjrt::buffer_type_name(type));
}

}  // namespace torch_tpu

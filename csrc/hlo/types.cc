#include "hlo/types.h"

#include <stdexcept>

namespace torch_tpu::hlo {

const char* mlir_name(ElementType type) {
  switch (type) {
    case ElementType::kPred:
      return "i1";
    case ElementType::kS8:
      return "i8";
    case ElementType::kS16:
      return "i16";
    case ElementType::kS32:
      return "i32";
    case ElementType::kS64:
      return "i64";
    case ElementType::kU8:
      return "ui8";
    case ElementType::kU16:
      return "ui16";
    case ElementType::kU32:
      return "ui32";
    case ElementType::kU64:
      return "ui64";
    case ElementType::kF16:
      return "f16";
    case ElementType::kBF16:
      return "bf16";
    case ElementType::kF32:
      return "f32";
    case ElementType::kF64:
      return "f64";
    case ElementType::kC64:
      return "complex<f32>";
    case ElementType::kC128:
      return "complex<f64>";
    case ElementType::kF8E4M3FN:
      return "f8E4M3FN";
    case ElementType::kF8E5M2:
      return "f8E5M2";
    case ElementType::kF8E4M3FNUZ:
      return "f8E4M3FNUZ";
    case ElementType::kF8E5M2FNUZ:
      return "f8E5M2FNUZ";
    case ElementType::kF8E8M0FNU:
      return "f8E8M0FNU";
  }
  return "?";
}

size_t byte_size(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kU8:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E8M0FNU:
      return 1;
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kF16:
    case ElementType::kBF16:
      return 2;
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kF32:
      return 4;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kF64:
    case ElementType::kC64:
      return 8;
    case ElementType::kC128:
      return 16;
  }
  return 0;
}

bool is_float(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 ||
         t == ElementType::kF64 || is_float8(t);
}
bool is_float8(ElementType t) {
  return t == ElementType::kF8E4M3FN || t == ElementType::kF8E5M2 ||
         t == ElementType::kF8E4M3FNUZ || t == ElementType::kF8E5M2FNUZ ||
         t == ElementType::kF8E8M0FNU;
}
bool is_complex(ElementType t) { return t == ElementType::kC64 || t == ElementType::kC128; }
ElementType real_part_type(ElementType t) {
  return t == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
}
ElementType complex_type_of(ElementType t) {
  return t == ElementType::kF64 ? ElementType::kC128 : ElementType::kC64;
}
bool is_signed_int(ElementType t) {
  return t == ElementType::kS8 || t == ElementType::kS16 || t == ElementType::kS32 ||
         t == ElementType::kS64;
}
bool is_unsigned_int(ElementType t) {
  return t == ElementType::kU8 || t == ElementType::kU16 || t == ElementType::kU32 ||
         t == ElementType::kU64;
}

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : dims) s += std::to_string(d) + "x";
  s += mlir_name(element);
  s += ">";
  return s;
}

std::string i64_array(const std::vector<int64_t>& values) {
  std::string s = "array<i64";
  for (size_t i = 0; i < values.size(); ++i) {
    s += (i == 0 ? ": " : ", ") + std::to_string(values[i]);
  }
  return s + ">";
}

namespace {

// Pred elements spelled out, nested by dimension ("[[true, false]]"): MLIR
// reads raw hex data for i1 as packed bits, not as the byte per element
// the host holds.
void append_pred_elements(std::string& s, const std::vector<int64_t>& dims, size_t dim,
                          const unsigned char*& next) {
  if (dim == dims.size()) {
    s += *next++ ? "true" : "false";
    return;
  }
  s += "[";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) s += ", ";
    append_pred_elements(s, dims, dim + 1, next);
  }
  s += "]";
}

}  // namespace

std::string constant_op_text(const TensorType& type, const unsigned char* bytes, size_t size) {
  if (size != static_cast<size_t>(type.numel()) * byte_size(type.element)) {
    throw std::invalid_argument("constant_op_text: " + std::to_string(size) + " bytes for " +
                                type.str());
  }
  std::string literal;
  if (type.element == ElementType::kPred) {
    append_pred_elements(literal, type.dims, 0, bytes);
  } else {
    static const char* digits = "0123456789ABCDEF";
    literal = "\"0x";
    for (size_t i = 0; i < size; ++i) {
      literal += digits[bytes[i] >> 4];
      literal += digits[bytes[i] & 15];
    }
    literal += "\"";
  }
  const std::string t = type.str();
  return "\"stablehlo.constant\"() {value = dense<" + literal + "> : " + t + "} : () -> " + t;
}

std::string bracket_list(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

}  // namespace torch_tpu::hlo

// StableHLO element and tensor types, and their MLIR spelling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace torch_tpu::hlo {

enum class ElementType {
  kPred,
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  // 8-bit floats (PyTorch's float8 dtypes; StableHLO's names): storage,
  // transfers and conversions; arithmetic goes through a wider type.
  kF8E4M3FN,
  kF8E5M2,
  kF8E4M3FNUZ,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kLast = kF8E8M0FNU,
};

const char* mlir_name(ElementType type);  // "f32", "ui8", "i1", ...
size_t byte_size(ElementType type);
bool is_float(ElementType type);  // the 8-bit floats included
bool is_float8(ElementType type);
bool is_complex(ElementType type);
// The type of a complex type's parts (f32 for c64, f64 for c128), and the
// complex type with parts of a float type (c128 for f64, else c64).
ElementType real_part_type(ElementType complex);
ElementType complex_type_of(ElementType real);
bool is_signed_int(ElementType type);
bool is_unsigned_int(ElementType type);  // pred excluded

struct TensorType {
  ElementType element;
  std::vector<int64_t> dims;

  int64_t numel() const;
  size_t rank() const { return dims.size(); }
  std::string str() const;  // "tensor<2x3xf32>"
  bool operator==(const TensorType& other) const {
    return element == other.element && dims == other.dims;
  }
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

// "array<i64: 1, 2>"
std::string i64_array(const std::vector<int64_t>& values);
// "[1, 2]"
std::string bracket_list(const std::vector<int64_t>& values);

// `type`'s constant op holding raw little-endian element bytes (numel *
// size; for pred, one byte per element):
// "stablehlo.constant"() {value = dense<...> : T} : () -> T
std::string constant_op_text(const TensorType& type, const unsigned char* bytes, size_t size);

}  // namespace torch_tpu::hlo

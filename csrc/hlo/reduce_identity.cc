#include "hlo/reduce_identity.h"

#include <cstdint>
#include <limits>

namespace torch_tpu::hlo {

Value reduce_identity(Builder& b, std::string_view body, ElementType type) {
  if (body == "multiply" || body == "and") return b.constant_int(type, 1);
  if (body != "maximum" && body != "minimum") return b.constant_int(type, 0);  // add, or
  const bool lowest = body == "maximum";
  if (is_float(type)) {
    const double inf = std::numeric_limits<double>::infinity();
    return b.constant(type, lowest ? -inf : inf);
  }
  if (type == ElementType::kPred) return b.constant_int(type, lowest ? 0 : 1);
  const int bits = static_cast<int>(byte_size(type)) * 8;
  if (is_unsigned_int(type)) {
    // constant_int prints unsigned values from their uint64 bits.
    return b.constant_int(type, lowest ? 0 : static_cast<int64_t>(~uint64_t(0) >> (64 - bits)));
  }
  const int64_t max = static_cast<int64_t>((uint64_t(1) << (bits - 1)) - 1);
  return b.constant_int(type, lowest ? -max - 1 : max);
}

}  // namespace torch_tpu::hlo

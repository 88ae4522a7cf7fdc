// s64 constants for index arithmetic in lowerings (positions, counts,
// findings), which many ops build.
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

inline Value s64(Builder& b, int64_t v) { return b.constant_int(ElementType::kS64, v); }

// `v` broadcast to `dims`.
inline Value s64_splat(Builder& b, int64_t v, const std::vector<int64_t>& dims) {
  return b.splat(s64(b, v), dims);
}

}  // namespace torch_tpu::hlo

// The value a reduction with a given body starts from.
#pragma once

#include <string_view>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

// 0 for add and or, 1 for multiply and and, the lowest value of `type` for
// maximum and the highest for minimum (-inf/+inf for floats), as a scalar
// constant of `type`.
Value reduce_identity(Builder& b, std::string_view body, ElementType type);

}  // namespace torch_tpu::hlo

// Broadcasting a lowered value to an output shape (NumPy rules: shapes
// aligned at the right, size-1 dims stretched).
#pragma once

#include <vector>

#include "hlo/builder.h"

namespace torch_tpu {

hlo::Value broadcast_to(hlo::Builder& b, hlo::Value v, const std::vector<int64_t>& shape);

}  // namespace torch_tpu

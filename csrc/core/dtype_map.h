// PyTorch dtypes <-> StableHLO element types <-> PJRT buffer types.
#pragma once

#include <c10/core/ScalarType.h>

#include "hlo/types.h"
#include "pjrt/element_type.h"

namespace torch_tpu {

bool is_supported_dtype(c10::ScalarType type);
// Throws a TypeError-mapped c10::Error naming `op` for unsupported dtypes.
hlo::ElementType element_type_for(c10::ScalarType type, const char* op);
// The element type `op` computes `type` in (at::toOpMathType's: float for
// half and bfloat16), after the same checks.
hlo::ElementType opmath_element_type_for(c10::ScalarType type, const char* op);
pjrt::BufferType buffer_type_for(hlo::ElementType type);
hlo::ElementType element_type_from_buffer(pjrt::BufferType type);

}  // namespace torch_tpu

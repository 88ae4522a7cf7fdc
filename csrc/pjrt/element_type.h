// Element types as PJRT sees them. Kept separate from hlo::ElementType so the
// runtime layer does not depend on the program builder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pjrt_c_api.h"

namespace torch_tpu::pjrt {

using BufferType = PJRT_Buffer_Type;

// Size in bytes of one element, 0 for types without a byte size.
size_t byte_size(BufferType type);
const char* buffer_type_name(BufferType type);

}  // namespace torch_tpu::pjrt

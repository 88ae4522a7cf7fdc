// Device buffers for runtime scalar arguments (alpha, a Python number in
// `x * 1.5`, an optimizer's step size), uploaded once per distinct value.
//
// Scalars are program arguments so a new value never recompiles; uploading
// one costs a host-to-device transfer per launch, more than a small kernel
// itself. PJRT buffers are immutable and programs never donate their
// arguments, so one buffer per (device, type, value) can serve every launch.
#pragma once

#include <cstddef>

#include "hlo/types.h"
#include "pjrt/buffer.h"

namespace torch_tpu {

// A 0-d buffer of `type` holding `size` bytes of `bytes` on the device.
pjrt::BufferPtr scalar_buffer(const unsigned char* bytes, size_t size, hlo::ElementType type,
                              int device_index);

}  // namespace torch_tpu

// at::empty for the ops' own results and temporaries.
//
// On a tpu device this calls the device's empty kernel directly: on the
// launch path of a small op, the dispatcher's round trip to that same kernel
// cost about as much as the tensor itself. Anywhere else (a host tensor, a
// pinned or non-strided one) it is at::empty.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor device_empty(at::IntArrayRef sizes, const at::TensorOptions& options,
                        std::optional<at::MemoryFormat> memory_format = std::nullopt);

}  // namespace torch_tpu::ops

#include "ops/device_empty.h"

#include <ATen/ops/empty.h>

#include "ops/kernels.h"

namespace torch_tpu::ops {

at::Tensor device_empty(at::IntArrayRef sizes, const at::TensorOptions& options,
                        std::optional<at::MemoryFormat> memory_format) {
  const bool direct = options.device().type() == c10::DeviceType::PrivateUse1 &&
                      options.layout() == c10::kStrided && !options.pinned_memory() &&
                      !(memory_format && options.has_memory_format());
  if (!direct) return at::empty(sizes, options, memory_format);
  return empty_memory_format(sizes, c10::optTypeMetaToScalarType(options.dtype_opt()),
                             options.layout_opt(), options.device_opt(),
                             options.pinned_memory_opt(),
                             memory_format ? memory_format : options.memory_format_opt());
}

}  // namespace torch_tpu::ops

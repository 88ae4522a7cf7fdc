// Tensor.record_stream(stream): CUDA code marks a tensor used on a side
// stream so its caching allocator does not reuse the memory early. On tpu a
// device buffer stays alive while any launched program uses it (PJRT holds
// it), so the call only checks its argument and tells the device guard.
#include <c10/core/impl/VirtualGuardImpl.h>

#include "ops/kernels.h"

namespace torch_tpu::ops {

void record_stream(at::Tensor& self, at::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: expected a tpu stream for a tpu tensor, got a stream on ",
              stream.device());
  c10::impl::VirtualGuardImpl(c10::DeviceType::PrivateUse1)
      .recordDataPtrOnStream(self.storage().data_ptr(), stream);
}

}  // namespace torch_tpu::ops

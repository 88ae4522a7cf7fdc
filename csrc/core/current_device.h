// The calling thread's current tpu device index (torch.tpu.set_device).
#pragma once

namespace torch_tpu {

int current_device_index();
void set_current_device_index(int index);  // validated by the caller

}  // namespace torch_tpu

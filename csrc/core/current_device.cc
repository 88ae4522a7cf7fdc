#include "core/current_device.h"

namespace torch_tpu {
namespace {
thread_local int current_index = 0;
}

int current_device_index() { return current_index; }
void set_current_device_index(int index) { current_index = index; }

}  // namespace torch_tpu

// Makes autograd's tpu device threads let go of finished backward passes
// (see torch_tpu/_autograd_exit.py for why this matters at exit).
#pragma once

namespace torch_tpu {

// Runs one trivial backward pass through each tpu device's autograd thread
// and waits for it. A device thread takes new work only after releasing its
// previous GraphTask, and this pass holds no Python object (its tensors are
// made here, in C++), so afterwards no tpu autograd thread holds one.
// Call without the GIL: the threads may need it to release what they hold.
void drain_autograd_device_threads(int device_count);

}  // namespace torch_tpu

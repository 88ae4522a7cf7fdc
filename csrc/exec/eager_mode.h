// Which eager execution policy is in force: a process-wide default (from
// TORCH_TPU_EAGER_MODE / TORCH_TPU_LAUNCH_BLOCKING / TORCH_TPU_DEFER_AND_FUSE,
// or set_eager_mode) and optional scoped overrides (the
// torch_tpu.eager_mode context manager).
//
// A scoped override lives in PyTorch's ThreadLocalDebugInfo rather than in a
// plain thread_local: PyTorch carries that state into autograd's device
// threads (and at::launch tasks), so a backward pass started inside
// `with torch_tpu.eager_mode("debug")` runs its tpu kernels in Debug mode too.
#pragma once

#include <string>

namespace torch_tpu {

enum class EagerMode { kStrict, kDebug, kDeferAndFuse };

EagerMode current_eager_mode();
void set_global_eager_mode(EagerMode mode);

// Scoped overrides nest; pop removes the innermost one and raises if the
// innermost thread-local debug info is not an eager-mode override (the
// scopes were exited out of order).
void push_scoped_eager_mode(EagerMode mode);
void pop_scoped_eager_mode();

EagerMode parse_eager_mode(const std::string& name);  // throws ValueError
const char* eager_mode_name(EagerMode mode);

}  // namespace torch_tpu

// Which eager execution policy is in force: a process-wide default (from
// TORCH_TPU_EAGER_MODE / TORCH_TPU_LAUNCH_BLOCKING / TORCH_TPU_DEFER_AND_FUSE,
// or set_eager_mode) and an optional thread-local override (the
// torch_tpu.eager_mode context manager).
#pragma once

#include <optional>
#include <string>

namespace torch_tpu {

enum class EagerMode { kStrict, kDebug, kDeferAndFuse };

EagerMode current_eager_mode();
void set_global_eager_mode(EagerMode mode);
// Returns the previous thread-local override.
std::optional<EagerMode> set_thread_eager_mode(std::optional<EagerMode> mode);

EagerMode parse_eager_mode(const std::string& name);  // throws ValueError
const char* eager_mode_name(EagerMode mode);

}  // namespace torch_tpu

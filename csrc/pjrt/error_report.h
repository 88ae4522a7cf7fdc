// Where PJRT failures go that cannot be thrown: destroying a PJRT object
// (destructors never throw) and a callback that failed on a plugin thread.
//
// pjrt/ knows nothing of PyTorch, so the reporter is pluggable: torch_tpu's
// runtime points it at TORCH_WARN; by default messages go to stderr.
#pragma once

#include <string>

namespace torch_tpu::pjrt {

using ErrorReporter = void (*)(const std::string& message);

// Sets the reporter; null restores the default (stderr). Thread-safe.
void set_error_reporter(ErrorReporter reporter);
// Hands `message` to the reporter; never throws.
void report_error(const std::string& message) noexcept;

}  // namespace torch_tpu::pjrt

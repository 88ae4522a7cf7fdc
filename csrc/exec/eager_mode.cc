#include "exec/eager_mode.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace torch_tpu {
namespace {

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0);
}

EagerMode initial_mode() {
  if (const char* v = std::getenv("TORCH_TPU_EAGER_MODE"); v && *v) {
    return parse_eager_mode(v);
  }
  if (env_true("TORCH_TPU_LAUNCH_BLOCKING")) return EagerMode::kDebug;
  if (env_true("TORCH_TPU_DEFER_AND_FUSE")) return EagerMode::kDeferAndFuse;
  return EagerMode::kStrict;
}

std::atomic<EagerMode>& global_mode() {
  static std::atomic<EagerMode> mode{initial_mode()};
  return mode;
}

thread_local std::optional<EagerMode> thread_mode;

}  // namespace

EagerMode current_eager_mode() {
  if (thread_mode) return *thread_mode;
  return global_mode().load(std::memory_order_relaxed);
}

void set_global_eager_mode(EagerMode mode) { global_mode() = mode; }

std::optional<EagerMode> set_thread_eager_mode(std::optional<EagerMode> mode) {
  auto previous = thread_mode;
  thread_mode = mode;
  return previous;
}

EagerMode parse_eager_mode(const std::string& name) {
  if (name == "strict") return EagerMode::kStrict;
  if (name == "debug") return EagerMode::kDebug;
  if (name == "defer_and_fuse") return EagerMode::kDeferAndFuse;
  TORCH_CHECK_VALUE(false, "unknown tpu eager mode '", name,
                    "': expected 'strict', 'debug' or 'defer_and_fuse'");
}

const char* eager_mode_name(EagerMode mode) {
  switch (mode) {
    case EagerMode::kStrict:
      return "strict";
    case EagerMode::kDebug:
      return "debug";
    case EagerMode::kDeferAndFuse:
      return "defer_and_fuse";
  }
  return "strict";
}

}  // namespace torch_tpu

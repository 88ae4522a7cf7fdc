#include "exec/eager_mode.h"

#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "exec/region.h"

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

constexpr std::string_view kScopedModeName = "torch_tpu.eager_mode";
const c10::DebugInfoKind kScopedMode(&kScopedModeName);

struct ScopedMode : c10::DebugInfoBase {
  explicit ScopedMode(EagerMode m) : mode(m) {}
  const EagerMode mode;
};

}  // namespace

EagerMode current_eager_mode() {
  // get() walks the (usually empty) chain of thread-local debug infos.
  if (const auto* scoped = c10::ThreadLocalDebugInfo::get(kScopedMode)) {
    return static_cast<const ScopedMode*>(scoped)->mode;
  }
  return global_mode().load(std::memory_order_relaxed);
}

// A mode switch runs the open regions: work recorded under DeferAndFuse is
// not left waiting behind ops of another mode.
void set_global_eager_mode(EagerMode mode) {
  cut_regions(-1, CutReason::kModeSwitch);
  global_mode() = mode;
}

void push_scoped_eager_mode(EagerMode mode) {
  cut_regions(-1, CutReason::kModeSwitch);
  c10::ThreadLocalDebugInfo::_push(kScopedMode, std::make_shared<ScopedMode>(mode));
}

void pop_scoped_eager_mode() {
  c10::ThreadLocalDebugInfo::_pop(kScopedMode);
  cut_regions(-1, CutReason::kModeSwitch);
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

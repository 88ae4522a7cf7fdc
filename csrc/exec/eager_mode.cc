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

// How many ScopedMode objects are alive, in any thread's debug-info chain
// (PyTorch copies the chain into the threads it starts, such as autograd's):
// while none is, no thread can be under a scoped mode, and
// current_eager_mode() skips looking for one (a thread-local lookup on every
// launch otherwise).
std::atomic<int>& live_scoped_modes() {
  static std::atomic<int> count{0};
  return count;
}

struct ScopedMode : c10::DebugInfoBase {
  explicit ScopedMode(EagerMode m) : mode(m) { live_scoped_modes().fetch_add(1); }
  ~ScopedMode() override { live_scoped_modes().fetch_sub(1); }
  ScopedMode(const ScopedMode&) = delete;
  ScopedMode& operator=(const ScopedMode&) = delete;
  const EagerMode mode;
};

}  // namespace

EagerMode current_eager_mode() {
  // get() walks the (usually empty) chain of thread-local debug infos.
  if (live_scoped_modes().load() > 0) {
    if (const auto* scoped = c10::ThreadLocalDebugInfo::get(kScopedMode)) {
      return static_cast<const ScopedMode*>(scoped)->mode;
    }
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

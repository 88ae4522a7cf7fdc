// Composite kernels (for-each ops, the GradScaler's kernels, attention,
// losses and paddings written as several tpu ops) would each be a launch of
// their own in Strict, and for every new shape a compile each. Inside a
// StrictOpsInOneRegion they are deferred into one DeferAndFuse region that
// close() runs as one program: one launch, one executable per shape. Only
// the storages still alive at close() are the program's results, so a
// kernel's intermediates should be gone by then (InOneRegion's kernel has
// returned). In DeferAndFuse they join the open region anyway (so do the
// ops of a compiled graph); Debug mode is left alone (one launch per op,
// errors where they happen).
#pragma once

#include <exception>
#include <type_traits>

#include "exec/eager_mode.h"

namespace torch_tpu::ops {

// A Strict caller's ops deferred into one region from construction to
// close(), which runs it (and raises what running it raises).
class StrictOpsInOneRegion {
 public:
  StrictOpsInOneRegion() : opened_(current_eager_mode() == EagerMode::kStrict) {
    if (opened_) push_scoped_eager_mode(EagerMode::kDeferAndFuse);
  }
  StrictOpsInOneRegion(const StrictOpsInOneRegion&) = delete;
  StrictOpsInOneRegion& operator=(const StrictOpsInOneRegion&) = delete;
  void close() {
    if (!opened_) return;
    opened_ = false;
    pop_scoped_eager_mode();
  }
  // Only on an exception from the kernel: that exception is the one to
  // report, so one from running the partial region is dropped.
  ~StrictOpsInOneRegion() {
    if (!opened_) return;
    try {
      pop_scoped_eager_mode();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch)
    }
  }

 private:
  bool opened_;
};

// A kernel function run in a StrictOpsInOneRegion, for registering a kernel
// written as several tpu ops: TORCH_FN(InOneRegion<&kernel>::call).
template <auto Kernel>
struct InOneRegion;

template <typename R, typename... Args, R (*Kernel)(Args...)>
struct InOneRegion<Kernel> {
  static R call(Args... args) {
    StrictOpsInOneRegion region;
    if constexpr (std::is_void_v<R>) {
      Kernel(args...);
      region.close();
    } else {
      R result = Kernel(args...);
      region.close();
      return result;
    }
  }
};

}  // namespace torch_tpu::ops

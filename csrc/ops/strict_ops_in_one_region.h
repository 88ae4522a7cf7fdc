// Composite kernels (for-each ops, the GradScaler's kernels) are written
// as several tpu ops; in Strict each would be a launch of its own. Inside a
// StrictOpsInOneRegion they are deferred into one DeferAndFuse region that
// close() runs as one program. In DeferAndFuse they join the open region
// anyway; Debug mode is left alone (one launch per op, errors where they
// happen).
#pragma once

#include <exception>

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

}  // namespace torch_tpu::ops

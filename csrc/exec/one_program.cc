#include "exec/one_program.h"

#include "exec/eager_mode.h"

namespace torch_tpu {

OneProgram::OneProgram() : active_(current_eager_mode() == EagerMode::kStrict) {
  if (active_) push_scoped_eager_mode(EagerMode::kDeferAndFuse);
}

void OneProgram::finish() {
  if (!active_) return;
  active_ = false;
  pop_scoped_eager_mode();  // the mode switch runs the region
}

OneProgram::~OneProgram() {
  if (!active_) return;
  try {
    pop_scoped_eager_mode();
  } catch (...) {
    // The kernel's own exception is already propagating; running what it
    // recorded failed too, and that failure stays with the region's results.
  }
}

}  // namespace torch_tpu

#include "exec/launch_donations.h"

#include <algorithm>

#include "core/metrics.h"
#include "exec/eager_mode.h"

namespace torch_tpu {

LaunchDonations::LaunchDonations() : may_donate_(current_eager_mode() != EagerMode::kDebug) {}

LaunchDonations::~LaunchDonations() {
  for (DeviceStorage* s : donating_) s->end_donation();
}

void LaunchDonations::offer(DeviceStorage* storage, const pjrt::BufferPtr& held, int64_t arg) {
  if (may_donate_ && storage->begin_donation(held)) {
    donating_.push_back(storage);
    donated_.push_back(arg);
    Metrics::get().donated_buffers++;
  } else {
    kept_.push_back(arg);
    Metrics::get().undonatable_buffers++;
  }
}

c10::ArrayRef<int64_t> LaunchDonations::kept() {
  std::sort(kept_.begin(), kept_.end());
  return kept_;
}

}  // namespace torch_tpu

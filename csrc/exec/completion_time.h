// When the device work captured by a WorkMarker finished, for timing events
// (torch.tpu.Event(enable_timing=True), elapsed_time()).
//
// The time is taken on the host's steady clock by the on-ready callbacks of
// the marker's PJRT events, so it is when the device finished the work, not
// when the host launched it or noticed. With nothing in flight the time is
// that of the mark itself, as a CUDA event recorded on an idle stream is.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "exec/launcher.h"

namespace torch_tpu {

class CompletionTime {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts watching `marker`'s events; call right after taking the marker.
  explicit CompletionTime(const WorkMarker& marker);

  // True once every watched event has fired and the time is known.
  bool known() const;
  // Blocks until known(); the time the last watched event fired.
  Clock::time_point wait() const;

 private:
  struct State {
    mutable std::mutex mu;
    mutable std::condition_variable cv;
    size_t pending = 0;  // watched events not yet fired, +1 while registering
    Clock::time_point time{};
    void fired(Clock::time_point when);
  };
  std::shared_ptr<State> state_;
};

}  // namespace torch_tpu

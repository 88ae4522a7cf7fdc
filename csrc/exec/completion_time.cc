#include "exec/completion_time.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace torch_tpu {

void CompletionTime::State::fired(Clock::time_point when) {
  std::lock_guard<std::mutex> lock(mu);
  // Events of one device may finish in any order: the work is done when the
  // last of them is.
  time = std::max(time, when);
  if (--pending == 0) cv.notify_all();
}

CompletionTime::CompletionTime(const WorkMarker& marker) : state_(std::make_shared<State>()) {
  // One extra count held while registering, so the time cannot become known
  // before every callback is in place, and is never earlier than the mark.
  state_->pending = marker.events.size() + 1;
  for (const auto& event : marker.events) {
    try {
      // An already-finished event fires at once (inline): it finished before
      // the mark, so the mark's time stands for it. A failed event counts
      // as finished; its error is raised by synchronize/wait as usual.
      event->on_ready([state = state_](const std::string&) { state->fired(Clock::now()); });
    } catch (const pjrt::Error& e) {
      // Callbacks already registered keep only the abandoned state alive.
      TORCH_CHECK(false, "tpu: cannot watch the device work of an event: ", e.what());
    }
  }
  state_->fired(Clock::now());
}

bool CompletionTime::known() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->pending == 0;
}

CompletionTime::Clock::time_point CompletionTime::wait() const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->pending == 0; });
  return state_->time;
}

}  // namespace torch_tpu

// RAII over PJRT_Event: completion of an asynchronous transfer or execution.
#pragma once

#include <functional>
#include <memory>

#include "pjrt/api.h"
#include "pjrt/owned.h"

namespace torch_tpu::pjrt {

class Event {
 public:
  explicit Event(Owned<PJRT_Event> event) : event_(std::move(event)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_ready() const;
  // Blocks until the event fires; throws the error it carries, if any.
  void await() const;
  // For an event that is_ready(): throws the error it carries, if any (one
  // plugin call, where await() makes two).
  void throw_if_failed() const;
  // Runs `callback` (on a plugin thread, or inline if already ready) once the
  // event fires, with an empty string on success or the error text.
  void on_ready(std::function<void(const std::string& error)> callback) const;

 private:
  const Api& api() const { return event_.api(); }
  Owned<PJRT_Event> event_;
};

using EventPtr = std::shared_ptr<Event>;

}  // namespace torch_tpu::pjrt

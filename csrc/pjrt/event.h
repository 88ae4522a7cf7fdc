// RAII over PJRT_Event: completion of an asynchronous transfer or execution.
#pragma once

#include <functional>
#include <memory>

#include "pjrt/api.h"

namespace torch_tpu::pjrt {

class Event {
 public:
  Event(std::shared_ptr<const Api> api, PJRT_Event* event);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_ready() const;
  // Blocks until the event fires; throws the error it carries, if any.
  void await() const;
  // Runs `callback` (on a plugin thread, or inline if already ready) once the
  // event fires, with an empty string on success or the error text.
  void on_ready(std::function<void(const std::string& error)> callback) const;

 private:
  std::shared_ptr<const Api> api_;
  PJRT_Event* event_;
};

using EventPtr = std::shared_ptr<Event>;

}  // namespace torch_tpu::pjrt

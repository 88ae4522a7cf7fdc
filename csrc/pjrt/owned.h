// Ownership of one raw PJRT object (buffer, event, executable, client).
//
// Every raw object a PJRT call returns is put into an Owned<T> before
// anything else that can throw runs, so a constructor or an allocation that
// fails afterwards destroys it instead of leaking it. Destroying never
// throws: a failing PJRT_*_Destroy is reported through report_error().
#pragma once

#include <memory>
#include <utility>

#include "pjrt/api.h"

namespace torch_tpu::pjrt {

// PJRT_<T>_Destroy for each owned type; reports (never throws) on failure.
void destroy_raw(const Api& api, PJRT_Buffer* buffer) noexcept;
void destroy_raw(const Api& api, PJRT_Event* event) noexcept;
void destroy_raw(const Api& api, PJRT_Executable* executable) noexcept;
void destroy_raw(const Api& api, PJRT_LoadedExecutable* executable) noexcept;
void destroy_raw(const Api& api, PJRT_Client* client) noexcept;

template <typename T>
class Owned {
 public:
  Owned() = default;
  Owned(std::shared_ptr<const Api> api, T* raw) noexcept : api_(std::move(api)), raw_(raw) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept
      : api_(std::move(other.api_)), raw_(std::exchange(other.raw_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      api_ = std::move(other.api_);
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  T* get() const { return raw_; }
  explicit operator bool() const { return raw_ != nullptr; }
  const Api& api() const { return *api_; }
  const std::shared_ptr<const Api>& api_ptr() const { return api_; }

  // In a forked child the plugin's threads are gone and its state is the
  // parent's: the object is leaked, never destroyed (see fork_guard.h).
  void reset() noexcept {
    T* raw = std::exchange(raw_, nullptr);
    if (raw != nullptr && !in_forked_child()) destroy_raw(*api_, raw);
  }

 private:
  std::shared_ptr<const Api> api_;
  T* raw_ = nullptr;
};

}  // namespace torch_tpu::pjrt

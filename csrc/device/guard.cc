// DeviceGuardImplInterface for tpu: current device, streams and events.
//
// Every launch on a device goes to PJRT's single in-order queue for it, so
// streams are ordering labels: all streams of a device are executed in launch
// order, which satisfies every ordering PyTorch's stream semantics promise.
// An event records the device's in-flight work at record() time.
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "core/current_device.h"
#include "core/runtime.h"
#include "exec/async_errors.h"
#include "exec/launcher.h"

namespace torch_tpu {
namespace {

constexpr c10::DeviceType kTpu = c10::DeviceType::PrivateUse1;

struct EventState {
  WorkMarker marker;
  std::chrono::steady_clock::time_point recorded;
  bool was_recorded = false;
};

thread_local c10::StreamId current_stream_id = 0;
std::atomic<c10::StreamId> next_stream_id{1};

struct TpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kTpu; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override {
    return c10::Device(kTpu, static_cast<c10::DeviceIndex>(current_device_index()));
  }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kTpu, "expected a tpu device, got ", d);
    if (d.index() < 0) return;
    (void)Runtime::get().device(d.index());  // raises for an invalid index
    set_current_device_index(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) set_current_device_index(d.index());
  }
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::UNSAFE, d, current_stream_id);
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return c10::Stream(c10::Stream::UNSAFE, d, next_stream_id++);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override {
    return getNewStream(d, 0);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    c10::Stream old = getStream(s.device());
    current_stream_id = s.id();
    return old;
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return static_cast<c10::DeviceIndex>(Runtime::visible_device_count());
    } catch (...) {
      return 0;
    }
  }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<EventState*>(event);
  }
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                device_index, " does not match recording stream's device index ",
                stream.device_index(), ".");
    if (*event == nullptr) *event = new EventState();
    auto* state = static_cast<EventState*>(*event);
    state->marker = mark_device_work(stream.device_index());
    state->recorded = std::chrono::steady_clock::now();
    state->was_recorded = true;
  }
  void block(void* event, const c10::Stream& stream) const override {
    // Launch order already serializes streams; nothing to wait for.
  }
  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    return static_cast<EventState*>(event)->marker.is_done();
  }
  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    static_cast<EventState*>(event)->marker.wait();
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    auto* a = static_cast<EventState*>(start);
    auto* b = static_cast<EventState*>(end);
    a->marker.wait();
    b->marker.wait();
    return std::chrono::duration<double, std::milli>(b->recorded - a->recorded).count();
  }
  bool queryStream(const c10::Stream& stream) const override {
    return device_idle(stream.device_index());
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    synchronize_device(stream.device_index());
  }
  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    synchronize_device(device_index < 0 ? current_device_index() : device_index);
  }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {
    // Buffers are reference-counted by PJRT while in use; nothing to do.
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);

}  // namespace
}  // namespace torch_tpu

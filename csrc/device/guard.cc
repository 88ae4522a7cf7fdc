// DeviceGuardImplInterface for tpu: current device, streams and events.
//
// Every launch on a device goes to PJRT's single in-order queue for it, so
// streams are ordering labels: all streams of a device are executed in launch
// order, which satisfies every ordering PyTorch's stream semantics promise.
// An event records the device's in-flight work at record() time; a timing
// event (enable_timing=True) also watches when that work finishes on the
// device, which is its timestamp for elapsedTime().
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "core/current_device.h"
#include "core/runtime.h"
#include "exec/async_errors.h"
#include "exec/completion_time.h"
#include "exec/launcher.h"

namespace torch_tpu {
namespace {

constexpr c10::DeviceType kTpu = c10::DeviceType::PrivateUse1;

struct EventState {
  WorkMarker marker;
  std::unique_ptr<CompletionTime> completion;  // timing events only
};

// PyTorch creates a timing event with BACKEND_DEFAULT and any other with
// PYTORCH_DEFAULT (torch.Event and c10::Event alike).
bool is_timing(c10::EventFlag flag) { return flag == c10::EventFlag::BACKEND_DEFAULT; }

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
    auto state = std::make_unique<EventState>();
    state->marker = mark_device_work(stream.device_index());
    if (is_timing(flag)) state->completion = std::make_unique<CompletionTime>(state->marker);
    // Re-recording replaces what the event captured, only once nothing threw.
    delete static_cast<EventState*>(*event);
    *event = state.release();
  }
  void block(void* event, const c10::Stream& stream) const override {
    // Launch order already serializes streams; nothing to wait for.
  }
  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    auto* state = static_cast<EventState*>(event);
    if (!state->marker.is_done()) return false;
    // The work is done; its on-ready callbacks run right after it, so the
    // time of a timing event is known at once (waiting closes the window in
    // which a completed event would not yet have a time).
    if (state->completion) state->completion->wait();
    return true;
  }
  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    auto* state = static_cast<EventState*>(event);
    state->marker.wait();
    if (state->completion) state->completion->wait();
  }
  // c10::Event has checked that both events are timing events, recorded and
  // complete (CUDA's messages and exception classes) before this is called.
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK_VALUE(start && end,
                      "Both events must be recorded before calculating elapsed time.");
    auto* a = static_cast<EventState*>(start);
    auto* b = static_cast<EventState*>(end);
    TORCH_CHECK_VALUE(a->completion && b->completion,
                      "Both events must be created with argument 'enable_timing=True'.");
    // Completed events' times are known, or about to be (the last on-ready
    // callback may still be running).
    const auto from = a->completion->wait();
    const auto to = b->completion->wait();
    return std::chrono::duration<double, std::milli>(to - from).count();
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

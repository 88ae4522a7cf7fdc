#include "exec/launcher.h"

#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include <map>
#include <mutex>
#include <string>

#include "core/dtype_map.h"
#include "core/metrics.h"
#include "core/runtime.h"
#include "exec/async_errors.h"
#include "exec/eager_mode.h"
#include "exec/executable_cache.h"
#include "exec/region.h"
#include "hlo/builder.h"
#include "pjrt/deferred_release.h"

namespace torch_tpu {
namespace {

// Converts a PJRT error into the PyTorch exception a user expects: running
// out of device memory is torch.OutOfMemoryError, anything else RuntimeError.
[[noreturn]] void rethrow(const pjrt::Error& e, const char* what) {
  if (e.is_resource_exhausted()) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "tpu out of memory during ", what, ": ", e.what());
  }
  TORCH_CHECK(false, "tpu: ", what, " failed: ", e.what());
}

}  // namespace

std::vector<pjrt::BufferPtr> launch(const pjrt::LoadedExecutable& exe,
                                    c10::ArrayRef<pjrt::BufferPtr> args, int device_index,
                                    c10::ArrayRef<int64_t> non_donatable,
                                    c10::ArrayRef<int64_t> donated) {
  c10::SmallVector<PJRT_Buffer*, 8> raw;
  for (const auto& a : args) raw.push_back(a->raw());
  const auto& device = Runtime::get().device(device_index);
  pjrt::ExecuteResult result;
  try {
    result =
        exe.execute(raw.data(), raw.size(), device.raw, non_donatable.data(), non_donatable.size());
  } catch (const pjrt::Error& e) {
    rethrow(e, "execute");
  }
  Metrics::get().executions++;
  if (current_eager_mode() == EagerMode::kDebug) {
    try {
      if (result.done) result.done->await();
    } catch (const pjrt::Error& e) {
      rethrow(e, "execute");
    }
    return result.outputs;
  }
  if (!donated.empty()) {
    std::vector<pjrt::BufferPtr> handles;
    handles.reserve(donated.size());
    for (int64_t i : donated) handles.push_back(args[i]);
    pjrt::release_when_done(result.done, std::move(handles));
  }
  track_completion(device_index, std::move(result.done));
  return result.outputs;
}

void synchronize_device(int device_index) {
  cut_regions(device_index, CutReason::kSync);
  raise_async_errors(device_index);
}

WorkMarker mark_device_work(int device_index) {
  cut_regions(device_index, CutReason::kSync);
  return WorkMarker{device_index, in_flight_events(device_index)};
}

bool WorkMarker::is_done() const {
  for (const auto& e : events) {
    if (!e->is_ready()) return false;
  }
  return true;
}

void WorkMarker::wait() const {
  for (const auto& e : events) {
    try {
      e->await();
    } catch (const pjrt::Error&) {
      // Reported once, by the device's tracker, just below.
    }
  }
  raise_finished_errors(device_index);
}

namespace {

// One BufferFromHostBuffer call, counted in the metrics.
pjrt::HostToDevice transfer_to_device(const void* data, hlo::ElementType element,
                                      const std::vector<int64_t>& dims, int device_index,
                                      pjrt::HostSemantics semantics) {
  auto& runtime = Runtime::get();
  pjrt::HostToDevice h2d;
  try {
    h2d = runtime.client().buffer_from_host(data, buffer_type_for(element), dims,
                                            runtime.device(device_index), semantics);
  } catch (const pjrt::Error& e) {
    rethrow(e, "host-to-device copy");
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  Metrics::get().h2d_transfers++;
  Metrics::get().h2d_bytes += count * static_cast<int64_t>(hlo::byte_size(element));
  return h2d;
}

}  // namespace

pjrt::BufferPtr upload(const void* data, hlo::ElementType element, const std::vector<int64_t>& dims,
                       int device_index, std::shared_ptr<void> keep_alive) {
  pjrt::HostToDevice h2d = transfer_to_device(
      data, element, dims, device_index,
      keep_alive ? pjrt::HostSemantics::kUntilTransferDone : pjrt::HostSemantics::kCopyDuringCall);
  if (h2d.done_with_host) {
    if (keep_alive) {
      // The host memory is released only once the plugin is done reading it;
      // a failure of the copy surfaces at the next sync.
      h2d.done_with_host->on_ready([keep_alive](const std::string&) {});
      track_completion(device_index, h2d.done_with_host);
    } else {
      h2d.done_with_host->await();
    }
  }
  return h2d.buffer;
}

pjrt::BufferPtr upload_owned(const void* data, hlo::ElementType element,
                             const std::vector<int64_t>& dims, int device_index,
                             std::shared_ptr<void> owner) {
  if (!Runtime::get().device_memory_is_host()) return upload(data, element, dims, device_index);
  pjrt::HostToDevice h2d =
      transfer_to_device(data, element, dims, device_index, pjrt::HostSemantics::kZeroCopy);
  // Fires when the plugin no longer uses the memory: when the buffer is
  // destroyed (never tracked as work in flight: it is not).
  if (h2d.done_with_host) h2d.done_with_host->on_ready([owner](const std::string&) {});
  return h2d.buffer;
}

std::unique_ptr<pjrt::PinnedMemory> host_view(const pjrt::BufferPtr& buffer, int device_index) {
  if (!Runtime::get().device_memory_is_host()) return nullptr;
  raise_async_errors(device_index);
  std::unique_ptr<pjrt::PinnedMemory> view;
  try {
    buffer->ready_event()->await();
    view = std::make_unique<pjrt::PinnedMemory>(buffer);
  } catch (const pjrt::Error& e) {
    rethrow(e, "device-to-host copy");
  }
  Metrics::get().d2h_transfers++;
  Metrics::get().d2h_bytes += static_cast<int64_t>(buffer->on_device_size());
  Metrics::get().host_syncs++;
  return view;
}

void download(const pjrt::Buffer& buffer, void* dst, size_t nbytes, int device_index) {
  // A host read is a sync point: earlier asynchronous errors come first.
  raise_async_errors(device_index);
  try {
    buffer.to_host_async(dst, nbytes)->await();
  } catch (const pjrt::Error& e) {
    rethrow(e, "device-to-host copy");
  }
  Metrics::get().d2h_transfers++;
  Metrics::get().d2h_bytes += static_cast<int64_t>(nbytes);
  // Every download blocks the caller until the device has produced the data.
  Metrics::get().host_syncs++;
}

pjrt::BufferPtr make_zero_buffer(int device_index, hlo::ElementType element, int64_t count) {
  const std::string key =
      std::string("zeros:") + hlo::mlir_name(element) + ":" + std::to_string(count);
  auto exe = ExecutableCache::get().get_or_compile(key, [&] {
    hlo::Builder b;
    b.set_results({b.zeros({element, {count}})});
    return b.module_text();
  });
  return launch(*exe, {}, device_index).at(0);
}

}  // namespace torch_tpu

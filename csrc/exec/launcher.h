// Launching executables and moving data, with per-device tracking of work in
// flight.
//
// Launches return at once (Strict) or after completion (Debug). Every launch's
// completion event is tracked (exec/async_errors.h), so an error inside an
// asynchronously launched program surfaces, once, at the next synchronize()
// or host read on that device.
#pragma once

#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "hlo/types.h"
#include "pjrt/buffer.h"
#include "pjrt/executable.h"

namespace torch_tpu {

// Arguments the program aliases to results are donated, except those whose
// indices are in `non_donatable` (sorted ascending). `donated` names the
// donated ones the caller may hold the last handles of: the launch keeps
// them until the program is done and drops them off this thread, so that
// dropping them here never waits for the device (pjrt/deferred_release.h).
std::vector<pjrt::BufferPtr> launch(const pjrt::LoadedExecutable& exe,
                                    c10::ArrayRef<pjrt::BufferPtr> args, int device_index,
                                    c10::ArrayRef<int64_t> non_donatable = {},
                                    c10::ArrayRef<int64_t> donated = {});

// Blocks until all work launched on the device so far has finished; raises
// the first asynchronous error, if any.
void synchronize_device(int device_index);

// Snapshot of the device's in-flight work, for stream events.
struct WorkMarker {
  int device_index = 0;
  std::vector<pjrt::EventPtr> events;
  bool is_done() const;
  // Waits for the snapshot's work; raises failures of finished work once.
  void wait() const;
};
WorkMarker mark_device_work(int device_index);

// Host -> device: copies `bytes` of host data into a new flat buffer. When
// `keep_alive` is non-null the copy may complete after return and
// `keep_alive` is held until the host data has been consumed.
pjrt::BufferPtr upload(const void* data, hlo::ElementType element, const std::vector<int64_t>& dims,
                       int device_index, std::shared_ptr<void> keep_alive = nullptr);
// Host -> device of a host copy made for this upload alone, which `owner`
// keeps alive: where device memory is host memory, the buffer uses that
// memory itself (zero copy; `owner` is released when the buffer is
// destroyed); elsewhere the plugin copies it before this returns.
pjrt::BufferPtr upload_owned(const void* data, hlo::ElementType element,
                             const std::vector<int64_t>& dims, int device_index,
                             std::shared_ptr<void> owner);
// Where device memory is host memory: raises the device's pending
// asynchronous errors (a host read is a sync point), waits until the buffer
// holds its contents, and returns its memory, readable until the result is
// destroyed. Null elsewhere (use download()).
std::unique_ptr<pjrt::PinnedMemory> host_view(const pjrt::BufferPtr& buffer, int device_index);
// Device -> host: raises the device's pending asynchronous errors (a host
// read is a sync point), then blocks until `dst` holds the buffer's contents.
void download(const pjrt::Buffer& buffer, void* dst, size_t nbytes, int device_index);

// A flat buffer of `count` zeros.
pjrt::BufferPtr make_zero_buffer(int device_index, hlo::ElementType element, int64_t count);

}  // namespace torch_tpu

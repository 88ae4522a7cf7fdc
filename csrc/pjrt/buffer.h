// RAII over PJRT_Buffer: one immutable array in device memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pjrt/api.h"
#include "pjrt/element_type.h"
#include "pjrt/event.h"
#include "pjrt/owned.h"

namespace torch_tpu::pjrt {

class Buffer {
 public:
  explicit Buffer(Owned<PJRT_Buffer> buffer) : buffer_(std::move(buffer)) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  PJRT_Buffer* raw() const { return buffer_.get(); }
  BufferType element_type() const;
  std::vector<int64_t> dims() const;
  int64_t element_count() const;
  size_t on_device_size() const;
  // Starts copying the whole buffer (dense, row-major) into `dst`, which must
  // hold `dst_size` bytes and stay alive until the returned event fires.
  EventPtr to_host_async(void* dst, size_t dst_size) const;
  // Event that fires when the buffer's contents have been computed.
  EventPtr ready_event() const;
  // True once the buffer was donated to an execution (its memory now
  // belongs to that execution's output).
  bool is_deleted() const;

 private:
  friend class PinnedMemory;
  const Api& api() const { return buffer_.api(); }
  Owned<PJRT_Buffer> buffer_;
};

using BufferPtr = std::shared_ptr<Buffer>;

// A buffer's device memory held in place (an external reference: the plugin
// neither frees nor moves it while this lives), with its address. Only where
// device memory is host memory (the CPU plugin) is the address readable by
// the host: then a device-to-host copy is a plain memcpy from data().
class PinnedMemory {
 public:
  explicit PinnedMemory(BufferPtr buffer);
  ~PinnedMemory();
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;

  const void* data() const { return data_; }

 private:
  BufferPtr buffer_;
  void* data_ = nullptr;
};

}  // namespace torch_tpu::pjrt

// The c10::Allocator for tpu storages and the memory statistics behind
// torch.tpu.memory_allocated() and friends.
//
// Allocation creates a DeviceStorage context (no device memory yet: the
// buffer appears when the storage is first written) and a unique fake address.
// Statistics count storage bytes, like CUDA's allocated_bytes.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include <cstdint>
#include <map>
#include <string>

#include "core/device_storage.h"

namespace torch_tpu {

class TpuAllocator final : public c10::DeviceAllocator {
 public:
  static TpuAllocator& get();

  c10::DataPtr allocate(size_t nbytes) override;
  c10::DataPtr allocate_on(size_t nbytes, int device_index);
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // The storage whose fake range contains `address`, or null.
  DeviceStorage* find(const void* address) const;

  // c10::DeviceAllocator: what torch.accelerator.memory_* and
  // torch.tpu.memory_* read.
  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t mempool_id) override {}
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;
};

// The DeviceStorage behind a tpu tensor's storage (null for 0-byte storages,
// ZeroTensors and storages made around an address no tpu storage starts at).
DeviceStorage* storage_of(const c10::Storage& storage);

}  // namespace torch_tpu

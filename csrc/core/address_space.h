// Unique fake device addresses for tensor data pointers.
//
// Device data lives in PJRT buffers, never at the address a tpu tensor's
// data_ptr() reports. We still hand out distinct, stable addresses so that
// PyTorch's pointer arithmetic and aliasing checks work, and we take them from
// a reserved PROT_NONE region so any accidental host dereference faults loudly
// instead of reading garbage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace torch_tpu {

class AddressSpace {
 public:
  static AddressSpace& instance();

  // Returns the start of a fresh range of at least `nbytes` (nbytes > 0),
  // remembered as `owner`'s until released.
  uintptr_t allocate(size_t nbytes, void* owner);
  void release(uintptr_t address);
  bool contains(uintptr_t address) const;
  // The owner of the allocated range holding `address` (anywhere in it), or
  // null; with the range's start.
  void* owner_at(uintptr_t address, uintptr_t* start) const;

 private:
  AddressSpace();
  uintptr_t base_ = 0;
  size_t size_ = 0;
  mutable std::mutex mu_;
  std::map<uintptr_t, size_t> free_;  // start -> length, coalesced
  struct Used {
    size_t length;
    void* owner;  // null while the range waits in recycled_
  };
  std::map<uintptr_t, Used> used_;  // by start
  // Recently released ranges by length, still counted as used: the next
  // allocation of the same length takes one back without touching the maps
  // (eager code allocates and frees same-sized tensors on every op).
  std::unordered_map<size_t, std::vector<uintptr_t>> recycled_;
  size_t recycled_count_ = 0;
};

}  // namespace torch_tpu

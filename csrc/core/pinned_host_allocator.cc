#include "core/pinned_host_allocator.h"

#include <c10/core/impl/alloc_cpu.h>

#include <map>
#include <mutex>

namespace torch_tpu {
namespace {

// Live blocks: start address -> size.
std::mutex blocks_mu;
std::map<const char*, size_t>& blocks() {
  static auto* live = new std::map<const char*, size_t>();  // never destroyed
  return *live;
}

}  // namespace

PinnedHostAllocator& PinnedHostAllocator::get() {
  static auto* allocator = new PinnedHostAllocator();
  return *allocator;
}

c10::DataPtr PinnedHostAllocator::allocate(size_t nbytes) {
  void* ptr = nbytes == 0 ? nullptr : c10::alloc_cpu(nbytes);
  if (ptr != nullptr) {
    std::lock_guard<std::mutex> lock(blocks_mu);
    blocks()[static_cast<const char*>(ptr)] = nbytes;
  }
  return {ptr, ptr, &release, c10::Device(c10::DeviceType::CPU)};
}

void PinnedHostAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(blocks_mu);
    blocks().erase(static_cast<const char*>(ptr));
  }
  c10::free_cpu(ptr);
}

void PinnedHostAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  default_copy_data(dest, src, count);
}

bool PinnedHostAllocator::owns(const void* ptr) const {
  const auto* p = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(blocks_mu);
  auto it = blocks().upper_bound(p);
  if (it == blocks().begin()) return false;
  --it;
  return p < it->first + it->second;
}

}  // namespace torch_tpu

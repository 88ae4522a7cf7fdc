#include "core/pinned_host_allocator.h"

#include <c10/core/impl/alloc_cpu.h>

#include <map>
#include <mutex>

namespace torch_tpu {
namespace {

// Live blocks: start address -> size, and their statistics (both under
// blocks_mu).
std::mutex blocks_mu;
std::map<const char*, size_t>& blocks() {
  static auto* live = new std::map<const char*, size_t>();  // never destroyed
  return *live;
}
at::HostStats& stats() {
  static auto* s = new at::HostStats();  // never destroyed
  return *s;
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
    // Every request is a fresh block: active and allocated move together.
    at::HostStats& s = stats();
    s.active_requests.increase(1);
    s.allocations.increase(1);
    s.active_bytes.increase(nbytes);
    s.allocated_bytes.increase(nbytes);
    s.num_host_alloc++;
  }
  return {ptr, ptr, &release, c10::Device(c10::DeviceType::CPU)};
}

void PinnedHostAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(blocks_mu);
    auto it = blocks().find(static_cast<const char*>(ptr));
    if (it != blocks().end()) {
      at::HostStats& s = stats();
      s.active_requests.decrease(1);
      s.allocations.decrease(1);
      s.active_bytes.decrease(it->second);
      s.allocated_bytes.decrease(it->second);
      s.num_host_free++;
      blocks().erase(it);
    }
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

bool PinnedHostAllocator::record_event(void* ptr, void* /*ctx*/, c10::Stream /*stream*/) {
  // A block is freed only when its last tensor dies and never handed out
  // again while a transfer may read it (the launch holds the tensor), so
  // there is no event to wait for; the answer says whether it is ours.
  return owns(ptr);
}

at::HostStats PinnedHostAllocator::get_stats() {
  std::lock_guard<std::mutex> lock(blocks_mu);
  return stats();
}

void PinnedHostAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(blocks_mu);
  at::HostStats& s = stats();
  for (auto* stat : {&s.active_requests, &s.active_bytes, &s.allocations, &s.allocated_bytes}) {
    stat->reset_accumulated();
  }
  s.num_host_alloc = 0;
  s.num_host_free = 0;
}

void PinnedHostAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(blocks_mu);
  at::HostStats& s = stats();
  for (auto* stat : {&s.active_requests, &s.active_bytes, &s.allocations, &s.allocated_bytes}) {
    stat->reset_peak();
  }
}

}  // namespace torch_tpu

#include "core/address_space.h"

#include <c10/util/Exception.h>
#include <sys/mman.h>

namespace torch_tpu {
namespace {
constexpr size_t kAlignment = 512;  // matches CUDA's caching allocator
// Recycling is for the small tensors eager code churns through; at most
// 4096 ranges of up to 1 MiB (4 GiB of the reserved 16 TiB) are held.
constexpr size_t kMaxRecycled = 4096;
constexpr size_t kMaxRecycledLength = size_t(1) << 20;
size_t round_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

AddressSpace& AddressSpace::instance() {
  static AddressSpace* space = new AddressSpace();  // never destroyed
  return *space;
}

AddressSpace::AddressSpace() {
  // 16 TiB of address space, reserved but never backed: PROT_NONE with
  // MAP_NORESERVE costs no memory and makes every host access fault.
  for (size_t size = size_t(1) << 44; size >= (size_t(1) << 32); size >>= 1) {
    void* p = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      base_ = reinterpret_cast<uintptr_t>(p);
      size_ = size;
      break;
    }
  }
  TORCH_CHECK(base_ != 0, "tpu: cannot reserve address space for device pointers");
  free_.emplace(base_, size_);
}

uintptr_t AddressSpace::allocate(size_t nbytes, void* owner) {
  const size_t len = round_up(nbytes == 0 ? 1 : nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = recycled_.find(len); it != recycled_.end() && !it->second.empty()) {
    const uintptr_t start = it->second.back();
    it->second.pop_back();
    --recycled_count_;
    used_.find(start)->second.owner = owner;
    return start;
  }
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    const uintptr_t start = it->first;
    const size_t remaining = it->second - len;
    free_.erase(it);
    if (remaining > 0) free_.emplace(start + len, remaining);
    used_.emplace(start, Used{len, owner});
    return start;
  }
  TORCH_CHECK_WITH(OutOfMemoryError, false, "tpu: device address space exhausted allocating ",
                   nbytes, " bytes");
}

void AddressSpace::release(uintptr_t address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.find(address);
  if (it == used_.end()) return;
  uintptr_t start = it->first;
  size_t len = it->second.length;
  if (len <= kMaxRecycledLength && recycled_count_ < kMaxRecycled) {
    it->second.owner = nullptr;
    recycled_[len].push_back(start);
    ++recycled_count_;
    return;
  }
  used_.erase(it);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += len;
      return;
    }
  }
  free_.emplace(start, len);
}

bool AddressSpace::contains(uintptr_t address) const {
  return address >= base_ && address < base_ + size_;
}

void* AddressSpace::owner_at(uintptr_t address, uintptr_t* start) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.upper_bound(address);
  if (it == used_.begin()) return nullptr;
  --it;
  if (address >= it->first + it->second.length) return nullptr;
  *start = it->first;
  return it->second.owner;
}

}  // namespace torch_tpu

#include "core/allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <memory>
#include <mutex>

#include "core/address_space.h"
#include "core/current_device.h"
#include "core/runtime.h"

namespace torch_tpu {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;
constexpr size_t kAggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);

// Storage bytes count as allocated, active and reserved alike: there is no
// caching layer between PyTorch and PJRT's own allocator.
void account(DeviceStats& stats, size_t nbytes, bool allocate) {
  for (auto* stat : {&stats.allocated_bytes[kAggregate], &stats.active_bytes[kAggregate],
                     &stats.reserved_bytes[kAggregate], &stats.requested_bytes[kAggregate]}) {
    allocate ? stat->increase(nbytes) : stat->decrease(nbytes);
  }
  for (auto* stat :
       {&stats.allocation[kAggregate], &stats.active[kAggregate], &stats.segment[kAggregate]}) {
    allocate ? stat->increase(1) : stat->decrease(1);
  }
}

std::mutex& stats_mutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::map<int, DeviceStats>& counters() {
  static auto* c = new std::map<int, DeviceStats>();
  return *c;
}

std::string format_bytes(int64_t bytes) {
  char buf[64];
  if (bytes >= (int64_t(1) << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / double(int64_t(1) << 30));
  } else if (bytes >= (int64_t(1) << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", bytes / double(int64_t(1) << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(bytes));
  }
  return buf;
}

void release(void* ctx) {
  auto* storage = static_cast<DeviceStorage*>(ctx);
  // In a forked child the parent's buffers belong to a client whose threads
  // are gone: destroying them could block forever. Leak them instead.
  if (Runtime::in_bad_fork()) return;
  {
    std::lock_guard<std::mutex> lock(stats_mutex());
    account(counters()[storage->device_index()], storage->nbytes(), false);
  }
  AddressSpace::instance().release(storage->address());
  delete storage;
}

}  // namespace

TpuAllocator& TpuAllocator::get() {
  static TpuAllocator* allocator = new TpuAllocator();
  return *allocator;
}

c10::DataPtr TpuAllocator::allocate(size_t nbytes) {
  return allocate_on(nbytes, current_device_index());
}

c10::DataPtr TpuAllocator::allocate_on(size_t nbytes, int device_index) {
  const c10::Device device(c10::DeviceType::PrivateUse1,
                           static_cast<c10::DeviceIndex>(device_index));
  if (nbytes == 0) return c10::DataPtr(nullptr, device);
  auto& runtime = Runtime::get();
  (void)runtime.device(device_index);  // validates the index
  const int64_t limit = runtime.memory_limit(device_index);
  // The limit check and the accounting are one step under one lock: checked
  // and accounted separately, threads allocating at once could each pass the
  // check and together exceed the limit.
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& c = counters()[device_index];
  const int64_t allocated = c.allocated_bytes[kAggregate].current;
  if (allocated + static_cast<int64_t>(nbytes) > limit) {
    c.num_ooms++;
    const int64_t capacity = runtime.memory_capacity(device_index);
    TORCH_CHECK_WITH(OutOfMemoryError, false, "tpu out of memory. Tried to allocate ",
                     format_bytes(static_cast<int64_t>(nbytes)), " (tpu ", device_index, "; ",
                     format_bytes(capacity), " total capacity; ",
                     limit < capacity ? format_bytes(limit) +
                                            " allowed to this process by "
                                            "set_per_process_memory_fraction; "
                                      : std::string(),
                     format_bytes(allocated), " already allocated)");
  }
  // The address space remembers each range's storage (for find()).
  auto storage = std::make_unique<DeviceStorage>(nbytes, device_index);
  storage->set_address(AddressSpace::instance().allocate(nbytes, storage.get()));
  account(c, nbytes, true);
  void* address = reinterpret_cast<void*>(storage->address());
  return c10::DataPtr(address, storage.release(), &release, device);
}

DeviceStorage* TpuAllocator::find(const void* address) const {
  const auto a = reinterpret_cast<uintptr_t>(address);
  uintptr_t start = 0;
  auto* s = static_cast<DeviceStorage*>(AddressSpace::instance().owner_at(a, &start));
  // (a range is rounded up past its storage's bytes)
  return s != nullptr && a < start + std::max<size_t>(s->nbytes(), 1) ? s : nullptr;
}

void TpuAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  DeviceStorage* d = find(dest);
  DeviceStorage* s = find(src);
  TORCH_CHECK(d && s && dest == reinterpret_cast<void*>(d->address()) &&
                  src == reinterpret_cast<void*>(s->address()) && count == d->nbytes() &&
                  count == s->nbytes(),
              "tpu: copy_data supports whole-storage copies only");
  // Buffers are immutable, so the copy can share the source's buffer.
  d->set_buffer(s->buffer(hlo::ElementType::kU8), s->element());
}

DeviceStats TpuAllocator::getDeviceStats(c10::DeviceIndex device) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  return counters()[device];
}

void TpuAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& c = counters()[device];
  for (auto* array : {&c.allocation, &c.segment, &c.active, &c.allocated_bytes, &c.reserved_bytes,
                      &c.active_bytes, &c.requested_bytes}) {
    for (auto& stat : *array) stat.reset_accumulated();
  }
  c.num_ooms = 0;
}

void TpuAllocator::resetPeakStats(c10::DeviceIndex device) {
  std::lock_guard<std::mutex> lock(stats_mutex());
  auto& c = counters()[device];
  for (auto* array : {&c.allocation, &c.segment, &c.active, &c.allocated_bytes, &c.reserved_bytes,
                      &c.active_bytes, &c.requested_bytes}) {
    for (auto& stat : *array) stat.reset_peak();
  }
}

std::pair<size_t, size_t> TpuAllocator::getMemoryInfo(c10::DeviceIndex device) {
  const auto total = static_cast<size_t>(Runtime::get().memory_capacity(device));
  std::lock_guard<std::mutex> lock(stats_mutex());
  const auto used = static_cast<size_t>(counters()[device].allocated_bytes[kAggregate].current);
  return {used < total ? total - used : 0, total};
}

DeviceStorage* storage_of(const c10::Storage& storage) {
  const c10::DataPtr& ptr = storage.data_ptr();
  if (ptr.get_deleter() == &release) return static_cast<DeviceStorage*>(ptr.get_context());
  // A storage made around a tpu address by at::from_blob (PyTorch's storage
  // pickling does this to copy a device storage to the host) stands for the
  // storage that owns the address, when it starts at that storage's first
  // byte and ends within it. (ZeroTensors and 0-byte storages have none.)
  if (ptr.get() == nullptr || ptr.device().type() != c10::DeviceType::PrivateUse1) return nullptr;
  DeviceStorage* owner = TpuAllocator::get().find(ptr.get());
  const bool at_start = owner != nullptr && ptr.get() == reinterpret_cast<void*>(owner->address());
  return at_start && storage.nbytes() <= owner->nbytes() ? owner : nullptr;
}

}  // namespace torch_tpu

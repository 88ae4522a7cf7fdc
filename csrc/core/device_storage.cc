#include "core/device_storage.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "core/metrics.h"
#include "exec/launcher.h"

namespace torch_tpu {

WriteLocks lock_for_writing(c10::SmallVector<DeviceStorage*, 4> storages) {
  std::sort(storages.begin(), storages.end());
  storages.erase(std::unique(storages.begin(), storages.end()), storages.end());
  WriteLocks locks;
  for (DeviceStorage* storage : storages) locks.emplace_back(storage->write_mutex());
  return locks;
}

hlo::ElementType storage_element_for(size_t nbytes, hlo::ElementType wanted) {
  return nbytes % hlo::byte_size(wanted) == 0 ? wanted : hlo::ElementType::kU8;
}

bool DeviceStorage::is_empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_ == nullptr && pending_ == nullptr;
}

bool DeviceStorage::is_pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_ != nullptr;
}

hlo::ElementType DeviceStorage::element() const {
  std::lock_guard<std::mutex> lock(mu_);
  return element_;
}

int64_t DeviceStorage::element_count() const {
  return static_cast<int64_t>(nbytes_ / hlo::byte_size(element()));
}

pjrt::BufferPtr DeviceStorage::buffer(hlo::ElementType element_if_empty) {
  return contents(element_if_empty).buffer;
}

DeviceStorage::Contents DeviceStorage::contents(hlo::ElementType element_if_empty) {
  auto counted = [this](pjrt::BufferPtr buffer, hlo::ElementType element) {
    return Contents{std::move(buffer), element,
                    static_cast<int64_t>(nbytes_ / hlo::byte_size(element))};
  };
  std::shared_ptr<PendingNode> pending;
  {
    std::unique_lock<std::mutex> lock(mu_);
    donated_.wait(lock, [this] { return !donating_; });
    if (buffer_) return counted(buffer_, element_);
    pending = pending_;
    if (!pending) element_ = storage_element_for(nbytes_, element_if_empty);
  }
  pjrt::BufferPtr made;
  if (pending) {
    Metrics::get().pending_materializations++;
    made = pending->materialize();
  } else {
    made = make_zero_buffer(device_index_, element(),
                            static_cast<int64_t>(nbytes_ / hlo::byte_size(element())));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_ == pending) {
    buffer_ = made;
    pending_.reset();
  }
  return counted(buffer_ ? buffer_ : made, element_);
}

void DeviceStorage::set_buffer(pjrt::BufferPtr buffer, hlo::ElementType element) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    buffer_ = std::move(buffer);
    pending_.reset();
    element_ = element;
    if (!donating_) return;
    donating_ = false;
  }
  donated_.notify_all();
}

bool DeviceStorage::begin_donation(const pjrt::BufferPtr& held) {
  std::lock_guard<std::mutex> lock(mu_);
  // (held by this storage and by the writer's launch arguments: two)
  if (buffer_ != held || held.use_count() != 2) return false;
  donating_ = true;
  return true;
}

void DeviceStorage::end_donation() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!donating_) return;
    donating_ = false;
  }
  donated_.notify_all();
}

void DeviceStorage::set_pending(std::shared_ptr<PendingNode> node, hlo::ElementType element) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = std::move(node);
  buffer_.reset();
  element_ = element;
}

std::shared_ptr<PendingNode> DeviceStorage::pending_node() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

pjrt::BufferPtr DeviceStorage::materialized_buffer() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_;
}

}  // namespace torch_tpu

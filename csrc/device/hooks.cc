// PrivateUse1HooksInterface: how PyTorch asks the tpu backend about
// availability, generators, pointers and storage resizing.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "core/allocator.h"
#include "core/current_device.h"
#include "core/pinned_host_allocator.h"
#include "core/runtime.h"
#include "device/generator.h"
#include "ops/storage_resize.h"

namespace torch_tpu {
namespace {

struct TpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override {
    try {
      return Runtime::visible_device_count() > 0;
    } catch (...) {
      return false;
    }
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override {
    if (device_index >= 0) (void)Runtime::get().device(device_index);
    return at::make_generator<TpuGeneratorImpl>(
        device_index < 0 ? static_cast<c10::DeviceIndex>(current_device_index()) : device_index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    DeviceStorage* storage = TpuAllocator::get().find(data);
    TORCH_CHECK(storage != nullptr, "tpu: ", data, " is not a tpu device pointer");
    return c10::Device(c10::DeviceType::PrivateUse1,
                       static_cast<c10::DeviceIndex>(storage->device_index()));
  }
  bool isPinnedPtr(const void* data) const override {
    return PinnedHostAllocator::get().owns(data);
  }
  at::Allocator* getPinnedMemoryAllocator() const override { return &PinnedHostAllocator::get(); }
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override { return true; }
  c10::DeviceIndex deviceCount() const override {
    return static_cast<c10::DeviceIndex>(isAvailable() ? Runtime::visible_device_count() : 0);
  }
  void setCurrentDevice(c10::DeviceIndex device) const override {
    (void)Runtime::get().device(device);
    set_current_device_index(device);
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return static_cast<c10::DeviceIndex>(current_device_index());
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const auto old = getCurrentDevice();
    setCurrentDevice(device);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage, newsize);
  }
};

}  // namespace

void register_hooks() {
  static TpuHooks* hooks = new TpuHooks();
  at::RegisterPrivateUse1HooksInterface(hooks);
  // torch.accelerator's host-memory calls look the device's HostAllocator
  // up here; without one they dereference null.
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &PinnedHostAllocator::get());
}

}  // namespace torch_tpu

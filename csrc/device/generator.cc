#include "device/generator.h"

#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

#include "core/current_device.h"
#include "core/runtime.h"

namespace torch_tpu {

constexpr size_t kStateBytes = 2 * sizeof(uint64_t);

TpuGeneratorImpl::TpuGeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}

void TpuGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t TpuGeneratorImpl::seed() {
  std::random_device rd;
  const uint64_t s = (static_cast<uint64_t>(rd()) << 32) | rd();
  set_current_seed(s);
  return s;
}

void TpuGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK_TYPE(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
                   "RNG state must be a torch.ByteTensor");
  TORCH_CHECK(new_state.numel() >= static_cast<int64_t>(kStateBytes),
              "RNG state is wrong size: expected at least ", kStateBytes, " bytes, got ",
              new_state.numel());
  const auto* bytes =
      static_cast<const uint8_t*>(new_state.data()) + new_state.numel() - kStateBytes;
  std::memcpy(&seed_, bytes, sizeof(uint64_t));
  std::memcpy(&offset_, bytes + sizeof(uint64_t), sizeof(uint64_t));
}

c10::intrusive_ptr<c10::TensorImpl> TpuGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({static_cast<int64_t>(kStateBytes)}, at::kByte);
  auto* bytes = state.data_ptr<uint8_t>();
  std::memcpy(bytes, &seed_, sizeof(uint64_t));
  std::memcpy(bytes + sizeof(uint64_t), &offset_, sizeof(uint64_t));
  return state.getIntrusivePtr();
}

uint64_t TpuGeneratorImpl::reserve(uint64_t increment) {
  const uint64_t at = offset_;
  offset_ += increment;
  return at;
}

TpuGeneratorImpl* TpuGeneratorImpl::clone_impl() const {
  auto* copy = new TpuGeneratorImpl(device().index());
  copy->seed_ = seed_;
  copy->offset_ = offset_;
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device_index) {
  static std::mutex mu;
  static auto* generators = new std::deque<at::Generator>();
  const int count = Runtime::get().device_count();
  const int index = device_index < 0 ? current_device_index() : device_index;
  TORCH_CHECK_INDEX(index >= 0 && index < count, "tpu: invalid device index ", index);
  std::lock_guard<std::mutex> lock(mu);
  while (static_cast<int>(generators->size()) < count) {
    generators->push_back(
        at::make_generator<TpuGeneratorImpl>(static_cast<c10::DeviceIndex>(generators->size())));
  }
  return (*generators)[index];
}

}  // namespace torch_tpu

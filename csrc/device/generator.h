// The per-device random number generator state (Philox-style seed + offset).
//
// get_state() returns 16 bytes: seed then offset (both little-endian uint64),
// so the state's last 16 bytes are seed and offset as DTensor's random ops
// expect. Random kernels (op library) draw from seed/offset and advance the
// offset by the number of values they consume.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace torch_tpu {

class TpuGeneratorImpl : public c10::GeneratorImpl {
 public:
  explicit TpuGeneratorImpl(c10::DeviceIndex device_index);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // Returns the current offset and advances it by `increment` values.
  uint64_t reserve(uint64_t increment);
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  TpuGeneratorImpl* clone_impl() const override;
  uint64_t seed_ = c10::default_rng_seed_val;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex device_index);

}  // namespace torch_tpu

// Host memory that PyTorch asks for as "pinned" for tpu (`pin_memory=True`,
// `Tensor.pin_memory()`, DataLoader's pin_memory, DDP's used-parameter map).
//
// PJRT plugins stage host transfers themselves, so this is ordinary host
// memory; what makes it "pinned" is that this allocator made it, which is
// what `Tensor.is_pinned()` asks (PyTorch's DDP asserts it). It is also
// tpu's at::HostAllocator (`torch.accelerator.empty_host_cache()` and the
// host statistics ask that one): it caches no block, so emptying the cache
// frees nothing and no freed block waits for device work.
#pragma once

#include <ATen/core/CachingHostAllocator.h>

namespace torch_tpu {

class PinnedHostAllocator final : public at::HostAllocator {
 public:
  static PinnedHostAllocator& get();

  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // Whether `ptr` points into a block this allocator handed out.
  bool owns(const void* ptr) const;

  // at::HostAllocator
  bool record_event(void* ptr, void* ctx, c10::Stream stream) override;
  void empty_cache() override {}
  at::HostStats get_stats() override;
  void reset_accumulated_stats() override;
  void reset_peak_stats() override;

 private:
  static void release(void* ptr);
};

}  // namespace torch_tpu

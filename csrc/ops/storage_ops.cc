// Kernels that change which storage or how much of it a tensor uses:
// resize_ and the set_ family.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>

#include "core/allocator.h"
#include "ops/kernels.h"
#include "ops/storage_resize.h"

namespace torch_tpu::ops {
namespace {

// Grows the storage so a view (offset, size, stride) fits, as CPU does.
void ensure_storage_fits(const at::Tensor& self, int64_t storage_offset, at::IntArrayRef size,
                         at::IntArrayRef stride) {
  // PyTorch's own computation, which raises "Storage size calculation
  // overflowed" instead of wrapping around.
  const size_t needed = at::detail::computeStorageNbytes(size, stride, self.element_size(),
                                                         static_cast<size_t>(storage_offset));
  if (needed > self.storage().nbytes()) resize_storage_bytes(self.storage(), needed);
}

}  // namespace

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  for (int64_t s : size) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  }
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  const auto format = memory_format.value_or(at::MemoryFormat::Contiguous);
  if (format != at::MemoryFormat::Preserve) impl->empty_tensor_restride(format);
  ensure_storage_fits(self, self.storage_offset(), self.sizes(), self.strides());
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, int64_t storage_offset,
                        at::IntArrayRef size, at::IntArrayRef stride) {
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(storage_offset);
  impl->set_sizes_and_strides(size, stride);
  ensure_storage_fits(self, storage_offset, size, stride);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  const int64_t count = static_cast<int64_t>(source.nbytes() / self.element_size());
  return set_storage(self, std::move(source), 0, {count}, {1});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
                     source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0,
                       TpuAllocator::get().allocate_on(0, self.device().index()),
                       &TpuAllocator::get(), true);
  return set_storage(self, std::move(storage), 0, {0}, {1});
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  // c10's own answer lists the dense in-tree backends only.
  auto dense = [](const at::Tensor& t) {
    const c10::DispatchKeySet backends({c10::BackendComponent::CPUBit,
                                        c10::BackendComponent::CUDABit,
                                        c10::BackendComponent::PrivateUse1Bit});
    const c10::DispatchKeySet ks = t.key_set();
    return ks.has_any(c10::DispatchKeySet(c10::DispatchKey::Dense)) && ks.has_any(backends);
  };
  return dense(self) && dense(from);
}

}  // namespace torch_tpu::ops

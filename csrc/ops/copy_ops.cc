// copy_ in every direction (cpu<->tpu, tpu<->tpu), item().
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include "core/allocator.h"
#include "core/dtype_map.h"
#include "core/runtime.h"
#include "exec/launcher.h"
#include "exec/region.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

bool is_tpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// True when `t` is exactly its storage's buffer: contiguous from offset 0,
// covering every byte, with the storage holding elements of t's dtype.
bool is_whole_storage(const at::Tensor& t) {
  DeviceStorage* s = storage_of(t.storage());
  return s != nullptr && t.storage_offset() == 0 && t.is_contiguous() &&
         static_cast<size_t>(t.numel()) * t.element_size() == s->nbytes() && !s->is_empty() &&
         s->element() == element_type_for(t.scalar_type(), "copy_");
}

// Host -> device. `src` is a CPU tensor already broadcast to dst's shape.
void copy_host_to_device(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  DeviceStorage* storage = storage_of(dst.storage());
  const bool whole = dst.storage_offset() == 0 && dst.is_contiguous() &&
                     static_cast<size_t>(dst.numel()) * dst.element_size() == storage->nbytes();
  // src's values as read; stored straight into a whole storage as dst reads
  // them (a conjugate or negative view holds the conjugate or negation of
  // its values), else staged and written through dst's view, which applies
  // its bits (TensorProgram)
  at::Tensor host = src.to(dst.scalar_type()).resolve_conj().resolve_neg();
  if (whole && dst.is_conj()) host = host.conj_physical();
  if (whole && dst.is_neg()) host = host.neg();
  // (CPU's transposing copy has no float4_e2m1fn_x2 kernel: move its bytes)
  host = host.scalar_type() == at::kFloat4_e2m1fn_x2
             ? host.view(at::kByte).contiguous().view(at::kFloat4_e2m1fn_x2)
             : host.contiguous();
  const hlo::ElementType type = element_type_for(dst.scalar_type(), "copy_");
  const int device = dst.device().index();
  pjrt::BufferPtr buffer;
  if (Runtime::get().device_memory_is_host()) {
    // One host copy (PyTorch's own, multi-threaded), which the device buffer
    // then uses in place: the caller's tensor may change after the call.
    if (host.storage().is_alias_of(src.storage())) host = host.clone();
    buffer = upload_owned(host.data_ptr(), type, {host.numel()}, device,
                          std::make_shared<at::Tensor>(host));
  } else {
    // A non-blocking copy keeps the host tensor alive until the plugin has
    // read it; a blocking one copies before returning.
    std::shared_ptr<void> keep_alive;
    if (non_blocking) keep_alive = std::make_shared<at::Tensor>(host);
    buffer = upload(host.data_ptr(), type, {host.numel()}, device, std::move(keep_alive));
  }
  if (whole) {
    storage->set_buffer(std::move(buffer), type);
    return;
  }
  // Partial or strided destination: stage in a fresh tensor, then write
  // through dst's view on the device.
  at::Tensor staged = device_empty(dst.sizes(), dst.options());
  storage_of(staged.storage())->set_buffer(std::move(buffer), type);
  copy_on_device(dst, staged, "copy_");
}

// True when downloading all of `t`'s storage and taking the view on the
// host beats compacting it on the device first: the view holds at least an
// eighth of the storage's bytes, or the storage is small (1 MiB). Compacting
// compiles one program per view shape; these views are the results of
// data-dependent ops (nonzero, unique...: a power-of-two bucket of rows)
// and compiled graphs' outputs cut back from their shape bucket, whose
// shapes change every call, so the download costs at most 8x the bytes and
// no program.
bool is_cheap_to_download_whole(const at::Tensor& t) {
  constexpr size_t kSmallStorageBytes = size_t{1} << 20;
  DeviceStorage* s = storage_of(t.storage());
  const size_t nbytes = static_cast<size_t>(t.numel()) * t.element_size();
  return s != nullptr && !s->is_empty() && t.numel() > 0 &&
         (8 * nbytes >= s->nbytes() || s->nbytes() <= kSmallStorageBytes) &&
         s->element() == element_type_for(t.scalar_type(), "copy_");
}

// The device buffer's contents as a CPU tensor of `sizes` and `options`
// over its own memory, where device memory is host memory (the CPU plugin):
// reading it is one host copy, PyTorch's own. Undefined elsewhere. `view`
// keeps the memory readable.
at::Tensor host_alias(const pjrt::BufferPtr& buffer, at::IntArrayRef sizes,
                      const at::TensorOptions& options, int device,
                      std::unique_ptr<pjrt::PinnedMemory>& view) {
  view = host_view(buffer, device);
  if (!view) return at::Tensor();
  return at::from_blob(const_cast<void*>(view->data()), sizes, options.device(c10::kCPU));
}

// dst.copy_(src) on the host, where CPU's transposing copy has no
// float4_e2m1fn_x2 kernel: its bytes are copied instead.
void host_copy(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.scalar_type() == at::kFloat4_e2m1fn_x2 && src.scalar_type() == at::kFloat4_e2m1fn_x2) {
    dst.view(at::kByte).copy_(src.view(at::kByte));
  } else {
    dst.copy_(src);
  }
}

// Device -> host. `dst` is a CPU tensor of src's shape.
void copy_device_to_host(const at::Tensor& dst, const at::Tensor& src) {
  const ScopedCutReason host_read(CutReason::kHostRead);
  const int device = src.device().index();
  std::unique_ptr<pjrt::PinnedMemory> view;
  // a conjugate or negative view is resolved on the device first (compact)
  const bool plain = !src.is_conj() && !src.is_neg();
  if (plain && !is_whole_storage(src) && is_cheap_to_download_whole(src)) {
    DeviceStorage* storage = storage_of(src.storage());
    pjrt::BufferPtr buffer = storage->buffer(storage->element());
    at::Tensor whole = host_alias(buffer, {storage->element_count()}, src.options(), device, view);
    if (!whole.defined()) {
      whole = at::empty({storage->element_count()}, src.options().device(c10::kCPU));
      download(*buffer, whole.data_ptr(), storage->nbytes(), device);
    }
    host_copy(dst, whole.as_strided(src.sizes(), src.strides(), src.storage_offset()));
    return;
  }
  at::Tensor dense = plain && is_whole_storage(src) ? src : compact(src);
  DeviceStorage* storage = storage_of(dense.storage());
  pjrt::BufferPtr buffer = storage->buffer(element_type_for(dense.scalar_type(), "copy_"));
  at::Tensor aliased = host_alias(buffer, src.sizes(), src.options(), device, view);
  if (aliased.defined()) {
    host_copy(dst, aliased);
    return;
  }
  const size_t nbytes = static_cast<size_t>(dense.numel()) * dense.element_size();
  if (dst.is_contiguous() && dst.scalar_type() == src.scalar_type() && !dst.is_conj() &&
      !dst.is_neg()) {
    download(*buffer, dst.data_ptr(), nbytes, device);
    return;
  }
  at::Tensor host = at::empty(src.sizes(), src.options().device(c10::kCPU));
  download(*buffer, host.data_ptr(), nbytes, device);
  host_copy(dst, host);
}

}  // namespace

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  TORCH_CHECK(self.defined(), "copy_: self is undefined");
  TORCH_CHECK(src.defined(), "copy_: src is undefined");
  // PyTorch's own broadcast check and message ("The size of tensor a ...").
  const auto shape = at::infer_size(self.sizes(), src.sizes());
  TORCH_CHECK(shape == self.sizes(), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", shape);
  // ATen's ZeroTensor key passes copy_ and clone through to the backend:
  // a ZeroTensor (forward-mode AD's known-zero tangent) has no buffer.
  TORCH_CHECK(!self._is_zerotensor(),
              "ZeroTensors are immutable. Please materialize the tensor using `.clone()`, if you "
              "want a mutable zero tensor.");
  if (src._is_zerotensor()) return self.zero_();
  if (self.numel() == 0) return self;
  if (self.is_same(src)) return self;
  // The same memory-overlap rules as CPU/CUDA copy_ (TensorIterator's).
  at::assert_no_internal_overlap(self);
  at::assert_no_partial_overlap(self, src);
  if (is_tpu(self) && is_tpu(src)) {
    if (self.device() == src.device()) {
      if (self.is_same(src)) return self;
      copy_on_device(self, src, "copy_");
    } else {
      // Across tpu devices: through the host for now.
      at::Tensor host = at::empty(src.sizes(), src.options().device(c10::kCPU));
      copy_device_to_host(host, src);
      copy_host_to_device(self, host.expand(self.sizes()), false);
    }
  } else if (is_tpu(self)) {
    TORCH_CHECK(src.device().type() == c10::kCPU, "copy_: cannot copy from ", src.device(), " to ",
                self.device());
    copy_host_to_device(self, src.expand(self.sizes()), non_blocking);
  } else {
    TORCH_CHECK(self.device().type() == c10::kCPU, "copy_: cannot copy from ", src.device(), " to ",
                self.device());
    if (src.sizes() == self.sizes()) {
      copy_device_to_host(self, src);
    } else {
      at::Tensor host = at::empty(src.sizes(), src.options().device(c10::kCPU));
      copy_device_to_host(host, src);
      host_copy(self, host);
    }
  }
  return self;
}

at::Tensor clone(const at::Tensor& src, std::optional<at::MemoryFormat> memory_format) {
  // at::native::clone's result layout (CompositeExplicitAutograd's kernel),
  // made by the device's empty directly and filled by one program: clone
  // (and contiguous(), x.clone(), .to(copy=True)) is on many small ops'
  // paths, and the dispatcher's empty_like and copy_ round trips (with
  // copy_'s overlap checks, moot for a new tensor) cost more than the rest.
  const auto format = memory_format.value_or(at::MemoryFormat::Preserve);
  at::Tensor self;
  if (format == at::MemoryFormat::Preserve) {
    if (!src.is_non_overlapping_and_dense()) return at::native::clone(src, memory_format);
    self = empty_strided(src.sizes(), src.strides(), src.scalar_type(), std::nullopt, src.device(),
                         std::nullopt);
  } else {
    self = empty_memory_format(src.sizes(), src.scalar_type(), std::nullopt, src.device(),
                               std::nullopt, format);
  }
  if (src._is_zerotensor()) {
    self.zero_();
  } else if (self.numel() > 0) {
    copy_on_device(self, src, "clone");
  }
  return self;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor out = dst;
  copy_(out, self, non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  at::Tensor out = dst;
  copy_(out, self, false);
  return dst;
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
  copy_device_to_host(host, self.reshape({}));
  return host.item();
}

}  // namespace torch_tpu::ops

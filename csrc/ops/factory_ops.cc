// Tensor creation and whole-tensor fills: empty, empty_strided, arange, fill_.
#include <ATen/EmptyTensor.h>
#include <ATen/native/RangeUtils.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/empty.h>
#include <c10/core/CPUAllocator.h>

#include "core/allocator.h"
#include "core/current_device.h"
#include "core/dtype_map.h"
#include "core/metrics.h"
#include "exec/eager_mode.h"
#include "exec/executable_cache.h"
#include "exec/launcher.h"
#include "ops/kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

int device_index_of(std::optional<c10::Device> device) {
  if (device && device->has_index()) return device->index();
  return -1;
}

// A whole-storage fill made in Strict mode: nothing runs until the storage
// is read, and a following overwrite makes it free. (DeferAndFuse records
// fills in its region like any other op.)
class LazyFill : public PendingNode {
 public:
  LazyFill(hlo::ElementType type, int64_t count, int device, PackedScalar bytes)
      : type_(type), count_(count), device_(device), bytes_(bytes) {}

  pjrt::BufferPtr materialize() override {
    auto exe = ExecutableCache::get().get_or_compile(
        std::string("fill_flat:") + hlo::mlir_name(type_) + ":" + std::to_string(count_), [&] {
          hlo::Builder b;
          b.set_results({b.splat(b.parameter({type_, {}}), {count_})});
          return b.module_text();
        });
    return launch(*exe, {upload(bytes_.data(), type_, {}, device_)}, device_).at(0);
  }

 private:
  const hlo::ElementType type_;
  const int64_t count_;
  const int device_;
  const PackedScalar bytes_;
};

bool fill_lazily(const at::Tensor& self, const c10::Scalar& value) {
  if (current_eager_mode() == EagerMode::kDeferAndFuse) return false;
  DeviceStorage* storage = storage_of(self.storage());
  if (storage == nullptr || self.storage_offset() != 0 || !self.is_contiguous() ||
      static_cast<size_t>(self.numel()) * self.element_size() != storage->nbytes()) {
    return false;
  }
  const hlo::ElementType type = element_type_for(self.scalar_type(), "fill_");
  // Packed now, so an out-of-range value raises here, as on CPU.
  storage->set_pending(std::make_shared<LazyFill>(type, self.numel(), storage->device_index(),
                                                  pack_scalar(value, type)),
                       type);
  return true;
}

}  // namespace

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  const auto scalar_type = dtype.value_or(c10::get_default_dtype_as_scalartype());
  (void)element_type_for(scalar_type, "empty");
  const int index = device_index_of(device);
  const c10::DeviceGuard guard(
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index)));
  const c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(size, &TpuAllocator::get(), ks, scalar_type, memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  const auto scalar_type = dtype.value_or(c10::get_default_dtype_as_scalartype());
  (void)element_type_for(scalar_type, "empty_strided");
  const int index = device_index_of(device);
  const c10::DeviceGuard guard(
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index)));
  const c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(size, stride, &TpuAllocator::get(), ks, scalar_type);
}

// Forward-mode AD (torch.func.jvp/jacfwd/hessian) makes tangents that are
// known to be zero with this op, as on CPU and CUDA: a tensor with no buffer
// whose ZeroTensor dispatch key answers the ops that can skip the zeros
// (mul, add, ...) and materializes real zeros on tpu for every other op
// (ATen's ZeroTensor fallback), so no tpu kernel ever reads its storage.
at::Tensor efficient_zero_tensor(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                                 std::optional<at::Layout> layout, std::optional<at::Device> device,
                                 std::optional<bool> pin_memory) {
  const auto scalar_type = dtype.value_or(c10::get_default_dtype_as_scalartype());
  (void)element_type_for(scalar_type, "_efficientzerotensor");
  int index = device_index_of(device);
  if (index < 0) index = current_device_index();
  at::native::ZeroTensorAllocator allocator(
      c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index)));
  const auto ks = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1) |
                  c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(size, &allocator, ks, scalar_type, std::nullopt);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  if (!fill_lazily(self, value)) fill_tensor(self, value, "fill_");
  return self;
}

at::Tensor& fill_tensor_value(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (value.device().type() == c10::DeviceType::CPU) {
    return fill_scalar(self, value.item());
  }
  if (self.numel() == 0) return self;
  copy_on_device(self, value, "fill_");
  return self;
}

// (float4_e2m1fn_x2 has zero_ but no fill_ on CPU: its zero is the zero byte)
at::Tensor& zero_(at::Tensor& self) {
  if (self.scalar_type() == at::kFloat4_e2m1fn_x2) {
    at::Tensor bytes = self.view(at::kByte);
    fill_scalar(bytes, 0);
    return self;
  }
  return fill_scalar(self, 0);
}

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                       at::Tensor& out) {
  // (CPU's kernel dispatches on out's dtype before anything else)
  TORCH_CHECK_NOT_IMPLEMENTED(out.scalar_type() != at::kBool,
                              "\"arange_cpu\" not implemented for 'Bool'");
  // Size computation and argument checks are PyTorch's own, shared with CPU
  // (only the int64 case differs: it avoids rounding through double).
  const int64_t size = out.scalar_type() == at::kLong
                           ? at::native::compute_arange_size<int64_t>(start, end, step)
                           : at::native::compute_arange_size<double>(start, end, step);
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return out;
  // value[i] = start + i * step, computed in the accumulate type (f64 for
  // floats, s64 for integers) and converted, like the CPU kernel.
  const bool floating = c10::isFloatingType(out.scalar_type());
  const hlo::ElementType acc = floating ? hlo::ElementType::kF64 : hlo::ElementType::kS64;
  TensorProgram program("arange", std::string("arange:") + std::to_string(size));
  program.scalar(start, acc);
  program.scalar(step, acc);
  program.output(out);
  program.run([size, acc](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    hlo::Value i = b.convert(b.iota({hlo::ElementType::kS64, {size}}, 0), acc);
    hlo::Value v =
        b.binary("add", b.splat(in[0], {size}), b.binary("multiply", i, b.splat(in[1], {size})));
    return std::vector<hlo::Value>{v};
  });
  return out;
}

}  // namespace torch_tpu::ops

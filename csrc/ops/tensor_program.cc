#include "ops/tensor_program.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cstring>

#include "core/allocator.h"
#include "core/dtype_map.h"
#include "exec/executable_cache.h"
#include "exec/launcher.h"
#include "ops/broadcast.h"
#include "ops/nan_check.h"

namespace torch_tpu {

hlo::StridedView view_of(const at::Tensor& t) {
  hlo::StridedView v;
  v.element = element_type_for(t.scalar_type(), "tpu");
  v.sizes = t.sizes().vec();
  v.strides = t.strides().vec();
  v.offset = t.storage_offset();
  return v;
}

namespace {

// True when writing `v` replaces every byte of `storage`.
bool covers_storage(const hlo::StridedView& v, const DeviceStorage& storage) {
  return v.offset == 0 && v.is_contiguous() &&
         static_cast<size_t>(v.numel()) * hlo::byte_size(v.element) == storage.nbytes();
}

}  // namespace

std::vector<unsigned char> pack_scalar(const c10::Scalar& s, hlo::ElementType t) {
  auto pack = [](auto value) {
    std::vector<unsigned char> out(sizeof(value));
    std::memcpy(out.data(), &value, sizeof(value));
    return out;
  };
  using hlo::ElementType;
  switch (t) {
    case ElementType::kPred:
      return pack(static_cast<uint8_t>(s.toBool()));
    case ElementType::kS8:
      return pack(s.to<int8_t>());
    case ElementType::kS16:
      return pack(s.to<int16_t>());
    case ElementType::kS32:
      return pack(s.to<int32_t>());
    case ElementType::kS64:
      return pack(s.to<int64_t>());
    case ElementType::kU8:
      return pack(s.to<uint8_t>());
    case ElementType::kU16:
      return pack(s.to<uint16_t>());
    case ElementType::kU32:
      return pack(s.to<uint32_t>());
    case ElementType::kU64:
      return pack(s.to<uint64_t>());
    case ElementType::kF16:
      return pack(s.to<c10::Half>());
    case ElementType::kBF16:
      return pack(s.to<c10::BFloat16>());
    case ElementType::kF32:
      return pack(s.to<float>());
    case ElementType::kF64:
      return pack(s.to<double>());
    case ElementType::kC64:
      return pack(s.to<c10::complex<float>>());
    case ElementType::kC128:
      return pack(s.to<c10::complex<double>>());
  }
  return {};
}

pjrt::BufferPtr upload_scalar(const c10::Scalar& value, hlo::ElementType type, int device_index) {
  const auto bytes = pack_scalar(value, type);
  return upload(bytes.data(), type, {}, device_index);
}

TensorProgram::TensorProgram(const char* op, std::string key) : op_(op), key_(std::move(key)) {}

void TensorProgram::check_device(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "Expected all tensors to be on the same device, but found at least two "
              "devices, tpu and ",
              t.device(), "! (when checking arguments for ", op_, ")");
  const int index = t.device().index();
  if (device_index_ < 0) device_index_ = index;
  TORCH_CHECK(index == device_index_,
              "Expected all tensors to be on the same device, but found at least two "
              "devices, tpu:",
              device_index_, " and tpu:", index, "! (when checking arguments for ", op_, ")");
}

int TensorProgram::slot_for(DeviceStorage* storage) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].storage == storage) return static_cast<int>(i);
  }
  slots_.push_back({storage});
  return static_cast<int>(slots_.size() - 1);
}

void TensorProgram::input(const at::Tensor& t) {
  check_device(t);
  hlo::StridedView v = view_of(t);
  int slot = -1;
  if (v.numel() > 0) {
    slot = slot_for(storage_of(t.storage()));
    slots_[slot].needs_base = true;
  }
  input_order_.push_back(static_cast<int>(inputs_.size()));
  inputs_.emplace_back(slot, std::move(v));
}

void TensorProgram::scalar(const c10::Scalar& value, hlo::ElementType type) {
  input_order_.push_back(~static_cast<int>(scalars_.size()));
  scalars_.emplace_back(type, pack_scalar(value, type));
}

void TensorProgram::output(const at::Tensor& dst) {
  check_device(dst);
  hlo::StridedView v = view_of(dst);
  int slot = -1;
  if (v.numel() > 0) {
    DeviceStorage* storage = storage_of(dst.storage());
    slot = slot_for(storage);
    if (!covers_storage(v, *storage)) slots_[slot].needs_base = true;
  }
  outputs_.emplace_back(slot, std::move(v));
  if (nan_check_enabled()) output_tensors_.push_back(dst);
}

void TensorProgram::run(const Lowering& lower) {
  bool any_output = false;
  for (const auto& o : outputs_) any_output |= o.first >= 0;
  if (!any_output) return;  // every destination is empty

  // Parameters: storage bases first, then scalars. The key records each
  // base's type and length, each view, and each scalar's type.
  std::vector<pjrt::BufferPtr> args;
  std::string key = key_ + "|";
  std::vector<hlo::TensorType> base_types(slots_.size(), {hlo::ElementType::kU8, {}});
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& slot = slots_[i];
    if (!slot.needs_base) continue;
    // An empty storage read through a view is zero-filled in that view's type.
    hlo::ElementType first_type = hlo::ElementType::kU8;
    for (const auto& in : inputs_) {
      if (in.first == static_cast<int>(i)) {
        first_type = in.second.element;
        break;
      }
    }
    for (const auto& out : outputs_) {
      if (out.first == static_cast<int>(i)) {
        first_type = out.second.element;
        break;
      }
    }
    pjrt::BufferPtr base = slot.storage->buffer(first_type);
    slot.param = static_cast<int>(args.size());
    base_types[i] = {slot.storage->element(), {slot.storage->element_count()}};
    args.push_back(std::move(base));
    key += "b" + base_types[i].str() + ";";
  }
  for (const auto& in : inputs_) key += "i" + std::to_string(in.first) + in.second.key() + ";";
  for (const auto& [type, bytes] : scalars_) {
    key += std::string("s") + hlo::mlir_name(type) + ";";
    args.push_back(upload(bytes.data(), type, {}, device_index_));
  }
  for (const auto& out : outputs_) {
    key += "o" + std::to_string(out.first) + out.second.key() + ";";
  }

  auto exe = ExecutableCache::get().get_or_compile(key, [&] {
    hlo::Builder b;
    std::vector<hlo::Value> current(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].needs_base) current[i] = b.parameter(base_types[i]);
    }
    std::vector<hlo::Value> scalar_values;
    for (const auto& s : scalars_) scalar_values.push_back(b.parameter({s.first, {}}));
    std::vector<hlo::Value> values;
    for (int idx : input_order_) {
      if (idx < 0) {
        values.push_back(scalar_values[~idx]);
        continue;
      }
      const auto& [slot, view] = inputs_[idx];
      values.push_back(slot < 0 ? b.zeros({view.element, view.sizes})
                                : hlo::read_view(b, current[slot], view));
    }
    std::vector<hlo::Value> results = lower(b, values);
    TORCH_CHECK(results.size() == outputs_.size(), op_, ": lowering produced ", results.size(),
                " results for ", outputs_.size(), " outputs");
    std::vector<bool> written(slots_.size(), false);
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const auto& [slot, view] = outputs_[i];
      if (slot < 0) continue;
      hlo::Value value = b.convert(results[i], view.element);
      if (value.type.dims != view.sizes) {
        value = b.reshape(value, view.sizes);
      }
      if (!slots_[slot].needs_base) {
        current[slot] = b.reshape(value, {view.numel()});
      } else {
        current[slot] = hlo::write_view(b, current[slot], view, value);
      }
      written[slot] = true;
    }
    std::vector<hlo::Value> outs;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (written[i]) outs.push_back(current[i]);
    }
    b.set_results(outs);
    return b.module_text();
  });

  std::vector<pjrt::BufferPtr> results = launch(*exe, args, device_index_);
  // The program returns one flat buffer per written storage, in slot order.
  std::vector<const hlo::StridedView*> written_view(slots_.size(), nullptr);
  for (const auto& [slot, view] : outputs_) {
    if (slot >= 0) written_view[slot] = &view;
  }
  size_t next = 0;
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    if (written_view[slot] == nullptr) continue;
    const hlo::ElementType type =
        slots_[slot].needs_base ? base_types[slot].element : written_view[slot]->element;
    slots_[slot].storage->set_buffer(results.at(next++), type);
  }
  if (nan_check_enabled()) check_outputs_finite(op_, output_tensors_);
}

void fill_tensor(const at::Tensor& out, const c10::Scalar& value, const char* op) {
  const hlo::ElementType type = element_type_for(out.scalar_type(), op);
  TensorProgram program(op, "fill");
  program.scalar(value, type);
  program.output(out);
  const auto sizes = out.sizes().vec();
  program.run([sizes](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return std::vector<hlo::Value>{b.splat(in[0], sizes)};
  });
}

void copy_on_device(const at::Tensor& dst, const at::Tensor& src, const char* op) {
  TensorProgram program(op, "copy");
  program.input(src);
  program.output(dst);
  const auto dst_sizes = dst.sizes().vec();
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return std::vector<hlo::Value>{broadcast_to(b, in[0], dst_sizes)};
  });
}

at::Tensor compact(const at::Tensor& src) {
  at::Tensor out = at::empty(src.sizes(), src.options());
  copy_on_device(out, src, "contiguous");
  return out;
}

}  // namespace torch_tpu

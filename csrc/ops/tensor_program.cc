#include "ops/tensor_program.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/allocator.h"
#include "core/dtype_map.h"
#include "core/metrics.h"
#include "exec/async_errors.h"
#include "exec/cache_key.h"
#include "exec/eager_mode.h"
#include "exec/executable_cache.h"
#include "exec/fragment_cache.h"
#include "exec/key_buffer.h"
#include "exec/launch_donations.h"
#include "exec/launcher.h"
#include "exec/region.h"
#include "exec/scalar_buffers.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/nan_check.h"

namespace torch_tpu {

ViewArg::ViewArg(const at::Tensor& t)
    : element(element_type_for(t.scalar_type(), "tpu")),
      sizes(t.sizes()),
      strides(t.strides()),
      offset(t.storage_offset()),
      numel(t.numel()),
      conj(t.is_conj()),
      neg(t.is_neg()) {
  int64_t inner = 1;  // the stride a dim would take after the dims inside it
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) strides[d] = inner;
    inner = strides[d] * std::max<int64_t>(sizes[d], 1);
  }
}

hlo::StridedView ViewArg::strided() const {
  hlo::StridedView v;
  v.element = element;
  v.sizes.assign(sizes.begin(), sizes.end());
  v.strides.assign(strides.begin(), strides.end());
  v.offset = offset;
  return v;
}

size_t ViewArg::key_size() const {
  return sizeof(element) + sizeof(uint32_t) + 2 * sizes.size() * sizeof(int64_t) + sizeof(uint8_t) +
         sizeof(int64_t);
}

void ViewArg::write_key(KeyWriter& key) const {
  // The same bytes as append_bytes(element), append_sequence(sizes), the
  // strides, the bits and the offset.
  const auto rank = static_cast<uint32_t>(sizes.size());
  key.put(element);
  key.put(rank);
  key.put_bytes(sizes.data(), rank * sizeof(int64_t));
  key.put_bytes(strides.data(), rank * sizeof(int64_t));
  key.put(static_cast<uint8_t>(conj | (neg << 1)));
  key.put(runtime_offset ? int64_t{-1} : offset);
}

namespace {

// True when writing `v` replaces every byte of `storage` (a contiguous view,
// or a permutation of one such as a transposed or channels_last result).
bool covers_storage(const at::Tensor& t, const ViewArg& v, const DeviceStorage& storage) {
  return v.offset == 0 && t.is_non_overlapping_and_dense() &&
         static_cast<size_t>(v.numel) * hlo::byte_size(v.element) == storage.nbytes();
}

}  // namespace

namespace {

// The value CPU's cast of a wrapped-number tensor gives: integers wrap
// modulo the width, floats round (to inf past the range), complex numbers
// keep their real part for a real type. A float that does not fit an
// integer type (undefined behaviour in that cast) raises instead.
template <typename T>
T wrapped_cast(const c10::Scalar& s) {
  if (s.isIntegral(/*includeBool=*/true)) {
    if (s.isUnsigned()) return c10::convert<T>(s.to<uint64_t>());
    return c10::convert<T>(s.toLong());
  }
  if constexpr (std::is_integral_v<T>) {
    return s.to<T>();
  } else {
    if (s.isComplex()) return c10::convert<T>(s.toComplexDouble());
    return c10::convert<T>(s.toDouble());
  }
}

}  // namespace

PackedScalar pack_scalar(const c10::Scalar& s, hlo::ElementType t, ScalarConversion conversion) {
  const bool wrap = conversion == ScalarConversion::kWrapped;
  auto pack = [](auto value) {
    static_assert(sizeof(value) <= sizeof(PackedScalar::bytes));
    PackedScalar out;
    std::memcpy(out.bytes.data(), &value, sizeof(value));
    out.size = sizeof(value);
    return out;
  };
  auto cast = [&](auto type_tag) {
    using T = decltype(type_tag);
    return pack(wrap ? wrapped_cast<T>(s) : s.to<T>());
  };
  using hlo::ElementType;
  switch (t) {
    case ElementType::kPred:
      return pack(static_cast<uint8_t>(s.toBool()));
    case ElementType::kS8:
      return cast(int8_t{});
    case ElementType::kS16:
      return cast(int16_t{});
    case ElementType::kS32:
      return cast(int32_t{});
    case ElementType::kS64:
      return cast(int64_t{});
    case ElementType::kU8:
      return cast(uint8_t{});
    case ElementType::kU16:
      return cast(uint16_t{});
    case ElementType::kU32:
      return cast(uint32_t{});
    case ElementType::kU64:
      return cast(uint64_t{});
    case ElementType::kF16:
      return cast(c10::Half{});
    case ElementType::kBF16:
      return cast(c10::BFloat16{});
    case ElementType::kF32:
      return cast(float{});
    case ElementType::kF64:
      return cast(double{});
    case ElementType::kC64:
      return cast(c10::complex<float>{});
    case ElementType::kC128:
      return cast(c10::complex<double>{});
    case ElementType::kF8E4M3FN:
      return cast(c10::Float8_e4m3fn{});
    case ElementType::kF8E5M2:
      return cast(c10::Float8_e5m2{});
    case ElementType::kF8E4M3FNUZ:
      return cast(c10::Float8_e4m3fnuz{});
    case ElementType::kF8E5M2FNUZ:
      return cast(c10::Float8_e5m2fnuz{});
    case ElementType::kF8E8M0FNU:
      return cast(c10::Float8_e8m0fnu{});
  }
  return {};
}

TensorProgram::TensorProgram(const char* op, std::string key)
    : op_(op), owned_key_(std::move(key)), key_(owned_key_) {}

TensorProgram::TensorProgram(const char* op, BorrowedKey key) : op_(op), key_(key.key) {}

DeviceStorage* TensorProgram::checked_storage(const at::Tensor& t, const ViewArg& v) const {
  // A tensor whose view reaches past its storage (left by a failed resize_,
  // or made by set_) fails here, at the call, in every eager mode; the
  // program would otherwise fail to compile, or, deferred, poison a region.
  // A ZeroTensor has no buffer. ATen's ZeroTensor key materializes it before
  // every kernel but a few that check for it (copy_, clone, dot); this keeps
  // any other path an error instead of a read through a null storage.
  DeviceStorage* storage = storage_of(t.storage());
  TORCH_CHECK(storage != nullptr, op_,
              ": got a tensor with no tpu buffer (a ZeroTensor, or a tensor made over an address "
              "that is not the start of a tpu storage), which this kernel cannot read or write; "
              "materialize it with `.clone()`");
  int64_t last = v.offset;
  bool overflow = false;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    int64_t step = 0;
    overflow |= c10::mul_overflows(v.sizes[d] - 1, v.strides[d], &step);
    overflow |= c10::add_overflows(last, step, &last);
  }
  int64_t needed = 0;
  overflow |= c10::mul_overflows(last + 1, static_cast<int64_t>(t.element_size()), &needed);
  const auto held = static_cast<int64_t>(t.storage().nbytes());
  TORCH_CHECK(!overflow && needed <= held, op_, ": a tensor of sizes ", t.sizes(), ", strides ",
              t.strides(), " and storage offset ", t.storage_offset(),
              " reaches past the end of its storage of ", held, " bytes");
  return storage;
}

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
  // (made in place: a ViewArg holds its sizes and strides inline)
  auto& [slot, v] = inputs_.emplace_back(std::piecewise_construct, std::forward_as_tuple(-1),
                                         std::forward_as_tuple(t));
  if (v.numel > 0) {
    slot = slot_for(checked_storage(t, v));
    slots_[slot].needs_base = true;
  }
  input_order_.push_back(static_cast<int>(inputs_.size() - 1));
}

void TensorProgram::scalar(const c10::Scalar& value, hlo::ElementType type,
                           ScalarConversion conversion) {
  input_order_.push_back(~static_cast<int>(scalars_.size()));
  scalars_.push_back({type, pack_scalar(value, type, conversion)});
}

void TensorProgram::report_findings(const char* op, IndexErrorClass error_class) {
  index_check_op_ = op;
  index_error_class_ = error_class;
}

void TensorProgram::output(const at::Tensor& dst) {
  check_device(dst);
  auto& [slot, v] = outputs_.emplace_back(std::piecewise_construct, std::forward_as_tuple(-1),
                                          std::forward_as_tuple(dst));
  if (v.numel > 0) {
    DeviceStorage* storage = checked_storage(dst, v);
    slot = slot_for(storage);
    if (!covers_storage(dst, v, *storage)) slots_[slot].needs_base = true;
  }
  if (nan_check_enabled()) output_tensors_.push_back(dst);
}

void TensorProgram::build_key(std::string& key) const {
  // Storage bases (type and length), then each input view, each scalar's
  // type and each output view; sized first and written in one pass (this
  // runs on every launch).
  using Slot = int32_t;
  size_t size = key_.size() + 1;
  for (const auto& slot : slots_) {
    if (slot.needs_base) size += sizeof(Slot) + sizeof(slot.base_element) + sizeof(slot.base_count);
  }
  size += sizeof(Slot);
  for (const auto& input : inputs_) size += sizeof(Slot) + input.second.key_size();
  size += scalars_.size() * sizeof(hlo::ElementType) + sizeof(Slot);
  for (const auto& output : outputs_) size += sizeof(Slot) + output.second.key_size();
  if (index_check_op_ != nullptr) size += 1;

  key.resize(size);
  KeyWriter w(key.data());
  w.put_bytes(key_.data(), key_.size());
  w.put('\0');
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].needs_base) continue;
    w.put(static_cast<Slot>(i));
    w.put(slots_[i].base_element);
    w.put(slots_[i].base_count);
  }
  w.put(Slot{-1});
  for (const auto& [slot, view] : inputs_) {
    w.put(static_cast<Slot>(slot));
    view.write_key(w);
  }
  for (const auto& s : scalars_) w.put(s.type);
  w.put(Slot{-1});
  for (const auto& [slot, view] : outputs_) {
    w.put(static_cast<Slot>(slot));
    view.write_key(w);
  }
  if (index_check_op_ != nullptr) w.put('I');
  TORCH_INTERNAL_ASSERT(w.position() == key.data() + key.size(), "tpu: a program key's size");
}

namespace {

// x as a view with `v`'s conjugate and negative bits reads it.
hlo::Value through_bits(hlo::Builder& b, hlo::Value x, const ViewArg& v) {
  if (v.conj && hlo::is_complex(x.type.element)) x = b.conj(x);
  if (v.neg) x = b.unary("negate", x);
  return x;
}

}  // namespace

void TensorProgram::lower_into(hlo::Builder& b, Lowering lower) const {
  // Parameters: storage bases, scalars, runtime view offsets (inputs, then
  // outputs), then the index status (the order run() passes them in).
  std::vector<hlo::Value> bases(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const auto& slot = slots_[i];
    if (slot.needs_base) bases[i] = b.parameter({slot.base_element, {slot.base_count}});
  }
  std::vector<hlo::Value> current = bases;
  std::vector<hlo::Value> scalar_values;
  for (const auto& s : scalars_) scalar_values.push_back(b.parameter({s.type, {}}));
  auto offset_parameters = [&](const auto& views) {
    std::vector<hlo::Value> offsets(views.size());
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i].second.runtime_offset) offsets[i] = b.parameter({hlo::ElementType::kS64, {}});
    }
    return offsets;
  };
  const std::vector<hlo::Value> input_offsets = offset_parameters(inputs_);
  const std::vector<hlo::Value> output_offsets = offset_parameters(outputs_);
  hlo::Value status, op_id;
  if (index_check_op_ != nullptr) {
    status = b.parameter({hlo::ElementType::kS64, {kIndexStatusLength}});
    op_id = b.parameter({hlo::ElementType::kS64, {}});
  }
  std::vector<hlo::Value> values;
  for (int idx : input_order_) {
    if (idx < 0) {
      values.push_back(scalar_values[~idx]);
      continue;
    }
    const auto& [slot, view] = inputs_[idx];
    const std::vector<int64_t> sizes(view.sizes.begin(), view.sizes.end());
    if (slot < 0) {
      values.push_back(b.zeros({view.element, sizes}));
      continue;
    }
    hlo::Value read = view.runtime_offset
                          ? hlo::read_view_at(b, current[slot], view.strided(), input_offsets[idx])
                          : hlo::read_view(b, current[slot], view.strided());
    values.push_back(through_bits(b, read, view));
  }
  std::vector<hlo::Value> results = lower(b, values);
  const size_t extra = index_check_op_ != nullptr ? 1 : 0;
  TORCH_CHECK(results.size() == outputs_.size() + extra, op_, ": lowering produced ",
              results.size(), " results for ", outputs_.size(), " outputs");
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const auto& [slot, view] = outputs_[i];
    if (slot < 0) continue;
    const std::vector<int64_t> sizes(view.sizes.begin(), view.sizes.end());
    // (conjugation and negation are their own inverses: the plain values to
    // store are the result read through dst's bits)
    hlo::Value value = through_bits(b, b.convert(results[i], view.element), view);
    if (value.type.dims != sizes) value = b.reshape(value, sizes);
    if (!slots_[slot].needs_base) {
      current[slot] = hlo::dense_to_flat(b, value, view.strided());
    } else if (view.runtime_offset) {
      current[slot] =
          hlo::write_view_at(b, current[slot], view.strided(), value, output_offsets[i]);
    } else {
      current[slot] = hlo::write_view(b, current[slot], view.strided(), value);
    }
  }
  std::vector<hlo::Value> outs;
  std::vector<std::pair<hlo::Value, int>> aliases;  // base parameter, result index
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].written) continue;
    if (slots_[i].aliased()) aliases.emplace_back(bases[i], static_cast<int>(outs.size()));
    outs.push_back(current[i]);
  }
  if (index_check_op_ != nullptr) {
    // The first finding since the last check wins: keep the status when it
    // already holds one, else take this program's (with its op id).
    const hlo::TensorType status_type{hlo::ElementType::kS64, {kIndexStatusLength}};
    hlo::Value mine = b.concatenate({results.back(), b.reshape(op_id, {1})}, 0);
    hlo::Value had = b.compare(hlo::Compare::kNE, b.reshape(b.slice(status, {0}, {1}, {1}), {}),
                               b.constant_int(hlo::ElementType::kS64, 0));
    outs.push_back(b.select(b.splat(had, status_type.dims), status, mine));
  }
  b.set_results(outs);
  for (const auto& [base, result] : aliases) b.alias_result(base, result);
}

void TensorProgram::plan_views_and_writes() {
  auto plan = [&](auto& views) {
    for (auto& [slot, view] : views) {
      if (slot < 0 || !slots_[slot].needs_base) continue;
      const StorageSlot& s = slots_[slot];
      view.runtime_offset = !fixed_offsets_ &&
                            view.span() * static_cast<int64_t>(hlo::byte_size(view.element)) <
                                s.base_count * static_cast<int64_t>(hlo::byte_size(s.base_element));
    }
  };
  plan(inputs_);
  plan(outputs_);
  // The element type each written storage is left in (as lower_to_text
  // writes it).
  for (const auto& [slot, view] : outputs_) {
    if (slot < 0) continue;
    StorageSlot& s = slots_[slot];
    s.written = s.needs_base
                    ? hlo::written_storage_element(s.written.value_or(s.base_element), view.element)
                    : view.element;
  }
}

void TensorProgram::run(Lowering lower) {
  bool any_output = false;
  for (const auto& o : outputs_) any_output |= o.first >= 0;
  // Every destination empty: nothing to do. A program with no destination
  // at all that checks data still runs: its finding is its result
  // (_assert_async).
  const bool finding_only = outputs_.empty() && index_check_op_ != nullptr;
  if (!any_output && !finding_only) return;
  // (TORCH_TPU_DEBUG_NAN checks each op's results at the op)
  if (current_eager_mode() == EagerMode::kDeferAndFuse && !nan_check_enabled()) {
    defer(lower);
  } else {
    run_now(lower);
  }
}

WriteLocks TensorProgram::lock_written_storages() const {
  // The storages this program writes stay locked from reading their bases
  // to storing the results (DeviceStorage::write_mutex).
  c10::SmallVector<DeviceStorage*, 4> written_storages;
  for (const auto& [slot, view] : outputs_) {
    if (slot >= 0) written_storages.push_back(slots_[slot].storage);
  }
  return lock_for_writing(std::move(written_storages));
}

hlo::ElementType TensorProgram::first_view_type(int slot) const {
  // An empty storage read through a view is zero-filled in that view's type.
  hlo::ElementType first_type = hlo::ElementType::kU8;
  for (const auto& in : inputs_) {
    if (in.first == slot) {
      first_type = in.second.element;
      break;
    }
  }
  for (const auto& out : outputs_) {
    if (out.first == slot) {
      first_type = out.second.element;
      break;
    }
  }
  return first_type;
}

c10::SmallVector<TensorProgram::RuntimeValue, 8> TensorProgram::runtime_values() const {
  // The parameters after the storage bases, in lower_into's order: scalars,
  // then the runtime offsets of input views, then of output views.
  c10::SmallVector<RuntimeValue, 8> values;
  for (const auto& s : scalars_) {
    values.push_back({scalar_buffer(s.value.data(), s.value.size, s.type, device_index_),
                      s.value.data(), s.value.size});
  }
  auto add_offsets = [&](const auto& views) {
    for (const auto& [slot, view] : views) {
      if (!view.runtime_offset) continue;
      const auto* bytes = reinterpret_cast<const unsigned char*>(&view.offset);
      values.push_back(
          {scalar_buffer(bytes, sizeof(int64_t), hlo::ElementType::kS64, device_index_), bytes,
           sizeof(int64_t)});
    }
  };
  add_offsets(inputs_);
  add_offsets(outputs_);
  return values;
}

void TensorProgram::defer_zeros(DeviceStorage& storage, hlo::ElementType wanted) const {
  const hlo::ElementType element = storage_element_for(storage.nbytes(), wanted);
  const auto count = static_cast<int64_t>(storage.nbytes() / hlo::byte_size(element));
  OpNode node;
  node.function = &FragmentCache::get().find_or_lower(
      std::string("zeros:") + hlo::mlir_name(element) + ":" + std::to_string(count),
      [&](hlo::Builder& b) {
        b.set_results({b.zeros({element, {count}})});
      });
  node.writes.push_back({&storage, element});
  defer_op(device_index_, node);
}

void TensorProgram::defer(Lowering lower) {
  auto write_locks = lock_written_storages();
  fixed_offsets_ = open_region_records(device_index_);
  OpNode node;
  using Param = OpNode::Param;
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& slot = slots_[i];
    if (!slot.needs_base) continue;
    const hlo::ElementType first_type = first_view_type(static_cast<int>(i));
    // A never-written storage read through a view is zeros: recorded in
    // the region too (the key needs the base's type, which this sets).
    if (slot.storage->is_empty()) defer_zeros(*slot.storage, first_type);
    slot.base_element = slot.storage->element();
    slot.base_count = slot.storage->element_count();
    node.params.push_back({Param::Kind::kStorageBase, slot.storage, first_type, nullptr});
  }
  plan_views_and_writes();
  for (RuntimeValue& v : runtime_values()) {
    node.params.push_back(Param::runtime_value(std::move(v.buffer), v.bytes, v.size));
  }
  if (index_check_op_ != nullptr) {
    node.params.push_back({Param::Kind::kIndexStatus});
    const int64_t id = intern_op_name(index_check_op_, index_error_class_);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&id);
    node.params.push_back(Param::runtime_value(
        scalar_buffer(bytes, sizeof(id), hlo::ElementType::kS64, device_index_), bytes,
        sizeof(id)));
    node.updates_index_status = true;
  }
  KeyBuffer key;
  build_key(key.str());
  node.function = &FragmentCache::get().find_or_lower(
      key.str(), [&](hlo::Builder& b) { lower_into(b, lower); });
  for (const auto& slot : slots_) {
    if (slot.written) node.writes.push_back({slot.storage, *slot.written});
  }
  defer_op(device_index_, node);
}

void TensorProgram::run_now(Lowering lower) {
  auto write_locks = lock_written_storages();

  // Parameters: storage bases first, then scalars, then runtime offsets.
  c10::SmallVector<pjrt::BufferPtr, 8> args;
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& slot = slots_[i];
    if (!slot.needs_base) continue;
    slot.arg_index = static_cast<int>(args.size());
    DeviceStorage::Contents base = slot.storage->contents(first_view_type(static_cast<int>(i)));
    args.push_back(std::move(base.buffer));
    slot.base_element = base.element;
    slot.base_count = base.count;
  }
  plan_views_and_writes();
  for (RuntimeValue& v : runtime_values()) args.push_back(std::move(v.buffer));

  KeyBuffer key;
  build_key(key.str());
  auto exe = ExecutableCache::get().get_or_compile(
      key.str(),
      [&] {
        hlo::Builder b;
        lower_into(b, lower);
        return b.module_text();
      },
      key_);
  std::optional<IndexStatusUpdate> index_status;
  if (index_check_op_ != nullptr) {
    index_status.emplace(device_index_, index_check_op_, index_error_class_);
    args.push_back(index_status->status());
    args.push_back(index_status->op_id());
  }
  // A rewritten base is donated (updated in place) when nothing else holds
  // it (exec/launch_donations.h).
  LaunchDonations donations;
  for (const auto& slot : slots_) {
    if (slot.aliased()) donations.offer(slot.storage, args[slot.arg_index], slot.arg_index);
  }
  std::vector<pjrt::BufferPtr> results =
      launch(*exe, args, device_index_, donations.kept(), donations.donated());
  if (index_status) {
    index_status->set_result(std::move(results.back()));
    results.pop_back();
    index_status.reset();
    // Debug mode raises what the program found at the op itself (the
    // launch already waited for it).
    if (current_eager_mode() == EagerMode::kDebug) raise_async_errors(device_index_);
  }

  // The program returns one flat buffer per written storage, in slot order.
  size_t next = 0;
  for (auto& slot : slots_) {
    if (!slot.written) continue;
    slot.storage->set_buffer(std::move(results.at(next++)), *slot.written);
  }
  donations.settle();
  write_locks.clear();
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
  // float4_e2m1fn_x2 has no conversions (CPU's copy kernel refuses them)
  TORCH_CHECK_NOT_IMPLEMENTED(
      src.scalar_type() == dst.scalar_type() || (src.scalar_type() != at::kFloat4_e2m1fn_x2 &&
                                                 dst.scalar_type() != at::kFloat4_e2m1fn_x2),
      "\"copy_kernel\" not implemented for 'Float4_e2m1fn_x2'");
  // (the values as src's conjugate/negative bits read them, stored as dst's
  // read them: ViewArg)
  TensorProgram program(op, "copy");
  program.input(src);
  program.output(dst);
  const auto dst_sizes = dst.sizes().vec();
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return std::vector<hlo::Value>{broadcast_to(b, in[0], dst_sizes)};
  });
}

at::Tensor compact(const at::Tensor& src) {
  at::Tensor out = ops::device_empty(src.sizes(), src.options());
  copy_on_device(out, src, "contiguous");
  return out;
}

}  // namespace torch_tpu

#include "exec/captured_graph.h"

#include <ATen/core/TensorBody.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <mutex>

#include "core/allocator.h"
#include "core/metrics.h"
#include "exec/async_errors.h"
#include "exec/eager_mode.h"
#include "exec/launch_donations.h"
#include "exec/launcher.h"

namespace torch_tpu {
namespace {

DeviceStorage* storage_or_null(const std::optional<at::Tensor>& t) {
  if (!t || !t->defined() || !t->has_storage()) return nullptr;
  return storage_of(t->storage());
}

// Programs launched so far: capture refuses a graph that launched any
// outside its region. (Uploads need no check: an uploaded constant is a
// storage that is not an input, and an upload into an input changes its
// buffer outside the region; both are refused below.)
int64_t programs_launched() { return Metrics::get().executions.load(); }

bool on_device(const at::Tensor& t, int device_index) {
  return t.device().type() == c10::DeviceType::PrivateUse1 && t.device().index() == device_index &&
         t.layout() == c10::kStrided && !t.is_conj() && !t.is_neg();
}

// The index of an earlier entry of `storages` equal to entry `k` (null
// entries never match), or -1.
int first_with_same_storage(c10::ArrayRef<DeviceStorage*> storages, size_t k) {
  if (storages[k] == nullptr) return -1;
  for (size_t j = 0; j < k; ++j) {
    if (storages[j] == storages[k]) return static_cast<int>(j);
  }
  return -1;
}

// A tensor of `layout` over `storage` (a new one, or an input's or an
// earlier output's that the output aliases).
at::Tensor tensor_over(c10::Storage storage, const CapturedGraph::Layout& layout) {
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::scalarTypeToTypeMeta(layout.dtype));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(layout.sizes, layout.strides, layout.offset);
  return t;
}

// A new storage of `nbytes` holding `buffer` (none: never written).
c10::Storage new_storage(pjrt::BufferPtr buffer, hlo::ElementType element, size_t nbytes,
                         int device_index) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
                       TpuAllocator::get().allocate_on(nbytes, device_index), &TpuAllocator::get(),
                       /*resizable=*/true);
  if (buffer) storage_of(storage)->set_buffer(std::move(buffer), element);
  return storage;
}

}  // namespace

CapturedGraph::Layout CapturedGraph::Layout::of(const at::Tensor& t) {
  return {t.scalar_type(), t.sizes().vec(), t.strides().vec(), t.storage_offset(),
          t.storage().nbytes()};
}

bool CapturedGraph::Layout::matches(const at::Tensor& t) const {
  return t.scalar_type() == dtype && t.sizes() == c10::IntArrayRef(sizes) &&
         t.strides() == c10::IntArrayRef(strides) && t.storage_offset() == offset &&
         t.storage().nbytes() == storage_nbytes;
}

CapturedGraph::Capture::Capture(int device_index, const Tensors& inputs)
    : device_index_(device_index) {
  // Inputs are materialized first, so that afterwards an input's buffer
  // changes only by a write (checked in end()).
  for (const auto& t : inputs) {
    DeviceStorage* storage = storage_or_null(t);
    const void* contents = nullptr;
    if (storage != nullptr && !storage->is_empty() && on_device(*t, device_index)) {
      contents = storage->buffer(storage->element()).get();
    }
    input_contents_.push_back(contents);
  }
  region_ = begin_region_recording(device_index);
  work_before_ = programs_launched();
}

std::shared_ptr<CapturedGraph> CapturedGraph::Capture::end(const Tensors& inputs,
                                                           const Tensors& outputs) {
  std::vector<DeviceStorage*> watched;
  for (const auto& t : inputs) watched.push_back(storage_or_null(t));
  for (const auto& t : outputs) watched.push_back(storage_or_null(t));
  auto region = std::move(region_);
  std::optional<RegionRecord> record = finish_region_recording(device_index_, region, watched);
  if (!record) return nullptr;
  // The region's own launch is the only work the graph may have done.
  if (programs_launched() != work_before_ + 1) return nullptr;

  auto graph = std::shared_ptr<CapturedGraph>(new CapturedGraph());
  graph->device_index_ = device_index_;
  const size_t n_in = inputs.size();
  for (size_t k = 0; k < n_in; ++k) {
    InputSpec spec;
    const auto& t = inputs[k];
    if (t && t->defined()) {
      if (!on_device(*t, device_index_)) return nullptr;
      spec.defined = true;
      spec.layout = Layout::of(*t);
      spec.same_storage_as = first_with_same_storage(watched, k);
      const int result = record->watched_results[k];
      if (spec.same_storage_as < 0 && watched[k] != nullptr) {
        if (result >= 0) {
          graph->input_writes_.push_back({static_cast<int>(k), result, watched[k]->element()});
        } else if (watched[k]->materialized_buffer().get() != input_contents_[k]) {
          return nullptr;  // written outside the region
        }
      }
    }
    graph->inputs_.push_back(std::move(spec));
  }
  for (const RegionRecord::Param& p : record->params) {
    ParamSource source;
    if (p.storage != nullptr) {
      for (size_t k = 0; k < n_in && source.input < 0; ++k) {
        if (watched[k] == p.storage) source.input = static_cast<int>(k);
      }
      if (source.input < 0) return nullptr;  // a storage that is not an input
    }
    graph->sources_.push_back(source);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    OutputSpec spec;
    const auto& t = outputs[j];
    if (t && t->defined()) {
      if (!on_device(*t, device_index_)) return nullptr;
      spec.layout = Layout::of(*t);
      DeviceStorage* storage = watched[n_in + j];
      for (size_t k = 0; k < n_in && spec.kind == OutputSpec::Kind::kNone; ++k) {
        if (storage != nullptr && watched[k] == storage) {
          spec.kind = OutputSpec::Kind::kInput;
          spec.index = static_cast<int>(k);
        }
      }
      for (size_t i = 0; i < j && spec.kind == OutputSpec::Kind::kNone; ++i) {
        if (storage != nullptr && watched[n_in + i] == storage) {
          spec.kind = OutputSpec::Kind::kOutput;
          spec.index = static_cast<int>(i);
        }
      }
      if (spec.kind == OutputSpec::Kind::kNone) {
        const int result = record->watched_results[n_in + j];
        if (storage != nullptr && result < 0) return nullptr;  // not made by the region
        spec.kind = OutputSpec::Kind::kResult;
        spec.index = result;  // -1: an empty storage
        if (storage != nullptr) spec.element = storage->element();
      }
    }
    graph->outputs_.push_back(std::move(spec));
  }
  // (The storages were for the mapping above; the graph keeps no pointer
  // to a storage it does not own.)
  for (RegionRecord::Param& p : record->params) p.storage = nullptr;
  graph->record_ = std::move(*record);
  Metrics::get().graphs_captured++;
  return graph;
}

std::optional<CapturedGraph::Tensors> CapturedGraph::replay(const Tensors& inputs) const {
  if (inputs.size() != inputs_.size()) return std::nullopt;
  std::vector<DeviceStorage*> storages(inputs.size(), nullptr);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const InputSpec& spec = inputs_[k];
    const auto& t = inputs[k];
    const bool defined = t && t->defined();
    if (defined != spec.defined) return std::nullopt;
    if (!defined) continue;
    if (!on_device(*t, device_index_) || !spec.layout.matches(*t)) return std::nullopt;
    storages[k] = storage_or_null(t);
    if (first_with_same_storage(storages, k) != spec.same_storage_as) return std::nullopt;
  }

  // The inputs the graph writes stay locked from reading their buffers to
  // storing the new ones.
  c10::SmallVector<DeviceStorage*, 4> written;
  for (const InputWrite& w : input_writes_) written.push_back(storages[w.input]);
  auto locks = lock_for_writing(std::move(written));

  const auto& params = record_.params;
  std::vector<pjrt::BufferPtr> args(params.size());
  int status_param = -1;
  for (size_t i = 0; i < params.size(); ++i) {
    const int input = sources_[i].input;
    if (input >= 0) {
      DeviceStorage* storage = storages[input];
      DeviceStorage::Contents base = storage->contents(params[i].type.element);
      if (base.element != params[i].type.element || base.count != params[i].type.numel()) {
        return std::nullopt;  // the same bytes, seen as another element type
      }
      args[i] = std::move(base.buffer);
    } else if (params[i].buffer) {
      args[i] = params[i].buffer;
    } else {
      status_param = static_cast<int>(i);
    }
  }
  std::optional<IndexStatusUpdate> status;
  if (status_param >= 0) {
    status.emplace(device_index_, "a compiled graph", IndexErrorClass::kIndexError);
    args[status_param] = status->status();
  }

  // An input's old buffer is donated when only its storage and this launch
  // hold it (exec/launch_donations.h).
  LaunchDonations donations;
  for (const auto& [param, result] : record_.aliases) {
    donations.offer(storages[sources_[param].input], args[param], param);
  }
  std::vector<pjrt::BufferPtr> results =
      launch(*record_.executable, args, device_index_, donations.kept(), donations.donated());
  if (status) {
    status->set_result(std::move(results.back()));
    results.pop_back();
    status.reset();
  }
  for (const InputWrite& w : input_writes_) {
    storages[w.input]->set_buffer(results.at(w.result), w.element);
  }
  donations.settle();
  locks.clear();
  Metrics::get().graph_replays++;
  if (current_eager_mode() == EagerMode::kDebug) raise_async_errors(device_index_);

  Tensors outputs;
  outputs.reserve(outputs_.size());
  for (const OutputSpec& spec : outputs_) {
    switch (spec.kind) {
      case OutputSpec::Kind::kNone:
        outputs.emplace_back(std::nullopt);
        break;
      case OutputSpec::Kind::kResult:
        outputs.emplace_back(
            tensor_over(new_storage(spec.index >= 0 ? results.at(spec.index) : nullptr,
                                    spec.element, spec.layout.storage_nbytes, device_index_),
                        spec.layout));
        break;
      case OutputSpec::Kind::kInput:
        outputs.emplace_back(tensor_over(inputs[spec.index]->storage(), spec.layout));
        break;
      case OutputSpec::Kind::kOutput:
        outputs.emplace_back(tensor_over(outputs[spec.index]->storage(), spec.layout));
        break;
    }
  }
  return outputs;
}

}  // namespace torch_tpu

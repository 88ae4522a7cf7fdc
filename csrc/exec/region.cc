#include "exec/region.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/metrics.h"
#include "exec/async_errors.h"
#include "exec/cache_key.h"
#include "exec/env_settings.h"
#include "exec/executable_cache.h"
#include "exec/launcher.h"

namespace torch_tpu {
namespace {

thread_local CutReason current_read_reason = CutReason::kDeviceRead;
thread_local ShapeVarying current_shape_varying = ShapeVarying::kNo;  // ShapeVaryingOps

// A region stops taking ops at this many (a loop that never reads a value
// back must not grow one without bound); from a quarter of it on, it is cut
// where the op sequence comes back to the region's first op, so a loop's
// regions start at the same op every time and reuse their executables.
int64_t max_ops() {
  static const int64_t v = positive_int_from_env("TORCH_TPU_REGION_MAX_OPS", 2048);
  return v;
}
// ... or when the buffers it reads and the values its ops produce come to
// this many bytes: a region keeps what it reads alive until it runs, even
// when the tensors that held it are gone (a loop that uploads, updates and
// drops a tensor without reading it back).
int64_t max_bytes() {
  static const int64_t v = positive_int_from_env("TORCH_TPU_REGION_MAX_BYTES", int64_t{512} << 20);
  return v;
}

void count_cut(CutReason reason) {
  Metrics& m = Metrics::get();
  switch (reason) {
    case CutReason::kDeviceRead:
      m.cuts_device_read++;
      break;
    case CutReason::kHostRead:
      m.cuts_host_read++;
      break;
    case CutReason::kSync:
      m.cuts_sync++;
      break;
    case CutReason::kModeSwitch:
      m.cuts_mode_switch++;
      break;
    case CutReason::kSizeCap:
      m.cuts_size_cap++;
      break;
    case CutReason::kRepeat:
      m.cuts_repeat++;
      break;
    case CutReason::kShapeBoundary:
      m.cuts_shape_boundary++;
      break;
  }
}

}  // namespace

class Region;

// A storage written in a region: pending on the value the region last wrote
// into it, and after the region ran, on its buffer.
class RegionOutput : public PendingNode {
 public:
  RegionOutput(std::shared_ptr<Region> region, hlo::CallValue value, int origin_param)
      : region(std::move(region)), value(value), origin_param(origin_param) {}
  pjrt::BufferPtr materialize() override;

  const std::shared_ptr<Region> region;
  // Guarded by the region's mutex.
  hlo::CallValue value;
  // The region parameter that holds the storage's buffer from before the
  // region wrote it (-1: none): the program may write the result there.
  const int origin_param;
  pjrt::BufferPtr result;
  int result_index = -1;  // which of the program's results `result` is
};

class Region : public std::enable_shared_from_this<Region> {
 public:
  Region(int device_index, bool recording) : device_index_(device_index), recording_(recording) {
    key_ = "region";
  }

  // Appends `node`; false (and nothing appended) when the region was already
  // run and the caller must open a new one.
  // `shape_varying`: see ShapeVaryingOps.
  bool append(const OpNode& node, bool shape_varying);
  // Whether the region should run before `next` joins it.
  std::optional<CutReason> cut_before(const hlo::CalledFunction* next, bool shape_varying);
  // Runs the region once (later calls return at once, or raise its error).
  void run(CutReason reason);
  // Whether its ops are shape-varying ones (ShapeVaryingOps).
  bool shape_varying() {
    std::lock_guard<std::mutex> lock(mu_);
    return shape_varying_;
  }
  // Whether it records itself and still takes ops.
  bool records_and_open() {
    std::lock_guard<std::mutex> lock(mu_);
    return recording_ && !closed_;
  }
  // For a recording region: runs it and returns what it recorded (nullopt
  // when it had already run, or holds no ops).
  std::optional<RegionRecord> run_and_record(CutReason reason,
                                             c10::ArrayRef<RegionOutput*> watched);

 private:
  friend class RegionOutput;
  // A storage's buffer, as the parameter that already holds it if any.
  int parameter_for(pjrt::BufferPtr buffer, const hlo::TensorType& type, DeviceStorage* storage);
  int new_parameter(pjrt::BufferPtr buffer, const hlo::TensorType& type,
                    DeviceStorage* storage = nullptr);
  void execute();

  const int device_index_;
  const bool recording_;
  std::mutex mu_;
  bool closed_ = false;
  std::optional<std::string> error_;  // why running the region failed
  hlo::CallSequence seq_;
  std::vector<pjrt::BufferPtr> param_buffers_;  // null for the index status
  std::vector<DeviceStorage*> param_storages_;  // the storage read, if any (recording only)
  std::optional<RegionRecord> record_;          // filled by execute() when recording
  std::unordered_map<const pjrt::Buffer*, int> param_of_buffer_;
  std::vector<std::shared_ptr<RegionOutput>> outputs_;  // one per storage written
  int status_param_ = -1;
  std::optional<hlo::CallValue> status_value_;
  std::string key_;
  int64_t bytes_ = 0;                 // read and produced (see max_bytes)
  bool shape_varying_ = false;        // its ops are (ShapeVaryingOps)
  bool shared_buffer_param_ = false;  // see parameter_for
};

pjrt::BufferPtr RegionOutput::materialize() {
  region->run(current_read_reason);
  std::lock_guard<std::mutex> lock(region->mu_);
  TORCH_CHECK(!region->error_,
              "tpu: a deferred region this tensor depends on failed: ", *region->error_);
  TORCH_INTERNAL_ASSERT(result, "a DeferAndFuse region left a live output without a buffer");
  return result;
}

int Region::parameter_for(pjrt::BufferPtr buffer, const hlo::TensorType& type,
                          DeviceStorage* storage) {
  auto it = param_of_buffer_.find(buffer.get());
  if (it != param_of_buffer_.end()) {
    // Two storages sharing one buffer (copy_data) are one parameter; a
    // recording cannot tell them apart later.
    if (recording_ && param_storages_[it->second] != storage) shared_buffer_param_ = true;
    return it->second;
  }
  const int index = new_parameter(buffer, type, storage);
  param_of_buffer_.emplace(buffer.get(), index);
  return index;
}

int Region::new_parameter(pjrt::BufferPtr buffer, const hlo::TensorType& type,
                          DeviceStorage* storage) {
  bytes_ += type.numel() * static_cast<int64_t>(byte_size(type.element));
  const int index = static_cast<int>(seq_.params.size());
  seq_.params.push_back(type);
  param_buffers_.push_back(std::move(buffer));
  param_storages_.push_back(storage);
  return index;
}

bool Region::append(const OpNode& node, bool shape_varying) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  if (seq_.calls.empty()) shape_varying_ = shape_varying;
  const hlo::CalledFunction& f = *node.function;
  TORCH_INTERNAL_ASSERT(node.params.size() == f.params.size(), "deferred op ", f.name, " binds ",
                        node.params.size(), " parameters, its function takes ", f.params.size());
  const int call = static_cast<int>(seq_.calls.size());
  hlo::CallSequence::Call c{&f, {}};
  c.args.reserve(node.params.size());
  // The region parameter each written storage's previous buffer is in.
  c10::SmallVector<std::pair<DeviceStorage*, int>, 2> read_bases;
  // First the storages' values, which may raise (materializing another
  // pending node: a Strict-mode fill, or a region that already ran and
  // failed) before anything of this op is recorded.
  c10::SmallVector<std::optional<hlo::CallValue>, 8> in_region(node.params.size());
  c10::SmallVector<pjrt::BufferPtr, 8> buffers(node.params.size());
  for (size_t i = 0; i < node.params.size(); ++i) {
    const OpNode::Param& p = node.params[i];
    if (p.kind != OpNode::Param::Kind::kStorageBase) continue;
    auto pending = p.storage->pending_node();
    auto* mine = dynamic_cast<RegionOutput*>(pending.get());
    if (mine != nullptr && mine->region.get() == this) {
      in_region[i] = mine->value;
    } else {
      buffers[i] = p.storage->buffer(p.element_if_empty);
    }
  }
  for (size_t i = 0; i < node.params.size(); ++i) {
    const OpNode::Param& p = node.params[i];
    switch (p.kind) {
      case OpNode::Param::Kind::kStorageBase:
        if (in_region[i]) {
          c.args.push_back(*in_region[i]);
        } else {
          const int param = parameter_for(std::move(buffers[i]), f.params.at(i), p.storage);
          c.args.push_back({-1, param});
          read_bases.emplace_back(p.storage, param);
        }
        break;
      case OpNode::Param::Kind::kBuffer: {
        // (never shared: two scalars that happen to be equal must not
        // change the region's key)
        const int param = new_parameter(p.buffer, f.params.at(i));
        c.args.push_back({-1, param});
        if (recording_ && !p.value.empty()) {
          // A recorded region replays with the values it was recorded
          // with (exec/captured_graph.h): they are constants of its
          // program, and part of its key.
          seq_.constants.emplace(param, std::vector<unsigned char>(p.value.begin(), p.value.end()));
          append_bytes(key_, static_cast<int32_t>(p.value.size()));
          key_.append(reinterpret_cast<const char*>(p.value.data()), p.value.size());
        }
        break;
      }
      case OpNode::Param::Kind::kIndexStatus:
        if (!status_value_) {
          status_param_ = static_cast<int>(seq_.params.size());
          seq_.params.push_back(f.params.at(i));
          param_buffers_.push_back(nullptr);  // bound when the region runs
          param_storages_.push_back(nullptr);
          status_value_ = hlo::CallValue{-1, status_param_};
        }
        c.args.push_back(*status_value_);
        break;
    }
  }
  // The key: which function, and where each argument comes from.
  append_bytes(key_, &f);
  for (const hlo::CallValue& v : c.args) {
    append_bytes(key_, static_cast<int32_t>(v.call));
    append_bytes(key_, static_cast<int32_t>(v.index));
  }
  seq_.calls.push_back(std::move(c));
  for (size_t w = 0; w < node.writes.size(); ++w) {
    DeviceStorage* storage = node.writes[w].storage;
    const hlo::CallValue value{call, static_cast<int>(w)};
    auto pending = storage->pending_node();
    auto* mine = dynamic_cast<RegionOutput*>(pending.get());
    if (mine != nullptr && mine->region.get() == this) {
      mine->value = value;
      storage->set_pending(std::move(pending), node.writes[w].element);
      continue;
    }
    // The storage's buffer before this write, when the region holds it.
    int origin = -1;
    for (const auto& [s, param] : read_bases) {
      if (s == storage) origin = param;
    }
    if (origin < 0) {
      if (pjrt::BufferPtr held = storage->materialized_buffer()) {
        auto it = param_of_buffer_.find(held.get());
        if (it != param_of_buffer_.end()) origin = it->second;
      }
    }
    auto out = std::make_shared<RegionOutput>(shared_from_this(), value, origin);
    outputs_.push_back(out);
    storage->set_pending(std::move(out), node.writes[w].element);
  }
  if (node.updates_index_status) {
    status_value_ = hlo::CallValue{call, static_cast<int>(f.results.size()) - 1};
  }
  for (const auto& t : f.results) bytes_ += t.numel() * static_cast<int64_t>(byte_size(t.element));
  Metrics::get().deferred_ops++;
  return true;
}

std::optional<CutReason> Region::cut_before(const hlo::CalledFunction* next, bool shape_varying) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || seq_.calls.empty()) return std::nullopt;
  if (!recording_ && shape_varying != shape_varying_) return CutReason::kShapeBoundary;
  const auto ops = static_cast<int64_t>(seq_.calls.size());
  if (ops >= max_ops() || bytes_ >= max_bytes()) return CutReason::kSizeCap;
  if (ops >= max_ops() / 4 && seq_.calls.front().function == next) return CutReason::kRepeat;
  return std::nullopt;
}

void Region::run(CutReason reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  if (seq_.calls.empty()) return;
  count_cut(reason);
  try {
    execute();
  } catch (const std::exception& e) {
    error_ = e.what();
    throw;
  }
}

std::optional<RegionRecord> Region::run_and_record(CutReason reason,
                                                   c10::ArrayRef<RegionOutput*> watched) {
  {
    // A region some read already ran (cut inside the graph) records nothing.
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || seq_.calls.empty()) return std::nullopt;
  }
  run(reason);
  std::lock_guard<std::mutex> lock(mu_);
  if (!record_) return std::nullopt;
  RegionRecord record = std::move(*record_);
  record_.reset();
  for (RegionOutput* out : watched) {
    record.watched_results.push_back(out == nullptr ? -1 : out->result_index);
  }
  return record;
}

void Region::execute() {
  // Results: the storages still alive (held by a storage or a reader, not
  // only by this region), then the index status.
  std::vector<RegionOutput*> live;
  for (const auto& out : outputs_) {
    if (out.use_count() > 1) live.push_back(out.get());
  }
  seq_.results.clear();
  seq_.aliases.clear();
  for (RegionOutput* out : live) {
    const int result = static_cast<int>(seq_.results.size());
    seq_.results.push_back(out->value);
    const hlo::TensorType& type =
        seq_.calls.at(out->value.call).function->results.at(out->value.index);
    if (out->origin_param >= 0 && seq_.params[out->origin_param] == type) {
      seq_.aliases.emplace_back(out->origin_param, result);
    }
  }
  if (status_value_) seq_.results.push_back(*status_value_);
  key_ += '\0';
  for (const hlo::CallValue& v : seq_.results) {
    append_bytes(key_, static_cast<int32_t>(v.call));
    append_bytes(key_, static_cast<int32_t>(v.index));
  }
  for (const auto& [param, result] : seq_.aliases) {
    append_bytes(key_, static_cast<int32_t>(param));
    append_bytes(key_, static_cast<int32_t>(result));
  }

  bool compiled = false;
  auto exe = ExecutableCache::get().get_or_compile(
      key_, [&] { return hlo::call_module_text(seq_); }, "a DeferAndFuse region", &compiled);
  Metrics& m = Metrics::get();
  if (!compiled) m.region_cache_hits++;

  std::optional<IndexStatusUpdate> status;
  if (status_value_) {
    status.emplace(device_index_, "a DeferAndFuse region", IndexErrorClass::kIndexError);
    param_buffers_[status_param_] = status->status();
  }
  // The program's arguments: the parameters that are not constants.
  std::vector<int> position(seq_.params.size(), -1);
  int arg_count = 0;
  for (size_t i = 0; i < seq_.params.size(); ++i) {
    if (!seq_.constants.count(static_cast<int>(i))) position[i] = arg_count++;
  }
  // A storage's old buffer is donated when only this region still holds it.
  c10::SmallVector<int64_t, 4> keep;
  c10::SmallVector<int64_t, 4> donated;
  for (const auto& [param, result] : seq_.aliases) {
    if (param_buffers_[param].use_count() == 1) {
      donated.push_back(position[param]);
      m.donated_buffers++;
    } else {
      keep.push_back(position[param]);
      m.undonatable_buffers++;
    }
  }
  std::sort(keep.begin(), keep.end());
  std::vector<pjrt::BufferPtr> args;
  args.reserve(arg_count);
  for (size_t i = 0; i < seq_.params.size(); ++i) {
    if (position[i] >= 0) args.push_back(param_buffers_[i]);
  }
  std::vector<pjrt::BufferPtr> results = launch(*exe, args, device_index_, keep, donated);
  args.clear();
  if (status) {
    status->set_result(std::move(results.back()));
    results.pop_back();
  }
  for (size_t i = 0; i < live.size(); ++i) {
    live[i]->result = std::move(results[i]);
    live[i]->result_index = static_cast<int>(i);
  }
  if (recording_ && !shared_buffer_param_) {
    RegionRecord record;
    record.executable = exe;
    for (size_t i = 0; i < seq_.params.size(); ++i) {
      if (position[i] < 0) continue;  // a constant
      RegionRecord::Param& p = record.params.emplace_back();
      p.storage = param_storages_[i];
      p.type = seq_.params[i];
      if (param_storages_[i] == nullptr && static_cast<int>(i) != status_param_) {
        p.buffer = param_buffers_[i];
      }
    }
    for (const auto& [param, result] : seq_.aliases) {
      record.aliases.emplace_back(position[param], result);
    }
    record.returns_index_status = status_value_.has_value();
    record_ = std::move(record);
  }

  const auto ops = static_cast<int64_t>(seq_.calls.size());
  m.regions_executed++;
  m.region_ops += ops;
  m.region_outputs += static_cast<int64_t>(live.size());
  int64_t seen = m.region_ops_max.load();
  while (ops > seen && !m.region_ops_max.compare_exchange_weak(seen, ops)) {
  }
  // What the region held is released; its outputs keep their buffers (and
  // the region, whose mutex guards them) until their storages read them.
  outputs_.clear();
  param_buffers_.clear();
  param_storages_.clear();
  param_of_buffer_.clear();
  seq_ = {};
}

namespace {

struct OpenRegion {
  std::mutex mu;  // taken before the region's own
  std::shared_ptr<Region> region;
};

std::mutex open_regions_mu;
std::map<int, OpenRegion>& open_regions() {
  static auto* regions = new std::map<int, OpenRegion>();  // never destroyed
  return *regions;
}

OpenRegion& open_region(int device_index) {
  std::lock_guard<std::mutex> lock(open_regions_mu);
  return open_regions()[device_index];  // (std::map: stable references)
}

}  // namespace

void defer_op(int device_index, const OpNode& node) {
  OpenRegion& open = open_region(device_index);
  std::lock_guard<std::mutex> lock(open.mu);
  const ShapeVarying kind = current_shape_varying;
  bool shape_varying = kind != ShapeVarying::kNo;
  int64_t largest_growing_read = -1;  // elements
  bool reads_storage = false;
  for (const OpNode::Param& p : node.params) {
    if (p.kind != OpNode::Param::Kind::kStorageBase) continue;
    reads_storage = true;
    if (p.storage->grows()) {
      shape_varying = true;
      largest_growing_read = std::max(largest_growing_read, p.storage->element_count());
    }
  }
  // An op that reads no storage (a constant, a scalar) has no growing
  // input, and stays with the varying ops it came among.
  if (!reads_storage && !shape_varying && open.region) {
    shape_varying = open.region->shape_varying();
  }
  for (;;) {
    if (open.region) {
      if (auto reason = open.region->cut_before(node.function, shape_varying)) {
        open.region->run(*reason);
      }
    }
    if (!open.region || !open.region->append(node, shape_varying)) {
      open.region = std::make_shared<Region>(device_index, /*recording=*/false);
      continue;
    }
    // What an op makes from a growing storage grows with it when it is at
    // least as large (a mask or a copy of the cache), not when it is smaller
    // (the last token's slice, a sum), nor what attention returns. (append
    // gave each written storage its new element type.)
    for (const OpNode::Write& w : node.writes) {
      w.storage->set_grows(kind == ShapeVarying::kGrows ||
                           (kind == ShapeVarying::kNo && largest_growing_read >= 0 &&
                            w.storage->element_count() >= largest_growing_read));
    }
    return;
  }
}

void cut_regions(int device_index, CutReason reason) {
  std::vector<std::shared_ptr<Region>> regions;
  {
    std::lock_guard<std::mutex> lock(open_regions_mu);
    for (auto& [index, open] : open_regions()) {
      if (device_index >= 0 && index != device_index) continue;
      std::lock_guard<std::mutex> open_lock(open.mu);
      if (open.region) regions.push_back(open.region);
    }
  }
  for (const auto& region : regions) region->run(reason);
}

std::shared_ptr<Region> begin_region_recording(int device_index) {
  cut_regions(device_index, CutReason::kModeSwitch);
  OpenRegion& open = open_region(device_index);
  std::lock_guard<std::mutex> lock(open.mu);
  open.region = std::make_shared<Region>(device_index, /*recording=*/true);
  return open.region;
}

bool open_region_records(int device_index) {
  OpenRegion& open = open_region(device_index);
  std::lock_guard<std::mutex> lock(open.mu);
  return open.region && open.region->records_and_open();
}

std::optional<RegionRecord> finish_region_recording(int device_index,
                                                    const std::shared_ptr<Region>& region,
                                                    c10::ArrayRef<DeviceStorage*> watched) {
  {
    OpenRegion& open = open_region(device_index);
    std::lock_guard<std::mutex> lock(open.mu);
    if (open.region != region) return std::nullopt;  // cut on the way
    open.region.reset();
  }
  // Which watched storages the region wrote (read before it runs: running
  // replaces each storage's pending value with its buffer).
  std::vector<std::shared_ptr<PendingNode>> keep_alive;
  c10::SmallVector<RegionOutput*, 16> outs;
  for (DeviceStorage* storage : watched) {
    auto pending = storage == nullptr ? nullptr : storage->pending_node();
    auto* out = dynamic_cast<RegionOutput*>(pending.get());
    outs.push_back(out != nullptr && out->region == region ? out : nullptr);
    keep_alive.push_back(std::move(pending));
  }
  return region->run_and_record(CutReason::kModeSwitch, outs);
}

ShapeVaryingOps::ShapeVaryingOps(ShapeVarying kind) : previous_(current_shape_varying) {
  // kNo inside an outer guard (a kernel another one calls) keeps the outer.
  if (kind != ShapeVarying::kNo) current_shape_varying = kind;
}

ShapeVaryingOps::~ShapeVaryingOps() { current_shape_varying = previous_; }

ScopedCutReason::ScopedCutReason(CutReason reason) : previous_(current_read_reason) {
  current_read_reason = reason;
}

ScopedCutReason::~ScopedCutReason() { current_read_reason = previous_; }

}  // namespace torch_tpu

// DeferAndFuse's executor: ops join the device's open region instead of
// running, and a cut runs the whole region as one program.
//
// A kernel hands over an OpNode: the op lowered once as a function (see
// exec/fragment_cache.h) and what each of its parameters is bound to. The
// region binds a storage's base to the value the region last wrote into it,
// or else to the storage's current buffer (a region parameter); each storage
// the op writes becomes pending on (region, value). Reading any pending
// storage runs the region once and every storage it wrote gets its buffer.
// Only storages still alive at the cut are results, so intermediates that
// died inside the region never reach memory.
//
// The region's key is its call sequence (functions and how values flow
// between them) plus its results, appended as ops arrive; the program text
// is assembled from the functions only when that key misses the executable
// cache.
#pragma once

#include <c10/util/ArrayRef.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/device_storage.h"
#include "hlo/call_module.h"
#include "pjrt/buffer.h"
#include "pjrt/executable.h"

namespace torch_tpu {

// Why an open region was closed and run (counted per reason in the metrics).
enum class CutReason {
  kDeviceRead,     // an op that runs at once (or a transfer) read a pending storage
  kHostRead,       // .cpu(), .item(), printing, bool()
  kSync,           // torch.tpu.synchronize(), a stream or event
  kModeSwitch,     // the eager mode changed
  kSizeCap,        // TORCH_TPU_REGION_MAX_OPS / TORCH_TPU_REGION_MAX_BYTES
  kRepeat,         // the op sequence came back to the region's first op
  kShapeBoundary,  // between shape-varying ops and the rest (ShapeVaryingOps)
};

// One op, as the executor receives it.
struct OpNode {
  const hlo::CalledFunction* function = nullptr;
  struct Param {
    enum class Kind { kStorageBase, kBuffer, kIndexStatus };
    Kind kind = Kind::kBuffer;
    // kStorageBase: the storage's contents, zeros of `element_if_empty`
    // when it was never written.
    DeviceStorage* storage = nullptr;
    hlo::ElementType element_if_empty = hlo::ElementType::kU8;
    pjrt::BufferPtr buffer;  // kBuffer: a runtime scalar or offset
    // kBuffer: the buffer's value (a recording region folds it into its
    // program as a constant).
    c10::SmallVector<unsigned char, 16> value;

    static Param runtime_value(pjrt::BufferPtr buffer, const unsigned char* bytes, size_t size) {
      Param p;
      p.buffer = std::move(buffer);
      p.value.assign(bytes, bytes + size);
      return p;
    }
  };
  c10::SmallVector<Param, 8> params;
  struct Write {
    DeviceStorage* storage;
    hlo::ElementType element;
  };
  // The storages the function's first results are written to, in order.
  c10::SmallVector<Write, 2> writes;
  // The function takes the device's index status (Param::kIndexStatus) and
  // returns its update as its last result (see exec/async_errors.h).
  bool updates_index_status = false;
};

// Appends `node` to the device's open region, opening one; first runs the
// open region when it is at its size cap or the op sequence repeats.
void defer_op(int device_index, const OpNode& node);

// Runs the device's open region, if it has ops (device_index < 0: every
// device's).
void cut_regions(int device_index, CutReason reason);

// A region that ran, as what it needs to run again without its ops: its
// executable and what each parameter was bound to. torch.compile replays a
// captured graph through it (exec/captured_graph.h).
struct RegionRecord {
  pjrt::ExecutablePtr executable;
  // The program's parameters, in order. The runtime values the recording
  // saw (scalars, view offsets) are constants of its program, not among
  // them; a value given without its bytes stays a parameter.
  struct Param {
    // A storage's contents of `type` (storage non-null), a runtime value
    // (`buffer`), or the device's index status (neither).
    DeviceStorage* storage = nullptr;
    hlo::TensorType type;
    pjrt::BufferPtr buffer;
  };
  std::vector<Param> params;
  std::vector<std::pair<int64_t, int64_t>> aliases;  // (parameter, result)
  bool returns_index_status = false;                 // as the last result
  // For each storage the caller watched: the result it was written from, or
  // -1 when the region did not write it.
  std::vector<int> watched_results;
};

class Region;

// Cuts the device's open region and opens one that will record itself.
std::shared_ptr<Region> begin_region_recording(int device_index);
// Whether the device's open region records itself: its ops then take their
// views at fixed offsets (a recorded region replays with the values it was
// recorded with), which XLA folds into plain slices.
bool open_region_records(int device_index);
// Runs `region` and returns its record, when it is still the device's open
// region (nothing cut it since begin_region_recording); runs nothing and
// returns nullopt otherwise.
std::optional<RegionRecord> finish_region_recording(int device_index,
                                                    const std::shared_ptr<Region>& region,
                                                    c10::ArrayRef<DeviceStorage*> watched);

// Ops whose shapes change from one step of a loop to the next, under
// DeferAndFuse: a cat that appends to a tensor that grows every step (a KV
// cache, generate's input_ids and attention mask; kGrows: what it writes
// grows), attention of fewer queries over a longer cache (kReadsGrowing),
// and any op that reads a growing storage (GQA's copies of the cache, the
// attention mask made from generate's growing mask, generate's slice of
// its last token); what such an op writes grows too when it is at least as
// large as what it read (the copies and the mask). An eager region holds
// only such ops or none of them (it is cut where that changes), so a
// decoding step's other regions keep their shapes from token to token and
// replay their programs, and only the small regions of the varying ops are
// compiled for each new length (one program for every layer's). Regions
// recorded for a compiled graph are not cut this way (a graph is one
// program). A kernel marks the ops it defers for the guard's lifetime.
enum class ShapeVarying { kNo, kReadsGrowing, kGrows };

class ShapeVaryingOps {
 public:
  explicit ShapeVaryingOps(ShapeVarying kind);
  ~ShapeVaryingOps();
  ShapeVaryingOps(const ShapeVaryingOps&) = delete;
  ShapeVaryingOps& operator=(const ShapeVaryingOps&) = delete;

 private:
  ShapeVarying previous_;
};

// While alive, regions this thread runs by reading a pending storage are
// counted under `reason` (a host read rather than a device read).
class ScopedCutReason {
 public:
  explicit ScopedCutReason(CutReason reason);
  ~ScopedCutReason();
  ScopedCutReason(const ScopedCutReason&) = delete;
  ScopedCutReason& operator=(const ScopedCutReason&) = delete;

 private:
  CutReason previous_;
};

}  // namespace torch_tpu

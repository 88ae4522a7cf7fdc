// One lowered program over tpu tensors: the bridge between ATen kernels and
// the StableHLO lowerings.
//
// A kernel declares its inputs (tensors, read through their views, and
// runtime scalars) and its destinations (tensors written through their
// views), then gives a lowering that maps input values to output values. This
// class turns that into one executable, keyed by the op key plus every
// input's storage type and view, compiles it on a cache miss, launches it, and
// swaps the new flat buffers into the destination storages. In-place ops,
// out= variants and writes through views all go through the same path.
#pragma once

#include <ATen/DimVector.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_storage.h"
#include "exec/async_errors.h"
#include "exec/cache_key.h"
#include "hlo/builder.h"
#include "hlo/strided_view.h"

namespace torch_tpu {

// A tensor's view of its storage as TensorProgram keys it. The sizes and
// strides are held inline: a program is assembled on every launch, so it
// allocates nothing per operand in the common case.
struct ViewArg {
  hlo::ElementType element;
  at::DimVector sizes;
  // In elements. A dim of size 1 takes the stride it would have laid out
  // after the dims inside it: its own never moves an address, and two views
  // that differ only there (a transposed [1, h, 1, d] and a contiguous one,
  // as a decoder's key and value are) then share one key and one program.
  at::DimVector strides;
  int64_t offset;  // in elements
  int64_t numel;
  // A conjugate or negative view (x.conj(), its .imag): the storage holds the
  // plain values, and the program reads (or writes) them through the bit.
  // PyTorch's fallbacks resolve the bits before most kernels, but not before
  // copy_, clone, the matrix products and the views.
  bool conj;
  bool neg;
  // Whether the program takes `offset` as a runtime s64 argument: every
  // view that does not reach its whole storage (set by TensorProgram::run;
  // a view spanning the whole storage can only start at 0), so `x[i]` is one
  // program for every i; except in a region that records itself for
  // torch.compile, whose views stay where they are (the offset is then part
  // of the key).
  bool runtime_offset = false;

  explicit ViewArg(const at::Tensor& t);
  hlo::StridedView strided() const;
  // strided().span(), without building the StridedView (this is on the
  // launch path; strided() copies sizes and strides into vectors).
  int64_t span() const { return hlo::view_span(sizes.data(), strides.data(), sizes.size()); }
  // Bytes that identify the view in an executable cache key (its offset
  // only when it is not a runtime argument): key_size() of them, written
  // by write_key().
  size_t key_size() const;
  void write_key(KeyWriter& key) const;
};

// How a runtime scalar becomes a value of the program's element type.
enum class ScalarConversion {
  // Raises (like CPU) when the value does not fit: fill_, alpha, clamp's
  // bounds, and every scalar ATen reads with Scalar::to<T>().
  kChecked,
  // Wraps and rounds like the C++ cast CPU applies to a wrapped-number
  // tensor: the Python number operand of a binary op (int8 * 1000 is -24
  // per element, float32 + 1e300 is inf).
  kWrapped,
};

// A scalar's bytes, held inline (the widest scalar is complex128): packed
// for every scalar operand of every launch.
struct PackedScalar {
  std::array<unsigned char, 16> bytes{};
  size_t size = 0;
  const unsigned char* data() const { return bytes.data(); }
};

// Called only when the program is not in the executable cache yet.
using Lowering = c10::function_ref<std::vector<hlo::Value>(hlo::Builder&,
                                                           const std::vector<hlo::Value>& inputs)>;

class TensorProgram {
 public:
  // `op` names the operation in errors; `key` must capture every static
  // attribute the lowering depends on besides input types and views.
  TensorProgram(const char* op, std::string key);
  // The same with a key the caller keeps alive for the program's lifetime
  // (built in an exec/key_buffer.h buffer: no allocation per launch).
  struct BorrowedKey {
    std::string_view key;
  };
  TensorProgram(const char* op, BorrowedKey key);
  // (key_ may point into the program itself)
  TensorProgram(const TensorProgram&) = delete;
  TensorProgram& operator=(const TensorProgram&) = delete;

  // Adds a tpu tensor input; its value in the lowering has shape t.sizes().
  void input(const at::Tensor& t);
  // Adds a scalar passed at run time (so a new value does not recompile).
  void scalar(const c10::Scalar& value, hlo::ElementType type,
              ScalarConversion conversion = ScalarConversion::kChecked);
  // Adds a destination; the lowering's i-th result is written to the i-th.
  void output(const at::Tensor& dst);
  // The program checks its data on the device: after its results the
  // lowering returns one more value, an s64[kIndexFindingLength] finding
  // {kind, index, dim, size} (a DeviceFinding: an out-of-range index from
  // ops/index_bounds.h, or another of ops/device_findings.h), which the
  // program folds into the device's status; the finding is then raised,
  // naming `op` (`error_class` for indices), at the next host read or
  // synchronize, and at the op itself in Debug mode.
  void report_findings(const char* op, IndexErrorClass error_class = IndexErrorClass::kIndexError);

  // Hands the program to the executor of the current eager mode: Strict
  // and Debug run it now; DeferAndFuse adds it to the device's open region
  // (exec/region.h), lowering it only the first time its key is seen.
  void run(Lowering lower);

 private:
  struct StorageSlot {
    DeviceStorage* storage;
    bool needs_base = false;
    // The storage's contents as the program reads them (set by run()).
    hlo::ElementType base_element = hlo::ElementType::kU8;
    int64_t base_count = 0;
    int arg_index = -1;  // of the base among the launch's arguments
    // The element type the program leaves the storage in, when it writes it.
    std::optional<hlo::ElementType> written;
    // A base the program rewrites in its own type: the program aliases it
    // to the storage's result, so a launch that donates the buffer updates
    // it in place (`big[:16] = v` costs its 16 elements, not a copy).
    bool aliased() const { return needs_base && written == base_element; }
  };
  int slot_for(DeviceStorage* storage);
  void check_device(const at::Tensor& t);
  // Decides which views take their offset at run time (needs the slots'
  // base types) and which storages the program writes.
  void plan_views_and_writes();

  struct ScalarArg {
    hlo::ElementType type;
    PackedScalar value;
  };
  // t's device storage, after checking it has one and that `v` (t's view:
  // its sizes, strides and offset, read once) lies inside it.
  DeviceStorage* checked_storage(const at::Tensor& t, const ViewArg& v) const;
  // The whole cache key (the op key, then storages, views and scalars),
  // written into `key`.
  void build_key(std::string& key) const;
  // The program's parameters, body and results (storage bases the program
  // rewrites aliased to their results).
  void lower_into(hlo::Builder& b, Lowering lower) const;
  WriteLocks lock_written_storages() const;
  hlo::ElementType first_view_type(int slot) const;
  // A runtime scalar or offset: its device buffer and its host bytes
  // (pointing into this program).
  struct RuntimeValue {
    pjrt::BufferPtr buffer;
    const unsigned char* bytes;
    size_t size;
  };
  c10::SmallVector<RuntimeValue, 8> runtime_values() const;
  void run_now(Lowering lower);
  void defer(Lowering lower);
  void defer_zeros(DeviceStorage& storage, hlo::ElementType wanted) const;

  const char* op_;
  std::string owned_key_;
  std::string_view key_;  // owned_key_ or the caller's
  int device_index_ = -1;
  c10::SmallVector<StorageSlot, 4> slots_;
  c10::SmallVector<std::pair<int, ViewArg>, 4> inputs_;  // slot (-1: empty), view
  c10::SmallVector<ScalarArg, 4> scalars_;
  c10::SmallVector<int, 8> input_order_;  // >=0 tensor input index, <0 ~scalar index
  c10::SmallVector<std::pair<int, ViewArg>, 2> outputs_;
  std::vector<at::Tensor> output_tensors_;  // kept only for TORCH_TPU_DEBUG_NAN
  const char* index_check_op_ = nullptr;    // set by report_findings()
  bool fixed_offsets_ = false;              // views at fixed offsets (see ViewArg::runtime_offset)
  IndexErrorClass index_error_class_ = IndexErrorClass::kIndexError;
};

// A scalar's bytes in `type`; kChecked raises (like CPU) when the value does
// not fit.
PackedScalar pack_scalar(const c10::Scalar& value, hlo::ElementType type,
                         ScalarConversion conversion = ScalarConversion::kChecked);

// Fills `out` with `value` (any pending-capable whole-storage fill).
void fill_tensor(const at::Tensor& out, const c10::Scalar& value, const char* op);
// Copies between two tpu tensors (dtype conversion and broadcasting of src
// to dst's shape included).
void copy_on_device(const at::Tensor& dst, const at::Tensor& src, const char* op);
// A new contiguous tpu tensor holding `src`'s values (same dtype).
at::Tensor compact(const at::Tensor& src);

}  // namespace torch_tpu

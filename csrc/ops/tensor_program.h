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

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <functional>
#include <string>
#include <vector>

#include "core/device_storage.h"
#include "hlo/builder.h"
#include "hlo/strided_view.h"

namespace torch_tpu {

hlo::StridedView view_of(const at::Tensor& t);

using Lowering =
    std::function<std::vector<hlo::Value>(hlo::Builder&, const std::vector<hlo::Value>& inputs)>;

class TensorProgram {
 public:
  // `op` names the operation in errors; `key` must capture every static
  // attribute the lowering depends on besides input types and views.
  TensorProgram(const char* op, std::string key);

  // Adds a tpu tensor input; its value in the lowering has shape t.sizes().
  void input(const at::Tensor& t);
  // Adds a scalar passed at run time (so a new value does not recompile).
  void scalar(const c10::Scalar& value, hlo::ElementType type);
  // Adds a destination; the lowering's i-th result is written to the i-th.
  void output(const at::Tensor& dst);

  void run(const Lowering& lower);

 private:
  struct StorageSlot {
    DeviceStorage* storage;
    bool needs_base = false;
    int param = -1;
  };
  int slot_for(DeviceStorage* storage);
  void check_device(const at::Tensor& t);

  const char* op_;
  std::string key_;
  int device_index_ = -1;
  std::vector<StorageSlot> slots_;
  std::vector<std::pair<int, hlo::StridedView>> inputs_;  // slot (-1: empty), view
  std::vector<std::pair<hlo::ElementType, std::vector<unsigned char>>> scalars_;
  std::vector<int> input_order_;  // >=0 tensor input index, <0 ~scalar index
  std::vector<std::pair<int, hlo::StridedView>> outputs_;
  std::vector<at::Tensor> output_tensors_;  // kept only for TORCH_TPU_DEBUG_NAN
};

// A scalar's bytes in `type`; raises (like CPU) when the value does not fit.
std::vector<unsigned char> pack_scalar(const c10::Scalar& value, hlo::ElementType type);

// Uploads a scalar as a 0-d buffer of `type` (a runtime program argument).
pjrt::BufferPtr upload_scalar(const c10::Scalar& value, hlo::ElementType type, int device_index);

// Fills `out` with `value` (any pending-capable whole-storage fill).
void fill_tensor(const at::Tensor& out, const c10::Scalar& value, const char* op);
// Copies between two tpu tensors (dtype conversion and broadcasting of src
// to dst's shape included).
void copy_on_device(const at::Tensor& dst, const at::Tensor& src, const char* op);
// A new contiguous tpu tensor holding `src`'s values (same dtype).
at::Tensor compact(const at::Tensor& src);

}  // namespace torch_tpu

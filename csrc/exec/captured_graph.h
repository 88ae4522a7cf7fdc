// A torch.compile graph run once as one recorded region, then replayed by
// binding the next call's input buffers straight to that region's
// executable: no per-op dispatch, no kernels, no region key.
//
// Capture: begin() opens a recording region; the graph runs its ops
// deferred into it (torch_tpu/compiler.py runs it in DeferAndFuse); end()
// runs the region and keeps, when replaying is exact, what each program
// parameter reads (an input's storage, or a runtime value fixed in the
// graph), which results become the outputs (with their dtypes and views)
// and which inputs the graph wrote. Replaying is refused, and the caller
// keeps running the graph op by op, when anything of the graph happened
// outside the region (a cut, a program launched at once, an input written
// otherwise) or a parameter reads a storage that is not an input.
//
// Replay checks that the inputs look as at capture (device, dtype, sizes,
// strides, offset, storage size, which inputs share a storage) and returns
// nullopt when they do not.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "exec/region.h"

namespace torch_tpu {

class CapturedGraph {
 public:
  using Tensors = std::vector<std::optional<at::Tensor>>;

  // A tensor as the graph saw it: its dtype and its view of its storage.
  struct Layout {
    c10::ScalarType dtype = c10::ScalarType::Undefined;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
    size_t storage_nbytes = 0;
    static Layout of(const at::Tensor& t);
    bool matches(const at::Tensor& t) const;
  };

  // Starts capturing the ops the calling code runs on `device_index`.
  class Capture {
   public:
    Capture(int device_index, const Tensors& inputs);
    // Runs what was captured; the replayable graph, or null.
    std::shared_ptr<CapturedGraph> end(const Tensors& inputs, const Tensors& outputs);

   private:
    int device_index_;
    std::shared_ptr<Region> region_;
    int64_t work_before_;  // programs launched before the graph ran
    std::vector<const void*> input_contents_;
  };

  // The graph's outputs for `inputs`, or nullopt when the inputs do not
  // match the capture (the caller runs the graph op by op).
  std::optional<Tensors> replay(const Tensors& inputs) const;

 private:
  struct InputSpec {
    bool defined = false;
    Layout layout;
    int same_storage_as = -1;  // an earlier input with the same storage
  };
  struct OutputSpec {
    enum class Kind { kNone, kResult, kInput, kOutput } kind = Kind::kNone;
    int index = -1;  // result, input or earlier output
    Layout layout;
    hlo::ElementType element = hlo::ElementType::kU8;  // kResult: the buffer's
  };
  struct ParamSource {
    int input = -1;  // reads this input's storage; -1: `record.params[i].buffer`
  };
  struct InputWrite {
    int input;
    int result;
    hlo::ElementType element;
  };

  int device_index_ = 0;
  RegionRecord record_;
  std::vector<InputSpec> inputs_;
  std::vector<ParamSource> sources_;
  std::vector<OutputSpec> outputs_;
  std::vector<InputWrite> input_writes_;
};

}  // namespace torch_tpu

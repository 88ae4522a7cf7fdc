// Range checks that indexing programs compute on the device, and the
// coordinate handling that keeps an out-of-range index from touching other
// elements.
//
// Strict mode does not stop at the op for a bad index (that would cost a
// sync per op). Instead the program reports the first out-of-range index it
// saw (TensorProgram::report_findings; raised at the next host read), and in the
// meantime does no harm: a read clamps each coordinate into its own
// dimension, so it reads an element of the same row and never another row's,
// and a write whose coordinates are out of range is dropped.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

#include "exec/async_errors.h"
#include "hlo/builder.h"

namespace torch_tpu::ops {

class IndexBounds {
 public:
  // Records the first element (in row-major order) of `index` (any integer
  // type, any shape) outside [0, size), or [-size, size) when negative
  // indices count from the end. `dim` names the indexed dimension in the
  // message; -1 means the flattened tensor (take, put_). Elements where
  // `checked` (pred, index's shape) is false are not checked (nll_loss's
  // ignore_index).
  void check(hlo::Builder& b, hlo::Value index, int64_t dim, int64_t size, bool allow_negative,
             const hlo::Value* checked = nullptr);
  // s64[4] {found, index, dim, size}: the first finding among the checks in
  // the order they were made, zeros when there is none.
  hlo::Value finding(hlo::Builder& b) const;

 private:
  std::optional<hlo::Value> finding_;
};

// The same check on the host (Debug mode): raises IndexError naming `op` for
// the first out-of-range element; elements equal to `ignore` are skipped.
void check_index_range_on_host(const char* op, const at::Tensor& index, int64_t dim, int64_t size,
                               bool allow_negative, IndexErrorClass error_class,
                               std::optional<int64_t> ignore = std::nullopt);

// Each coordinate (s64) clamped into [0, shape[d]).
std::vector<hlo::Value> clamp_coords(hlo::Builder& b, const std::vector<hlo::Value>& coords,
                                     const std::vector<int64_t>& shape);
// pred: every coordinate lies in [0, shape[d]). `coords` must not be empty.
hlo::Value coords_in_range(hlo::Builder& b, const std::vector<hlo::Value>& coords,
                           const std::vector<int64_t>& shape);

}  // namespace torch_tpu::ops

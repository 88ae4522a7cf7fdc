// Checks that every rank entered the same collective with matching tensors
// before the engine runs it. Gloo does not check: a size mismatch between
// ranks aborts the whole process from its transport thread (and a dtype or
// root mismatch silently exchanges the wrong bytes). The check is one small
// all-gather of a description of the call; TORCH_TPU_DIST_CHECK=0 skips it.
#pragma once

#include <cstdint>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

namespace torch_tpu::dist {

// What must agree across ranks for one collective.
struct CollectiveCall {
  const char* op;          // the Python name, for messages
  at::ScalarType dtype;    // of the tensors each rank contributes
  int64_t tensors = 0;     // how many tensors each rank contributes
  int64_t numel = 0;       // elements each rank contributes, over all of them
  int64_t root = -1;       // broadcast, reduce, gather, scatter
  int64_t reduce_op = -1;  // reductions
};

class CollectiveCheck {
 public:
  CollectiveCheck(c10d::Backend& engine, int rank, int size);

  // Raises on every rank (the same message) when the ranks disagree.
  void check(const CollectiveCall& call);
  // all_to_all_single: rank i's input split j must be rank j's output split
  // i (`call.numel` is the size of one row).
  void check_splits(const CollectiveCall& call, const std::vector<int64_t>& input_splits,
                    const std::vector<int64_t>& output_splits);

 private:
  // Every rank's row, gathered (rows have the same length on every rank).
  std::vector<std::vector<int64_t>> gather_rows(const std::vector<int64_t>& row);

  c10d::Backend& engine_;
  int rank_;
  int size_;
  bool enabled_;
};

}  // namespace torch_tpu::dist

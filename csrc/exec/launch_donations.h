// Which of a launch's arguments are donated: a storage's buffer that the
// program rewrites (aliased to a result) is updated in place only when the
// storage and this launch are its sole holders. A buffer another storage
// shares (copy_data), a pending node or an in-flight transfer still holds is
// copied by XLA instead. (PJRT itself orders a donation after the earlier
// programs that read the buffer.) Debug mode never donates: an op it raises
// at (an index out of range) leaves its destination as it was, as on CPU.
//
// Shared by Strict's launches (ops/tensor_program.cc) and compiled-graph
// replays (exec/captured_graph.cc); the caller holds each storage's write
// mutex from reading its buffer to storing the result.
#pragma once

#include <c10/util/ArrayRef.h>
#include <c10/util/SmallVector.h>

#include <cstdint>

#include "core/device_storage.h"
#include "pjrt/buffer.h"

namespace torch_tpu {

class LaunchDonations {
 public:
  LaunchDonations();
  // Ends the donations of a launch that failed (not settled).
  ~LaunchDonations();
  LaunchDonations(const LaunchDonations&) = delete;
  LaunchDonations& operator=(const LaunchDonations&) = delete;

  // Argument `arg` is `held`, the buffer read from `storage`, which the
  // program rewrites: donated when it may be, kept (copied) otherwise.
  void offer(DeviceStorage* storage, const pjrt::BufferPtr& held, int64_t arg);
  // The arguments not donated, ascending (launch()'s `non_donatable`).
  c10::ArrayRef<int64_t> kept();
  // The arguments donated (launch()'s `donated`).
  c10::ArrayRef<int64_t> donated() const { return donated_; }
  // Every donating storage got its new buffer (set_buffer ended its
  // donation). Called before the write mutexes are released: ending a
  // donation later could end another writer's.
  void settle() { donating_.clear(); }

 private:
  const bool may_donate_;
  c10::SmallVector<DeviceStorage*, 4> donating_;
  c10::SmallVector<int64_t, 4> kept_;
  c10::SmallVector<int64_t, 4> donated_;
};

}  // namespace torch_tpu

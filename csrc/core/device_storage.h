// The context object behind every tpu storage's DataPtr: a promise of a
// device buffer.
//
// A storage holds either nothing (never written), a materialized PJRT buffer,
// or a pending node that can produce the buffer on demand. PJRT buffers are
// immutable: a write computes a new flat buffer and swaps it in. The buffer is
// always rank 1, `nbytes / byte_size(element)` elements of `element`; tensors
// of any dtype view it through hlo::StridedView.
#pragma once

#include <c10/util/SmallVector.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hlo/types.h"
#include "pjrt/buffer.h"

namespace torch_tpu {

// Work that, when run, yields a storage's contents. Strict mode materializes
// at once; deferred producers (lazy fills, DeferAndFuse regions) leave nodes
// here until someone reads the storage.
class PendingNode {
 public:
  virtual ~PendingNode() = default;
  // Runs (or waits for) the work; may be called by several readers.
  virtual pjrt::BufferPtr materialize() = 0;
};

class DeviceStorage {
 public:
  DeviceStorage(size_t nbytes, int device_index) : nbytes_(nbytes), device_index_(device_index) {}

  size_t nbytes() const { return nbytes_; }
  // The fake address the storage's DataPtr reports (see AddressSpace).
  uintptr_t address() const { return address_; }
  void set_address(uintptr_t address) { address_ = address; }
  int device_index() const { return device_index_; }

  bool is_empty() const;    // never written
  bool is_pending() const;  // holds a pending node
  // Element type of the current contents (meaningful unless is_empty()).
  hlo::ElementType element() const;
  int64_t element_count() const;

  // The buffer, materializing a pending node. For an empty storage creates
  // zeros of `element_if_empty` (uninitialized memory may hold anything).
  pjrt::BufferPtr buffer(hlo::ElementType element_if_empty);
  // The buffer as buffer() gives it, with its element type and count read
  // under the same lock: a launch reads each base this way, one lock where
  // buffer(), element() and element_count() took three.
  struct Contents {
    pjrt::BufferPtr buffer;
    hlo::ElementType element;
    int64_t count;
  };
  Contents contents(hlo::ElementType element_if_empty);

  void set_buffer(pjrt::BufferPtr buffer, hlo::ElementType element);
  void set_pending(std::shared_ptr<PendingNode> node, hlo::ElementType element);
  // What the storage holds now, without materializing anything (null when
  // it holds the other kind, or nothing).
  std::shared_ptr<PendingNode> pending_node() const;
  pjrt::BufferPtr materialized_buffer() const;

  // Held by a program that rewrites part of the storage, from reading its
  // buffer to storing the new one, so that two threads writing different
  // rows of one tensor do not lose each other's rows (CPU and CUDA keep
  // both). Taken in address order when a program writes several storages.
  std::mutex& write_mutex() { return write_mu_; }

  // For a writer holding write_mutex() that read `held` as the base: true
  // when the storage and the writer are the buffer's only holders, in which
  // case the writer may donate it to its program; from then until the next
  // set_buffer() (or end_donation()), buffer() waits, so no reader is handed
  // a buffer whose memory the program now owns.
  bool begin_donation(const pjrt::BufferPtr& held);
  // Ends a donation without a new buffer (the launch failed).
  void end_donation();

  // Whether a deferred op last wrote it by appending to a tensor that grows
  // every step (DeferAndFuse keeps its readers in regions of their own: see
  // exec/region.h, ShapeVaryingOps).
  bool grows() const { return grows_.load(std::memory_order_relaxed); }
  void set_grows(bool grows) { grows_.store(grows, std::memory_order_relaxed); }

 private:
  size_t nbytes_;
  int device_index_;
  uintptr_t address_ = 0;
  mutable std::mutex mu_;
  hlo::ElementType element_ = hlo::ElementType::kU8;
  pjrt::BufferPtr buffer_;
  std::shared_ptr<PendingNode> pending_;
  bool donating_ = false;
  std::condition_variable donated_;  // signalled when donating_ clears
  std::mutex write_mu_;
  std::atomic<bool> grows_{false};
};

// Takes the write mutexes of `storages` (duplicates allowed) in address
// order, so that two writers of the same storages never deadlock.
using WriteLocks = c10::SmallVector<std::unique_lock<std::mutex>, 4>;
WriteLocks lock_for_writing(c10::SmallVector<DeviceStorage*, 4> storages);

// Element type a storage of `nbytes` uses when first written with `wanted`:
// `wanted` when the bytes divide evenly, bytes otherwise.
hlo::ElementType storage_element_for(size_t nbytes, hlo::ElementType wanted);

}  // namespace torch_tpu

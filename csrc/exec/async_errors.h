// Errors that surface after the call that caused them, raised once at a
// defined point.
//
// Strict mode launches a program and returns, so a program that fails, a
// non-blocking upload that fails, or an out-of-range index that an indexing
// program finds on the device becomes known only later. Each such error is
// raised exactly once, at the first host read (.cpu(), .item(), printing) or
// synchronize on its device after it - as CUDA raises at the next sync - and
// the device stays usable afterwards.
//
// Out-of-range indices are found on the device, without a sync: an indexing
// program reads the device's *index status* (the first bad index found since
// the last check) and writes it back updated, and a host read downloads that
// status (a handful of integers) only when an indexing program ran since the
// last check. The status threads through indexing programs in launch order,
// so the first bad index launched is the one reported.
#pragma once

#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pjrt/buffer.h"
#include "pjrt/event.h"

namespace torch_tpu {

// The index status: s64[kIndexStatusLength] = {found (a DeviceFinding),
// index, dim (-1: the flattened tensor), size, op (an id from
// intern_op_name)}.
constexpr int64_t kIndexStatusLength = 5;
// The part a checking lowering computes: {found, index, dim, size}.
constexpr int64_t kIndexFindingLength = 4;

// What a checking program found (the status's first element). The chain
// carries other errors CPU raises from data as well as bad indices, so they
// too are raised at the next host read without a sync at the op.
enum class DeviceFinding : int64_t {
  kNone = 0,
  kIndexOutOfRange = 1,      // {index, dim, size}
  kZeroDivision = 2,         // integer division by zero (CPU: "ZeroDivisionError")
  kTooFewElements = 3,       // {needed, -, available}: masked_scatter's source
  kInvalidDistribution = 4,  // {0: inf, NaN or < 0; 1: a row sums to <= 0}: multinomial
  // {index, output depth (-1 in 2d), height << 32 | width}: max_unpool's
  // index outside its output plane
  kInvalidMaxIndex = 5,
  // torch._assert_async's condition was zero; the "op" is the message
  kAssertionFailed = 6,
};

// Work whose failure must surface at the next sync (a launch's completion,
// a non-blocking upload's done-with-host event).
void track_completion(int device_index, pjrt::EventPtr done);

// Waits for all tracked work on the device and reads its index status; raises
// the first failure (RuntimeError) or out-of-range index (IndexError), once.
// Every host read and synchronize() calls it.
void raise_async_errors(int device_index);
// Raises, once, the first failure among tracked work that has finished,
// without waiting for the rest (event synchronize/query).
void raise_finished_errors(int device_index);

// Records `message` as if tracked work had failed with it (tests of the
// reporting path: the CPU plugin has no way to make a program fail later).
void inject_async_failure_for_testing(int device_index, const std::string& message);

// True when all tracked work on the device has finished.
bool device_idle(int device_index);
// The device's tracked work still in flight (for stream events).
std::vector<pjrt::EventPtr> in_flight_events(int device_index);

// The exception an out-of-range index raises: the class CPU raises for the
// op (IndexError for index_select, embedding, advanced indexing, take/put_,
// nll_loss; RuntimeError for gather, the scatter family and index_add).
enum class IndexErrorClass { kIndexError, kRuntimeError };

// A stable id for an op name and its error class, passed to checking
// programs as a runtime scalar (so one program serves every op that uses it).
int64_t intern_op_name(const char* op, IndexErrorClass error_class);

// Held while an indexing program is launched: the program's two extra
// arguments (the current index status and its op id) and, after the launch,
// the updated status it returned. Launches of indexing programs on one device
// are ordered by this lock, so the status is a chain in launch order.
class IndexStatusUpdate {
 public:
  IndexStatusUpdate(int device_index, const char* op, IndexErrorClass error_class);
  pjrt::BufferPtr status() const { return status_; }
  pjrt::BufferPtr op_id() const { return op_id_; }
  void set_result(pjrt::BufferPtr updated);

 private:
  std::unique_lock<std::mutex> lock_;
  int device_index_;
  pjrt::BufferPtr status_;
  pjrt::BufferPtr op_id_;
};

}  // namespace torch_tpu

#include "exec/async_errors.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "core/runtime.h"
#include "exec/launcher.h"
#include "exec/scalar_buffers.h"

namespace torch_tpu {
namespace {

// Finished launches are dropped from the tracked work in batches of about
// this many: looking at the oldest on every launch cost a plugin call per
// op, and another on the next one, not finished yet.
constexpr size_t kPruneBatch = 32;

struct DeviceErrors {
  // Tracked work and the first failure among it not yet raised.
  std::mutex mu;
  std::deque<pjrt::EventPtr> in_flight;
  size_t next_prune = kPruneBatch;  // in_flight's size that prunes next
  std::string failure;
  // The index status chain (see IndexStatusUpdate); its own lock, held
  // across a launch, so it never nests inside `mu`.
  std::mutex status_mu;
  pjrt::BufferPtr status;      // null until the first indexing program
  bool status_unread = false;  // an indexing program ran since the last read
  std::string index_error;     // found but not raised yet (a failure went first)
  IndexErrorClass index_error_class = IndexErrorClass::kIndexError;
};

DeviceErrors& errors(int device_index) {
  // Found on every launch: the usual device indices through a table read
  // without a lock once their entry exists.
  constexpr int kTableSize = 64;
  static std::array<std::atomic<DeviceErrors*>, kTableSize> table{};
  const bool in_table = device_index >= 0 && device_index < kTableSize;
  if (in_table) {
    if (DeviceErrors* e = table[device_index].load(std::memory_order_acquire)) return *e;
  }
  static std::mutex mu;
  static auto* all = new std::map<int, std::unique_ptr<DeviceErrors>>();  // never destroyed
  std::lock_guard<std::mutex> lock(mu);
  auto& e = (*all)[device_index];
  if (!e) e = std::make_unique<DeviceErrors>();
  if (in_table) table[device_index].store(e.get(), std::memory_order_release);
  return *e;
}

std::mutex& op_names_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
struct CheckingOp {
  std::string name;
  IndexErrorClass error_class;
};
std::vector<CheckingOp>& checking_ops() {
  static auto* ops = new std::vector<CheckingOp>();
  return *ops;
}
CheckingOp checking_op(int64_t id) {
  std::lock_guard<std::mutex> lock(op_names_mutex());
  const auto& ops = checking_ops();
  if (id >= 0 && id < static_cast<int64_t>(ops.size())) return ops[id];
  return {"an indexing op", IndexErrorClass::kIndexError};
}

pjrt::BufferPtr zero_status(int device_index) {
  const std::array<int64_t, kIndexStatusLength> zeros{};
  return upload(zeros.data(), hlo::ElementType::kS64, {kIndexStatusLength}, device_index);
}

// Drops finished events from the front, remembering the first failure.
void prune_finished(DeviceErrors& e) {
  while (!e.in_flight.empty() && e.in_flight.front()->is_ready()) {
    try {
      e.in_flight.front()->throw_if_failed();
    } catch (const pjrt::Error& err) {
      if (e.failure.empty()) e.failure = err.what();
    }
    e.in_flight.pop_front();
  }
}

void raise_failure(DeviceErrors& e) {
  if (e.failure.empty()) return;
  std::string message = std::move(e.failure);
  e.failure.clear();
  TORCH_CHECK(false, "tpu: an asynchronously launched program failed: ", message);
}

// Downloads the index status if an indexing program ran since the last
// read; a finding is kept in e.index_error and the status starts over.
void read_index_status(DeviceErrors& e, int device_index) {
  std::lock_guard<std::mutex> lock(e.status_mu);
  if (!e.status_unread) return;
  std::array<int64_t, kIndexStatusLength> s{};
  try {
    e.status->to_host_async(s.data(), sizeof(s))->await();
  } catch (const pjrt::Error& err) {
    // The chain's last program failed; that failure is reported through its
    // completion event. Start the chain over.
    e.status = zero_status(device_index);
    e.status_unread = false;
    return;
  }
  e.status_unread = false;
  if (s[0] == 0) return;
  e.status = zero_status(device_index);
  if (!e.index_error.empty()) return;  // an earlier finding is still to be raised
  const CheckingOp op = checking_op(s[4]);
  const char* where =
      " (found on the device by a program launched earlier; tpu raises it at the next host read "
      "or synchronize. Run in Debug mode, torch_tpu.set_eager_mode(\"debug\"), to raise at the "
      "op itself.)";
  switch (static_cast<DeviceFinding>(s[0])) {
    case DeviceFinding::kZeroDivision:
      e.index_error_class = IndexErrorClass::kRuntimeError;
      e.index_error = "ZeroDivisionError: integer division by zero in " + op.name + where;
      return;
    case DeviceFinding::kTooFewElements:
      e.index_error_class = IndexErrorClass::kRuntimeError;
      e.index_error = op.name + ": Number of elements of source < number of ones in mask (" +
                      std::to_string(s[3]) + " < " + std::to_string(s[1]) + ")" + where;
      return;
    case DeviceFinding::kInvalidDistribution:
      e.index_error_class = IndexErrorClass::kRuntimeError;
      e.index_error = op.name + ": " +
                      (s[1] == 0 ? "probability tensor contains either `inf`, `nan` or element < 0"
                                 : "invalid multinomial distribution (sum of probabilities <= 0)") +
                      where;
      return;
    case DeviceFinding::kAssertionFailed:
      // The assert's own message, as CPU raises it (CUDA reports a
      // device-side assert at its next sync, without the message).
      e.index_error_class = IndexErrorClass::kRuntimeError;
      e.index_error = op.name + where;
      return;
    case DeviceFinding::kInvalidMaxIndex: {
      // The CPU kernel's message; the plane's sizes as the finding packs them.
      std::string volume = s[2] >= 0 ? std::to_string(s[2]) + "x" : "";
      volume += std::to_string(s[3] >> 32) + "x" + std::to_string(s[3] & 0xffffffff);
      e.index_error_class = IndexErrorClass::kRuntimeError;
      e.index_error = op.name + ": Found an invalid max index: " + std::to_string(s[1]) +
                      " (output volumes are of size " + volume + ")" + where;
      return;
    }
    default:
      e.index_error_class = op.error_class;
      e.index_error = op.name + ": index " + std::to_string(s[1]) + " is out of bounds for " +
                      (s[2] >= 0 ? "dimension " + std::to_string(s[2]) + " with size "
                                 : std::string("a tensor of ")) +
                      std::to_string(s[3]) + (s[2] >= 0 ? "" : " elements") + where;
  }
}

}  // namespace

void track_completion(int device_index, pjrt::EventPtr done) {
  if (!done) return;
  DeviceErrors& e = errors(device_index);
  std::lock_guard<std::mutex> lock(e.mu);
  e.in_flight.push_back(std::move(done));
  if (e.in_flight.size() >= e.next_prune) {
    prune_finished(e);
    e.next_prune = e.in_flight.size() + kPruneBatch;
  }
}

void raise_async_errors(int device_index) {
  (void)Runtime::get();  // raises in a forked child before touching PJRT
  DeviceErrors& e = errors(device_index);
  std::deque<pjrt::EventPtr> pending;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    pending.swap(e.in_flight);
  }
  std::string first_failure;
  for (const auto& event : pending) {
    try {
      event->await();
    } catch (const pjrt::Error& err) {
      if (first_failure.empty()) first_failure = err.what();
    }
  }
  read_index_status(e, device_index);
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (!first_failure.empty() && e.failure.empty()) e.failure = std::move(first_failure);
    raise_failure(e);
  }
  std::lock_guard<std::mutex> lock(e.status_mu);
  if (e.index_error.empty()) return;
  std::string message = std::move(e.index_error);
  e.index_error.clear();
  TORCH_CHECK(e.index_error_class != IndexErrorClass::kRuntimeError, message);
  TORCH_CHECK_INDEX(false, message);
}

void raise_finished_errors(int device_index) {
  DeviceErrors& e = errors(device_index);
  std::lock_guard<std::mutex> lock(e.mu);
  prune_finished(e);
  raise_failure(e);
}

void inject_async_failure_for_testing(int device_index, const std::string& message) {
  DeviceErrors& e = errors(device_index);
  std::lock_guard<std::mutex> lock(e.mu);
  if (e.failure.empty()) e.failure = message;
}

bool device_idle(int device_index) {
  DeviceErrors& e = errors(device_index);
  std::lock_guard<std::mutex> lock(e.mu);
  prune_finished(e);
  return e.in_flight.empty();
}

std::vector<pjrt::EventPtr> in_flight_events(int device_index) {
  DeviceErrors& e = errors(device_index);
  std::lock_guard<std::mutex> lock(e.mu);
  prune_finished(e);
  return std::vector<pjrt::EventPtr>(e.in_flight.begin(), e.in_flight.end());
}

int64_t intern_op_name(const char* op, IndexErrorClass error_class) {
  std::lock_guard<std::mutex> lock(op_names_mutex());
  auto& ops = checking_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].error_class == error_class && ops[i].name == op) return static_cast<int64_t>(i);
  }
  ops.push_back({op, error_class});
  return static_cast<int64_t>(ops.size() - 1);
}

IndexStatusUpdate::IndexStatusUpdate(int device_index, const char* op, IndexErrorClass error_class)
    : device_index_(device_index) {
  DeviceErrors& e = errors(device_index);
  const int64_t id = intern_op_name(op, error_class);
  op_id_ = scalar_buffer(reinterpret_cast<const unsigned char*>(&id), sizeof(id),
                         hlo::ElementType::kS64, device_index);
  lock_ = std::unique_lock<std::mutex>(e.status_mu);
  if (!e.status) e.status = zero_status(device_index);
  status_ = e.status;
}

void IndexStatusUpdate::set_result(pjrt::BufferPtr updated) {
  DeviceErrors& e = errors(device_index_);
  e.status = std::move(updated);
  e.status_unread = true;
}

}  // namespace torch_tpu

// Values loaded ahead of need on a background thread, in a given order, for
// the one caller that takes each.
//
// The persistent cache uses it to deserialize, while a warm process is still
// importing and loading its model, the executables its previous run used:
// the main thread then takes them ready instead of loading each when its op
// first runs. A key is taken at most once: take() of a loaded key hands its
// value over; of a key being loaded, waits for that load (shorter than
// loading it again); of a key not reached yet, withdraws it (the caller
// loads it itself and the thread skips it), so no value is loaded twice.
// A failed load (an empty value) withdraws its key the same way. The list
// itself is made on the thread too (reading a directory can take a while):
// a key taken before it is made is withdrawn from it. The thread stops at
// the end of the list or at stop(), which waits only for the load in
// progress. Knows nothing of PyTorch or PJRT, so the C++ tests exercise
// it directly.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace torch_tpu {

template <typename Value>
class PrefetchQueue {
 public:
  // Loads the keys `list()` returns, in order, with `load` (which returns
  // an empty Value when it cannot: the key is then left to take()'s caller).
  PrefetchQueue(std::function<std::vector<std::string>()> list,
                std::function<Value(const std::string&)> load)
      : list_(std::move(list)), load_(std::move(load)) {
    thread_ = std::thread([this] { run(); });
  }
  ~PrefetchQueue() { stop(); }
  PrefetchQueue(const PrefetchQueue&) = delete;
  PrefetchQueue& operator=(const PrefetchQueue&) = delete;

  // The value loaded for `key`, or an empty Value when it is not (or not
  // yet) loaded; either way the key leaves the queue.
  Value take(const std::string& key) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!listed_) {
      withdrawn_.push_back(key);
      return Value();
    }
    auto it = slots_.end();
    cv_.wait(lock, [&] {
      it = slots_.find(key);  // a failed load erases its slot
      return it == slots_.end() || it->second.state != State::kLoading;
    });
    if (it == slots_.end()) return Value();
    Value value = std::move(it->second.value);
    slots_.erase(it);
    return value;
  }

  // Stops loading and drops every loaded value not taken yet (their memory
  // is wanted back).
  void drop_untaken() {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto it = slots_.begin(); it != slots_.end();) {
      it = it->second.state == State::kLoading ? std::next(it) : slots_.erase(it);
    }
  }

  // Stops the thread after the load in progress (idempotent).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  // Values loaded and not yet taken or dropped.
  size_t loaded() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [key, slot] : slots_) n += slot.state == State::kLoaded ? 1 : 0;
    return n;
  }

 private:
  enum class State { kWaiting, kLoading, kLoaded };
  struct Slot {
    State state = State::kWaiting;
    Value value;
  };

  void run() {
    std::vector<std::string> keys;
    try {
      keys = list_();
    } catch (...) {
      keys.clear();  // nothing to load ahead: every take() finds nothing
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::string& key : keys) slots_.emplace(key, Slot{});
      for (const std::string& key : withdrawn_) slots_.erase(key);
      withdrawn_.clear();
      withdrawn_.shrink_to_fit();
      listed_ = true;
    }
    for (const std::string& key : keys) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        auto it = slots_.find(key);
        if (it == slots_.end() || it->second.state != State::kWaiting) continue;  // taken
        it->second.state = State::kLoading;
      }
      Value value;
      try {
        value = load_(key);
      } catch (...) {
        value = Value();  // left to take()'s caller, which reports it
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        // The slot is still there: take() and drop_untaken() wait for or
        // skip a slot being loaded.
        auto it = slots_.find(key);
        if (value) {
          it->second.state = State::kLoaded;
          it->second.value = std::move(value);
        } else {
          slots_.erase(it);
        }
      }
      cv_.notify_all();
    }
  }

  const std::function<std::vector<std::string>()> list_;
  const std::function<Value(const std::string&)> load_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Slot> slots_;
  bool listed_ = false;
  std::vector<std::string> withdrawn_;  // taken before the list was made
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace torch_tpu

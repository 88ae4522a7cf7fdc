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
// itself is made on the first thread too (reading a directory can take a
// while): a key taken before it is made is withdrawn from it. Several
// threads may load, each taking the next key of the list in turn (a large
// program's load is a long single-threaded parse in the plugin, so a warm
// process whose first call needs many of them waits for the sum of their
// loads; more threads divide it). The threads stop at the end of the list
// or at stop(), which waits only for the loads in progress. Knows nothing
// of PyTorch or PJRT, so the C++ tests exercise it directly.
#pragma once

#include <algorithm>
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
  // an empty Value when it cannot: the key is then left to take()'s caller)
  // on `threads` threads (at least one); `load` must be safe to call from
  // several at once.
  PrefetchQueue(std::function<std::vector<std::string>()> list,
                std::function<Value(const std::string&)> load, size_t threads = 1)
      : list_(std::move(list)), load_(std::move(load)) {
    threads = std::max<size_t>(threads, 1);
    threads_.reserve(threads);
    threads_.emplace_back([this] { make_list_and_load(); });
    while (threads_.size() < threads) threads_.emplace_back([this] { load_keys(); });
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

  // Stops the threads after the loads in progress (idempotent).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();  // threads waiting for the list
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
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

  void make_list_and_load() {
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
      keys_ = std::move(keys);
      listed_ = true;
    }
    cv_.notify_all();
    load_keys();
  }

  // Loads the list's keys not yet taken by take() or another thread.
  void load_keys() {
    for (;;) {
      std::string key;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return listed_ || stopping_; });
        for (;;) {
          if (stopping_ || next_ == keys_.size()) return;
          auto it = slots_.find(keys_[next_++]);
          if (it == slots_.end() || it->second.state != State::kWaiting) continue;  // taken
          it->second.state = State::kLoading;
          key = it->first;
          break;
        }
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
  std::vector<std::string> keys_;       // the list, in loading order
  size_t next_ = 0;                     // the next of keys_ a thread looks at
  std::vector<std::string> withdrawn_;  // taken before the list was made
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: started once everything above exists
};

}  // namespace torch_tpu

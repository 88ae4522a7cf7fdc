// A string-keyed map whose values are made at most once at a time per key.
//
// When several threads miss on the same key at once, the first makes the
// value and the others wait for that key's result (not on a map-wide lock:
// other keys are made in parallel meanwhile). A failed make reaches every
// waiter as the same exception and leaves no entry behind, so a later call
// for the key makes it again. Knows nothing of PyTorch or PJRT, so the C++
// tests exercise it directly.
#pragma once

#include <cstdint>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace torch_tpu {

template <typename Value>
class SingleFlightMap {
 public:
  enum class Outcome { kFound, kWaited, kMade };

  // The value for `key`; calls `make()` (returning Value) only when no
  // value is stored and no other thread is making one. `outcome`, when
  // non-null, says which of the three happened.
  template <typename Make>
  Value get_or_make(const std::string& key, Make&& make, Outcome* outcome = nullptr) {
    std::optional<std::promise<Value>> result;  // made only on a miss (it allocates)
    uint64_t flight_id = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto [it, inserted] = entries_.try_emplace(key);
      Slot& slot = it->second;
      if (!inserted) {
        if (slot.made) {
          if (outcome) *outcome = Outcome::kFound;
          return slot.value;
        }
        std::shared_future<Value> in_flight = slot.in_flight;
        lock.unlock();
        if (outcome) *outcome = Outcome::kWaited;
        return in_flight.get();  // rethrows the maker's exception
      }
      flight_id = next_flight_id_++;
      slot.flight_id = flight_id;
      slot.in_flight = result.emplace().get_future().share();
    }
    Value value;
    try {
      value = make();
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = entries_.find(key);
        if (it != entries_.end() && it->second.flight_id == flight_id) entries_.erase(it);
      }
      result->set_exception(std::current_exception());
      throw;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.flight_id == flight_id) {
        it->second.value = value;
        it->second.made = true;
        it->second.in_flight = {};
      }
    }
    result->set_value(value);
    if (outcome) *outcome = Outcome::kMade;
    return value;
  }

  // Values stored (makes in progress are not counted).
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t made = 0;
    for (const auto& entry : entries_) made += entry.second.made;
    return made;
  }

  // Drops every value. Makes in progress still deliver to their waiters but
  // store nothing.
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
  }

 private:
  struct Slot {
    bool made = false;
    Value value{};
    // While a thread makes the value: its result for the waiters, and which
    // make it is (a make that finishes after clear() must not fill a newer
    // slot for the same key).
    std::shared_future<Value> in_flight;
    uint64_t flight_id = 0;
  };

  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot> entries_;
  uint64_t next_flight_id_ = 1;
};

}  // namespace torch_tpu

// A string-keyed map whose values are made at most once at a time per key,
// holding at most `capacity` made values (least recently used dropped first).
//
// When several threads miss on the same key at once, the first makes the
// value and the others wait for that key's result (not on a map-wide lock:
// other keys are made in parallel meanwhile). A failed make reaches every
// waiter as the same exception and leaves no entry behind, so a later call
// for the key makes it again. A dropped value lives on in whoever holds a
// copy (values are shared pointers in practice); a later call for its key
// makes it again. Knows nothing of PyTorch or PJRT, so the C++ tests exercise
// it directly.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <future>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace torch_tpu {

// Hashes a key eight bytes at a time. The executable cache's keys are binary,
// a few hundred bytes, and looked up on every launch; std::hash of a string
// cost about three times this.
struct KeyHash {
  size_t operator()(const std::string& key) const noexcept {
    constexpr uint64_t kOdd = 0x9E3779B97F4A7C15ull;  // 2^64 divided by the golden ratio
    auto step = [](uint64_t h, uint64_t word) { return ((h << 23 | h >> 41) ^ word) * kOdd; };
    uint64_t h = key.size() * kOdd;
    const char* p = key.data();
    size_t n = key.size();
    for (; n >= sizeof(uint64_t); p += sizeof(uint64_t), n -= sizeof(uint64_t)) {
      uint64_t word;
      std::memcpy(&word, p, sizeof(word));
      h = step(h, word);
    }
    if (n > 0) {
      uint64_t word = 0;
      std::memcpy(&word, p, n);
      h = step(h, word);
    }
    return static_cast<size_t>(h ^ h >> 29);
  }
};

template <typename Value>
class SingleFlightMap {
 public:
  enum class Outcome { kFound, kWaited, kMade };

  explicit SingleFlightMap(size_t capacity = std::numeric_limits<size_t>::max())
      : capacity_(capacity == 0 ? 1 : capacity) {}

  // The value for `key`; calls `make()` (returning Value) only when no
  // value is stored and no other thread is making one. `outcome`, when
  // non-null, says which of the three happened; `evicted`, when non-null,
  // gets how many values storing this one dropped.
  template <typename Make>
  Value get_or_make(const std::string& key, Make&& make, Outcome* outcome = nullptr,
                    size_t* evicted = nullptr) {
    std::optional<std::promise<Value>> result;  // made only on a miss (it allocates)
    uint64_t flight_id = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto [it, inserted] = entries_.try_emplace(key);
      Slot& slot = it->second;
      if (!inserted) {
        if (slot.made) {
          recency_.splice(recency_.begin(), recency_, slot.recency);  // now the most recent
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
        recency_.push_front(key);
        it->second.recency = recency_.begin();
        ++made_;
        const size_t dropped = evict_beyond_capacity();
        if (evicted) *evicted = dropped;
      }
    }
    result->set_value(value);
    if (outcome) *outcome = Outcome::kMade;
    return value;
  }

  // Values stored (makes in progress are not counted).
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return made_;
  }

  size_t capacity() const { return capacity_; }

  // Values dropped to stay within the capacity, since construction.
  uint64_t evictions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return evictions_;
  }

  // Drops up to `n` of the least recently used values; returns how many.
  size_t evict_oldest(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    return drop_oldest(n);
  }

  // Drops every value. Makes in progress still deliver to their waiters but
  // store nothing.
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
    recency_.clear();
    made_ = 0;
  }

 private:
  // Called with mu_ held. Only made values are in recency_, so a make in
  // progress is never dropped.
  size_t evict_beyond_capacity() { return made_ > capacity_ ? drop_oldest(made_ - capacity_) : 0; }

  // Called with mu_ held: drops up to `n` made values, least recently used
  // first, and counts them.
  size_t drop_oldest(size_t n) {
    size_t dropped = 0;
    for (; dropped < n && !recency_.empty(); ++dropped) {
      entries_.erase(recency_.back());
      recency_.pop_back();
      --made_;
    }
    evictions_ += dropped;
    return dropped;
  }

  struct Slot {
    bool made = false;
    Value value{};
    std::list<std::string>::iterator recency;  // valid once made
    // While a thread makes the value: its result for the waiters, and which
    // make it is (a make that finishes after clear() must not fill a newer
    // slot for the same key).
    std::shared_future<Value> in_flight;
    uint64_t flight_id = 0;
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot, KeyHash> entries_;
  std::list<std::string> recency_;  // made keys, most recently used first
  size_t made_ = 0;
  uint64_t evictions_ = 0;
  uint64_t next_flight_id_ = 1;
};

}  // namespace torch_tpu

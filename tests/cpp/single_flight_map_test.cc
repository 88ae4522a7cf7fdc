// SingleFlightMap (behind the executable cache): concurrent misses on one key
// make the value once; a failed make reaches every waiter and does not poison
// the key.
#include "exec/single_flight_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace torch_tpu {
namespace {

using Map = SingleFlightMap<std::shared_ptr<int>>;

// Runs `body(i)` on `n` threads that start together.
template <typename Body>
void run_threads(int n, Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ready++;
      while (ready.load() < n) std::this_thread::yield();
      body(i);
    });
  }
  for (auto& t : threads) t.join();
}

TEST(SingleFlightMap, ConcurrentMissesMakeEachKeyOnce) {
  Map map;
  std::atomic<int> makes{0};
  constexpr int kThreads = 8;
  constexpr int kKeys = 5;
  std::vector<std::vector<int*>> seen(kThreads);
  run_threads(kThreads, [&](int t) {
    for (int k = 0; k < kKeys; ++k) {
      auto v = map.get_or_make("key" + std::to_string(k), [&] {
        makes++;
        // Long enough that the other threads arrive while this one makes.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return std::make_shared<int>(k);
      });
      EXPECT_EQ(*v, k);
      seen[t].push_back(v.get());
    }
  });
  EXPECT_EQ(makes.load(), kKeys);
  EXPECT_EQ(map.size(), size_t(kKeys));
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);  // one value per key
}

TEST(SingleFlightMap, OtherKeysAreNotBlockedByAMakeInProgress) {
  Map map;
  std::atomic<bool> release{false};
  std::thread slow([&] {
    map.get_or_make("slow", [&] {
      while (!release.load()) std::this_thread::yield();
      return std::make_shared<int>(1);
    });
  });
  // Finishes while "slow" is still being made.
  EXPECT_EQ(*map.get_or_make("fast", [] { return std::make_shared<int>(2); }), 2);
  release = true;
  slow.join();
  EXPECT_EQ(map.size(), 2u);
}

TEST(SingleFlightMap, FailureReachesEveryWaiterAndIsNotCached) {
  Map map;
  std::atomic<int> makes{0};
  std::atomic<int> failures{0};
  constexpr int kThreads = 6;
  run_threads(kThreads, [&](int) {
    try {
      map.get_or_make("bad", [&]() -> std::shared_ptr<int> {
        makes++;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        throw std::runtime_error("make failed");
      });
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "make failed");
      failures++;
    }
  });
  // Threads that arrived after the failure made (and failed) again: never
  // more makes than failures, and every thread saw the error.
  EXPECT_EQ(failures.load(), kThreads);
  EXPECT_GE(makes.load(), 1);
  EXPECT_LT(makes.load(), kThreads);
  EXPECT_EQ(map.size(), 0u);
  // The key is not poisoned: the next call makes it.
  Map::Outcome outcome{};
  EXPECT_EQ(*map.get_or_make("bad", [] { return std::make_shared<int>(7); }, &outcome), 7);
  EXPECT_EQ(outcome, Map::Outcome::kMade);
  map.get_or_make("bad", [] { return std::make_shared<int>(8); }, &outcome);
  EXPECT_EQ(outcome, Map::Outcome::kFound);
}

TEST(SingleFlightMap, ClearDuringAMakeStillAnswersItsCaller) {
  Map map;
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  std::shared_ptr<int> got;
  std::thread maker([&] {
    got = map.get_or_make("k", [&] {
      started = true;
      while (!release.load()) std::this_thread::yield();
      return std::make_shared<int>(3);
    });
  });
  while (!started.load()) std::this_thread::yield();
  map.clear();
  release = true;
  maker.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, 3);
  EXPECT_EQ(map.size(), 0u);  // the cleared map kept nothing from the old make
}

TEST(SingleFlightMap, DropsTheLeastRecentlyUsedBeyondCapacity) {
  Map map(3);
  auto make = [](int v) { return [v] { return std::make_shared<int>(v); }; };
  size_t evicted = 99;
  for (int k = 0; k < 3; ++k) {
    map.get_or_make("k" + std::to_string(k), make(k), nullptr, &evicted);
    EXPECT_EQ(evicted, 0u);
  }
  auto held = map.get_or_make("k0", make(-1));  // k0 is now the most recent
  map.get_or_make("k3", make(3), nullptr, &evicted);
  EXPECT_EQ(evicted, 1u);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.evictions(), 1u);
  Map::Outcome outcome{};
  map.get_or_make("k0", make(-1), &outcome);
  EXPECT_EQ(outcome, Map::Outcome::kFound);  // kept: used after k1
  map.get_or_make("k1", make(11), &outcome);
  EXPECT_EQ(outcome, Map::Outcome::kMade);  // k1 was the one dropped: made again
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.evictions(), 2u);  // storing k1 again dropped k2
  EXPECT_EQ(*held, 0);             // a caller's copy outlives its drop
}

TEST(SingleFlightMap, AMakeInProgressIsNeverDropped) {
  Map map(1);
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  std::thread maker([&] {
    map.get_or_make("slow", [&] {
      started = true;
      while (!release.load()) std::this_thread::yield();
      return std::make_shared<int>(1);
    });
  });
  while (!started.load()) std::this_thread::yield();
  for (int k = 0; k < 5; ++k) {
    map.get_or_make("k" + std::to_string(k), [k] { return std::make_shared<int>(k); });
  }
  release = true;
  maker.join();
  EXPECT_EQ(map.size(), 1u);
  Map::Outcome outcome{};
  EXPECT_EQ(*map.get_or_make("slow", [] { return std::make_shared<int>(2); }, &outcome), 1);
  EXPECT_EQ(outcome, Map::Outcome::kFound);  // the last made is the one kept
}

TEST(KeyHash, EveryByteAndTheLengthCount) {
  const KeyHash hash;
  // Binary keys: mostly zeros, differing in one byte anywhere, including
  // in a last partial word, or only in length.
  std::string base(37, '\0');
  std::set<size_t> seen{hash(base)};
  for (size_t i = 0; i < base.size(); ++i) {
    std::string changed = base;
    changed[i] = 1;
    EXPECT_TRUE(seen.insert(hash(changed)).second) << "byte " << i;
  }
  for (size_t n = 0; n < base.size(); ++n) {
    EXPECT_TRUE(seen.insert(hash(std::string(n, '\0'))).second) << "length " << n;
  }
  EXPECT_EQ(hash(base), hash(std::string(37, '\0')));
}

}  // namespace
}  // namespace torch_tpu

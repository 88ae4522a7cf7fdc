// PrefetchQueue (behind the persistent cache's warm start): values load in
// the listed order on the queue's thread (or threads, at once); each key is
// loaded at most once, whether the caller takes it before, during or after
// its load; a failed
// load and a key taken before the list exists are left to the caller; stop()
// and drop_untaken() end the loading.
#include "exec/prefetch_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace torch_tpu {
namespace {

using Queue = PrefetchQueue<std::shared_ptr<std::string>>;

std::vector<std::string> keys(int n) {
  std::vector<std::string> k;
  for (int i = 0; i < n; ++i) k.push_back("k" + std::to_string(i));
  return k;
}

// Records what was loaded, in order; each load waits until `gate` opens.
struct Loader {
  std::mutex mu;
  std::vector<std::string> loaded;
  std::atomic<bool> gate{true};
  std::shared_ptr<std::string> operator()(const std::string& key) {
    while (!gate.load()) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    loaded.push_back(key);
    return std::make_shared<std::string>("value of " + key);
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu);
    return loaded;
  }
};

void wait_until(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(done());
}

TEST(PrefetchQueue, LoadsInOrderAndHandsEachValueOverOnce) {
  Loader loader;
  Queue queue([] { return keys(5); }, [&](const std::string& k) { return loader(k); });
  wait_until([&] { return queue.loaded() == 5; });
  EXPECT_EQ(loader.seen(), keys(5));
  auto v = queue.take("k3");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "value of k3");
  EXPECT_FALSE(queue.take("k3"));        // handed over once
  EXPECT_FALSE(queue.take("unlisted"));  // never listed
  EXPECT_EQ(queue.loaded(), 4u);
}

TEST(PrefetchQueue, AKeyTakenBeforeItsTurnIsSkipped) {
  Loader loader;
  loader.gate = false;  // holds the thread in its first load
  Queue queue([] { return keys(4); }, [&](const std::string& k) { return loader(k); });
  wait_until([&] { return queue.take("k2") == nullptr; });  // withdrawn, whether listed yet or not
  loader.gate = true;
  wait_until([&] { return queue.loaded() == 3; });
  queue.stop();
  EXPECT_EQ(loader.seen(), (std::vector<std::string>{"k0", "k1", "k3"}));
}

TEST(PrefetchQueue, TakingAKeyBeingLoadedWaitsForThatLoad) {
  Loader loader;
  loader.gate = false;
  std::atomic<bool> listed{false};
  Queue queue(
      [&] {
        listed = true;
        return keys(2);
      },
      [&](const std::string& k) { return loader(k); });
  wait_until([&] { return listed.load(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // k0's load has begun
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    loader.gate = true;
  });
  auto v = queue.take("k0");  // waits for the load in progress, not loaded again
  opener.join();
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "value of k0");
  wait_until([&] { return queue.loaded() == 1; });
  EXPECT_EQ(loader.seen(), keys(2));
}

TEST(PrefetchQueue, AFailedOrThrowingLoadLeavesTheKeyToTheCaller) {
  Queue queue([] { return keys(3); },
              [](const std::string& k) -> std::shared_ptr<std::string> {
                if (k == "k0") return nullptr;
                if (k == "k1") throw std::runtime_error("corrupt");
                return std::make_shared<std::string>(k);
              });
  wait_until([&] { return queue.loaded() == 1; });
  EXPECT_FALSE(queue.take("k0"));
  EXPECT_FALSE(queue.take("k1"));
  ASSERT_TRUE(queue.take("k2"));
}

TEST(PrefetchQueue, AFailedListLoadsNothing) {
  Queue queue([]() -> std::vector<std::string> { throw std::runtime_error("unreadable"); },
              [](const std::string& k) { return std::make_shared<std::string>(k); });
  queue.stop();
  EXPECT_FALSE(queue.take("k0"));
  EXPECT_EQ(queue.loaded(), 0u);
}

// A queue over 1000 keys whose loads each take `ms` and are counted.
std::unique_ptr<Queue> slow_queue(std::atomic<int>& loads, int ms) {
  return std::make_unique<Queue>([] { return keys(1000); },
                                 [&loads, ms](const std::string& k) {
                                   loads++;
                                   std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                                   return std::make_shared<std::string>(k);
                                 });
}

TEST(PrefetchQueue, StopEndsTheLoadingAfterTheLoadInProgress) {
  std::atomic<int> loads{0};
  auto queue = slow_queue(loads, 2);
  wait_until([&] { return loads.load() >= 2; });
  queue->stop();
  const int after_stop = loads.load();
  EXPECT_LT(after_stop, 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loads.load(), after_stop);
  queue->stop();  // idempotent
}

TEST(PrefetchQueue, DropUntakenFreesLoadedValuesAndStopsLoading) {
  std::atomic<int> loads{0};
  auto queue = slow_queue(loads, 1);
  wait_until([&] { return queue->loaded() >= 3; });
  queue->drop_untaken();
  wait_until([&] { return queue->loaded() <= 1; });  // at most the load then in progress
  const int after_drop = loads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loads.load(), after_drop);
  EXPECT_FALSE(queue->take("k0"));
}

TEST(PrefetchQueue, SeveralThreadsLoadAtOnceAndEachKeyOnce) {
  // Each load waits until three are in progress together: only three
  // threads loading at the same time get past it.
  std::atomic<int> in_progress{0};
  std::atomic<int> most{0};
  Loader loader;
  auto load = [&](const std::string& k) {
    const int now = ++in_progress;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most.load() < 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    --in_progress;
    return loader(k);
  };
  Queue queue([] { return keys(30); }, load, /*threads=*/3);
  wait_until([&] { return queue.loaded() == 30; });
  EXPECT_EQ(most.load(), 3);
  auto seen = loader.seen();
  std::sort(seen.begin(), seen.end());
  auto want = keys(30);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(seen, want);  // each key once
  for (const std::string& k : keys(30)) EXPECT_TRUE(queue.take(k)) << k;
}

TEST(PrefetchQueue, StopEndsEveryThreadWaitingForTheList) {
  std::atomic<bool> release{false};
  Loader loader;
  Queue queue(
      [&] {
        while (!release.load()) std::this_thread::yield();
        return keys(3);
      },
      [&](const std::string& k) { return loader(k); }, /*threads=*/4);
  std::thread stopper([&] { queue.stop(); });  // the other threads wait for the list
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release = true;
  stopper.join();  // returns: no thread is left waiting for the list
  EXPECT_LE(loader.seen().size(), 3u);
}

}  // namespace
}  // namespace torch_tpu

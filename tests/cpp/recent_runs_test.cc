// order_by_recent_runs (the warm-start thread's loading order): the newest
// run first, each run in the order it used its entries; at most `count`.
#include "exec/recent_runs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace torch_tpu {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(RecentRuns, TheNewestRunComesFirstEachInItsOwnOrder) {
  // run A at 100-102 s, run B at 200-201 s; listed in no particular order
  const std::vector<int64_t> stamps = {201 * kSecond, 100 * kSecond, 200 * kSecond,
                                       102 * kSecond, 101 * kSecond, 200 * kSecond + 5};
  EXPECT_EQ(order_by_recent_runs(stamps, 10, kSecond / 2 * 3),
            (std::vector<size_t>{2, 5, 0, 1, 4, 3}));
}

TEST(RecentRuns, OneRunIsLoadedOldestFirst) {
  const std::vector<int64_t> stamps = {5, 3, 9, 1};
  EXPECT_EQ(order_by_recent_runs(stamps, 10, kSecond), (std::vector<size_t>{3, 1, 0, 2}));
}

TEST(RecentRuns, OnlyTheNewestCountAreLoaded) {
  const std::vector<int64_t> stamps = {1 * kSecond, 2 * kSecond, 50 * kSecond, 51 * kSecond,
                                       52 * kSecond};
  // the three newest: run 50-52 s
  EXPECT_EQ(order_by_recent_runs(stamps, 3, kSecond * 2), (std::vector<size_t>{2, 3, 4}));
  // four: that run, then the newest entry of the one before
  EXPECT_EQ(order_by_recent_runs(stamps, 4, kSecond * 2), (std::vector<size_t>{2, 3, 4, 1}));
  EXPECT_TRUE(order_by_recent_runs(stamps, 0, kSecond).empty());
  EXPECT_TRUE(order_by_recent_runs({}, 5, kSecond).empty());
}

}  // namespace
}  // namespace torch_tpu

// The order a warm process should load cache entries in, from the times
// they were last used.
//
// A run stamps each entry when it first uses it, so the entries of the last
// run are the newest ones, and in the order it used them; an older run's
// entries are older still. Entries used close together (no pause longer
// than `gap_ns`) are taken as one run: the newest `count` entries are
// returned run by run, newest run first, and each run oldest entry first,
// which is the order the next run of the same program will want them in
// (newest-first overall would reach each run's first programs last).
// A long pause within one run (an evaluation after an hour of training)
// only splits it in two: the later part is loaded first, nothing is
// loaded for nothing. Knows nothing of files, PyTorch or PJRT, so the C++
// tests exercise it directly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace torch_tpu {

// Indices into `stamps_ns` (last-use times), in loading order.
inline std::vector<size_t> order_by_recent_runs(const std::vector<int64_t>& stamps_ns, size_t count,
                                                int64_t gap_ns) {
  std::vector<size_t> order(stamps_ns.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto newer = [&](size_t a, size_t b) { return stamps_ns[a] > stamps_ns[b]; };
  if (order.size() > count) {
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                     newer);
    order.resize(count);
  }
  std::sort(order.begin(), order.end(), newer);
  // Newest first now: cut it into runs, then put each run oldest first.
  std::vector<size_t> result;
  result.reserve(order.size());
  size_t run_begin = 0;
  for (size_t i = 1; i <= order.size(); ++i) {
    const bool ends = i == order.size() || stamps_ns[order[i - 1]] - stamps_ns[order[i]] > gap_ns;
    if (!ends) continue;
    result.insert(result.end(), order.rbegin() + static_cast<std::ptrdiff_t>(order.size() - i),
                  order.rbegin() + static_cast<std::ptrdiff_t>(order.size() - run_begin));
    run_begin = i;
  }
  return result;
}

}  // namespace torch_tpu

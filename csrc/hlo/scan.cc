#include "hlo/scan.h"

#include <utility>
#include <vector>

#include "hlo/reduce_identity.h"

namespace torch_tpu::hlo {

Value inclusive_scan(Builder& b, Value x, int64_t dim, const char* body) {
  if (x.type.dims.empty()) return x;
  return inclusive_scan(b, x, dim, body, reduce_identity(b, body, x.type.element));
}

Value inclusive_scan(Builder& b, Value x, int64_t dim, const char* body, Value init) {
  if (x.type.dims.empty()) return x;
  // A window covering the whole dim, padded on the low side with `init`,
  // ending at each position: XLA lowers this pattern to a parallel prefix
  // scan rather than a quadratic window sum.
  const size_t rank = x.type.dims.size();
  const int64_t n = x.type.dims[dim];
  std::vector<int64_t> window(rank, 1), ones(rank, 1);
  window[dim] = n;
  std::vector<std::pair<int64_t, int64_t>> padding(rank, {0, 0});
  padding[dim] = {n - 1, 0};
  return b.reduce_window(x, init, window, ones, ones, padding, body);
}

}  // namespace torch_tpu::hlo

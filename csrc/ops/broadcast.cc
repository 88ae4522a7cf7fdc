#include "ops/broadcast.h"

namespace torch_tpu {

hlo::Value broadcast_to(hlo::Builder& b, hlo::Value v, const std::vector<int64_t>& shape) {
  const auto& src = v.type.dims;
  if (src == shape) return v;
  if (src.empty()) return b.splat(v, shape);
  // Drop stretched size-1 dims, then place the rest at their aligned positions.
  std::vector<int64_t> kept_dims, positions;
  const size_t lead = shape.size() - src.size();
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == 1 && shape[lead + i] != 1) continue;
    kept_dims.push_back(src[i]);
    positions.push_back(static_cast<int64_t>(lead + i));
  }
  return b.broadcast_in_dim(b.reshape(v, kept_dims), shape, positions);
}

}  // namespace torch_tpu

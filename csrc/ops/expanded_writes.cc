#include "ops/expanded_writes.h"

#include <ATen/ops/any.h>

#include <vector>

namespace torch_tpu::ops {

DistinctWrite distinct_masked_write(const at::Tensor& dst, const at::Tensor& mask) {
  DistinctWrite w{dst, mask.expand(dst.sizes())};
  std::vector<int64_t> repeated;
  for (int64_t d = 0; d < dst.dim(); ++d) {
    if (dst.stride(d) == 0 && dst.size(d) > 1) {
      repeated.push_back(d);
      w.dst = w.dst.narrow(d, 0, 1);
    }
  }
  if (!repeated.empty()) w.mask = at::any(w.mask, repeated, /*keepdim=*/true);
  return w;
}

}  // namespace torch_tpu::ops

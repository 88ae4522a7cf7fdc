// Masked writes into an expanded view (a dim of stride 0 and size > 1),
// which CPU allows for masked_fill_ (with a deprecation warning): its kernel
// writes the same value to a memory location once for every written element
// that maps there, so the location takes the value when any of them is
// written. A program writing the whole view would instead leave the location
// with whichever duplicate it stores last, written or not.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

struct DistinctWrite {
  at::Tensor dst;   // the destination, one element per memory location
  at::Tensor mask;  // the mask, true where any element mapping there is
};

// `dst` narrowed to size 1 along its stride-0 dims, and `mask` (broadcast to
// dst's shape) reduced with any() over those dims.
DistinctWrite distinct_masked_write(const at::Tensor& dst, const at::Tensor& mask);

}  // namespace torch_tpu::ops

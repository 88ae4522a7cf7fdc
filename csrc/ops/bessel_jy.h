// The Bessel functions of the first and second kind of orders 0 and 1
// (torch.special.bessel_j0/j1/y0/y1), lowered for elementwise use.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// J_order(x), or Y_order(x) when `second_kind`, of a float tensor, computed
// in double and rounded to its type, with CPU's values at its edges: Y is
// -inf at 0 and NaN below it; both are NaN at infinities.
hlo::Value bessel_jy(hlo::Builder& b, hlo::Value x, int order, bool second_kind);

}  // namespace torch_tpu::ops

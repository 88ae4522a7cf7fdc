// The Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x (torch.special.zeta,
// and polygamma(n, x) for n >= 2 through it), lowered for elementwise use.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// zeta(x, q) elementwise (x and q of one float type and shape), with the
// values CPU's (Cephes') algorithm gives: inf at x = 1 and at integer q <= 0,
// NaN for x < 1 and for q < 0 with a non-integer x.
hlo::Value hurwitz_zeta(hlo::Builder& b, hlo::Value x, hlo::Value q);

}  // namespace torch_tpu::ops

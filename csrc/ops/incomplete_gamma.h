// The regularized incomplete gamma functions P(a, x) (torch.igamma,
// special.gammainc: Gamma's and Chi2's cdf) and Q(a, x) = 1 - P (igammac),
// lowered for elementwise use.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// P(a, x), or Q(a, x) when `upper`, elementwise over a and x of one float
// type and shape, with CPU's values at the edges: NaN for a < 0, x < 0 or
// a = x = 0; P = 1 for a = 0 < x and for x = inf > a; P = 0 for x = 0 < a
// and a = inf > x.
hlo::Value regularized_gamma(hlo::Builder& b, hlo::Value a, hlo::Value x, bool upper);

}  // namespace torch_tpu::ops

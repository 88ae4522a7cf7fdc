// Bessel functions of orders 0 and 1 (torch.special.bessel_j0/j1/y0/y1,
// modified_bessel_k0/k1 and scaled_modified_bessel_k0/k1), lowered for
// elementwise use. Each is computed in double and rounded to its input's
// float type.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// J_order(x), or Y_order(x) when `second_kind`, with CPU's values at the
// edges: Y is -inf at 0 and NaN below it; both are NaN at infinities.
hlo::Value bessel_jy(hlo::Builder& b, hlo::Value x, int order, bool second_kind);

// K_order(x) (times exp(x) when `scaled`): inf at 0, NaN below 0, 0 at +inf.
hlo::Value bessel_k(hlo::Builder& b, hlo::Value x, int order, bool scaled);

}  // namespace torch_tpu::ops

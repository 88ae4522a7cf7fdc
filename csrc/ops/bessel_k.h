// The modified Bessel functions of the second kind K0 and K1, plain and
// scaled by exp(x) (torch.special.modified_bessel_k0/k1 and
// scaled_modified_bessel_k0/k1), lowered for elementwise use.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// K_order(x) (times exp(x) when `scaled`) of a float tensor, computed in
// double and rounded to its type: inf at 0, NaN below 0, 0 at +inf.
hlo::Value bessel_k(hlo::Builder& b, hlo::Value x, int order, bool scaled);

}  // namespace torch_tpu::ops

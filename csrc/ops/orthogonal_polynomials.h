// torch.special's orthogonal polynomials of degree n at x, elementwise:
// Chebyshev T, U, V, W (and their shifted forms on [0, 1]), Hermite H and
// He, Laguerre L and Legendre P.
#pragma once

#include <string>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::ops {

// The ATen names handled here ("special_chebyshev_polynomial_t", ...
// "special_legendre_polynomial_p").
const std::vector<std::string>& orthogonal_polynomial_ops();

// The polynomial `op` of degree n (truncated to an integer; a negative,
// NaN or infinite n gives 0) at x, x and n of one float type and shape,
// with CPU's values: its special cases at the interval's ends, its
// trigonometric closed forms for high degrees inside the interval, and
// otherwise its three-term recurrence, in x's type and in CPU's order of
// operations (a device loop of max(n) - 1 rounds at most).
hlo::Value orthogonal_polynomial(hlo::Builder& b, const std::string& op, hlo::Value x,
                                 hlo::Value n);

}  // namespace torch_tpu::ops

// The scaled complementary error function and the standard normal
// distribution's log-CDF and quantile (torch.special.erfcx, log_ndtr and
// ndtri), lowered for elementwise use. Each is computed in double and
// rounded to the input's float type, accurate far into the tails where the
// direct formulas under- or overflow.
#pragma once

#include "hlo/builder.h"

namespace torch_tpu::ops {

// exp(x^2) erfc(x): inf below about -26.6 (where exp(x^2) overflows), 0 at +inf.
hlo::Value erfcx(hlo::Builder& b, hlo::Value x);

// log(Phi(x)) for the standard normal CDF Phi: -inf at -inf, -0 at +inf.
hlo::Value log_ndtr(hlo::Builder& b, hlo::Value x);

// Phi^-1(p): -inf at 0, +inf at 1, NaN outside [0, 1].
hlo::Value ndtri(hlo::Builder& b, hlo::Value p);

}  // namespace torch_tpu::ops

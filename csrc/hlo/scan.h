// Inclusive scans (cumulative sums, running maxima) along one dimension.
#pragma once

#include <cstdint>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

// result[..., i, ...] = body(x[..., 0, ...], ..., x[..., i, ...]) along `dim`
// for an associative StableHLO binary op `body` ("add", "maximum", "or",
// ...). A 0-d `x` is returned as it is.
Value inclusive_scan(Builder& b, Value x, int64_t dim, const char* body);
// The same from the scalar `init` instead of body's identity (a running
// maximum from -1, a cumulative product from an opmath 1).
Value inclusive_scan(Builder& b, Value x, int64_t dim, const char* body, Value init);

}  // namespace torch_tpu::hlo

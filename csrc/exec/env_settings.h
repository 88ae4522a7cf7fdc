// The integer settings read from TORCH_TPU_* environment variables.
#pragma once

#include <cstdint>

namespace torch_tpu {

// The positive integer in environment variable `name`, or `fallback` when
// it is unset or empty; anything else raises, naming the variable.
int64_t positive_int_from_env(const char* name, int64_t fallback);
// The same, where 0 is allowed too (a count that can be turned off).
int64_t nonnegative_int_from_env(const char* name, int64_t fallback);

}  // namespace torch_tpu

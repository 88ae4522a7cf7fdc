#include "exec/env_settings.h"

#include <c10/util/Exception.h>

#include <cstdlib>

namespace torch_tpu {

int64_t positive_int_from_env(const char* name, int64_t fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(env, &end, 10);
  TORCH_CHECK(*end == '\0' && value > 0, name, " must be a positive integer, got '", env, "'");
  return static_cast<int64_t>(value);
}

}  // namespace torch_tpu

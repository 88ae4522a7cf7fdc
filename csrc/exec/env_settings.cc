#include "exec/env_settings.h"

#include <c10/util/Exception.h>

#include <cstdlib>

namespace torch_tpu {

namespace {

int64_t int_from_env(const char* name, int64_t fallback, int64_t least, const char* what) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(env, &end, 10);
  TORCH_CHECK(*end == '\0' && value >= least, name, " must be a ", what, " integer, got '", env,
              "'");
  return static_cast<int64_t>(value);
}

}  // namespace

int64_t positive_int_from_env(const char* name, int64_t fallback) {
  return int_from_env(name, fallback, 1, "positive");
}

int64_t nonnegative_int_from_env(const char* name, int64_t fallback) {
  return int_from_env(name, fallback, 0, "non-negative");
}

}  // namespace torch_tpu

#include "ops/missing_op.h"

#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace torch_tpu::ops {
namespace {

std::atomic<bool>& fallback_flag() {
  static std::atomic<bool> enabled{[] {
    const char* v = std::getenv("TORCH_TPU_CPU_FALLBACK");
    return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0);
  }()};
  return enabled;
}

std::mutex& counts_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::map<std::string, int64_t>& counts() {
  static auto* c = new std::map<std::string, int64_t>();
  return *c;
}
// Operators already warned about: once per process, whatever the counts.
std::set<std::string>& warned() {
  static auto* w = new std::set<std::string>();
  return *w;
}

}  // namespace

bool cpu_fallback_enabled() { return fallback_flag().load(); }
void set_cpu_fallback_enabled(bool enabled) { fallback_flag() = enabled; }

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex());
  return counts();
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex());
  counts().clear();
}

void missing_op(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string full = name.name + (name.overload_name.empty() ? "" : "." + name.overload_name);
  TORCH_CHECK_NOT_IMPLEMENTED(
      cpu_fallback_enabled(), "The operator '", full,
      "' is not currently implemented for the tpu device. Set TORCH_TPU_CPU_FALLBACK=1 to run "
      "it on the CPU instead (slower), or file an issue.");
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(counts_mutex());
    counts()[full]++;
    first = warned().insert(full).second;
  }
  if (first) {
    TORCH_WARN("The operator '", full,
               "' has no tpu lowering and runs on the CPU (TORCH_TPU_CPU_FALLBACK=1); "
               "this copies its inputs and outputs between host and device.");
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace torch_tpu::ops

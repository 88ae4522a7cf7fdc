#include "exec/executable_cache.h"

#include <c10/util/Exception.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "core/metrics.h"
#include "core/runtime.h"

namespace torch_tpu {

ExecutableCache& ExecutableCache::get() {
  static ExecutableCache* cache = new ExecutableCache();
  return *cache;
}

pjrt::ExecutablePtr ExecutableCache::get_or_compile(const std::string& key,
                                                    c10::function_ref<std::string()> build_text,
                                                    std::string_view label) {
  if (label.empty()) label = key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      Metrics::get().cache_hits++;
      return it->second;
    }
  }
  const std::string text = build_text();
  static const bool dump = std::getenv("TORCH_TPU_DUMP_HLO") != nullptr;
  if (dump) std::cerr << "[torch_tpu] compiling " << label << "\n" << text;
  const auto start = std::chrono::steady_clock::now();
  pjrt::ExecutablePtr exe;
  try {
    exe = Runtime::get().client().compile(text, pjrt::single_device_compile_options());
  } catch (const pjrt::Error& e) {
    TORCH_CHECK(false, "tpu: compiling ", label, " failed: ", e.what());
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  Metrics::get().compiles++;
  Metrics::get().compile_time_ns +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.emplace(key, exe).first->second;
}

size_t ExecutableCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void ExecutableCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

}  // namespace torch_tpu

#include "exec/executable_cache.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "core/metrics.h"
#include "core/runtime.h"
#include "exec/env_settings.h"
#include "exec/memory_maps.h"
#include "exec/persistent_cache.h"

namespace torch_tpu {
namespace {

pjrt::ExecutablePtr compile(c10::function_ref<std::string()> build_text, std::string_view label) {
  const std::string text = build_text();
  static const bool dump = std::getenv("TORCH_TPU_DUMP_HLO") != nullptr;
  if (dump) std::cerr << "[torch_tpu] compiling " << label << "\n" << text;
  const std::string options = pjrt::single_device_compile_options();
  // The disk tier first (exec/persistent_cache.h); `compiles` counts only
  // what XLA really compiled.
  return PersistentCache::get().load_or_compile(text, options, [&] {
    const auto start = std::chrono::steady_clock::now();
    pjrt::ExecutablePtr executable;
    try {
      executable = Runtime::get().client().compile(text, options);
    } catch (const pjrt::Error& e) {
      TORCH_CHECK(false, "tpu: compiling ", label, " failed: ", e.what());
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    Metrics::get().compiles++;
    Metrics::get().compile_time_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
    return executable;
  });
}

size_t capacity_from_env() {
  return static_cast<size_t>(
      positive_int_from_env("TORCH_TPU_MAX_CACHED_EXECUTABLES", ExecutableCache::kDefaultCapacity));
}

}  // namespace

size_t ExecutableCache::keep_memory_maps_in_budget() {
  // Reading /proc/self/maps costs about a millisecond at ten thousand
  // mappings, so it is read every few compiles: every 16 near the budget,
  // and, further from it, once per as many compiles as could use the room
  // left at 16 mappings each (an executable takes about 4 on the CPU
  // plugin; the margin leaves room for executables loaded ahead of use,
  // which come without a compile). Over budget, the least recently used
  // quarter of the executables goes, and the next check sees whether that
  // was enough.
  constexpr int kCheckEvery = 16;
  constexpr int64_t kMapsPerCompileBound = 16;
  if (compiles_since_map_check_.fetch_add(1) + 1 < next_map_check_.load()) return 0;
  compiles_since_map_check_ = 0;
  const int64_t maps = memory_map_count();
  const int64_t budget = memory_map_budget();
  next_map_check_ = static_cast<int>(
      std::clamp<int64_t>((budget - maps) / kMapsPerCompileBound, kCheckEvery, 1 << 20));
  if (maps < 0 || maps <= budget) return 0;
  PersistentCache::get().drop_prefetched();  // loaded ahead and not needed yet: the first to go
  return entries_.evict_oldest(std::max<size_t>(1, entries_.size() / 4));
}

ExecutableCache& ExecutableCache::get() {
  static ExecutableCache* cache = new ExecutableCache(capacity_from_env());
  return *cache;
}

pjrt::ExecutablePtr ExecutableCache::get_or_compile(const std::string& key,
                                                    c10::function_ref<std::string()> build_text,
                                                    std::string_view label, bool* compiled) {
  if (label.empty()) label = key;
  using Outcome = SingleFlightMap<pjrt::ExecutablePtr>::Outcome;
  Outcome outcome = Outcome::kMade;
  size_t evicted = 0;
  auto executable = entries_.get_or_make(
      key, [&] { return compile(build_text, label); }, &outcome, &evicted);
  if (outcome == Outcome::kMade) evicted += keep_memory_maps_in_budget();
  Metrics::get().executable_evictions += static_cast<int64_t>(evicted);
  // A thread that waited for another's compile of the same key got a cached
  // executable too.
  if (outcome != Outcome::kMade) Metrics::get().cache_hits++;
  if (compiled != nullptr) *compiled = outcome == Outcome::kMade;
  return executable;
}

}  // namespace torch_tpu

// In-memory executable cache: program key -> compiled executable.
//
// Keys are built by the lowering from the op's structure, static attributes
// and input shapes/dtypes/view parameters, so a hit never needs the program
// text; the text is only built (by `build_text`) on a miss. Keys may hold
// raw bytes (they are built on every launch, so they are not formatted as
// text); `label` is what errors and TORCH_TPU_DUMP_HLO print instead.
//
// Compiles are single-flight per key (see SingleFlightMap): threads missing
// on the same key at once compile it once, and a failed compile is raised in
// each of them without poisoning the key.
//
// The cache holds at most TORCH_TPU_MAX_CACHED_EXECUTABLES executables
// (default kDefaultCapacity), dropping the least recently used: a process
// that keeps making new shapes would otherwise grow without bound (each
// executable holds compiled code, ~100-200 KB on the CPU plugin). A launch
// in flight keeps its executable alive after a drop. It also drops executables
// while the process holds more memory mappings than exec/memory_maps.h
// allows (the plugin's JIT code is mapped per executable).
#pragma once

#include <c10/util/FunctionRef.h>

#include <atomic>
#include <string>
#include <string_view>

#include "exec/single_flight_map.h"
#include "pjrt/executable.h"

namespace torch_tpu {

class ExecutableCache {
 public:
  static constexpr size_t kDefaultCapacity = 4096;

  static ExecutableCache& get();
  explicit ExecutableCache(size_t capacity) : entries_(capacity) {}

  // `*compiled` (when given) says whether this call compiled the program.
  pjrt::ExecutablePtr get_or_compile(const std::string& key,
                                     c10::function_ref<std::string()> build_text,
                                     std::string_view label = {}, bool* compiled = nullptr);
  // Compiled executables held (compiles in progress are not counted).
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return entries_.capacity(); }
  void clear() { entries_.clear(); }

 private:
  // Evicts while over the memory-map budget; returns how many it dropped.
  size_t keep_memory_maps_in_budget();

  SingleFlightMap<pjrt::ExecutablePtr> entries_;
  std::atomic<int> compiles_since_map_check_{0};
  std::atomic<int> next_map_check_{16};  // compiles until the next check
};

}  // namespace torch_tpu

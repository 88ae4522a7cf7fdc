// How many memory mappings the process holds, against the kernel's limit
// (vm.max_map_count, 65530 by default). The XLA CPU plugin maps its JIT code
// in several regions per executable (about four for a small program, more
// for a large one); a process that holds thousands of executables runs into
// the limit, and the plugin then fails to compile ("Failed to materialize
// symbols") and leaves the process unable to unwind an exception. The
// executable cache keeps the mappings within half the limit
// (exec/executable_cache.cc).
#pragma once

#include <cstdint>

namespace torch_tpu {

// Mappings now (lines of /proc/self/maps); -1 where that is not readable.
int64_t memory_map_count();

// The budget: TORCH_TPU_MAX_MEMORY_MAPS when set (for tests), else half of
// /proc/sys/vm/max_map_count (or of 65530 when that is not readable).
int64_t memory_map_budget();

}  // namespace torch_tpu

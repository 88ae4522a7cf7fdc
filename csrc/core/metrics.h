// Process-wide counters behind torch_tpu.debug.metrics().
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

namespace torch_tpu {

struct Metrics {
  std::atomic<int64_t> compiles{0};
  std::atomic<int64_t> compile_time_ns{0};
  std::atomic<int64_t> cache_hits{0};
  // Executables dropped by the bounded cache (TORCH_TPU_MAX_CACHED_EXECUTABLES).
  std::atomic<int64_t> executable_evictions{0};
  std::atomic<int64_t> executions{0};
  std::atomic<int64_t> h2d_transfers{0};
  std::atomic<int64_t> h2d_bytes{0};
  std::atomic<int64_t> d2h_transfers{0};
  std::atomic<int64_t> d2h_bytes{0};
  // Blocking device-to-host reads: each one waits for the device's queue
  // to drain, so ops that need data-dependent sizes aim for one per call.
  std::atomic<int64_t> host_syncs{0};
  std::atomic<int64_t> pending_materializations{0};
  // Storage buffers a write updated in place (donated to its program), and
  // those it could not donate because something else still held them.
  std::atomic<int64_t> donated_buffers{0};
  std::atomic<int64_t> undonatable_buffers{0};
  // DeferAndFuse (exec/region.h): ops recorded, regions run, the ops they
  // held (sum and largest), the values they wrote to memory, regions whose
  // executable was cached, and why each region was cut.
  std::atomic<int64_t> deferred_ops{0};
  std::atomic<int64_t> regions_executed{0};
  std::atomic<int64_t> region_ops{0};
  std::atomic<int64_t> region_ops_max{0};
  std::atomic<int64_t> region_outputs{0};
  std::atomic<int64_t> region_cache_hits{0};
  std::atomic<int64_t> cuts_device_read{0};
  std::atomic<int64_t> cuts_host_read{0};
  std::atomic<int64_t> cuts_sync{0};
  std::atomic<int64_t> cuts_mode_switch{0};
  std::atomic<int64_t> cuts_size_cap{0};
  std::atomic<int64_t> cuts_repeat{0};
  std::atomic<int64_t> cuts_shape_boundary{0};
  // torch.compile (exec/captured_graph.h): graphs captured for replay, and
  // calls replayed straight on a captured graph's executable.
  std::atomic<int64_t> graphs_captured{0};
  std::atomic<int64_t> graph_replays{0};
  // The executable cache's disk tier (exec/persistent_cache.h): executables
  // loaded from it instead of compiled, and entries written to it.
  std::atomic<int64_t> persistent_cache_hits{0};
  std::atomic<int64_t> persistent_cache_writes{0};
  // Of the hits, those a background thread had loaded before the op that
  // needed them ran (TORCH_TPU_CACHE_PREFETCH).
  std::atomic<int64_t> persistent_cache_prefetched{0};

  static Metrics& get();
  std::map<std::string, int64_t> snapshot() const;
  void reset();
};

}  // namespace torch_tpu

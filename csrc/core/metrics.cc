#include "core/metrics.h"

#include <utility>
#include <vector>

namespace torch_tpu {

Metrics& Metrics::get() {
  static Metrics* metrics = new Metrics();
  return *metrics;
}

namespace {

// Every counter and its name in the snapshot.
template <typename M>
auto counters(M& m) {
  using Counter = decltype(&m.compiles);
  return std::vector<std::pair<const char*, Counter>>{
      {"compiles", &m.compiles},
      {"compile_time_ns", &m.compile_time_ns},
      {"cache_hits", &m.cache_hits},
      {"executable_evictions", &m.executable_evictions},
      {"executions", &m.executions},
      {"h2d_transfers", &m.h2d_transfers},
      {"h2d_bytes", &m.h2d_bytes},
      {"d2h_transfers", &m.d2h_transfers},
      {"d2h_bytes", &m.d2h_bytes},
      {"host_syncs", &m.host_syncs},
      {"pending_materializations", &m.pending_materializations},
      {"donated_buffers", &m.donated_buffers},
      {"undonatable_buffers", &m.undonatable_buffers},
      {"deferred_ops", &m.deferred_ops},
      {"regions_executed", &m.regions_executed},
      {"region_ops", &m.region_ops},
      {"region_ops_max", &m.region_ops_max},
      {"region_outputs", &m.region_outputs},
      {"region_cache_hits", &m.region_cache_hits},
      {"cuts_device_read", &m.cuts_device_read},
      {"cuts_host_read", &m.cuts_host_read},
      {"cuts_sync", &m.cuts_sync},
      {"cuts_mode_switch", &m.cuts_mode_switch},
      {"cuts_size_cap", &m.cuts_size_cap},
      {"cuts_repeat", &m.cuts_repeat},
      {"cuts_shape_boundary", &m.cuts_shape_boundary},
      {"graphs_captured", &m.graphs_captured},
      {"graph_replays", &m.graph_replays},
      {"persistent_cache_hits", &m.persistent_cache_hits},
      {"persistent_cache_writes", &m.persistent_cache_writes},
      {"persistent_cache_prefetched", &m.persistent_cache_prefetched},
  };
}

}  // namespace

std::map<std::string, int64_t> Metrics::snapshot() const {
  std::map<std::string, int64_t> out;
  for (const auto& [name, counter] : counters(*this)) out[name] = counter->load();
  return out;
}

void Metrics::reset() {
  for (const auto& [name, counter] : counters(*this)) counter->store(0);
}

}  // namespace torch_tpu

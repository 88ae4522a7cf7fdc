#include "core/metrics.h"

namespace torch_tpu {

Metrics& Metrics::get() {
  static Metrics* metrics = new Metrics();
  return *metrics;
}

std::map<std::string, int64_t> Metrics::snapshot() const {
  return {
      {"compiles", compiles.load()},
      {"compile_time_ns", compile_time_ns.load()},
      {"cache_hits", cache_hits.load()},
      {"executable_evictions", executable_evictions.load()},
      {"executions", executions.load()},
      {"h2d_transfers", h2d_transfers.load()},
      {"h2d_bytes", h2d_bytes.load()},
      {"d2h_transfers", d2h_transfers.load()},
      {"d2h_bytes", d2h_bytes.load()},
      {"host_syncs", host_syncs.load()},
      {"pending_materializations", pending_materializations.load()},
      {"donated_buffers", donated_buffers.load()},
      {"undonatable_buffers", undonatable_buffers.load()},
  };
}

void Metrics::reset() {
  for (auto* c : {&compiles, &compile_time_ns, &cache_hits, &executable_evictions, &executions,
                  &h2d_transfers, &h2d_bytes, &d2h_transfers, &d2h_bytes, &host_syncs,
                  &pending_materializations, &donated_buffers, &undonatable_buffers}) {
    c->store(0);
  }
}

}  // namespace torch_tpu

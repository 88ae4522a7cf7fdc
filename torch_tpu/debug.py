"""Counters for understanding what the backend did: compiles, cache hits,
executions and host<->device transfers."""

from . import _C


def metrics() -> dict:
    """A snapshot of the process-wide counters, as a dict of ints.

    `cpu_fallbacks` counts operator runs on the CPU fallback
    (TORCH_TPU_CPU_FALLBACK=1); `fallback_ops` breaks it down by operator."""
    m = dict(_C._metrics())
    per_op = dict(_C._fallback_counts())
    m["cpu_fallbacks"] = sum(per_op.values())
    return m


def fallback_ops() -> dict:
    """Operator name -> number of runs on the CPU fallback."""
    return dict(_C._fallback_counts())


def reset_metrics() -> None:
    _C._reset_metrics()


_DESCRIPTIONS = {
    "compiles": "programs compiled by XLA (not loaded from the disk cache)",
    "compile_time_ns": "time spent compiling",
    "cache_hits": "executable cache hits (in memory)",
    "cached_executables": "executables held in memory",
    "executable_evictions": "executables dropped by the bounded cache",
    "executions": "programs executed",
    "h2d_transfers": "host-to-device transfers",
    "h2d_bytes": "host-to-device bytes",
    "d2h_transfers": "device-to-host transfers",
    "d2h_bytes": "device-to-host bytes",
    "host_syncs": "blocking device-to-host reads",
    "pending_materializations": "deferred values materialized",
    "donated_buffers": "writes done in place (buffer donated)",
    "undonatable_buffers": "writes copied (buffer still held elsewhere)",
    "cpu_fallbacks": "operator runs on the CPU fallback",
    "deferred_ops": "ops recorded into DeferAndFuse regions",
    "regions_executed": "DeferAndFuse regions executed",
    "region_ops": "ops in executed regions",
    "region_ops_max": "most ops in one region",
    "region_outputs": "values regions wrote to memory",
    "region_cache_hits": "regions whose executable was cached",
    "cuts_device_read": "region cuts: a device read",
    "cuts_host_read": "region cuts: a host read",
    "cuts_sync": "region cuts: synchronize, streams, events",
    "cuts_mode_switch": "region cuts: an eager mode switch",
    "cuts_size_cap": "region cuts: the size cap",
    "cuts_repeat": "region cuts: a repeated op sequence",
    "cuts_shape_boundary": "region cuts: between ops whose shapes grow each step and the rest",
    "graphs_captured": "compiled graphs captured for replay",
    "graph_replays": "compiled-graph calls replayed on their executable",
    "persistent_cache_hits": "executables loaded from the disk cache",
    "persistent_cache_writes": "executables written to the disk cache",
    "persistent_cache_prefetched": "disk cache hits loaded ahead of use",
}


def _format(name: str, value: int) -> str:
    if name.endswith("_ns"):
        return f"{value / 1e6:.1f} ms"
    if name.endswith("_bytes"):
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if value >= size:
                return f"{value / size:.2f} {unit} ({value} bytes)"
        return f"{value} bytes"
    return str(value)


def metrics_report() -> str:
    """The counters as readable text (also printed)."""
    lines = ["torch_tpu metrics"]
    counters = metrics()
    for name, value in sorted(counters.items()):
        label = _DESCRIPTIONS.get(name, name)
        lines.append(f"  {label:<40} {_format(name, value)}")
    if counters.get("regions_executed"):
        mean = counters["region_ops"] / counters["regions_executed"]
        lines.append(f"  {'mean ops per region':<40} {mean:.1f}")
    report = "\n".join(lines)
    print(report)
    return report

"""`torch_tpu.cache`: the persistent executable cache (the disk tier under
the in-memory one; see csrc/exec/persistent_cache.h).

Compiled programs are kept in TORCH_TPU_CACHE_DIR (default
~/.cache/torch_tpu; set but empty turns the disk tier off), bounded by
TORCH_TPU_CACHE_MAX_BYTES (default 4 GiB, least recently used evicted
first). Both are read once, when the process opens the device.

Warm start: from then on a background thread loads the
TORCH_TPU_CACHE_PREFETCH most recently used entries (default 4096; 0 turns
it off), the programs the previous run used, so that ops find them loaded;
`stats()['loaded_ahead']` counts those not used yet, and the metric
`persistent_cache_prefetched` the hits they served.
"""

from typing import Any, Dict

from . import _C


def stats() -> Dict[str, Any]:
    """{'enabled', 'directory', 'entries', 'bytes', 'max_bytes',
    'loaded_ahead'} of the disk tier, and this process's 'hits' and 'writes'
    (from torch_tpu.debug.metrics())."""
    from . import debug

    s = dict(_C._persistent_cache_stats())
    m = debug.metrics()
    s["hits"] = m["persistent_cache_hits"]
    s["writes"] = m["persistent_cache_writes"]
    return s


def clear() -> None:
    """Deletes every entry of the disk tier (the in-memory cache is kept)."""
    _C._persistent_cache_clear()


__all__ = ["stats", "clear"]

"""`torch.tpu`: device management for the tpu backend, mirroring `torch.cuda`."""

from dataclasses import dataclass
from typing import Any, Optional, Union

import torch

from . import _C

_DeviceLike = Union[torch.device, str, int, None]


def _index(device: _DeviceLike = None, optional: bool = True) -> int:
    """Device index of `device`; the current device for None."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if device.type != "tpu":
        raise ValueError(f"Expected a tpu device, but got: {device}")
    return current_device() if device.index is None else device.index


def _check_index(index: int) -> int:
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"Invalid device index {index}: there are {count} tpu devices")
    return index


def is_available() -> bool:
    try:
        return device_count() > 0
    except RuntimeError:
        return False


def is_initialized() -> bool:
    return _C._runtime_initialized() and not _C._is_in_bad_fork()


def _lazy_init() -> None:
    """Creates the runtime; raises RuntimeError in a bad fork, like CUDA."""
    _C._lazy_init()


def _is_in_bad_fork() -> bool:
    """True in a child forked after this process used tpu (then any tpu use
    raises RuntimeError: use the 'spawn' start method)."""
    return _C._is_in_bad_fork()


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._current_device()


def set_device(device: _DeviceLike) -> None:
    index = _index(device)
    if index >= 0:
        _C._set_device(_check_index(index))


class device:
    """Context manager that makes `device` current for the block."""

    def __init__(self, device: Any):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Makes the device of tensor `obj` current (no-op for non-tpu tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "tpu" else None)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work launched on the device; raises errors from it."""
    _C._synchronize(_check_index(_index(device)))


@dataclass(frozen=True)
class _TpuDeviceProperties:
    name: str
    platform: str
    platform_version: str
    plugin_path: str
    plugin_reason: str
    pjrt_api_version: str
    total_memory: int
    memory_reported_by_plugin: bool
    pjrt_id: int
    local_hardware_id: int


def get_device_properties(device: _DeviceLike = None) -> _TpuDeviceProperties:
    return _TpuDeviceProperties(**_C._device_properties(_check_index(_index(device))))


def get_device_name(device: _DeviceLike = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: _DeviceLike = None) -> dict:
    return {}


# Memory: backed by the tpu allocator through torch.accelerator's interface.

def memory_stats(device: _DeviceLike = None) -> dict:
    return torch.accelerator.memory_stats(torch.device("tpu", _check_index(_index(device))))


def memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.reset_peak_memory_stats(torch.device("tpu", _check_index(_index(device))))


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(
        torch.device("tpu", _check_index(_index(device))))


def mem_get_info(device: _DeviceLike = None) -> tuple:
    return torch.accelerator.get_memory_info(torch.device("tpu", _check_index(_index(device))))


def empty_cache() -> None:
    """Nothing is cached between PyTorch and PJRT; kept for API parity."""


# What an allocation past the device's memory (or this process's fraction of
# it) raises: the class torch.cuda.OutOfMemoryError also names.
OutOfMemoryError = torch.OutOfMemoryError


def init() -> None:
    """Starts the runtime now (it otherwise starts at the first tpu use)."""
    _lazy_init()


def set_per_process_memory_fraction(fraction: float, device: _DeviceLike = None) -> None:
    """Caps what this process may allocate on the device at `fraction` of
    its memory; an allocation past it raises OutOfMemoryError."""
    index = _check_index(_index(device))
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._set_memory_fraction(index, fraction)


def get_per_process_memory_fraction(device: _DeviceLike = None) -> float:
    return _C._memory_fraction(_check_index(_index(device)))


def memory_stats_as_nested_dict(device: _DeviceLike = None) -> dict:
    """memory_stats() with its dotted keys as nested dicts."""
    nested: dict = {}
    for key, value in memory_stats(device).items():
        node = nested
        *path, leaf = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _format_size(n: int) -> str:
    for unit in ("B  ", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:6d} {unit}" if unit == "B  " else f"{n:6.1f} {unit}"
        n /= 1024
    raise AssertionError


def memory_summary(device: _DeviceLike = None, abbreviated: bool = False) -> str:
    """A table of the device's memory statistics (current, peak, allocated
    and freed in total), as torch.cuda.memory_summary prints them. Every
    storage is one PJRT buffer (no caching layer), so allocated, active and
    reserved memory agree; `abbreviated` is accepted for parity."""
    index = _check_index(_index(device))
    stats = memory_stats(index)
    rows = [("Allocated memory", "allocated_bytes", True),
            ("Active memory", "active_bytes", True),
            ("Requested memory", "requested_bytes", True),
            ("Reserved memory", "reserved_bytes", True),
            ("Allocations", "allocation", False),
            ("Active allocs", "active", False)]
    width = 78
    lines = ["=" * width,
             f" tpu memory summary, device ID {index} ".center(width),
             f"   fraction of the device's memory allowed: "
             f"{get_per_process_memory_fraction(index):g}; out-of-memory errors: "
             f"{stats.get('num_ooms', 0)}",
             "-" * width,
             f"{'Metric':<20}| {'Cur Usage':>12} | {'Peak Usage':>12} | {'Tot Alloc':>12} | "
             f"{'Tot Freed':>12}",
             "-" * width]
    for name, key, is_bytes in rows:
        fmt = _format_size if is_bytes else (lambda n: f"{n:10d}")
        values = [stats.get(f"{key}.all.{field}", 0)
                  for field in ("current", "peak", "allocated", "freed")]
        lines.append(f"{name:<20}| " + " | ".join(f"{fmt(v):>12}" for v in values))
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


def _deprecated(old: str, new, message: str):
    def alias(device: _DeviceLike = None):
        import warnings
        warnings.warn(f"torch.tpu.{old} {message}", FutureWarning, stacklevel=2)
        return new(device)
    alias.__name__ = old
    alias.__doc__ = f"Deprecated (as in torch.cuda): {message}."
    return alias


memory_cached = _deprecated("memory_cached", memory_reserved,
                            "has been renamed to torch.tpu.memory_reserved")
max_memory_cached = _deprecated("max_memory_cached", max_memory_reserved,
                                "has been renamed to torch.tpu.max_memory_reserved")
reset_max_memory_allocated = _deprecated(
    "reset_max_memory_allocated", reset_peak_memory_stats,
    "now calls torch.tpu.reset_peak_memory_stats, which resets /all/ peak memory stats.")
reset_max_memory_cached = _deprecated(
    "reset_max_memory_cached", reset_peak_memory_stats,
    "now calls torch.tpu.reset_peak_memory_stats, which resets /all/ peak memory stats.")


# Random number generation: one default generator per device.

def default_generator(device: _DeviceLike = None) -> torch.Generator:
    return _C._get_default_generator(_check_index(_index(device)))


def _all_indices():
    return range(device_count())


def manual_seed(seed: int) -> None:
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in _all_indices():
        default_generator(i).manual_seed(int(seed))


def seed() -> None:
    default_generator().seed()


def seed_all() -> None:
    for i in _all_indices():
        default_generator(i).seed()


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_rng_state(device: _DeviceLike = "tpu") -> torch.Tensor:
    return default_generator(device).get_state()


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in _all_indices()]


def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = "tpu") -> None:
    default_generator(device).set_state(new_state.cpu() if new_state.device.type != "cpu" else new_state)


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# Streams and events: generic torch.Stream / torch.Event on the tpu device.

class Stream(torch.Stream):
    """A tpu stream. All streams of a device run in launch order."""

    def __new__(cls, device: _DeviceLike = None, priority: int = 0, **kwargs):
        if kwargs:  # re-wrapping an existing stream (stream_id, device_index, ...)
            return super().__new__(cls, **kwargs)
        with globals()["device"](device):
            return super().__new__(cls, device=torch.device("tpu", _index(device)), priority=priority)


class _EventType(type):
    """isinstance(e, torch.tpu.Event) holds for every torch.Event on a tpu device."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, torch.Event) and obj.device.type == "tpu"


class Event(metaclass=_EventType):
    """A tpu event: records the device's work launched before record().

    `torch.tpu.Event(...)` returns a plain `torch.Event` on the current tpu
    device rather than an instance of a subclass, because PyTorch's Event and
    Stream methods (elapsed_time, record_event) accept only exact torch.Event
    objects as the other event. With enable_timing=True, the event's time is
    when the device finished the work recorded, so `start.elapsed_time(end)`
    measures device time in milliseconds."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False):
        return torch.Event(device=torch.device("tpu", current_device()),
                           enable_timing=enable_timing, blocking=blocking,
                           interprocess=interprocess)


def current_stream(device: _DeviceLike = None) -> Stream:
    s = torch.accelerator.current_stream(_check_index(_index(device)))
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


def default_stream(device: _DeviceLike = None) -> Stream:
    s = torch.accelerator.current_stream(_check_index(_index(device)))
    return Stream(stream_id=0, device_index=s.device_index, device_type=s.device_type)


class StreamContext:
    """Makes `stream` current for the block (like torch.cuda.StreamContext)."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return
        self.prev = torch.accelerator.current_stream(self.stream.device_index)
        torch.accelerator.set_stream(self.stream)

    def __exit__(self, *exc):
        if self.prev is not None:
            torch.accelerator.set_stream(self.prev)
        return False


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


def get_amp_supported_dtype() -> list:
    """Dtypes torch.autocast("tpu", dtype=...) accepts (bfloat16 is the
    default and the TPU's native matmul type)."""
    return [torch.bfloat16, torch.float16, torch.float32]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True

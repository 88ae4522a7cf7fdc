"""Shape buckets: which padded size a dynamic dimension runs at.

XLA programs have static shapes, so every new prompt length, batch size or
last partial batch would be a new program. A compiled graph
(`torch.compile(backend="tpu")`) whose inputs have dynamic dimensions
(Dynamo's symbolic sizes: `dynamic=True`, `torch._dynamo.mark_dynamic`, or
any size that changed once) instead runs at the dimension's bucket: its
inputs are padded up to it, the ops where the padding would change a real
value (reductions, softmax, matmul contractions) are masked, and its
outputs are cut back to the real sizes. One program per bucket per graph.

    torch_tpu.set_shape_buckets("pow2")          # default: 8, 16, 32, ...
    torch_tpu.set_shape_buckets("pow2", floor=32)
    torch_tpu.set_shape_buckets([64, 128, 512])   # above 512: exact sizes
    torch_tpu.set_shape_buckets(None)             # off: a program per shape
    torch.compile(model, backend="tpu", options={"shape_buckets": [128, 256]})

`TORCH_TPU_SHAPE_BUCKETS` sets the process default: `pow2`, `pow2:FLOOR`,
a comma-separated list of sizes, or `off`.

Eager programs keep exact shapes: bucketing applies to compiled graphs,
where the padding can be masked inside the one program. A graph whose ops
the padding analysis cannot prove exact (torch_tpu/_padding.py lists what
it accepts) runs at exact sizes; `refusals()` says why.
"""

from __future__ import annotations

import bisect
import os
from typing import List, Optional, Sequence, Tuple, Union

Spec = Union[None, str, Sequence[int]]


class Buckets:
    """A bucket rule: powers of two from a floor, or an explicit list."""

    def __init__(self, sizes: Optional[Sequence[int]] = None, floor: int = 8):
        if sizes is not None:
            sizes = sorted({int(s) for s in sizes})
            if not sizes or sizes[0] < 1:
                raise ValueError(f"shape buckets must be positive sizes, got {list(sizes)}")
        if floor < 1:
            raise ValueError(f"shape bucket floor must be >= 1, got {floor}")
        self.sizes: Optional[List[int]] = sizes
        self.floor = floor

    def bucket(self, n: int) -> Optional[int]:
        """The size n runs at, or None when no bucket holds it (exact)."""
        if self.sizes is None:
            b = self.floor
            while b < n:
                b *= 2
            return b
        i = bisect.bisect_left(self.sizes, n)
        return self.sizes[i] if i < len(self.sizes) else None

    def key(self) -> Tuple:
        return (tuple(self.sizes) if self.sizes is not None else None, self.floor)

    def __repr__(self) -> str:
        if self.sizes is None:
            return f"Buckets(pow2, floor={self.floor})"
        return f"Buckets({self.sizes})"


def parse(spec: Spec, floor: Optional[int] = None) -> Optional[Buckets]:
    """A Buckets from what users write, None for off."""
    if spec is None or spec is False:
        return None
    if isinstance(spec, Buckets):
        return spec
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text in ("", "off", "none", "0", "false"):
            return None
        if text.startswith("pow2"):
            rest = text[4:].lstrip(":")
            return Buckets(None, floor if floor is not None else (int(rest) if rest else 8))
        try:
            return Buckets([int(p) for p in text.split(",") if p.strip()])
        except ValueError:
            raise ValueError(
                f"shape buckets: expected 'pow2', 'pow2:FLOOR', 'off' or a list of sizes, got {spec!r}"
            ) from None
    if isinstance(spec, (list, tuple)):
        return Buckets(spec)
    raise TypeError(f"shape buckets: expected a string, a list of sizes or None, got {type(spec).__name__}")


_current: Optional[Buckets] = parse(os.environ.get("TORCH_TPU_SHAPE_BUCKETS", "pow2"))
_refusals: List[Tuple[str, str]] = []
_MAX_REFUSALS = 64


def set_shape_buckets(spec: Spec = "pow2", *, floor: Optional[int] = None) -> None:
    """Set the buckets compiled graphs use from now on (graphs already
    compiled keep theirs). `None` or "off" turns bucketing off."""
    global _current
    _current = parse(spec, floor)


def get_shape_buckets() -> Optional[Buckets]:
    return _current


def record_refusal(graph: str, reason: str) -> None:
    _refusals.append((graph, reason))
    del _refusals[:-_MAX_REFUSALS]


def refusals() -> List[Tuple[str, str]]:
    """(graph, reason) for the latest compiled graphs that have dynamic
    sizes but run at exact sizes, oldest first."""
    return list(_refusals)


__all__ = ["Buckets", "set_shape_buckets", "get_shape_buckets", "refusals"]

"""A compiled graph run at bucket sizes (torch_tpu/_padding.py says why
that is exact): per call, read the real sizes, pad the inputs up to their
buckets, run the rewritten graph (one recorded program per bucket), and cut
the outputs back to the real sizes."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import sympy
import torch

from ._padding import Plan
from .shape_buckets import Buckets

# Inputs up to this size are padded on the host (a transfer, no program);
# larger ones on the device, by one small program per distinct input shape.
_HOST_PAD_BYTES = 1 << 20
_MAX_SHAPES = 4096


def _eval(e: sympy.Expr, values: Dict[sympy.Symbol, int]) -> int:
    return int(e.xreplace({s: sympy.Integer(v) for s, v in values.items()}))


class _Sizes:
    """What one set of real sizes runs at (computed once per set)."""

    def __init__(self, plan: Plan, real: Dict, bucket: Dict):
        self.int_args = {i: _eval(e, bucket) for i, e in plan.int_args.items()}
        self.padded = {i: [_eval(e, bucket) for e in shape] for i, shape in plan.padded_args.items()}
        self.lengths = [_eval(e, real) for e in plan.lengths]
        self.cuts = [None if cuts is None else [(d, _eval(e, real)) for d, e in cuts]
                     for cuts in plan.outputs]


class BucketedGraph:
    def __init__(self, plan: Plan, buckets: Buckets, padded_graph, exact_graph):
        self.plan = plan
        self.buckets = buckets
        self.padded_graph = padded_graph  # runs plan.gm
        self.exact_graph = exact_graph  # the unrewritten graph, for sizes above every bucket
        self.sizes: Dict[Tuple, Optional[_Sizes]] = {}
        self.length_tensors: Dict[Tuple, torch.Tensor] = {}

    def _sizes_for(self, args: List) -> Optional[_Sizes]:
        real = {}
        for sym, src in self.plan.sources.items():
            real[sym] = int(args[src[1]]) if src[0] == "int" else int(args[src[1]].shape[src[2]])
        key = tuple(real.values())
        if key in self.sizes:
            return self.sizes[key]
        bucket = {}
        sizes: Optional[_Sizes] = None
        for sym, r in real.items():
            b = self.buckets.bucket(r)
            if b is None:
                break
            bucket[sym] = b
        else:
            sizes = _Sizes(self.plan, real, bucket)
        if len(self.sizes) >= _MAX_SHAPES:
            self.sizes.clear()
        self.sizes[key] = sizes
        return sizes

    def _length(self, value: int, device: torch.device) -> torch.Tensor:
        key = (device, value)
        t = self.length_tensors.get(key)
        if t is None:
            if len(self.length_tensors) >= _MAX_SHAPES:
                self.length_tensors.clear()
            t = torch.tensor(value, dtype=torch.int64, device=device)
            self.length_tensors[key] = t
        return t

    def __call__(self, args: List):
        sizes = self._sizes_for(args)
        if sizes is None:
            return self.exact_graph(args)
        device = next(a.device for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu")
        padded = list(args)
        args.clear()
        for i, v in sizes.int_args.items():
            padded[i] = v
        for i, shape in sizes.padded.items():
            padded[i] = _pad(padded[i], shape)
        padded.extend(self._length(v, device) for v in sizes.lengths)
        outputs = self.padded_graph(padded)
        single = not isinstance(outputs, (list, tuple))
        outs = [outputs] if single else list(outputs)
        for k, cuts in enumerate(sizes.cuts):
            if cuts is not None and outs[k] is not None:
                for d, n in cuts:
                    outs[k] = outs[k].narrow(d, 0, n)
        return outs[0] if single else type(outputs)(outs) if isinstance(outputs, tuple) else outs


def _pad(t: torch.Tensor, shape: List[int]) -> torch.Tensor:
    """t with zeros after its values in each dimension, up to shape (zeros
    keep padded token ids, positions and masks in range)."""
    if list(t.shape) == shape:
        return t
    region = tuple(slice(0, s) for s in t.shape)
    if t.numel() * t.element_size() <= _HOST_PAD_BYTES:
        out = torch.zeros(shape, dtype=t.dtype)
        out[region] = t.cpu()
        return out.to(t.device)
    out = t.new_zeros(shape)
    out[region] = t
    return out

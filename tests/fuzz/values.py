"""Random input tensors for the fuzzers: shapes, dtypes, edge values, views.

An input is described as data (an Input), so that it can be rendered as
Python source for a reproducer and simplified by the shrinker: a flat list of
values for a contiguous base tensor, and view code applied to the base
(transposes, strided slices, expands...) giving the tensor the program uses.
"""

import math
from dataclasses import dataclass, field

import torch

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32,
          torch.uint8, torch.bool]
DTYPE_WEIGHTS = [0.30, 0.12, 0.12, 0.14, 0.10, 0.10, 0.12]
FLOATS = (torch.float32, torch.bfloat16, torch.float16, torch.float64)
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)

# The dims a shape is drawn from: small, so that programs recur and reuse
# compiled executables, with 0 and 1 for empty and broadcast dims.
DIMS = [0, 1, 2, 3, 4, 5]
DIM_WEIGHTS = [0.05, 0.2, 0.25, 0.25, 0.13, 0.12]
RANKS = [0, 1, 2, 3, 4]
RANK_WEIGHTS = [0.08, 0.27, 0.35, 0.25, 0.05]


def dtype_name(dtype):
    return "torch." + str(dtype).replace("torch.", "")


def finfo_edges(dtype, subnormals):
    fi = torch.finfo(dtype)
    edges = [math.nan, math.inf, -math.inf, -0.0, 0.0, fi.max, -fi.max, fi.tiny,
             -fi.tiny, 1e4, -1e4, 0.5, -0.5]
    if subnormals:
        edges += [fi.tiny / 4, -fi.tiny / 8]
    return edges


def int_edges(dtype):
    ii = torch.iinfo(dtype)
    edges = [ii.min, ii.max, 0, 1, -1, ii.max - 1, 2, -2, 255, 256, -129, 1 << 20]
    if dtype == torch.int64:
        edges += [1 << 40, -(1 << 40), (1 << 53) + 1]
    return [e for e in edges if ii.min <= e <= ii.max]


def round_to(dtype, v):
    """v as the CPU stores it in dtype (so the rendered literal round-trips)."""
    return torch.tensor(v, dtype=torch.float64).to(dtype).item()


@dataclass
class Input:
    """A program input: `name = torch.tensor(values).reshape(base_shape)<view>`."""

    name: str
    dtype: torch.dtype
    base_shape: tuple
    values: list  # flat, len == prod(base_shape)
    view: str = ""  # code appended to the base, e.g. ".transpose(0, 1)[::2]"

    @property
    def base_name(self):
        return self.name + "_base" if self.view else self.name

    def source(self, device_expr="DEV"):
        vals = "[" + ", ".join(literal(v) for v in self.values) + "]"
        line = (f"{self.base_name} = torch.tensor({vals}, dtype={dtype_name(self.dtype)})"
                f".reshape({tuple(self.base_shape)!r}).to({device_expr})")
        if self.view:
            line += f"\n{self.name} = {self.base_name}{self.view}"
        return line


def literal(v):
    """Python source for a scalar value (nan and inf are names in the env)."""
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r
    return repr(v)


@dataclass
class Opts:
    edge_prob: float = 0.5  # probability that a tensor gets edge values
    subnormals: bool = False  # include subnormal floats among the edge values
    view_prob: float = 0.35


def random_dtype(rng):
    return rng.choices(DTYPES, DTYPE_WEIGHTS)[0]


def random_shape(rng, max_rank=4):
    rank = rng.choices(RANKS[:max_rank + 1], RANK_WEIGHTS[:max_rank + 1])[0]
    return tuple(rng.choices(DIMS, DIM_WEIGHTS)[0] for _ in range(rank))


def broadcast_variant(rng, shape):
    """A shape that broadcasts against `shape`: leading dims dropped, some dims 1."""
    shape = list(shape)
    if shape and rng.random() < 0.4:
        shape = shape[rng.randint(1, len(shape)):]
    return tuple(1 if (d != 0 and rng.random() < 0.3) else d for d in shape)


def random_values(rng, dtype, n, opts, kind="any"):
    """n values for dtype. kind: 'any', 'small' (no edges), 'positive'."""
    edge = kind == "any" and rng.random() < opts.edge_prob
    if dtype == torch.bool:
        p = rng.random()
        return [rng.random() < p for _ in range(n)]
    if dtype in INTS:
        ii = torch.iinfo(dtype)
        lo, hi = (0, 9) if dtype == torch.uint8 else (-6, 6)
        if kind == "positive":
            lo = 1
        edges = int_edges(dtype)
        out = []
        for _ in range(n):
            if edge and rng.random() < 0.2:
                out.append(rng.choice(edges))
            else:
                out.append(rng.randint(lo, hi))
        return [min(max(v, ii.min), ii.max) for v in out]
    edges = finfo_edges(dtype, opts.subnormals)
    style = rng.random()
    out = []
    for _ in range(n):
        if edge and rng.random() < 0.2:
            v = rng.choice(edges)
        elif style < 0.5:
            v = rng.randint(-16, 16) / 4  # exact in every float dtype
        else:
            v = round(rng.gauss(0, 2), 3)
        if kind == "positive":
            v = abs(v) + 0.25 if not math.isnan(v) else 1.0
        out.append(round_to(dtype, v))
    return out


# ---------------------------------------------------------------------------
# Views: each maps the shape the program wants to the shape of the tensor it
# is taken from, and the code that takes it.
# ---------------------------------------------------------------------------
def _view_transpose(rng, shape):
    if len(shape) < 2:
        return None
    i, j = sorted(rng.sample(range(len(shape)), 2))
    pre = list(shape)
    pre[i], pre[j] = pre[j], pre[i]
    return tuple(pre), f".transpose({i}, {j})"


def _view_permute(rng, shape):
    if len(shape) < 3:
        return None
    p = list(range(len(shape)))
    rng.shuffle(p)
    pre = [0] * len(shape)
    for k, d in enumerate(p):
        pre[d] = shape[k]
    return tuple(pre), f".permute{tuple(p)!r}"


def _index_code(rank, d, item):
    return "[" + ", ".join([":"] * d + [item]) + "]"


def _view_step(rng, shape):
    if not shape:
        return None
    d = rng.randrange(len(shape))
    step = rng.choice([2, 3])
    pre = list(shape)
    # ceil(n / step) == shape[d] for n in [step*(t-1)+1, step*t]
    pre[d] = step * shape[d] - rng.randint(0, step - 1) if shape[d] else 0
    return tuple(pre), _index_code(len(shape), d, f"::{step}")


def _view_offset(rng, shape):
    if not shape:
        return None
    d = rng.randrange(len(shape))
    pre = list(shape)
    pre[d] = shape[d] + 1
    return tuple(pre), _index_code(len(shape), d, "1:")


def _view_expand(rng, shape):
    dims = [d for d, s in enumerate(shape) if s != 1]
    if not dims:
        return None
    chosen = rng.sample(dims, rng.randint(1, len(dims)))
    pre = tuple(1 if d in chosen else s for d, s in enumerate(shape))
    return pre, f".expand({tuple(shape)!r})"


def _view_select(rng, shape):
    d = rng.randint(0, len(shape))
    size = rng.randint(1, 3)
    pre = shape[:d] + (size,) + shape[d:]
    return pre, f".select({d}, {rng.randrange(size) - (size if rng.random() < 0.3 else 0)})"


VIEWS = [_view_transpose, _view_permute, _view_step, _view_offset, _view_expand, _view_select]
VIEW_WEIGHTS = [3, 1, 3, 2, 2, 1]


def random_view(rng, shape, writable=False):
    """(base_shape, code) such that `base<code>` has `shape`; 1-2 views."""
    code = ""
    pre = tuple(shape)
    for _ in range(rng.choice([1, 1, 2])):
        for _attempt in range(5):
            fn = rng.choices(VIEWS, VIEW_WEIGHTS)[0]
            if writable and fn is _view_expand:
                continue
            got = fn(rng, pre)
            if got is not None:
                pre, c = got
                code = c + code
                break
    return pre, code


def random_input(rng, name, shape, dtype, opts, kind="any", allow_view=True):
    base, view = tuple(shape), ""
    if allow_view and rng.random() < opts.view_prob:
        base, view = random_view(rng, shape)
    n = math.prod(base)
    return Input(name, dtype, base, random_values(rng, dtype, n, opts, kind), view)


@dataclass
class Scalar:
    """A Python scalar operand and its source."""

    value: object
    src: str = field(default="")

    def __post_init__(self):
        if not self.src:
            self.src = literal(self.value)


def random_scalar(rng, prefer=None, opts=None):
    """A Python number: bool, int (incl. large) or float (incl. nan/inf/-0.0)."""
    kind = prefer or rng.choices(["int", "float", "bool"], [0.45, 0.45, 0.1])[0]
    if kind == "bool":
        return Scalar(rng.random() < 0.5)
    if kind == "int":
        if rng.random() < 0.2:
            return Scalar(rng.choice([300, -1, 255, 256, -129, 1 << 31, 1 << 40, -(1 << 40), 0]))
        return Scalar(rng.randint(-4, 5))
    if rng.random() < 0.2:
        return Scalar(rng.choice([math.nan, math.inf, -math.inf, -0.0, 1e30, 1e-30, 70000.0]))
    return Scalar(rng.randint(-12, 12) / 4 if rng.random() < 0.6 else round(rng.gauss(0, 2), 3))

"""Builds random programs: the generation context the op table draws from.

Generation runs on the CPU only: each candidate step is run on a copy of the
CPU environment, so the generator knows the real shapes, dtypes and values of
every variable. A step that raises on the CPU is usually discarded and
redrawn; with probability KEEP_ERROR it is kept as the program's last step, so
that exception classes are compared too.
"""

import math
import random

import torch

from . import values as V
from .program import Program, Step, mirror, new_env, run_code, variables

KEEP_ERROR = 0.08
MAX_ATTEMPTS = 25


class Gen:
    def __init__(self, rng, opts):
        self.rng = rng
        self.opts = opts
        self.inputs = []
        self.env = new_env("cpu")
        self.tainted = set()  # tie indices: never read by later steps
        self.count = 0
        self.shape = V.random_shape(rng)
        self._pending = []

    # -- names -------------------------------------------------------------
    def fresh(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    # -- reading the environment -------------------------------------------
    def t(self, name):
        return self.env[name]

    def tensor_names(self, pred=None):
        out = []
        for k, v in variables(self.env).items():
            if isinstance(v, torch.Tensor) and k not in self.tainted and (pred is None or pred(v)):
                out.append(k)
        return out

    def pick(self, pred=None):
        names = self.tensor_names(pred)
        return self.rng.choice(names) if names else None

    # -- new inputs ----------------------------------------------------------
    def _add_input(self, inp):
        err = run_code(inp.source("DEV"), self.env, "cpu")
        assert err is None, (inp.source(), err)
        self._pending.append(inp)
        return inp.name

    def new_tensor(self, shape, dtype=None, kind="any", view=True):
        dtype = dtype or V.random_dtype(self.rng)
        inp = V.random_input(self.rng, self.fresh("x"), tuple(shape), dtype, self.opts, kind,
                             allow_view=view)
        return self._add_input(inp)

    def literal_tensor(self, values, shape, dtype=torch.int64):
        return self._add_input(V.Input(self.fresh("i"), dtype, tuple(shape), list(values)))

    def index_tensor(self, shape, lo, hi, dtype=None, unique_dim=None):
        """Valid indices in [lo, hi); unique along unique_dim when given."""
        dtype = dtype or self.rng.choice([torch.int64, torch.int64, torch.int32])
        n = math.prod(shape)
        if hi <= lo:
            return self.literal_tensor([lo] * n, shape, dtype) if n == 0 else None
        if unique_dim is None:
            vals = [self.rng.randrange(lo, hi) for _ in range(n)]
            return self.literal_tensor(vals, shape, dtype)
        t = torch.empty(shape, dtype=torch.int64)
        moved = t.movedim(unique_dim, -1)
        if moved.shape[-1] > hi - lo:
            return None
        flat = moved.reshape(-1, moved.shape[-1]) if moved.numel() else moved.reshape(0, moved.shape[-1])
        for row in range(flat.shape[0]):
            flat[row] = torch.tensor(self.rng.sample(range(lo, hi), moved.shape[-1]), dtype=torch.int64)
        t = flat.reshape(moved.shape).movedim(-1, unique_dim).contiguous()
        return self.literal_tensor(t.flatten().tolist(), shape, dtype)

    def mask_tensor(self, shape):
        return self.new_tensor(shape, torch.bool, view=self.rng.random() < 0.3)

    # -- operands --------------------------------------------------------------
    def scalar(self, prefer=None):
        return V.random_scalar(self.rng, prefer, self.opts).src

    def broadcast_partner(self, name, allow_scalar=True, dtype=None):
        """Source of a second operand for an elementwise op with `name`."""
        t = self.t(name)
        r = self.rng.random()
        if allow_scalar and r < 0.25 and dtype is None:
            return self.scalar()
        if r < 0.45:
            def fits(u):
                try:
                    torch.broadcast_shapes(u.shape, t.shape)
                    return dtype is None or u.dtype == dtype
                except RuntimeError:
                    return False
            other = self.pick(fits)
            if other is not None:
                return other
        if r < 0.55:
            return self.new_tensor((), dtype)
        shape = t.shape if self.rng.random() < 0.5 else V.broadcast_variant(self.rng, t.shape)
        return self.new_tensor(shape, dtype)

    def dim(self, t, negative_ok=True):
        if t.dim() == 0:
            return self.rng.choice([0, -1])
        d = self.rng.randrange(t.dim())
        if negative_ok and self.rng.random() < 0.3:
            d -= t.dim()
        return d

    def eval_cpu(self, expr):
        """expr evaluated on a copy of the CPU environment (raises as it does)."""
        env = mirror(self.env, "cpu")
        return eval(compile(expr, "<fuzz>", "eval"), env)

    def out_tensor(self, ref):
        """(code, name) creating an out= tensor for a result like `ref`."""
        name = self.fresh("o")
        dtype = ref.dtype
        r = self.rng.random()
        if r < 0.1:
            dtype = V.random_dtype(self.rng)  # may be a dtype the CPU refuses
        shape = tuple(ref.shape)
        if r > 0.85:
            shape = (0,)  # resized by the op
        dn = V.dtype_name(dtype)
        if len(shape) >= 2 and self.rng.random() < 0.3:
            pre = list(shape)
            pre[0], pre[1] = pre[1], pre[0]
            return f"{name} = torch.zeros({tuple(pre)!r}, dtype={dn}).to(DEV).transpose(0, 1)", name
        return f"{name} = torch.zeros({shape!r}, dtype={dn}).to(DEV)", name

    # -- steps -------------------------------------------------------------------
    def try_step(self, op):
        """Draws one step from op; returns (step, cpu error or None) or None."""
        saved_env, saved_count = self.env, self.count
        self._pending = []
        self.env = mirror(saved_env, "cpu")
        try:
            step = op.gen(self)
        except (RuntimeError, ValueError, IndexError, TypeError, OverflowError):
            step = None  # the generator itself hit an invalid case: redraw
        if step is None:
            self.env, self.count = saved_env, saved_count
            return None
        err = run_code(step.code, self.env, "cpu")
        if err is not None and (isinstance(err, (NameError, SyntaxError, AssertionError))
                                or self.rng.random() >= KEEP_ERROR):
            self.env, self.count = saved_env, saved_count
            return None
        self.inputs += self._pending
        if step.tie:
            self.tainted.add(step.tie["idx"])
        return step, err


def initial_inputs(g):
    for _ in range(g.rng.choice([1, 2, 2, 3])):
        r = g.rng.random()
        shape = g.shape if r < 0.6 else (() if r < 0.7 else V.broadcast_variant(g.rng, g.shape))
        g.new_tensor(shape)
    g.inputs += g._pending
    g._pending = []


def generate(seed, index, opts, table, max_steps=6):
    """Program `index` of the run `seed` (deterministic)."""
    from .ops import choose_op

    rng = random.Random(f"{seed}:{index}")
    g = Gen(rng, opts)
    initial_inputs(g)
    steps = []
    for _ in range(rng.randint(1, max_steps)):
        got = None
        for _attempt in range(MAX_ATTEMPTS):
            got = g.try_step(choose_op(rng, table))
            if got is not None:
                break
        if got is None:
            break
        step, err = got
        steps.append(step)
        if err is not None:
            break
    return Program(g.inputs, steps, label=f"seed={seed} index={index}")


__all__ = ["Gen", "generate", "Step"]

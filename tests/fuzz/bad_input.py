"""Bad-input fuzzer: generated invalid calls, tpu against the CPU.

    python tests/fuzz/bad_input.py --n 1500 --seed 1     # full run
    python -m tests.fuzz.bad_input --n 300 --json out.json

Each call is a few lines of source (tensors made by T(shape, dtype) on DEV,
then the call) run once with DEV="cpu" and once with DEV="tpu" (followed by
torch.tpu.synchronize(), so that an error raised late still belongs to its
call). Where the CPU raises, tpu must raise the same class; where the CPU
returns, tpu must return the same values. Mixed-device calls cannot run on
the CPU alone: their expected class is PyTorch's device rule (the `expect`
field). After every call a small program checks that the device still gives
the right answer. Calls run in worker children (children.py): a crash or a
hang is pinned to its call.

Out-of-range indices run in both eager modes: in debug mode the tpu checks
them; in strict mode (the default) it does not check them today (they clamp
or drop, README), which shows as missing_error for the *.oob_strict families.
"""

import argparse
import builtins
import collections
import json
import math
import os
import random
import re
import sys
import time
import traceback
import warnings
from dataclasses import dataclass

if __package__ in (None, ""):  # run as a script path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "fuzz"  # noqa: A001
    import fuzz  # noqa: F401

from . import children  # noqa: E402
from .known import classify  # noqa: E402

WORKER_SCRIPT = os.path.abspath(__file__)
# calls whose values come from a random generator or from memory nobody wrote
# (set_ past the end of a storage grows it): only exceptions compare
UNDEFINED_VALUES = re.compile(r"uniform_|normal_|random_|bernoulli|multinomial|randn|randint|randperm|"
                              r"dropout|set_\(")

# Deterministic tensors: T(shape, dtype) on DEV (or on dev=...).
PRELUDE = '''def T(shape, dtype=torch.float32, lo=-3, hi=5, dev=None):
    n = 1
    for s in shape:
        n *= s
    t = (torch.arange(max(n, 0), dtype=torch.int64) * 7 % (hi - lo) + lo).reshape(shape)
    return t.to(dtype).to(dev or DEV)
'''

FLOATS = ["torch.float32", "torch.bfloat16", "torch.float16"]
INTS = ["torch.int64", "torch.int32", "torch.uint8"]
ALL = FLOATS + INTS + ["torch.bool"]


@dataclass
class Call:
    family: str
    code: str  # the last statement's value is the call's result (r = ...)
    mode: str = "strict"
    expect: str = None  # expected class name (or "ok") where the CPU cannot say

    @property
    def case(self):
        """The call's template: what is called, without sizes and dtypes
        (groups the results; known.py matches on it)."""
        code = "; ".join(self.code.splitlines())
        code = re.sub(r"T\(\([^()]*\)(, [^()]*)?\)", "T(..)", code)
        code = re.sub(r"torch\.(float32|bfloat16|float16|int64|int32|uint8|int8|bool)", "DT", code)
        code = re.sub(r"\b\d+(\.\d+)?(e\d+)?\b", "N", code)
        return code.replace("r = ", "").strip()[:140]

    def source(self):
        body = PRELUDE + "\n" + self.code
        lines = ["import torch", "import torch_tpu", "", "def program(DEV):"]
        lines += ["    " + ln for ln in body.splitlines()]
        lines += ["    return locals()", "", "", "for dev in ('cpu', 'tpu'):", "    try:",
                  f"        with torch_tpu.eager_mode({self.mode!r}):",
                  "            out = program(dev)",
                  "            if dev == 'tpu':",
                  "                torch.tpu.synchronize()",
                  "        print(dev, 'returned', out.get('r'))",
                  "    except Exception as e:",
                  "        print(dev, type(e).__name__, str(e).splitlines()[0] if str(e) else '')"]
        return "\n".join(lines) + "\n"


def shape(rng, rank=None, lo=1, hi=4):
    rank = rng.randint(1, 3) if rank is None else rank
    return tuple(rng.randint(lo, hi) for _ in range(rank))


def bad_broadcast(rng):
    """Two shapes that do not broadcast."""
    a = list(shape(rng, rng.randint(1, 3), 2, 4))
    b = list(a)
    d = rng.randrange(len(b))
    b[d] = a[d] + rng.randint(1, 2)
    if rng.random() < 0.3:
        b = [rng.randint(2, 3)] + b
    return tuple(a), tuple(b)


# ---------------------------------------------------------------------------
# families: each fn(rng) -> Call
# ---------------------------------------------------------------------------
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "atan2", "pow", "fmod",
          "remainder", "logical_and", "hypot", "copysign", "fmax", "bitwise_and", "floor_divide"]


def f_binary_shape(rng):
    a, b = bad_broadcast(rng)
    op = rng.choice(BINARY)
    dt = rng.choice(["torch.float32", "torch.int64"]) if op.startswith("bitwise") is False else "torch.int64"
    form = rng.choice(["func", "inplace", "out"])
    if form == "func":
        code = f"r = torch.{op}(T({a}, {dt}), T({b}, {dt}))"
    elif form == "inplace":
        code = f"x = T({a}, {dt})\nr = x.{op}_(T({b}, {dt}))"
    else:
        code = f"o = torch.zeros(0, dtype={dt}, device=DEV)\nr = torch.{op}(T({a}, {dt}), T({b}, {dt}), out=o)"
    return Call("shape.binary." + form, code)


def f_inplace_broadcast_out(rng):
    """In place into a tensor smaller than the broadcast result."""
    small = shape(rng, rng.randint(1, 2), 1, 3)
    big = (rng.randint(2, 3),) + small
    op = rng.choice(["add_", "mul_", "sub_", "div_", "copy_", "lerp_", "clamp_"])
    other = f"T({big})"
    if op == "lerp_":
        return Call("shape.inplace_broadcast", f"x = T({small})\nr = x.lerp_({other}, 0.5)")
    if op == "clamp_":
        return Call("shape.inplace_broadcast", f"x = T({small})\nr = x.clamp_({other}, None)")
    return Call("shape.inplace_broadcast", f"x = T({small})\nr = x.{op}({other})")


def f_matmul_shape(rng):
    n, k, m = rng.randint(1, 4), rng.randint(2, 4), rng.randint(1, 4)
    k2 = k + rng.randint(1, 2)
    dt = rng.choice(["torch.float32", "torch.float32", "torch.bfloat16"])
    cases = [f"r = torch.mm(T(({n}, {k}), {dt}), T(({k2}, {m}), {dt}))",
             f"r = torch.mm(T(({n},), {dt}), T(({k}, {m}), {dt}))",
             f"r = torch.bmm(T((2, {n}, {k}), {dt}), T((3, {k}, {m}), {dt}))",
             f"r = torch.bmm(T(({n}, {k}), {dt}), T(({k}, {m}), {dt}))",
             f"r = torch.mv(T(({n}, {k}), {dt}), T(({k2},), {dt}))",
             f"r = torch.dot(T(({k},), {dt}), T(({k2},), {dt}))",
             f"r = torch.dot(T(({n}, {k}), {dt}), T(({n}, {k}), {dt}))",
             f"r = torch.matmul(T((2, {n}, {k}), {dt}), T((3, {k}, {m}), {dt}))",
             f"r = torch.matmul(T(({n}, {k}), {dt}), T(({k2},), {dt}))",
             f"r = torch.addmm(T(({n + 1}, {m}), {dt}), T(({n}, {k}), {dt}), T(({k}, {m}), {dt}))",
             f"r = torch.nn.functional.linear(T(({n}, {k}), {dt}), T(({m}, {k2}), {dt}))",
             f"r = torch.outer(T(({n}, {k}), {dt}), T(({k},), {dt}))",
             f"r = torch.mm(T(({n}, {k}), {dt}), T(({k}, {m}), torch.float16 if {dt} != torch.float16 "
             f"else torch.float32))"]
    return Call("shape.matmul", rng.choice(cases))


def f_join_shape(rng):
    a = shape(rng, rng.randint(1, 3), 1, 4)
    b = list(a)
    d = rng.randrange(len(a))
    other = (d + 1) % len(a) if len(a) > 1 else None
    cases = []
    if other is not None:
        b[other] += 1
        cases.append(f"r = torch.cat([T({a}), T({tuple(b)})], {d})")
    cases += [f"r = torch.cat([T({a}), T({a + (2,)})], 0)",
              f"r = torch.cat([], 0)",
              f"r = torch.cat([T({a}), T({a})], {len(a) + rng.randint(0, 2)})",
              f"r = torch.cat([T({a}), T({a})], {-len(a) - 1 - rng.randint(0, 2)})",
              f"r = torch.stack([T({a}), T({tuple(x + 1 for x in a)})])",
              f"r = torch.stack([])",
              f"r = torch.stack([T({a}), T({a})], {len(a) + 2})",
              f"r = torch.cat([T({a}), T({a}, torch.int64)], 0)",
              f"r = torch.cat([T(()), T(())])",
              f"r = torch.hstack([T({a}), T(({a[0] + 1}, 7))])" if len(a) > 1 else "r = torch.vstack([])"]
    return Call("shape.join", rng.choice(cases))


def f_view_shape(rng):
    a = shape(rng, rng.randint(1, 3), 2, 4)
    n = math.prod(a)
    cases = [f"r = T({a}).view({n + 1})", f"r = T({a}).reshape({n - 1}, -1)" if n > 2 else
             f"r = T({a}).reshape(-1, -1)", f"r = T({a}).reshape(-1, -1)",
             f"r = T({a}).transpose(0, -1).view(-1)" if len(a) > 1 else f"r = T({a}).view(-1, 0)",
             f"r = T({a}).expand({tuple(x + 1 for x in a)})",
             f"r = T({a}).expand({a[1:]})" if len(a) > 1 else f"r = T({a}).expand(())",
             f"r = T({a}).unflatten(0, ({a[0] + 1}, 1))",
             f"r = T({a}).split([1, {a[0]}])",
             f"r = T({a}).chunk(0)",
             f"r = T({a}).tensor_split(0)",
             f"r = T({a}).unfold(0, {a[0] + 1}, 1)",
             f"r = T({a}).unfold(0, 1, 0)",
             f"r = T({a}).view(torch.float64) if {a[-1]} % 2 else T(({a[-1] + 1},)).view(torch.float64)",
             f"r = T({a}).movedim(0, {len(a) + 1})",
             f"r = T({a}).permute({tuple(range(len(a)))[:-1] + (0,)})",
             f"r = T({a}).permute({tuple(range(len(a) + 1))})",
             f"r = T({a}).flatten({len(a) - 1}, 0)",
             f"r = T({a}).squeeze({len(a) + 1})",
             f"r = T({a}).unsqueeze({len(a) + 2})",
             f"r = T({a}).repeat({(2,) * (len(a) - 1)})" if len(a) > 1 else f"r = T({a}).repeat(())",
             f"r = T({a}).diagonal(0, 0, 0)",
             f"r = T({a}).narrow(0, {a[0]}, 1)",
             f"r = T({a}).narrow(0, 0, {a[0] + 1})",
             f"r = T({a}).select(0, {a[0]})",
             f"r = T({a}).select(0, {-a[0] - 1})",
             f"r = T({a})[{a[0]}]",
             f"r = T({a})[..., ..., 0]",
             f"r = T({a})[(0,) * {len(a) + 1}]",
             f"r = T({a}).transpose(0, {len(a)})"]
    return Call("shape.view", rng.choice(cases))


def f_index_put_shape(rng):
    a = shape(rng, 2, 2, 4)
    v = (a[0] + 1,) + a[1:]
    cases = [f"x = T({a})\nx[torch.tensor([0, 1], device=DEV)] = T({v})",
             f"x = T({a})\nx[T({a}, torch.bool)] = T(({a[0] * a[1] + 1},))",
             f"x = T({a})\nr = x.index_put_((torch.tensor([0], device=DEV),), T({v}))",
             f"x = T({a})\nr = x.masked_fill(T(({a[0] + 1}, {a[1]}), torch.bool), 1.0)",
             f"x = T({a})\nr = x.masked_fill(T({a}), 1.0)",
             f"x = T({a})\nr = x.masked_fill(T({a}, torch.bool), T((2,)))",
             f"x = T({a})\nr = x.masked_scatter_(T({a}, torch.bool), T((1,)))",
             f"x = T({a})\nr = x[T(({a[0] + 1},), torch.bool)]",
             f"x = T({a})\nr = x[T({a}, torch.uint8)]",
             f"x = T({a})\nr = x.copy_(T({v}))",
             f"r = torch.where(T({a}, torch.bool), T({v}), T({a}))"]
    return Call("shape.index_put", rng.choice(cases))


def f_nn_shape(rng):
    c = rng.randint(1, 3)
    cases = [f"r = torch.nn.functional.conv2d(T((1, {c}, 5, 5)), T((2, {c + 1}, 3, 3)))",
             f"r = torch.nn.functional.conv2d(T(({c}, 5, 5, 5, 5)), T((2, {c}, 3, 3)))",
             f"r = torch.nn.functional.conv2d(T((1, {c}, 2, 2)), T((2, {c}, 3, 3)))",
             f"r = torch.nn.functional.conv2d(T((1, {c}, 5, 5)), T((2, {c}, 3, 3)), stride=0)",
             f"r = torch.nn.functional.conv1d(T((1, {c}, 5)), T((2, {c}, 3)), groups=2)",
             f"r = torch.nn.functional.layer_norm(T((2, {c + 2})), ({c + 3},))",
             f"r = torch.nn.functional.layer_norm(T((2, 3)), (3,), T((4,)))",
             f"r = torch.nn.functional.batch_norm(T((2, {c}, 4)), T(({c + 1},)), T(({c + 1},)))",
             f"r = torch.nn.functional.group_norm(T((2, 6, 4)), 4)",
             f"r = torch.nn.functional.cross_entropy(T((3, 4)), T((2,), torch.int64, 0, 3))",
             f"r = torch.nn.functional.cross_entropy(T((3, 4)), T((3,), torch.float32, 0, 3))",
             f"r = torch.nn.functional.nll_loss(T((3, 4)), T((3, 1), torch.int64, 0, 3))",
             f"r = torch.nn.functional.mse_loss(T((3, 4)), T((4, 3)))",
             f"r = torch.nn.functional.binary_cross_entropy(T((3,), lo=0, hi=1), T((4,), lo=0, hi=1))",
             f"r = torch.nn.functional.embedding(T((3,), torch.float32, 0, 3), T((4, 2)))",
             f"r = torch.nn.functional.embedding(T((3,), torch.int64, 0, 3), T((4,)))",
             f"r = torch.nn.functional.max_pool2d(T((1, 1, 2, 2)), 3)",
             f"r = torch.nn.functional.max_pool2d(T((1, 1, 4, 4)), 2, padding=2)",
             f"r = torch.nn.functional.avg_pool2d(T((1, 1, 4, 4)), 0)",
             f"r = torch.nn.functional.softmax(T((2, 3)), 2)",
             "r = torch.nn.functional.scaled_dot_product_attention(T((1, 2, 3, 4)), T((1, 2, 3, 5)), "
             "T((1, 2, 3, 4)))",
             f"r = torch.nn.functional.interpolate(T((1, 1, 4)), size=(2, 2))",
             f"r = torch.nn.functional.pad(T((1, 1, 4)), (1, 1, 1))",
             f"r = torch.nn.functional.pad(T((1, 1, 4)), (5, 5), mode='reflect')",
             f"r = torch.nn.functional.pixel_shuffle(T((1, 3, 2, 2)), 2)"]
    return Call("shape.nn", rng.choice(cases))


REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "all", "any", "std", "var",
              "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "sort", "argsort", "flip",
              "count_nonzero", "max", "min", "nansum", "median", "norm", "var_mean"]


def f_bad_dim(rng):
    a = shape(rng, rng.randint(0, 3), 1, 4)
    rank = len(a)
    op = rng.choice(REDUCTIONS)
    bad = rng.choice([rank + rng.randint(0, 2), -rank - 1 - rng.randint(0, 2)])
    if rank == 0:
        bad = rng.choice([1, -2, 2])
    r = rng.random()
    if r < 0.2 and rank >= 1 and op in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp",
                                         "count_nonzero", "flip", "nansum", "norm"):
        dims = (0, 0) if op != "flip" else (0, -rank)
        return Call("dim.duplicate", f"r = torch.{op}(T({a}), {dims})")
    if op == "flip":
        return Call("dim.out_of_range", f"r = torch.flip(T({a}), ({bad},))")
    if op == "norm":
        return Call("dim.out_of_range", f"r = torch.norm(T({a}), dim={bad})")
    return Call("dim.out_of_range", f"r = torch.{op}(T({a}), {bad})")


def f_bad_dim_other(rng):
    a = shape(rng, rng.randint(1, 3), 1, 4)
    rank = len(a)
    bad = rank + rng.randint(0, 2)
    size = a[0]
    cases = [f"r = torch.topk(T({a}), {size + 1}, 0)", f"r = torch.topk(T({a}), -1, 0)",
             f"r = torch.topk(T({a}), 1, {bad})", f"r = torch.kthvalue(T({a}), {size + 1}, 0)",
             f"r = torch.kthvalue(T({a}), 0, 0)", f"r = torch.roll(T({a}), 1, {bad})",
             f"r = torch.roll(T({a}), (1, 2), (0,))", f"r = T({a}).transpose(0, {bad})",
             f"r = torch.gather(T({a}), {bad}, T({a}, torch.int64, 0, 1))",
             f"r = torch.index_select(T({a}), {bad}, T((1,), torch.int64, 0, 1))",
             f"r = torch.index_select(T({a}), 0, T((1, 1), torch.int64, 0, 1))",
             f"r = torch.cumsum(T({a}), dim=None)",
             f"r = torch.tril(T(({size},)))", f"r = torch.triu(T(()))",
             f"r = torch.diag(T((2, 2, 2)))", f"r = torch.trace(T(({size},)))",
             f"r = torch.squeeze(T({a}), ({bad},))", f"r = torch.movedim(T({a}), (0, 0), (0, 1))",
             f"r = torch.diff(T({a}), dim={bad})", f"r = torch.unbind(T({a}), {bad})",
             f"r = torch.split(T({a}), 1, {bad})", f"r = torch.chunk(T({a}), 2, {bad})",
             f"r = torch.narrow(T({a}), {bad}, 0, 1)", f"r = torch.select(T({a}), {bad}, 0)",
             f"r = torch.repeat_interleave(T({a}), 2, dim={bad})",
             f"r = torch.take_along_dim(T({a}), T({a}, torch.int64, 0, 1), dim={bad})"]
    return Call("dim.other", rng.choice(cases))


def f_bad_dtype(rng):
    a = shape(rng, rng.randint(1, 2), 1, 3)
    fl = rng.choice(FLOATS)
    it = rng.choice(INTS)
    cases = [f"r = torch.bitwise_and(T({a}, {fl}), T({a}, {fl}))",
             f"r = torch.bitwise_not(T({a}, {fl}))",
             f"r = torch.mm(T((2, 2), {it}), T((2, 2), {fl}))",
             f"r = torch.mean(T({a}, {it}))",
             f"r = torch.std(T({a}, {it}))",
             f"r = torch.softmax(T({a}, {it}), 0)",
             f"r = torch.log_softmax(T({a}, torch.bool), 0)",
             f"r = torch.logsumexp(T({a}, torch.bool), 0)",
             f"r = torch.sub(T({a}, torch.bool), T({a}, torch.bool))",
             f"r = torch.neg(T({a}, torch.bool))",
             f"r = -T({a}, torch.bool)",
             f"r = torch.index_select(T({a}), 0, T((1,), {fl}, 0, 1))",
             f"r = torch.gather(T({a}), 0, T({a}, {fl}, 0, 1))",
             f"r = T({a})[T((1,), {fl}, 0, 1)]",
             f"r = torch.scatter(T({a}), 0, T({a}, torch.int64, 0, 1), T({a}, {it}))",
             f"r = torch.scatter_add(T({a}, {it}), 0, T({a}, torch.int64, 0, 1), T({a}, {fl}))",
             f"r = torch.index_add(T({a}), 0, T((1,), torch.int64, 0, 1), T((1,) + {a}[1:], {it}))",
             f"r = torch.where(T({a}, {fl}), T({a}), T({a}))",
             f"r = torch.where(T({a}, {it}), T({a}), T({a}))",
             f"r = T({a}).masked_fill(T({a}, {fl}), 1.0)",
             f"r = torch.lerp(T({a}, torch.float32), T({a}, torch.float16), 0.5)",
             f"r = torch.lerp(T({a}, {it}), T({a}, {it}), 0.5)",
             f"r = torch.addcdiv(T({a}, {it}), T({a}, {it}), T({a}, {it}, 1, 3))",
             f"r = torch.nn.functional.cross_entropy(T((2, 3), {it}), T((2,), torch.int64, 0, 3))",
             f"r = torch.nn.functional.nll_loss(T((2, 3)), T((2,), {fl}, 0, 3))",
             f"r = torch.nn.functional.embedding(T((2,), torch.bool), T((3, 2)))",
             f"r = torch.nn.functional.gelu(T({a}, {it}))",
             f"r = torch.nn.functional.silu(T({a}, {it}))",
             f"r = torch.nn.functional.layer_norm(T((2, 3), {it}), (3,))",
             f"r = torch.round(T({a}, {it}), decimals=2)",
             f"r = torch.erfinv(T({a}, torch.bool))",
             f"r = T({a}, {it}).add_(T({a}, {fl}))",
             f"r = T({a}, torch.bool).add_(T({a}, {it}))",
             f"r = T({a}, {it}).div_(T({a}, {it}, 1, 3))",
             f"r = T({a}, {it}).mul_(1.5)",
             f"r = T({a}, {it}).clamp_(0.5, 1.5)",
             f"r = T({a}, {it}).exp_()",
             f"r = T({a}, {it}).sqrt_()",
             f"r = torch.arange(0, 4, dtype=torch.bool, device=DEV)",
             f"r = torch.cumsum(T({a}), 0, dtype=torch.bool)",
             f"r = torch.sum(T({a}), dtype=torch.int32)",
             f"r = torch.matmul(T((2, 2), torch.bool), T((2, 2), torch.bool))",
             f"r = torch.topk(T({a}, torch.bool), 1)",
             f"r = torch.fmod(T({a}, torch.bool), T({a}, torch.bool))",
             f"r = torch.remainder(T({a}, {it}), T({a}, {it}, 0, 1))",
             f"r = torch.floor_divide(T({a}, {it}), T({a}, {it}, 0, 1))",
             f"r = torch.div(T({a}, {it}), T({a}, {it}, 0, 1), rounding_mode='trunc')",
             f"r = torch.pow(T({a}, {it}), -2)",
             f"r = torch.pow(T({a}, {it}), T({a}, {it}, -3, -1))",
             f"r = torch.nn.functional.one_hot(T({a}, {fl}, 0, 2))",
             f"r = torch.nn.functional.one_hot(T({a}, torch.int64, 0, 2), -2)",
             f"r = torch.nn.functional.relu(T({a}, torch.bool))",
             f"r = torch.nn.functional.hardtanh(T({a}, torch.bool))",
             f"r = torch.clamp(T({a}, torch.bool), 0, 1)",
             f"r = torch.sign(T({a}, torch.bool))",
             f"r = torch.argmax(T({a}, torch.bool))",
             f"r = torch.cumprod(T({a}, torch.bool), 0)",
             f"r = torch.frac(T({a}, {it}))",
             f"r = torch.nan_to_num(T({a}, torch.bool))",
             f"r = T({a}, {fl}) << 1",
             f"r = T({a}, {fl}) % 0",
             f"r = T({a}, {it}) // 0",
             f"r = T({a}, {it}) % 0",
             f"r = torch.fmod(T({a}, {it}), 0)"]
    return Call("dtype", rng.choice(cases))


def f_mixed_devices(rng):
    a = shape(rng, rng.randint(1, 2), 2, 3)
    op = rng.choice(["add", "mul", "sub", "maximum", "eq", "atan2", "where"])
    dev_err = "RuntimeError"
    cases = [
        (f"r = torch.{op}(T({a}), T({a}, dev='cpu'))" if op != "where" else
         f"r = torch.where(T({a}, torch.bool, dev='cpu'), T({a}), T({a}))", dev_err),
        (f"r = torch.{op}(T({a}, dev='cpu'), T({a}))" if op != "where" else
         f"r = torch.where(T({a}, torch.bool), T({a}, dev='cpu'), T({a}))", dev_err),
        (f"r = torch.add(T({a}), T((), dev='cpu'))", "ok"),
        (f"r = T({a}) * torch.tensor(2.5)", "ok"),
        (f"r = T({a}, dev='cpu') + T(())", dev_err),
        (f"r = torch.mm(T((2, 2)), T((2, 2), dev='cpu'))", dev_err),
        (f"r = torch.matmul(T((2, 2), dev='cpu'), T((2,)))", dev_err),
        (f"r = torch.cat([T({a}), T({a}, dev='cpu')])", dev_err),
        (f"r = torch.stack([T({a}, dev='cpu'), T({a})])", dev_err),
        (f"o = torch.zeros({a})\nr = torch.add(T({a}), T({a}), out=o)", dev_err),
        (f"o = torch.zeros({a}, device=DEV)\nr = torch.add(T({a}, dev='cpu'), T({a}, dev='cpu'), out=o)",
         dev_err),
        (f"x = T({a})\nr = x.add_(T({a}, dev='cpu'))", dev_err),
        (f"x = T({a}, dev='cpu')\nr = x.add_(T({a}))", dev_err),
        (f"x = T({a})\nr = x.copy_(T({a}, dev='cpu'))", "ok"),
        (f"x = T({a}, dev='cpu')\nr = x.copy_(T({a}))", "ok"),
        (f"r = torch.index_select(T({a}), 0, T((1,), torch.int64, 0, 1, dev='cpu'))", dev_err),
        (f"r = torch.gather(T({a}), 0, T({a}, torch.int64, 0, 1, dev='cpu'))", dev_err),
        (f"r = T({a})[T((1,), torch.int64, 0, 1, dev='cpu')]", "ok"),
        (f"x = T({a})\nx[T((1,), torch.int64, 0, 1, dev='cpu')] = 5.0\nr = x", "ok"),
        (f"r = T({a}).masked_fill(T({a}, torch.bool, dev='cpu'), 1.0)", dev_err),
        (f"r = torch.nn.functional.linear(T((2, 3)), T((4, 3), dev='cpu'))", dev_err),
        (f"r = torch.nn.functional.embedding(T((2,), torch.int64, 0, 2, dev='cpu'), T((3, 2)))", dev_err),
        (f"r = torch.lerp(T({a}), T({a}, dev='cpu'), 0.5)", dev_err),
        (f"r = torch.addcmul(T({a}), T({a}, dev='cpu'), T({a}))", dev_err),
        (f"r = torch.empty(0, device=DEV).set_(T({a}, dev='cpu'))", dev_err),
        (f"r = torch.clamp(T({a}), T({a}, dev='cpu'))", dev_err),
    ]
    code, expect = rng.choice(cases)
    return Call("mixed_devices", code, expect=expect)


def f_out_mismatch(rng):
    a = shape(rng, rng.randint(1, 2), 2, 3)
    it = rng.choice(INTS)
    cases = [f"o = torch.zeros({a}, dtype={it}, device=DEV)\nr = torch.add(T({a}), T({a}), out=o)",
             f"o = torch.zeros({a}, dtype={it}, device=DEV)\nr = torch.exp(T({a}), out=o)",
             f"o = torch.zeros({a}, dtype=torch.bool, device=DEV)\nr = torch.mul(T({a}), 2, out=o)",
             f"o = torch.zeros({a}, dtype=torch.float32, device=DEV)\nr = torch.eq(T({a}), 1, out=o)",
             f"o = torch.zeros((), dtype={it}, device=DEV)\nr = torch.sum(T({a}), out=o)",
             f"o = torch.zeros({a[1:] or (1,)}, device=DEV)\nr = torch.sum(T({a}), 0, out=o)",
             f"v = torch.zeros(0, device=DEV)\ni = torch.zeros(0, dtype=torch.int32, device=DEV)\n"
             f"r = torch.max(T({a}), 0, out=(v, i))",
             f"v = torch.zeros(0, device=DEV)\ni = torch.zeros(0, dtype=torch.int64, device=DEV)\n"
             f"r = torch.sort(T({a}), 0, out=(v, v))",
             f"x = T({(a[0] + 1,) + a[1:]})\nr = torch.add(x[:-1], 1, out=x[1:])",
             f"x = T({a})\nr = torch.mul(x, 2, out=x.t())" if len(a) == 2 else
             f"x = T({a})\nr = torch.mul(x[1:], 2, out=x[:-1])",
             f"o = torch.zeros((1,) + {a[1:]}, device=DEV).expand({a})\nr = torch.add(T({a}), 1, out=o)",
             f"o = torch.zeros({a}, device=DEV)\nr = torch.mm(T(({a[0]}, 2)), T((2, {a[-1]})), out=o[:, :1])",
             f"o = torch.zeros((2, 5), device=DEV)\nr = torch.cat([T({a}), T({a})], out=o)",
             f"o = torch.zeros({a}, dtype=torch.float16, device=DEV)\n"
             f"r = torch.mm(T(({a[0]}, 2)), T((2, {a[-1]})), out=o)",
             f"o = torch.zeros({a}, dtype={it}, device=DEV)\n"
             f"r = torch.where(T({a}, torch.bool), T({a}), 1.5, out=o)",
             f"o = torch.zeros({a}, dtype=torch.float32, device=DEV)\nr = torch.argmax(T({a}), 0, out=o)",
             f"x = T({a})\nr = torch.exp(x, out=x)",
             f"x = T({a})\nr = torch.cumsum(x, 0, out=x)",
             f"o = torch.zeros(7, device=DEV)\nr = torch.add(T({a}), 1, out=o)"]
    return Call("out", rng.choice(cases))


def f_as_strided(rng):
    n = rng.randint(1, 12)
    cases = [f"r = T(({n},)).as_strided(({n + 1},), (1,))",
             f"r = T(({n},)).as_strided((2, {n}), ({n}, 1))",
             f"r = T(({n},)).as_strided((1,), (1,), {n})",
             f"r = T(({n},)).as_strided((2,), (1,), {n - 1})",
             f"r = T(({n},)).as_strided((2,), (-1,))",
             f"r = T(({n},)).as_strided((2,), (1,), -1)",
             f"r = T(({n},)).as_strided((-1,), (1,))",
             f"r = T(({n},)).as_strided((2, 2), (1,))",
             f"r = T(({n},))[1:].as_strided(({n},), (1,))",
             f"r = T(({n},)).as_strided(({n},), (1,), 1 << 40)",
             f"r = T(({n},)).as_strided((1 << 40,), (1 << 30,))",
             f"r = torch.empty(0, device=DEV).as_strided((2,), (1,))",
             f"x = T(({n},))\nr = torch.empty(0, device=DEV).set_(x.untyped_storage(), {n}, (2,), (1,))",
             f"x = T(({n},))\nr = torch.empty(0, device=DEV).set_(x.untyped_storage(), 0, ({n + 1},), (1,))",
             f"r = torch.as_strided(T(({n},)), ({n},), (1,), {n})",
             f"r = torch.as_strided_scatter(T(({n},)), T((2,)), (2,), (1,), {n})",
             f"r = T(({n},)).as_strided(({n},), (1,)).as_strided(({n} * 2,), (1,))"]
    return Call("as_strided", rng.choice(cases))


def f_huge(rng):
    e = rng.randint(43, 62)
    big = 1 << e
    cases = [f"r = torch.empty({big}, device=DEV)",
             f"r = torch.zeros({big}, dtype=torch.uint8, device=DEV)",
             f"r = torch.ones(1 << {e // 2}, 1 << {e - e // 2}, device=DEV)",
             f"r = torch.full(({big},), 1.5, device=DEV)",
             f"r = torch.empty_strided(({big},), (2,), device=DEV)",
             f"r = torch.randn({big}, device=DEV)",
             f"r = torch.arange({big}, device=DEV)",
             f"r = T((2,)).new_empty(({big},))",
             f"r = T((2,)).new_zeros(({big},))",
             f"x = T((4,))\nr = x.resize_({big})",
             f"r = T((1,)).expand({big}).contiguous()",
             f"r = T((1,)).expand({big}).clone()",
             f"r = T((1, 1)).repeat(1 << {e // 2}, 1 << {e - e // 2})",
             f"r = T((2, 1)).expand(2, {big}) + 1",
             f"r = torch.zeros_like(T((1,)).expand({big}))",
             f"r = torch.nn.functional.pad(T((2,)), (0, {big}))",
             f"r = torch.cat([T((1,)).expand({big}), T((1,))])"]
    return Call("huge", rng.choice(cases))


def f_inplace_expanded(rng):
    a = shape(rng, rng.randint(1, 2), 2, 3)
    src = f"T(({1},) + {a[1:]}).expand({a})" if len(a) > 1 else f"T((1,)).expand({a})"
    ops = ["add_(1)", "mul_(T({a}))", "sub_(T({a}))", "copy_(T({a}))", "fill_(2.0)", "zero_()",
           "exp_()", "neg_()", "clamp_(0, 1)", "masked_fill_(T({a}, torch.bool), 1.0)",
           "index_put_((T((1,), torch.int64, 0, 1),), T(()))", "scatter_(0, T({a}, torch.int64, 0, 1), 1.0)",
           "index_add_(0, T((1,), torch.int64, 0, 1), T((1,) + {a}[1:]))", "addcmul_(T({a}), T({a}))",
           "lerp_(T({a}), 0.5)", "div_(2)", "relu_()", "sigmoid_()", "uniform_()", "normal_()",
           "random_(0, 5)", "bernoulli_(0.5)"]
    op = rng.choice(ops).replace("{a}", repr(a))
    if rng.random() < 0.2:
        return Call("inplace_overlap", f"x = T(({a[0] + 1},))\nr = x[1:].add_(x[:-1])")
    return Call("inplace_expanded", f"x = {src}\nr = x.{op}")


INDEX_FAMILIES = ["index_select", "gather", "scatter", "scatter_add", "index_add", "index_copy",
                  "index_fill", "embedding", "take", "put_", "getitem", "setitem", "index_put_",
                  "nll_loss", "one_hot", "take_along_dim", "scatter_reduce", "embedding_bag",
                  "cross_entropy"]


def f_bad_index(rng):
    n = rng.randint(1, 4)
    m = rng.randint(1, 3)
    fam = rng.choice(INDEX_FAMILIES)
    bad = rng.choice([n, n + rng.randint(1, 5), -n - 1, -n - rng.randint(2, 5), 1 << 33])
    it = rng.choice(["torch.int64", "torch.int64", "torch.int32"])
    idx = f"torch.tensor([0, {bad}], dtype={it}, device=DEV)"
    idx64 = f"torch.tensor([0, {bad}], device=DEV)"
    code = {
        "index_select": f"r = torch.index_select(T(({n}, {m})), 0, {idx})",
        "gather": f"r = torch.gather(T(({n}, {m})), 0, {idx64}.reshape(2, 1))",
        "scatter": f"r = torch.scatter(T(({n}, {m})), 0, {idx64}.reshape(2, 1), 9.0)",
        "scatter_add": f"r = torch.scatter_add(T(({n}, {m})), 0, {idx64}.reshape(2, 1), T((2, 1)))",
        "scatter_reduce": f"r = torch.scatter_reduce(T(({n},)), 0, {idx64}, T((2,)), 'amax')",
        "index_add": f"r = torch.index_add(T(({n}, {m})), 0, {idx}, T((2, {m})))",
        "index_copy": f"r = torch.index_copy(T(({n}, {m})), 0, {idx64}, T((2, {m})))",
        "index_fill": f"r = torch.index_fill(T(({n}, {m})), 0, {idx64}, 1.0)",
        "embedding": f"r = torch.nn.functional.embedding({idx64}, T(({n}, {m})))",
        "embedding_bag": f"r = torch.nn.functional.embedding_bag({idx64}, T(({n}, {m})), "
                         f"torch.tensor([0], device=DEV))",
        "take": f"r = torch.take(T(({n}, {m})), {idx64})",
        "put_": f"r = T(({n}, {m})).put_({idx64}, T((2,)))",
        "getitem": f"r = T(({n}, {m}))[{idx}]",
        "setitem": f"x = T(({n}, {m}))\nx[{idx}] = 5.0\nr = x",
        "index_put_": f"r = T(({n}, {m})).index_put_(({idx64},), T(()), accumulate={rng.random() < 0.5})",
        "nll_loss": f"r = torch.nn.functional.nll_loss(T((2, {n})), {idx64})",
        "cross_entropy": f"r = torch.nn.functional.cross_entropy(T((2, {n})), {idx64})",
        "one_hot": f"r = torch.nn.functional.one_hot({idx64}.abs(), {n})",
        "take_along_dim": f"r = torch.take_along_dim(T(({n}, {m})), {idx64}.reshape(2, 1), 0)",
    }[fam]
    mode = rng.choice(["strict", "debug"])
    return Call(f"index.{fam}.oob_{mode}", code, mode=mode)


def f_invalid_args(rng):
    k = rng.randint(1, 5)
    cases = [f"r = torch.empty(-{k}, device=DEV)", f"r = torch.zeros(2, -{k}, device=DEV)",
             f"r = torch.full((-{k},), 1.0, device=DEV)", f"r = torch.randn(-{k}, device=DEV)",
             f"r = torch.ones((2, -{k}), dtype=torch.int64, device=DEV)",
             f"r = torch.arange(0, 10, -{k}, device=DEV)", f"r = torch.arange(0, 10, 0, device=DEV)",
             f"r = torch.arange(0, float('nan'), device=DEV)",
             f"r = torch.arange(0, float('inf'), device=DEV)",
             f"r = torch.linspace(0, 1, -{k}, device=DEV)", f"r = torch.eye(-{k}, device=DEV)",
             f"r = torch.randint({k}, 0, (3,), device=DEV)", f"r = torch.randperm(-{k}, device=DEV)",
             f"r = T((4,)).view(-{k + 1})", f"r = T((4,)).repeat(-{k})", f"r = T((4,)).expand(-{k + 1})",
             f"r = T((4,)).narrow(0, 0, -{k})", f"r = T((4,)).split(-{k})", f"r = T((4,)).unfold(0, 2, -{k})",
             f"r = T((4,)).new_empty((-{k},))", f"r = T((4,)).resize_(-{k})",
             f"r = torch.div(T((3,)), T((3,)), rounding_mode='bad')",
             f"r = torch.nn.functional.gelu(T((3,)), approximate='bad')",
             f"r = torch.nn.functional.pad(T((1, 1, 4)), (1, 1), mode='bogus')",
             f"r = torch.scatter_reduce(T((3,)), 0, T((3,), torch.int64, 0, 3), T((3,)), 'bogus')",
             f"r = torch.norm(T((3,)), p='bogus')",
             f"r = torch.nn.functional.interpolate(T((1, 1, 4)), scale_factor=2, mode='bogus')",
             f"r = torch.nn.functional.cross_entropy(T((2, 3)), T((2,), torch.int64, 0, 3), reduction='bad')",
             f"r = torch.nn.functional.mse_loss(T((3,)), T((3,)), reduction='bad')",
             f"r = torch.nn.functional.dropout(T((3,)), p={1 + k / 10})",
             f"r = torch.nn.functional.dropout(T((3,)), p=-0.5)",
             f"r = T((3,)).uniform_(1, 0)", f"r = T((3,)).normal_(0, -{k})",
             f"r = torch.bernoulli(T((3,)), p={k + 1})",
             f"r = torch.multinomial(T((3,)), 2)",
             f"r = torch.multinomial(T((3,), lo=0, hi=2), 5)",
             f"r = T((3,), torch.int8).fill_({100 * k + 200})",
             f"r = torch.full((3,), {100 * k + 200}, dtype=torch.uint8, device=DEV)",
             f"r = T((3,), torch.uint8).fill_(-{k})",
             f"r = T((3,), torch.float16).fill_(1e{5 + k})",
             f"r = T((3,), torch.bool).fill_({k + 1})",
             f"r = T((3,), torch.int32).masked_fill(T((3,), torch.bool), 1e{10 + k})",
             f"r = torch.clamp(T((3,)))",
             f"r = torch.topk(T((3,)), {k + 3})",
             f"r = torch.nn.functional.softmax(T((3,)), 0, dtype=torch.int64)",
             f"r = torch.nn.functional.one_hot(T((3,), torch.int64, 0, 3), 0)",
             f"r = torch.nn.functional.leaky_relu(T((3,)), 'x')",
             f"r = torch.nn.functional.max_pool2d(T((1, 1, 4, 4)), 2, stride=-{k})",
             f"r = torch.nn.functional.conv2d(T((1, 1, 4, 4)), T((1, 1, 2, 2)), padding='bad')",
             f"r = torch.nn.functional.conv2d(T((1, 1, 4, 4)), T((1, 1, 2, 2)), dilation=0)",
             f"r = torch.nn.functional.embedding(T((2,), torch.int64, 0, 2), T((3, 2)), padding_idx=5)",
             f"r = torch.empty(2, device='tpu:{k + 3}')",
             f"r = torch.tensor([1, 2], device=DEV).item()",
             f"r = bool(torch.tensor([1, 2], device=DEV))",
             "r = torch.empty(3, device=DEV).numpy()",
             f"r = torch.ones(2, device=DEV).view(torch.float64)",
             f"r = torch.ones(3, device=DEV).view(torch.int16)[::2].view(torch.float32)",
             f"r = torch.quantile(T((3,)), 1.5)",
             f"r = torch.quantile(T((3,)), 0.5, interpolation='bad')",
             f"r = torch.repeat_interleave(T((3,)), T((2,), torch.int64, 1, 2))",
             f"r = torch.repeat_interleave(T((3,)), T((3,), torch.int64, -2, -1))",
             f"r = torch.tril(T((3, 3)), 1 << 62)",
             f"r = torch.roll(T((3,)), 1 << 62)",
             f"r = T((3,)).pow_(T((3,), torch.int64, -2, 0))",
             f"r = torch.lerp(T((3,)), T((3,)), T((3,), torch.int64))"]
    code = rng.choice(cases)
    expect = None
    if "tpu:" in code:
        expect = "RuntimeError"  # like CUDA's invalid device ordinal
    elif "numpy()" in code:
        expect = "TypeError"  # like CUDA: copy to the host first
    return Call("invalid_args", code, expect=expect)


FAMILIES = [(f_binary_shape, 2), (f_inplace_broadcast_out, 1), (f_matmul_shape, 1.2),
            (f_join_shape, 1), (f_view_shape, 1.5), (f_index_put_shape, 1), (f_nn_shape, 1.2),
            (f_bad_dim, 1.5), (f_bad_dim_other, 1.5), (f_bad_dtype, 3), (f_mixed_devices, 1.5),
            (f_out_mismatch, 1.5), (f_as_strided, 1), (f_huge, 1), (f_inplace_expanded, 1.5),
            (f_bad_index, 3), (f_invalid_args, 3)]


def generate_call(seed, index):
    rng = random.Random(f"bad:{seed}:{index}")
    fn = rng.choices([f for f, _ in FAMILIES], [w for _, w in FAMILIES])[0]
    return fn(rng)


# ---------------------------------------------------------------------------
# running one call
# ---------------------------------------------------------------------------
def _exec(call, device):
    """(env, exception or None, raised_late): raised_late when the call
    returned but the following synchronize raised."""
    import torch
    import torch_tpu

    from .program import new_env

    env = new_env(device)
    try:
        with torch_tpu.eager_mode(call.mode):
            exec(compile(PRELUDE + "\n" + call.code, "<bad_input>", "exec"), env)
    except Exception as e:  # noqa: BLE001
        if device != "cpu":
            try:
                torch.tpu.synchronize()
            except Exception:  # noqa: BLE001 - the call's own error is the result
                pass
        return env, e, False
    if device != "cpu":
        try:
            torch.tpu.synchronize()
        except Exception as e:  # noqa: BLE001
            return env, e, True
    return env, None, False


def device_still_works():
    import torch

    try:
        x = torch.arange(6.0, device="tpu").reshape(2, 3)
        x[1].fill_(7.0)
        got = x.t().contiguous().cpu().tolist()
        return got == [[0.0, 7.0], [1.0, 7.0], [2.0, 7.0]] and \
            torch.ones(3, dtype=torch.int64, device="tpu").sum().item() == 3
    except Exception:  # noqa: BLE001
        return False


def run_call(call):
    """A result dict: status pass | fail | missing, kind, detail."""
    from .compare import compare_envs, compare_outcome, missing_op_name
    from .program import Step

    cpu_env, ce, _ = _exec(call, "cpu")
    env, te, late = _exec(call, "tpu")
    rec = {"family": call.family, "mode": call.mode,
           "cpu_exc": type(ce).__name__ if ce else "", "tpu_exc": type(te).__name__ if te else "",
           "late": late}
    if call.expect == "ok":
        m = compare_outcome(None, te)
    elif call.expect is not None:  # the CPU alone cannot say
        m = compare_outcome(getattr(builtins, call.expect)("expected by PyTorch's rules"), te)
    else:
        m = compare_outcome(ce, te)
    if m is None and ce is None and te is None and call.expect in (None, "ok") \
            and not UNDEFINED_VALUES.search(call.code):
        step = Step("call", "", "", tol="default", zsign=False, layout=[])
        cpu_env.pop("T", None)
        env.pop("T", None)
        ms = compare_envs(cpu_env, env, step, check_device=call.family != "mixed_devices")
        m = ms[0] if ms else None
    ok = device_still_works()
    if not ok:
        rec.update(status="fail", kind="unusable", detail="the device gave a wrong answer or raised "
                   "after this call")
    elif m is None:
        rec.update(status="pass", kind="", detail="")
    else:
        rec.update(status="missing" if m.kind == "missing_op" else "fail", kind=m.kind,
                   detail=str(m) + (" (raised at synchronize)" if late else ""))
    if te is not None:
        rec["tpu_msg"] = str(te).strip().splitlines()[0][:300] if str(te).strip() else ""
    if ce is not None:
        rec["cpu_msg"] = str(ce).strip().splitlines()[0][:300] if str(ce).strip() else ""
    rec["op"] = call.family
    rec["case"] = call.case
    return rec


def worker(args):
    warnings.simplefilter("ignore")
    import torch_tpu

    torch_tpu._C._set_cpu_fallback(False)
    for i in range(args.start, args.end):
        children.emit({"event": "begin", "i": i})
        call = generate_call(args.seed, i)
        children.emit({"event": "step", "i": i, "step": 0})
        t0 = time.time()
        try:
            rec = run_call(call)
        except Exception:  # noqa: BLE001 - a bug of the fuzzer, reported as such
            rec = {"status": "fail", "kind": "harness_error", "family": call.family,
                   "op": call.family, "mode": call.mode, "detail": traceback.format_exc()[-1500:]}
        rec.update(event="result", i=i, seconds=round(time.time() - t0, 3), code=call.code)
        if rec["status"] == "fail":
            rec["known"] = classify(rec)
            rec["repro"] = call.source()
        children.emit(rec)


def summarize(results, failures, n, seed):
    status = collections.Counter(r["status"] for r in results.values())
    classes = collections.OrderedDict()
    for i in sorted(results):
        r = results[i]
        if r["status"] == "pass":
            continue
        if r["status"] == "missing":
            key = ("missing", r["detail"])
        else:
            r["known"] = classify(r)  # by this process's known.py, the same for every batch
            key = (r.get("known") or "UNKNOWN", r["kind"], r["family"], r.get("case", ""))
        c = classes.setdefault(key, {"count": 0, "first": i, "repro": r.get("repro"),
                                     "detail": f"{r['detail']} cpu: {r.get('cpu_msg', '')!s:.150} | "
                                               f"tpu: {r.get('tpu_msg', '')!s:.150}"})
        c["count"] += 1
    crashes = []
    for f in failures:
        call = generate_call(seed, f["i"])
        rec = {"kind": "hang" if f["kind"] == "hang" else "crash", "op": call.family,
               "case": call.case, "mode": call.mode}
        crashes.append({**f, "family": call.family, "case": call.case, "known": classify(rec),
                        "repro": call.source()})
    return {"calls": n, "completed": len(results), "status": dict(status),
            "crashes": [c for c in crashes if c["kind"] != "hang"],
            "hangs": [c for c in crashes if c["kind"] == "hang"],
            "families": dict(collections.Counter(r["family"].split(".")[0] for r in results.values())),
            "classes": [{"key": list(k), **v} for k, v in classes.items()]}


def unknown_classes(summary):
    return [c for c in summary["classes"] if c["key"][0] == "UNKNOWN"]


def format_summary(s, show_repro="unknown"):
    lines = [f"bad-input fuzzer: {s['completed']}/{s['calls']} calls ran: {s['status']}; "
             f"{len(s['crashes'])} crashes, {len(s['hangs'])} hangs; families {s['families']}"]
    for c in s["classes"]:
        lines.append(f"  {c['count']:5d}  {' | '.join(str(x) for x in c['key'])}   (first: call "
                     f"{c['first']}: {c['detail'][:300]})")
    for f in s["crashes"] + s["hangs"]:
        lines.append(f"  {f['kind']} at call {f['i']} ({f['family']}: {f['case']}) rc={f['returncode']} "
                     f"alone={f.get('alone')} needs_from={f.get('needs_from')} known={f['known']}")
        if not f["known"] or show_repro == "all":
            lines.append(f"{f['repro']}\n{f['stderr'][-1500:]}")
    for c in s["classes"]:
        if c["repro"] and (show_repro == "all" or c["key"][0] == "UNKNOWN"):
            lines.append(f"\n# ---- {' | '.join(str(x) for x in c['key'])}\n{c['repro']}")
    return "\n".join(lines)


def run(n, seed=0, start=0, timeout=120.0, batch=500, log=None):
    argv = [WORKER_SCRIPT, "--worker", "--seed", str(seed)]
    env = dict(os.environ)
    env.pop("TORCH_TPU_CPU_FALLBACK", None)
    env.pop("TORCH_TPU_EAGER_MODE", None)
    results, failures = children.run_items(argv, start, start + n, timeout=timeout, batch=batch,
                                           env=env, log=log)
    return summarize(results, failures, n, seed)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000, help="number of calls")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--end", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds without progress = hang")
    p.add_argument("--batch", type=int, default=500, help="calls per worker process")
    p.add_argument("--json", help="write the full summary here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    t0 = time.time()
    s = run(args.n, args.seed, args.start, args.timeout, args.batch,
            log=lambda m: print(m, file=sys.stderr, flush=True))
    s["seconds"] = round(time.time() - t0, 1)
    print(format_summary(s, show_repro="all"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1, default=str)
    bad = unknown_classes(s) or [f for f in s["crashes"] + s["hangs"] if not f.get("known")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

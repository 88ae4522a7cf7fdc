"""The differential fuzzer's op table (~110 ops).

Each entry draws one program step: it picks operands from the variables the
program has (or makes new inputs), picks a form (function, method, in-place,
out=, Python operator, scalar on the left) and returns a Step whose source is
what runs. Whether a combination is valid is left to the CPU: the generator
runs every candidate on the CPU and redraws most of those that raise.

Step flags: tol says how far float results may differ (default: torch.testing
defaults; ulp: transcendental functions, a few ulps; reduce: sums and
products whose accumulation order is free), zsign that the sign of a zero
result is determined, layout the outputs whose strides TensorIterator
decides, tie the indices whose order among equal values is unspecified.
"""

from dataclasses import dataclass

import torch

from . import values as V
from .program import Step

F = "torch.nn.functional"


@dataclass
class Op:
    name: str
    gen: object  # fn(g) -> Step | None
    weight: float = 1.0


def choose_op(rng, table):
    return rng.choices(table, [o.weight for o in table])[0]


def _is_float(t):
    return t.dtype.is_floating_point


def _nonempty(t):
    return t.numel() > 0


def _overlapping(t):
    """Several elements share memory (an expanded view): writes other than
    fills are undefined there (CPU writes in some order)."""
    return any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))


def _writable(t):
    return not _overlapping(t)


def _int_cast_ok(t, dtype):
    """Casting t to dtype is defined: no float -> integer cast of a NaN, an
    infinity or a value out of the integer range (undefined behaviour in C++,
    so the CPU's result is arbitrary)."""
    if not t.dtype.is_floating_point or dtype.is_floating_point or dtype == torch.bool:
        return True
    if not t.numel():
        return True
    ii = torch.iinfo(dtype)
    f = t.double()
    return bool(f.isfinite().all()) and ii.min - 1 < f.min().item() and f.max().item() < ii.max + 1


def _kw(**kw):
    return "".join(f", {k}={v}" for k, v in kw.items() if v is not None)


# ---------------------------------------------------------------------------
# elementwise families
# ---------------------------------------------------------------------------
def unary(name, fn=None, tol="default", zsign=False, pred=None, args=None, inplace=True,
          method=True, out=True, weight=1.0):
    """torch.<fn>(x, *args); `args(g)` gives extra argument source."""
    fn = fn or f"torch.{name}"

    def gen(g):
        x = g.pick(pred)
        if x is None:
            return None
        extra = args(g) if args else ""
        v = g.fresh()
        forms = ["func"] + (["method"] if method else []) + (["inplace"] if inplace else []) \
            + (["out"] if out else [])
        form = g.rng.choice(forms)
        meth = fn.split(".")[-1]
        if form == "func":
            return Step(name, form, f"{v} = {fn}({x}{extra})", [x], layout=[v], tol=tol, zsign=zsign)
        if form == "method":
            return Step(name, form, f"{v} = {x}.{meth}({extra.lstrip(', ')})", [x], layout=[v],
                        tol=tol, zsign=zsign)
        if form == "inplace":
            return Step(name, form, f"{x}.{meth}_({extra.lstrip(', ')})", [x], tol=tol, zsign=zsign)
        ref = g.eval_cpu(f"{fn}({x}{extra})")
        oc, o = g.out_tensor(ref)
        return Step(name, form, f"{oc}\n{fn}({x}{extra}, out={o})", [x], tol=tol, zsign=zsign)

    return Op(name, gen, weight)


def nn_unary(name, args=None, tol="default", zsign=False, inplace_kw=True, weight=0.7):
    fn = f"{F}.{name}"

    def gen(g):
        x = g.pick()
        if x is None:
            return None
        extra = args(g) if args else ""
        v = g.fresh()
        if inplace_kw and g.rng.random() < 0.25:
            return Step(name, "inplace", f"{fn}({x}{extra}, inplace=True)", [x], tol=tol, zsign=zsign)
        return Step(name, "func", f"{v} = {fn}({x}{extra})", [x], layout=[v], tol=tol, zsign=zsign)

    return Op(name, gen, weight)


OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floor_divide": "//",
             "remainder": "%", "pow": "**", "bitwise_and": "&", "bitwise_or": "|",
             "bitwise_xor": "^", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
             "ge": ">="}


def binary(name, tol="default", zsign=False, kwargs=None, inplace=True, prefer=None, weight=1.0,
           scalar_first=True):
    """torch.<name>(a, b) with b a tensor (broadcast) or a Python scalar."""

    def gen(g):
        a = g.pick(prefer) if prefer and g.rng.random() < 0.8 else g.pick()
        if a is None:
            return None
        b = g.broadcast_partner(a)
        kw = kwargs(g) if kwargs else ""
        v = g.fresh()
        forms = ["func", "method", "out"] + (["inplace"] if inplace else [])
        if name in OPERATORS:
            forms += ["operator", "operator"]
            if scalar_first:
                forms.append("rscalar")
        form = g.rng.choice(forms)
        reads = [n for n in (a, b) if n.isidentifier()]
        if form == "func":
            return Step(name, form, f"{v} = torch.{name}({a}, {b}{kw})", reads, layout=[v], tol=tol,
                        zsign=zsign)
        if form == "method":
            return Step(name, form, f"{v} = {a}.{name}({b}{kw})", reads, layout=[v], tol=tol,
                        zsign=zsign)
        if form == "inplace":
            return Step(name, form, f"{a}.{name}_({b}{kw})", reads, tol=tol, zsign=zsign)
        if form == "operator":
            return Step(name, form, f"{v} = {a} {OPERATORS[name]} {b}", reads, layout=[v], tol=tol,
                        zsign=zsign)
        if form == "rscalar":
            s = g.scalar()
            return Step(name, form, f"{v} = {s} {OPERATORS[name]} {a}", [a], layout=[v], tol=tol,
                        zsign=zsign)
        ref = g.eval_cpu(f"torch.{name}({a}, {b}{kw})")
        oc, o = g.out_tensor(ref)
        return Step(name, form, f"{oc}\ntorch.{name}({a}, {b}{kw}, out={o})", reads, tol=tol,
                    zsign=zsign)

    return Op(name, gen, weight)


def _alpha(g):
    return _kw(alpha=g.scalar()) if g.rng.random() < 0.3 else ""


def _rounding(g):
    return f", rounding_mode={g.rng.choice(['None', repr('floor'), repr('trunc')])}"


def _ints(t):
    return not t.dtype.is_floating_point


def ternary_where(g):
    cond = g.pick(lambda t: t.dtype == torch.bool)
    a = g.pick()
    if a is None:
        return None
    if cond is None or g.rng.random() < 0.5:
        cond = g.mask_tensor(V.broadcast_variant(g.rng, g.t(a).shape))
    b = g.broadcast_partner(a)
    if g.rng.random() < 0.2:
        a = g.scalar()
    v = g.fresh()
    reads = [n for n in (cond, a, b) if n.isidentifier()]
    if g.rng.random() < 0.2 and a.isidentifier():
        return Step("where", "method", f"{v} = {a}.where({cond}, {b})", reads, layout=[v], zsign=True)
    return Step("where", "func", f"{v} = torch.where({cond}, {a}, {b})", reads, layout=[v], zsign=True)


def clamp(g):
    x = g.pick()
    if x is None:
        return None
    r = g.rng.random()
    if r < 0.6:
        lo, hi = g.scalar(), g.scalar()
        if g.rng.random() < 0.3:
            lo = "None"
        elif g.rng.random() < 0.3:
            hi = "None"
    else:
        lo, hi = g.broadcast_partner(x, allow_scalar=False), g.broadcast_partner(x, allow_scalar=False)
    reads = [n for n in (x, lo, hi) if n.isidentifier() and n != "None"]
    v = g.fresh()
    if g.rng.random() < 0.25:
        return Step("clamp", "inplace", f"{x}.clamp_({lo}, {hi})", reads)
    return Step("clamp", "func", f"{v} = torch.clamp({x}, {lo}, {hi})", reads, layout=[v])


def addcmul_like(name):
    def gen(g):
        a = g.pick()
        if a is None:
            return None
        b, c = g.broadcast_partner(a, allow_scalar=False), g.broadcast_partner(a, allow_scalar=False)
        value = f", value={g.scalar()}" if g.rng.random() < 0.5 else ""
        v = g.fresh()
        if g.rng.random() < 0.3:
            return Step(name, "inplace", f"{a}.{name}_({b}, {c}{value})", [a, b, c], tol="reduce")
        return Step(name, "func", f"{v} = torch.{name}({a}, {b}, {c}{value})", [a, b, c], layout=[v],
                    tol="reduce")

    return Op(name, gen, 0.6)


def lerp(g):
    a = g.pick(_is_float)
    if a is None:
        return None
    b = g.broadcast_partner(a, allow_scalar=False, dtype=g.t(a).dtype)
    w = g.scalar("float") if g.rng.random() < 0.6 else g.broadcast_partner(
        a, allow_scalar=False, dtype=g.t(a).dtype)
    v = g.fresh()
    reads = [n for n in (a, b, w) if n.isidentifier()]
    return Step("lerp", "func", f"{v} = torch.lerp({a}, {b}, {w})", reads, layout=[v], tol="reduce")


def masked_fill(g):
    x = g.pick()
    if x is None:
        return None
    m = g.mask_tensor(V.broadcast_variant(g.rng, g.t(x).shape))
    s = g.scalar() if g.rng.random() < 0.8 else g.new_tensor((), g.t(x).dtype)
    v = g.fresh()
    reads = [n for n in (x, m, s) if n.isidentifier()]
    if g.rng.random() < 0.4:
        return Step("masked_fill", "inplace", f"{x}.masked_fill_({m}, {s})", reads, zsign=True)
    return Step("masked_fill", "func", f"{v} = torch.masked_fill({x}, {m}, {s})", reads, layout=[v],
                zsign=True)


def nan_to_num(g):
    x = g.pick()
    if x is None:
        return None
    kw = ""
    for k in ("nan", "posinf", "neginf"):
        if g.rng.random() < 0.4:
            kw += f", {k}={g.scalar('float')}"
    v = g.fresh()
    if g.rng.random() < 0.25:
        return Step("nan_to_num", "inplace", f"{x}.nan_to_num_({kw.lstrip(', ')})", [x], zsign=True)
    return Step("nan_to_num", "func", f"{v} = torch.nan_to_num({x}{kw})", [x], layout=[v], zsign=True)


def cast(g):
    """x.to(dtype): float -> integer only for finite in-range values (else UB)."""
    x = g.pick()
    if x is None:
        return None
    dtype = V.random_dtype(g.rng)
    if not _int_cast_ok(g.t(x), dtype):
        return None
    v = g.fresh()
    form = g.rng.choice(["to", "type", "method"])
    dn = V.dtype_name(dtype)
    if form == "to":
        code = f"{v} = {x}.to({dn})"
    elif form == "type":
        code = f"{v} = {x}.type({dn})"
    else:
        short = {torch.float32: "float", torch.bfloat16: "bfloat16", torch.float16: "half",
                 torch.int64: "long", torch.int32: "int", torch.uint8: "byte",
                 torch.bool: "bool"}[dtype]
        code = f"{v} = {x}.{short}()"
    return Step("to", form, code, [x], layout=[v], zsign=True)


def copy_(g):
    dst = g.pick(lambda t: t.numel() > 0)
    if dst is None:
        return None
    src = g.broadcast_partner(dst, allow_scalar=False)
    if not _int_cast_ok(g.t(src), g.t(dst).dtype):
        return None
    return Step("copy_", "inplace", f"{dst}.copy_({src})", [dst, src], zsign=True)


def fill_(g):
    x = g.pick()
    if x is None:
        return None
    s = g.scalar()
    if g.rng.random() < 0.5:
        return Step("fill_", "inplace", f"{x}.fill_({s})", [x], zsign=True)
    return Step("zero_", "inplace", f"{x}.zero_()", [x], zsign=True)


# ---------------------------------------------------------------------------
# reductions and scans
# ---------------------------------------------------------------------------
def _dims_arg(g, t, multi=True):
    """Source for a dim argument: None (all), an int or a tuple of ints."""
    if t.dim() == 0:
        return g.rng.choice(["None", "0", "-1"])
    r = g.rng.random()
    if r < 0.2:
        return "None"
    if multi and r < 0.4 and t.dim() >= 2:
        k = g.rng.randint(1, t.dim())
        return repr(tuple(sorted(g.rng.sample(range(t.dim()), k))))
    return str(g.dim(t))


def reduction(name, tol="reduce", dim_multi=True, dtype_kw=False, extra=None, pred=None,
              dim_required=False, weight=1.0):
    def gen(g):
        x = g.pick(pred)
        if x is None:
            return None
        t = g.t(x)
        v = g.fresh()
        dims = _dims_arg(g, t, dim_multi)
        if dim_required and dims == "None":
            dims = str(g.dim(t))
        keep = g.rng.random() < 0.3
        kw = extra(g) if extra else ""
        if dtype_kw and g.rng.random() < 0.2:
            dt = g.rng.choice([torch.float32, torch.int64, torch.bfloat16])
            if not _int_cast_ok(t, dt):
                return None
            kw += f", dtype={V.dtype_name(dt)}"
        if dims == "None" and not dim_required and g.rng.random() < 0.5:
            call = f"torch.{name}({x}{kw})"
        else:
            call = f"torch.{name}({x}, {dims}{', keepdim=True' if keep else ''}{kw})"
        if g.rng.random() < 0.15:
            ref = g.eval_cpu(call)
            oc, o = g.out_tensor(ref)
            return Step(name, "out", f"{oc}\n{call[:-1]}, out={o})", [x], tol=tol)
        return Step(name, "func", f"{v} = {call}", [x], tol=tol)

    return Op(name, gen, weight)


def vector_norm(g):
    x = g.pick(_is_float)
    if x is None:
        return None
    t = g.t(x)
    v = g.fresh()
    ord_ = g.rng.choice(["2", "1", "inf", "-inf", "0", "3"])
    dims = _dims_arg(g, t)
    return Step("vector_norm", "func", f"{v} = torch.linalg.vector_norm({x}, {ord_}, {dims})", [x],
                tol="reduce")


def _correction(g):
    return g.rng.choice(["", ", correction=0", ", correction=1", ", unbiased=False"])


def max_min_dim(name):
    def gen(g):
        x = g.pick()
        if x is None:
            return None
        t = g.t(x)
        v, i = g.fresh(), g.fresh()
        if g.rng.random() < 0.3:
            return Step(name, "all", f"{v} = torch.{name}({x})", [x])
        d = g.dim(t)
        keep = ", keepdim=True" if g.rng.random() < 0.3 else ""
        # documented: the index of the first maximal (minimal) value
        return Step(name, "dim", f"{v}, {i} = torch.{name}({x}, {d}{keep})", [x])

    return Op(name + ".dim", gen, 1.0)


def arg_reduction(name):
    def gen(g):
        x = g.pick()
        if x is None:
            return None
        t = g.t(x)
        v = g.fresh()
        if g.rng.random() < 0.3:
            return Step(name, "all", f"{v} = torch.{name}({x})", [x])
        keep = ", keepdim=True" if g.rng.random() < 0.3 else ""
        return Step(name, "dim", f"{v} = torch.{name}({x}, {g.dim(t)}{keep})", [x])

    return Op(name, gen, 0.8)


def scan(name, tol="reduce", dtype_kw=True):
    def gen(g):
        x = g.pick()
        if x is None:
            return None
        t = g.t(x)
        v = g.fresh()
        kw = ""
        if dtype_kw and g.rng.random() < 0.2:
            dt = g.rng.choice([torch.float32, torch.int64])
            if not _int_cast_ok(t, dt):
                return None
            kw = f", dtype={V.dtype_name(dt)}"
        if g.rng.random() < 0.2 and name in ("cumsum", "cumprod"):
            return Step(name, "inplace", f"{x}.{name}_({g.dim(t)}{kw})", [x], tol=tol)
        return Step(name, "func", f"{v} = torch.{name}({x}, {g.dim(t)}{kw})", [x], tol=tol)

    return Op(name, gen, 0.8)


def softmax(name):
    def gen(g):
        x = g.pick()
        if x is None:
            return None
        t = g.t(x)
        v = g.fresh()
        kw = f", dtype={V.dtype_name(torch.float32)}" if g.rng.random() < 0.2 else ""
        return Step(name, "func", f"{v} = torch.{name}({x}, {g.dim(t)}{kw})", [x], tol="reduce")

    return Op(name, gen, 0.8)


# ---------------------------------------------------------------------------
# sorting: indices among ties are free, checked through gather
# ---------------------------------------------------------------------------
def sort(g):
    x = g.pick()
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    desc = g.rng.random() < 0.5
    stable = g.rng.random() < 0.3
    v, i = g.fresh(), g.fresh()
    kw = (", descending=True" if desc else "") + (", stable=True" if stable else "")
    tie = None if stable else {"src": x, "dim": d, "idx": i}
    return Step("sort", "stable" if stable else "func", f"{v}, {i} = torch.sort({x}, dim={d}{kw})",
                [x], tie=tie)


def argsort(g):
    x = g.pick()
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    i = g.fresh()
    desc = ", descending=True" if g.rng.random() < 0.5 else ""
    return Step("argsort", "func", f"{i} = torch.argsort({x}, dim={d}{desc})", [x],
                tie={"src": x, "dim": d, "idx": i})


def topk(g):
    x = g.pick()
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    size = t.shape[d] if t.dim() else 1
    k = g.rng.randint(0, size)
    v, i = g.fresh(), g.fresh()
    largest = "" if g.rng.random() < 0.6 else ", largest=False"
    return Step("topk", "func", f"{v}, {i} = torch.topk({x}, {k}, dim={d}{largest})", [x],
                tie={"src": x, "dim": d, "idx": i})


def kthvalue(g):
    x = g.pick(_nonempty)
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    size = t.shape[d] if t.dim() else 1
    if size == 0:
        return None
    v, i = g.fresh(), g.fresh()
    return Step("kthvalue", "func", f"{v}, {i} = torch.kthvalue({x}, {g.rng.randint(1, size)}, {d})",
                [x], tie={"src": x, "dim": d, "idx": i})


def msort(g):
    x = g.pick()
    if x is None:
        return None
    v = g.fresh()
    return Step("msort", "func", f"{v} = torch.msort({x})", [x])


# ---------------------------------------------------------------------------
# shape, joining, views followed by writes
# ---------------------------------------------------------------------------
def cat_stack(name):
    def gen(g):
        a = g.pick()
        if a is None:
            return None
        t = g.t(a)
        if name == "cat":
            if t.dim() == 0:
                return None
            d = g.dim(t)
            shape = list(t.shape)
            shape[d] = g.rng.choice([0, 1, 2, 3])
            others = [g.new_tensor(tuple(shape)) for _ in range(g.rng.randint(1, 2))]
        else:
            d = g.rng.randint(-t.dim() - 1, t.dim())
            others = [g.new_tensor(tuple(t.shape)) for _ in range(g.rng.randint(1, 2))]
        parts = [a] + others
        g.rng.shuffle(parts)
        v = g.fresh()
        lst = "[" + ", ".join(parts) + "]"
        if g.rng.random() < 0.15:
            ref = g.eval_cpu(f"torch.{name}({lst}, {d})")
            oc, o = g.out_tensor(ref)
            return Step(name, "out", f"{oc}\ntorch.{name}({lst}, {d}, out={o})", parts, zsign=True)
        return Step(name, "func", f"{v} = torch.{name}({lst}, {d})", parts, zsign=True)

    return Op(name, gen, 1.0)


def shape_op(name, make, weight=0.7, zsign=True, view=False):
    """make(g, x, t) -> call source or None."""

    def gen(g):
        x = g.pick()
        if x is None:
            return None
        call = make(g, x, g.t(x))
        if call is None:
            return None
        v = g.fresh()
        return Step(name, "func", f"{v} = {call}", [x], zsign=zsign, layout=[v] if view else [])

    return Op(name, gen, weight)


def _flip(g, x, t):
    if t.dim() == 0:
        return f"torch.flip({x}, ())"
    dims = tuple(sorted(g.rng.sample(range(t.dim()), g.rng.randint(1, t.dim()))))
    return f"torch.flip({x}, {dims!r})"


def _roll(g, x, t):
    if t.dim() == 0 or g.rng.random() < 0.2:
        return f"torch.roll({x}, {g.rng.randint(-3, 3)})"
    return f"torch.roll({x}, {g.rng.randint(-4, 4)}, {g.dim(t)})"


def _tri(which):
    def make(g, x, t):
        if t.dim() < 2:
            return None
        return f"torch.{which}({x}, {g.rng.randint(-2, 2)})"

    return make


def _repeat(g, x, t):
    reps = tuple(g.rng.randint(0, 2) for _ in range(t.dim() + g.rng.randint(0, 1)))
    return f"{x}.repeat{reps!r}" if reps else None


def _expand_clone(g, x, t):
    shape = tuple(g.rng.choice([s, s]) if s != 1 else g.rng.randint(0, 3) for s in t.shape)
    shape = (g.rng.randint(1, 2),) * g.rng.randint(0, 1) + shape
    return f"{x}.expand({shape!r}).clone()"


def _contiguous(g, x, t):
    if t.dim() >= 2:
        return f"{x}.transpose(0, {t.dim() - 1}).contiguous()"
    return f"{x}.contiguous()"


def _reshape(g, x, t):
    shapes = [(-1,), (t.numel(),)]
    if t.dim() >= 2:
        shapes.append((t.shape[0], -1))
    if t.numel() and t.numel() % 2 == 0:
        shapes.append((2, -1))
    return f"{x}.reshape({g.rng.choice(shapes)!r})"


def view_then_write(g):
    """A view of a variable, then an in-place write through it."""
    x = g.pick(lambda t: t.dim() >= 1 and t.numel() > 0 and _writable(t))
    if x is None:
        return None
    t = g.t(x)
    v = g.fresh()
    d = g.dim(t, negative_ok=False)
    size = t.shape[d]
    views = [f"{x}.narrow({d}, {g.rng.randrange(size)}, 1)",
             f"{x}.select({d}, {g.rng.randrange(size)})",
             f"{x}{V._index_code(t.dim(), d, '::2')}",
             f"{x}{V._index_code(t.dim(), d, '1:')}"]
    if t.dim() >= 2:
        views += [f"{x}.transpose(0, 1)", f"{x}.diagonal()", f"{x}.mT"]
    if t.is_contiguous():
        views.append(f"{x}.view(-1)")
    if t.dim() >= 1:
        views.append(f"{x}.unsqueeze(0)")
    view = g.rng.choice(views)
    writes = [f".fill_({g.scalar()})", ".zero_()", f".mul_({g.scalar()})",
              f".add_({g.scalar()})", ".neg_()", ".copy_(SRC)", ".add_(SRC)"]
    w = g.rng.choice(writes)
    reads = [x]
    if "SRC" in w:
        vt = g.eval_cpu(view)
        src = g.new_tensor(V.broadcast_variant(g.rng, vt.shape), vt.dtype if g.rng.random() < 0.7
                           else None)
        w = w.replace("SRC", src)
        reads.append(src)
    return Step("view_write", "inplace", f"{v} = {view}\n{v}{w}", reads, layout=[v], zsign=True)


def make_view(g):
    """A view kept as a variable (later steps read it and write through it)."""
    x = g.pick(lambda t: t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    v = g.fresh()
    d = g.dim(t, negative_ok=False)
    views = [f"{x}.transpose(0, -1)", f"{x}{V._index_code(t.dim(), d, '::2')}",
             f"{x}.unsqueeze({g.rng.randint(0, t.dim())})", f"{x}.narrow({d}, 0, {t.shape[d]})",
             f"{x}.expand({(2,) + tuple(t.shape)!r})", f"{x}.squeeze()",
             f"{x}.unflatten(0, ({t.shape[0]}, 1))"]
    if t.is_contiguous():
        views.append(f"{x}.view(-1)")
    return Step("view", "view", f"{v} = {g.rng.choice(views)}", [x], layout=[v], zsign=True)


# ---------------------------------------------------------------------------
# indexing with valid indices
# ---------------------------------------------------------------------------
def index_select(g):
    x = g.pick(lambda t: t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    idx = g.index_tensor((g.rng.randint(0, 4),), 0, t.shape[d])
    if idx is None:
        return None
    v = g.fresh()
    return Step("index_select", "func", f"{v} = torch.index_select({x}, {d}, {idx})", [x, idx], zsign=True)


def gather(g):
    x = g.pick(lambda t: t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    d = g.dim(t)
    shape = tuple(g.rng.randint(0, s) if k != (d % t.dim()) else g.rng.randint(0, 4)
                  for k, s in enumerate(t.shape))
    idx = g.index_tensor(shape, 0, t.shape[d], dtype=torch.int64)
    if idx is None:
        return None
    v = g.fresh()
    return Step("gather", "func", f"{v} = torch.gather({x}, {d}, {idx})", [x, idx], zsign=True)


def scatter(name):
    """scatter (unique indices: duplicates are unordered), scatter_add, index_add."""

    def gen(g):
        x = g.pick(lambda t: t.dim() >= 1 and _writable(t))
        if x is None:
            return None
        t = g.t(x)
        d = g.dim(t)
        dd = d % t.dim()
        v = g.fresh()
        if name == "index_add":
            n = g.rng.randint(0, 4)
            idx = g.index_tensor((n,), 0, t.shape[d])
            if idx is None:
                return None
            shape = tuple(n if k == dd else s for k, s in enumerate(t.shape))
            src = g.new_tensor(shape, t.dtype)
            alpha = _alpha(g)
            if g.rng.random() < 0.4:
                return Step(name, "inplace", f"{x}.index_add_({d}, {idx}, {src}{alpha})", [x, idx, src],
                            tol="reduce")
            return Step(name, "func", f"{v} = torch.index_add({x}, {d}, {idx}, {src}{alpha})",
                        [x, idx, src], tol="reduce")
        shape = tuple(g.rng.randint(0, s) for s in t.shape)
        unique = dd if name == "scatter" else None
        if unique is not None:
            shape = tuple(min(s, t.shape[dd]) if k == dd else s for k, s in enumerate(shape))
        idx = g.index_tensor(shape, 0, t.shape[d], dtype=torch.int64, unique_dim=unique)
        if idx is None:
            return None
        if name == "scatter" and g.rng.random() < 0.3:
            src = g.scalar()
            reads = [x, idx]
        else:
            src = g.new_tensor(shape, t.dtype)
            reads = [x, idx, src]
        tol = "reduce" if name == "scatter_add" else "default"
        if g.rng.random() < 0.4:
            return Step(name, "inplace", f"{x}.{name}_({d}, {idx}, {src})", reads, tol=tol)
        return Step(name, "func", f"{v} = torch.{name}({x}, {d}, {idx}, {src})", reads, tol=tol)

    return Op(name, gen, 0.8)


def getitem(g):
    x = g.pick(lambda t: t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    v = g.fresh()
    r = g.rng.random()
    if r < 0.4:
        n = t.shape[0]
        idx = g.index_tensor((g.rng.randint(0, 4),), -n, n) if n else None
        if idx is None:
            return None
        if t.dim() >= 2 and g.rng.random() < 0.4:
            return Step("getitem", "tensor_index", f"{v} = {x}[{idx}, ...]", [x, idx], zsign=True)
        return Step("getitem", "tensor_index", f"{v} = {x}[{idx}]", [x, idx], zsign=True)
    if r < 0.7:
        m = g.mask_tensor(t.shape[:g.rng.randint(1, t.dim())])
        return Step("getitem", "mask", f"{v} = {x}[{m}]", [x, m], zsign=True)
    m = g.mask_tensor(V.broadcast_variant(g.rng, t.shape))
    return Step("masked_select", "func", f"{v} = torch.masked_select({x}, {m})", [x, m], zsign=True)


def setitem(g):
    x = g.pick(lambda t: t.dim() >= 1 and t.numel() > 0 and _writable(t))
    if x is None:
        return None
    t = g.t(x)
    n = t.shape[0]
    if g.rng.random() < 0.5:
        k = g.rng.randint(1, n)
        idx = g.literal_tensor(g.rng.sample(range(n), k), (k,), torch.int64)  # unique
        target_shape = (k,) + tuple(t.shape[1:])
    else:
        idx = g.mask_tensor(t.shape[:1])
        target_shape = None
    if g.rng.random() < 0.5 or target_shape is None:
        val = g.scalar()
        reads = [x, idx]
    else:
        val = g.new_tensor(V.broadcast_variant(g.rng, target_shape), t.dtype)
        reads = [x, idx, val]
    if g.rng.random() < 0.3 and target_shape is not None and val.isidentifier():
        return Step("index_put", "accumulate", f"{x}.index_put_(({idx},), {val}, accumulate=True)",
                    reads, tol="reduce")
    return Step("index_put", "setitem", f"{x}[{idx}] = {val}", reads, zsign=True)


def take(g):
    x = g.pick(_nonempty)
    if x is None:
        return None
    n = g.t(x).numel()
    idx = g.index_tensor((g.rng.randint(0, 5),), -n, n, dtype=torch.int64)
    v = g.fresh()
    return Step("take", "func", f"{v} = torch.take({x}, {idx})", [x, idx], zsign=True)


def nonzero(g):
    x = g.pick()
    if x is None:
        return None
    v = g.fresh()
    if g.rng.random() < 0.3:
        return Step("nonzero", "tuple", f"{v} = torch.stack(torch.nonzero({x}, as_tuple=True)) "
                    f"if {x}.dim() else torch.nonzero({x})", [x])
    return Step("nonzero", "func", f"{v} = torch.nonzero({x})", [x])


# ---------------------------------------------------------------------------
# linear algebra and nn
# ---------------------------------------------------------------------------
def matmul(name):
    def gen(g):
        dtype = g.rng.choice([torch.float32, torch.float32, torch.bfloat16, torch.float16])
        a = g.pick(lambda t: t.dtype == dtype and 1 <= t.dim() <= 3)
        if a is None or g.rng.random() < 0.3:
            shapes = {"mm": 2, "bmm": 3, "mv": 2, "dot": 1, "outer": 1, "addmm": 2}
            rank = shapes.get(name, g.rng.randint(1, 3))
            a = g.new_tensor(tuple(g.rng.randint(0, 4) for _ in range(rank)), dtype)
        t = g.t(a)
        k = t.shape[-1] if t.dim() else 1
        n = g.rng.randint(0, 4)
        v = g.fresh()
        if name == "matmul":
            bshape = (k, n) if g.rng.random() < 0.6 else (k,)
            if t.dim() == 3 and g.rng.random() < 0.5:
                bshape = (t.shape[0], k, n)
            b = g.new_tensor(bshape, dtype)
            return Step(name, "func", f"{v} = torch.matmul({a}, {b})", [a, b], tol="reduce")
        if name in ("mm", "addmm"):
            b = g.new_tensor((k, n), dtype)
            if name == "mm":
                return Step(name, "func", f"{v} = torch.mm({a}, {b})", [a, b], tol="reduce")
            c = g.new_tensor(V.broadcast_variant(g.rng, (t.shape[0], n)), dtype)
            kw = _kw(beta=g.scalar("float") if g.rng.random() < 0.4 else None,
                     alpha=g.scalar("float") if g.rng.random() < 0.4 else None)
            return Step(name, "func", f"{v} = torch.addmm({c}, {a}, {b}{kw})", [c, a, b], tol="reduce")
        if name == "bmm":
            b = g.new_tensor((t.shape[0], k, n), dtype)
            return Step(name, "func", f"{v} = torch.bmm({a}, {b})", [a, b], tol="reduce")
        if name == "mv":
            b = g.new_tensor((k,), dtype)
            return Step(name, "func", f"{v} = torch.mv({a}, {b})", [a, b], tol="reduce")
        b = g.new_tensor((t.shape[0],) if name == "dot" else (n,), dtype)
        return Step(name, "func", f"{v} = torch.{name}({a}, {b})", [a, b], tol="reduce")

    return Op(name, gen, 0.6)


def layer_norm(g):
    x = g.pick(lambda t: _is_float(t) and t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    k = g.rng.randint(1, min(2, t.dim()))
    shape = tuple(t.shape[-k:])
    v = g.fresh()
    if g.rng.random() < 0.5:
        w = g.new_tensor(shape, t.dtype, kind="small")
        return Step("layer_norm", "weight", f"{v} = {F}.layer_norm({x}, {shape!r}, {w})", [x, w],
                    tol="reduce")
    return Step("layer_norm", "func", f"{v} = {F}.layer_norm({x}, {shape!r})", [x], tol="reduce")


def pad(g):
    x = g.pick(lambda t: t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    n = g.rng.randint(1, min(t.dim(), 2))
    pads = tuple(g.rng.randint(-1, 2) for _ in range(2 * n))
    v = g.fresh()
    val = f", value={g.scalar()}" if g.rng.random() < 0.5 else ""
    return Step("pad", "constant", f"{v} = {F}.pad({x}, {pads!r}{val})", [x], zsign=True)


def item(g):
    x = g.pick(lambda t: t.numel() == 1)
    if x is None:
        return None
    v = g.fresh()
    return Step("item", "func", f"{v} = {x}.item()", [x])


def _round_args(g):
    return f", decimals={g.rng.randint(-2, 3)}" if g.rng.random() < 0.3 else ""


def _softplus(g):
    return _kw(beta=g.scalar("float") if g.rng.random() < 0.3 else None,
               threshold=g.scalar("float") if g.rng.random() < 0.3 else None)


def _slope(g):
    return f", {g.scalar('float')}" if g.rng.random() < 0.5 else ""


def _elu(g):
    return f", alpha={g.scalar('float')}" if g.rng.random() < 0.5 else ""


def _hardtanh(g):
    return f", {g.scalar('float')}, {g.scalar('float')}" if g.rng.random() < 0.5 else ""


def _gelu(g):
    return ", approximate='tanh'" if g.rng.random() < 0.4 else ""


UNARY_ULP = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "expm1", "log1p",
             "log2", "log10", "exp2", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
             "atanh", "erf", "erfinv", "reciprocal", "erfc", "lgamma", "digamma", "sinc", "i0"]
# Ops with no tpu lowering today (they count as "missing"): drawn rarely, so
# that programs get past them, but drawn, so that a new lowering is checked.
RARE = {"erfc", "lgamma", "digamma", "sinc", "i0", "signbit", "logaddexp", "heaviside", "nextafter",
        "bitwise_left_shift", "nansum", "cummax", "logcumsumexp", "kthvalue"}
RARE_WEIGHT = 0.15
UNARY_EXACT = {"abs": True, "neg": True, "ceil": True, "floor": True, "trunc": True, "frac": True,
               "sign": True, "sgn": True, "square": True, "positive": True, "signbit": True,
               "logical_not": True, "bitwise_not": True, "isnan": True, "isinf": True,
               "isfinite": True, "isposinf": True, "isneginf": True, "deg2rad": False,
               "rad2deg": False, "round": True}


def build_table():
    t = []
    for name in UNARY_ULP:
        t.append(unary(name, tol="ulp", weight=0.5))
    for name, zsign in UNARY_EXACT.items():
        inplace = name not in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit",
                               "positive")
        method = name not in ("isposinf", "isneginf")
        out = name not in ("positive", "isnan", "isinf", "isfinite")
        t.append(unary(name, zsign=zsign, inplace=inplace, method=method, out=out,
                       args=_round_args if name == "round" else None,
                       pred=_is_float if name == "frac" else None, weight=0.6))
    t.append(Op("nan_to_num", nan_to_num, 0.8))
    t += [nn_unary("relu", zsign=False), nn_unary("gelu", args=_gelu, tol="ulp", inplace_kw=False),
          nn_unary("silu", tol="ulp"), nn_unary("softplus", args=_softplus, tol="ulp", inplace_kw=False),
          nn_unary("elu", args=_elu, tol="ulp"), nn_unary("leaky_relu", args=_slope),
          nn_unary("hardtanh", args=_hardtanh), nn_unary("mish", tol="ulp"),
          nn_unary("logsigmoid", tol="ulp", inplace_kw=False), nn_unary("hardsigmoid"),
          nn_unary("hardswish"), nn_unary("softsign", tol="ulp", inplace_kw=False)]
    zs = {"add", "sub", "mul", "div", "copysign", "fmod", "remainder"}
    for name in ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2",
                 "hypot", "copysign", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le",
                 "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "xlogy", "float_power", "logaddexp", "heaviside", "nextafter",
                 "bitwise_left_shift", "ldexp"]:
        tol = "ulp" if name in ("pow", "atan2", "hypot", "xlogy", "float_power", "logaddexp",
                                "ldexp") else "default"
        kwargs = _alpha if name in ("add", "sub") else (_rounding if name == "div" else None)
        prefer = _ints if name.startswith("bitwise") else None
        inplace = name not in ("maximum", "minimum", "fmax", "fmin")
        t.append(binary(name, tol=tol, zsign=name in zs, kwargs=kwargs, prefer=prefer,
                        inplace=inplace, weight=1.2 if name in ("add", "mul", "div", "sub") else 0.7))
    t += [Op("where", ternary_where, 1.0), Op("clamp", clamp, 1.0), addcmul_like("addcmul"),
          addcmul_like("addcdiv"), Op("lerp", lerp, 0.5), Op("masked_fill", masked_fill, 0.8),
          Op("to", cast, 1.0), Op("copy_", copy_, 1.0), Op("fill_", fill_, 0.6)]
    t += [reduction("sum", dtype_kw=True), reduction("mean", dtype_kw=True), reduction(
        "prod", dim_multi=False, dtype_kw=True), reduction("amax", tol="default"),
        reduction("amin", tol="default"), reduction("all", tol="default"),
        reduction("any", tol="default"), reduction("std", extra=_correction),
        reduction("var", extra=_correction), reduction("logsumexp", dim_required=True),
        reduction("nansum"), reduction("count_nonzero", tol="default"),
        Op("vector_norm", vector_norm, 0.6),
        max_min_dim("max"), max_min_dim("min"), arg_reduction("argmax"), arg_reduction("argmin"),
        scan("cumsum"), scan("cumprod"), scan("cummax", dtype_kw=False), scan("logcumsumexp",
                                                                            dtype_kw=False),
        softmax("softmax"), softmax("log_softmax")]
    t += [Op("sort", sort, 1.0), Op("argsort", argsort, 0.7), Op("topk", topk, 0.8),
          Op("kthvalue", kthvalue, 0.3), Op("msort", msort, 0.3)]
    t += [cat_stack("cat"), cat_stack("stack"), shape_op("flip", _flip), shape_op("roll", _roll),
          shape_op("tril", _tri("tril")), shape_op("triu", _tri("triu")),
          shape_op("repeat", _repeat), shape_op("expand_clone", _expand_clone),
          shape_op("contiguous", _contiguous), shape_op("reshape", _reshape),
          Op("view_write", view_then_write, 2.0), Op("view", make_view, 1.0)]
    t += [Op("index_select", index_select, 0.8), Op("gather", gather, 0.8), scatter("scatter"),
          scatter("scatter_add"), scatter("index_add"), Op("getitem", getitem, 1.0),
          Op("index_put", setitem, 1.0), Op("take", take, 0.5), Op("nonzero", nonzero, 0.5)]
    t += [matmul("matmul"), matmul("mm"), matmul("bmm"), matmul("mv"), matmul("dot"),
          matmul("outer"), matmul("addmm"), Op("layer_norm", layer_norm, 0.5), Op("pad", pad, 0.6),
          Op("item", item, 0.4)]
    for o in t:
        if o.name in RARE:
            o.weight = RARE_WEIGHT
    names = [o.name for o in t]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    return t


TABLE = build_table()

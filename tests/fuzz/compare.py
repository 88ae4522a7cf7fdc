"""Compares what a step left behind on tpu with what it left on the CPU.

Every variable is compared after every step (so a write through a view is
seen in its base): type, dtype, shape, values (exact for integers and bools;
floats within a tolerance, NaN equal to NaN, infinities by sign), the sign of
zero where the step determines it, and the strides of the results whose
layout TensorIterator decides. Indices whose order among ties is free are
checked through gather instead of compared.
"""

import re
from dataclasses import dataclass

import torch

# torch.testing's defaults (rtol, atol) per dtype.
DEFAULT_TOL = {
    torch.float32: (1.3e-6, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.float64: (1e-7, 1e-7),
}
ULP_RTOL_FACTOR = 8  # transcendental functions: a few ulps of float32 apart
EPS32 = torch.finfo(torch.float32).eps
F32_MAX = torch.finfo(torch.float32).max

MISSING_OP = re.compile(r"'(aten::[\w.]+)' is not currently implemented for the tpu device")


@dataclass
class Mismatch:
    kind: str  # see KINDS
    var: str
    detail: str

    def __str__(self):
        return f"{self.kind} {self.var}: {self.detail}"


# In the order a step's outcome is classified (the first found names it).
KINDS = ["crash", "hang", "missing_op", "exc_class", "missing_error", "tpu_error", "names", "type",
         "dtype", "shape", "tie", "value", "signed_zero", "stride"]


def missing_op_name(exc):
    if isinstance(exc, NotImplementedError):
        m = MISSING_OP.search(str(exc))
        if m:
            return m.group(1)
    return None


def same_exception_class(cpu_exc, tpu_exc):
    """tpu must raise the CPU's class; OutOfMemoryError (a RuntimeError) stands
    for the CPU allocator's RuntimeError."""
    if type(cpu_exc) is type(tpu_exc):
        return True
    return isinstance(tpu_exc, torch.OutOfMemoryError) and type(cpu_exc) is RuntimeError


def compare_outcome(cpu_exc, tpu_exc):
    """Mismatch for the exceptions of one step, or None when they agree."""
    if tpu_exc is not None:
        name = missing_op_name(tpu_exc)
        if name:
            return Mismatch("missing_op", "", name)
    if cpu_exc is None and tpu_exc is None:
        return None
    if cpu_exc is not None and tpu_exc is not None:
        if same_exception_class(cpu_exc, tpu_exc):
            return None
        return Mismatch("exc_class", "", f"cpu {_exc(cpu_exc)} | tpu {_exc(tpu_exc)}")
    if cpu_exc is not None:
        return Mismatch("missing_error", "", f"cpu {_exc(cpu_exc)} | tpu returned")
    return Mismatch("tpu_error", "", f"tpu {_exc(tpu_exc)}")


def _exc(e):
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:200] if msg else ''}"


def tolerance(dtype, tol, scale):
    rtol, atol = DEFAULT_TOL.get(dtype, (0.0, 0.0))
    if tol == "ulp":
        rtol *= ULP_RTOL_FACTOR
    elif tol == "reduce":
        # accumulation order: a few float32 ulps of the largest partial sum
        rtol *= ULP_RTOL_FACTOR
        atol += 8 * EPS32 * scale
    return rtol, atol


def step_scale(env, reads):
    """A bound on the magnitude of sums a step may form from its inputs: the
    product of the largest finite |value| of each float input, times the
    largest element count."""
    scale, count = 1.0, 1
    for name in reads:
        v = env.get(name)
        if isinstance(v, torch.Tensor) and v.numel():
            count = max(count, v.numel())
            if v.dtype.is_floating_point:
                f = v.detach().double().abs()
                f = f[torch.isfinite(f)]
                if f.numel():
                    scale *= max(1.0, f.max().item())
    return min(scale * count, 1e300)


def _first(mask):
    idx = mask.nonzero()
    return tuple(idx[0].tolist()) if idx.shape[0] else None


def compare_values(a, e, tol, scale, zsign, tol_dtype=None):
    """Mismatch kind and detail for tpu tensor a vs cpu tensor e (both CPU now);
    tol_dtype, when given, is the dtype whose tolerance applies (a result
    computed in bfloat16 and written to a float32 out= has bfloat16's)."""
    if e.dtype.is_floating_point or e.dtype.is_complex:
        rtol, atol = tolerance(tol_dtype or e.dtype, tol, scale)
        ad, ed = a.double(), e.double()
        both_nan = ad.isnan() & ed.isnan()
        same_inf = (ad == ed) & ed.isinf()
        close = (ad - ed).abs() <= atol + rtol * ed.abs()
        ok = both_nan | same_inf | close
        ok &= ~(ad.isnan() ^ ed.isnan())
        if tol == "reduce" and scale >= F32_MAX:
            # partial sums overflow: whether a result is inf, -inf or NaN (or
            # finite, for a wider accumulator) depends on the summation order
            ok |= ~torch.isfinite(ad) | ~torch.isfinite(ed)
        if not bool(ok.all()):
            i = _first(~ok)
            n = int((~ok).sum())
            return "value", (f"{n}/{e.numel()} differ, first at {list(i)}: cpu {e[i].item()!r} "
                             f"tpu {a[i].item()!r} (rtol {rtol:.2g}, atol {atol:.2g})")
        if zsign:
            zeros = (ed == 0) & (ad == 0)
            diff = zeros & (torch.signbit(ad) != torch.signbit(ed))
            if bool(diff.any()):
                i = _first(diff)
                return "signed_zero", f"first at {list(i)}: cpu {e[i].item()!r} tpu {a[i].item()!r}"
        return None
    if not torch.equal(a, e):
        ne = a != e
        i = _first(ne)
        return "value", (f"{int(ne.sum())}/{e.numel()} differ, first at {list(i)}: cpu {e[i].item()!r} "
                         f"tpu {a[i].item()!r}")
    return None


def _strides_differ(a, e):
    if e.numel() == 0:
        return False
    return any(sa != se for sa, se, n in zip(a.stride(), e.stride(), e.shape) if n > 1)


def compare_envs(cpu_env, tpu_env, step=None, scale=1.0, check_device=True, tol_dtypes=None):
    """Mismatches between the variables of a CPU and a tpu environment;
    tol_dtypes: {variable: dtype whose tolerance applies} (compare_values)."""
    from .program import variables

    cv, tv = _flatten(variables(cpu_env)), _flatten(variables(tpu_env))
    if set(cv) != set(tv):
        return [Mismatch("names", "", f"cpu {sorted(set(cv) - set(tv))} tpu {sorted(set(tv) - set(cv))}")]
    out = []
    tol = step.tol if step else "default"
    zsign = step.zsign if step else True
    layout = set(step.layout) if step else set(cv)
    tie = step.tie if step else None
    for name in cv:
        e, a = cv[name], tv[name]
        if isinstance(e, torch.Tensor) != isinstance(a, torch.Tensor):
            out.append(Mismatch("type", name, f"cpu {type(e).__name__} tpu {type(a).__name__}"))
            continue
        if not isinstance(e, torch.Tensor):
            if type(e) is not type(a):
                out.append(Mismatch("type", name, f"cpu {e!r} tpu {a!r}"))
            elif isinstance(e, (bool, int, float)) and e != a and not (e != e and a != a):
                r = ("value", "")
                if isinstance(e, float):
                    r = compare_values(torch.tensor(a, dtype=torch.float64),
                                       torch.tensor(e, dtype=torch.float64), tol, scale, False)
                if r:
                    out.append(Mismatch("value", name, f"cpu {e!r} tpu {a!r}"))
            continue
        if check_device and a.device.type != "tpu":
            out.append(Mismatch("type", name, f"tpu result on {a.device}"))
            continue
        if a.dtype != e.dtype:
            out.append(Mismatch("dtype", name, f"cpu {e.dtype} tpu {a.dtype}"))
            continue
        if a.shape != e.shape:
            out.append(Mismatch("shape", name, f"cpu {tuple(e.shape)} tpu {tuple(a.shape)}"))
            continue
        ac = a.detach().cpu()
        if tie and name == tie["idx"]:
            m = _compare_tie(cv[tie["src"]], tie["dim"], ac, e)
            if m:
                out.append(Mismatch("tie", name, m))
            continue
        r = compare_values(ac, e.detach(), tol, scale, zsign, (tol_dtypes or {}).get(name))
        if r:
            out.append(Mismatch(r[0], name, r[1]))
            continue
        if name in layout and _strides_differ(a, e):
            out.append(Mismatch("stride", name, f"shape {tuple(e.shape)}: cpu {e.stride()} tpu {a.stride()}"))
    return out


def _flatten(env):
    """Sequences of values (e.g. a tuple of tensors) as name[i] entries."""
    out = {}
    for k, v in env.items():
        if isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                out.update(_flatten({f"{k}[{i}]": x}))
        else:
            out[k] = v
    return out


def _compare_tie(src, dim, tpu_idx, cpu_idx):
    """Indices are right when they select the values the CPU's indices select."""
    if src.dim() == 0:
        src = src.reshape(1)
        tpu_idx, cpu_idx = tpu_idx.reshape(-1), cpu_idx.reshape(-1)
    elif tpu_idx.dim() < src.dim():  # the reduced dim was dropped (keepdim=False)
        tpu_idx, cpu_idx = tpu_idx.unsqueeze(dim), cpu_idx.unsqueeze(dim)
    try:
        got = torch.gather(src, dim, tpu_idx)
    except (RuntimeError, IndexError) as e:
        return f"tpu indices do not index the input: {str(e).splitlines()[0]}"
    want = torch.gather(src, dim, cpu_idx)
    r = compare_values(got, want, "default", 1.0, False)
    if r:
        return "gather(input, dim, tpu indices) != gather(input, dim, cpu indices): " + r[1]
    return None

"""Runs a program step by step on tpu, checking each step against the CPU.

The inputs are made by the same source on both devices and compared. Then,
before every step, the tpu environment is mirrored to the CPU (same values,
strides and sharing), the step runs on both, and everything is compared.
So each op is judged on exactly the inputs the tpu gave it: rounding that
two devices legitimately accumulate over earlier steps never shows up as a
mismatch of a later step, and a failure names the op responsible.

Where the floats of a step differ from the CPU's, two more references judge
it before it counts as a mismatch (each recorded, so runs report how often):
- "flush_denormal": the CPU with subnormals flushed to zero
  (torch.set_flush_denormal), the documented arithmetic of the XLA plugins
  and of TPUs (README, "Subnormal floats");
- "float64": the step computed on float64 copies of the float inputs and
  rounded once to the result dtype, for where the CPU kernel itself rounds
  more than once (half and bfloat16 sums, fmod near the float max).
"""

import re
from dataclasses import dataclass, field

import torch

from .compare import Mismatch, compare_envs, compare_outcome, step_scale
from .program import mirror, new_env, run_code, variables

DEVICE = "tpu"


@dataclass
class Outcome:
    status: str  # pass | fail | missing
    step: int = -1  # failing step; -1 for the inputs
    mismatches: list = field(default_factory=list)
    op: str = ""
    form: str = ""
    info: dict = field(default_factory=dict)
    cpu_exc: str = ""  # exception classes when the step raised
    tpu_exc: str = ""
    tpu_msg: str = ""  # the first line of tpu's exception
    code: str = ""  # the failing step's source
    cpu_msg: str = ""
    judged: list = field(default_factory=list)  # (step, op, reference) judged by another reference

    @property
    def kind(self):
        return self.mismatches[0].kind if self.mismatches else ""

    def signature(self):
        """What the shrinker must preserve."""
        return (self.kind, self.op, self.cpu_exc, self.tpu_exc)


def tensor_flags(env, names):
    """Facts about a step's inputs that known-failure conditions test."""
    info = {"dtypes": set(), "nan": False, "inf": False, "neg_zero": False, "subnormal": False,
            "huge_float": False, "large_int": False, "noncontig": False, "empty": False,
            "zero_dim": False, "int_min": False}
    for name in names:
        v = env.get(name)
        if not isinstance(v, torch.Tensor):
            continue
        info["dtypes"].add(str(v.dtype).replace("torch.", ""))
        info["empty"] |= v.numel() == 0
        info["zero_dim"] |= v.dim() == 0
        info["noncontig"] |= not v.is_contiguous()
        if not v.numel():
            continue
        if v.dtype.is_floating_point:
            f = v.detach().float()
            info["nan"] |= bool(f.isnan().any())
            info["inf"] |= bool(f.isinf().any())
            info["neg_zero"] |= bool(((f == 0) & torch.signbit(f)).any())
            tiny = torch.finfo(v.dtype).tiny
            info["subnormal"] |= bool(((f != 0) & (f.abs() < tiny)).any())
            info["huge_float"] |= bool((f.isfinite() & (f.abs() >= 1e4)).any())
        elif v.dtype != torch.bool:
            i = v.detach().long()
            info["large_int"] |= bool((i.abs() >= (1 << 24)).any())
            if v.dtype != torch.uint8:
                info["int_min"] |= bool((i == torch.iinfo(v.dtype).min).any())
    return info


def code_flags(code):
    return {"nan_literal": "nan" in code.replace("nan_to_num", ""),
            "inf_literal": "inf" in code,
            "large_literal": any(tok in code for tok in ("300", "255", "256", "-129", "2147483648",
                                                        "1099511627776", "1e+30", "70000"))}


def run_program(prog, on_step=None, device=DEVICE):
    """The outcome of prog: the first step whose tpu result differs from the
    CPU's on the same inputs, or pass."""
    cpu, dev = new_env("cpu"), new_env(device)
    src = prog.input_source()
    ce, te = run_code(src, cpu, "cpu"), run_code(src, dev, device)
    m = compare_outcome(ce, te)
    if m is None and ce is None:
        ms = compare_envs(cpu, dev, None)
        m = ms[0] if ms else None
    if m is not None:
        return _fail(m, -1, None, {}, ce, te)
    if ce is not None:
        raise AssertionError(f"the inputs raised on both devices: {ce!r}")
    judged = []
    for k, step in enumerate(prog.steps):
        if on_step:
            on_step(k)
        snapshot = mirror(dev, "cpu")
        before = mirror(snapshot, "cpu")
        info = tensor_flags(before, step.reads)
        info.update(code_flags(step.code))
        scale = step_scale(before, step.reads)
        ce = run_code(step.code, before, "cpu")
        te = run_code(step.code, dev, device)
        m = compare_outcome(ce, te)
        if m is not None:
            status = "missing" if m.kind == "missing_op" else "fail"
            return _fail(m, k, step, info, ce, te, status)
        if ce is not None:
            break  # both raised the same class: the program ends here
        ms = compare_envs(before, dev, step, scale)
        if ms and all(m.kind in FLOAT_KINDS for m in ms):
            reference = other_reference(snapshot, dev, step, scale)
            if reference:
                judged.append((k, step.op, reference))
                continue
        if ms:
            out = _fail(ms[0], k, step, info, None, None, extra=ms[1:])
            out.judged = judged
            return out
    return Outcome("pass", judged=judged)


FLOAT_KINDS = ("value", "signed_zero")


def other_reference(snapshot, dev, step, scale):
    """The name of the reference the tpu's results of `step` match, when the
    plain CPU's do not: see the module docstring. `snapshot` is a CPU copy of
    the variables before the step; None when neither matches."""
    env = mirror(snapshot, "cpu")
    if torch.set_flush_denormal(True):  # False where the CPU cannot
        try:
            exc = run_code(step.code, env, "cpu")
        finally:
            torch.set_flush_denormal(False)
        if exc is None and not compare_envs(env, dev, step, scale):
            return "flush_denormal"
    env = upcast_floats(snapshot)
    # tensors the step makes (an out= of a given dtype) are float64 too
    code = re.sub(r"torch\.(float16|bfloat16|float32|half|float)\b", "torch.float64", step.code)
    if run_code(code, env, "cpu") is None:
        outs = set(re.findall(r"\bout=(\w+)", step.code))  # out= takes no part in promotion
        narrow = common_float_dtype(snapshot, [n for n in step.reads if n not in outs])
        tpu_vars, tol_dtypes = variables(dev), {}
        for name, v in variables(env).items():
            t = tpu_vars.get(name)
            if not (isinstance(v, torch.Tensor) and isinstance(t, torch.Tensor)
                    and v.dtype.is_floating_point and t.dtype.is_floating_point):
                continue
            # rounded once to the dtype the step computes in, then to the
            # result's (a float32 out= of a bfloat16 sum has bfloat16's error)
            if narrow is not None and narrow.itemsize < t.dtype.itemsize:
                v, tol_dtypes[name] = v.to(narrow), narrow
            env[name] = v.to(t.dtype)
        if not compare_envs(env, dev, step, scale, tol_dtypes=tol_dtypes):
            return "float64"
    return None


def common_float_dtype(env, names):
    """The float dtype PyTorch's promotion gives the tensors `names` of env,
    or None: dimensioned tensors decide, 0-dim ones only when no dimensioned
    one is a float."""
    tensors = [env[n] for n in names if isinstance(env.get(n), torch.Tensor)]
    for group in ([t for t in tensors if t.dim() > 0], tensors):
        floats = [t.dtype for t in group if t.dtype.is_floating_point]
        if floats:
            out = floats[0]
            for d in floats[1:]:
                out = torch.promote_types(out, d)
            return out
    return None


def upcast_floats(env):
    """A CPU copy of env whose float16/bfloat16/float32 tensors are float64,
    keeping which variables share a storage."""
    out = mirror(env, "cpu")
    storages = {}
    for name, v in variables(out).items():
        if not isinstance(v, torch.Tensor) or v.dtype not in (torch.float16, torch.bfloat16,
                                                             torch.float32):
            continue
        key = (v.untyped_storage().data_ptr(), v.dtype)
        if key not in storages:
            n = v.untyped_storage().nbytes() // v.element_size()
            flat = torch.empty(0, dtype=v.dtype).set_(v.untyped_storage(), 0, (n,), (1,))
            storages[key] = flat.double()
        out[name] = storages[key].as_strided(v.size(), v.stride(), v.storage_offset())
    return out


def _fail(m, k, step, info, ce, te, status="fail", extra=()):
    info = {k2: (sorted(v) if isinstance(v, set) else v) for k2, v in info.items()}
    def first_line(e):
        lines = str(e).strip().splitlines() if e is not None else []
        return lines[0][:300] if lines else ""

    return Outcome(status, k, [m, *extra], step.op if step else "inputs", step.form if step else "",
                   info, type(ce).__name__ if ce is not None else "",
                   type(te).__name__ if te is not None else "", first_line(te),
                   step.code if step else "", first_line(ce))



__all__ = ["Outcome", "run_program", "Mismatch", "variables", "tensor_flags"]

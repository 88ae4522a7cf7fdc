"""A fuzz program: inputs and op steps held as Python source, run on a device.

Every step is source code run with `exec` in an environment whose names are
the program's variables, so what runs is exactly what a reproducer prints.
`mirror` copies an environment to another device keeping which variables
share storage (views stay views of the same base), which is how each step is
checked on the CPU with exactly the inputs the tpu had.
"""

import math
from dataclasses import dataclass, field

import torch

from .values import Input, dtype_name, literal

BUILTIN_NAMES = {"torch", "DEV", "nan", "inf", "__builtins__"}


@dataclass
class Step:
    op: str  # op table key, e.g. "add"
    form: str  # func | method | inplace | out | operator | rscalar | ...
    code: str  # Python statements
    reads: list = field(default_factory=list)  # variables the step reads
    tie: dict = None  # {"src", "dim", "idx"}: indices whose order among ties is free
    layout: list = field(default_factory=list)  # outputs whose strides must match
    tol: str = "default"  # default | ulp | reduce
    zsign: bool = False  # the sign of a zero result is determined


@dataclass
class Program:
    inputs: list
    steps: list
    label: str = ""

    def input_source(self):
        return "\n".join(i.source() for i in self.inputs)

    def source(self, upto=None, title=""):
        """A runnable reproducer: the program as a function of the device,
        run on cpu and tpu, printing every variable (or the exception)."""
        steps = self.steps if upto is None else self.steps[:upto + 1]
        body = [self.input_source()] + [s.code for s in steps]
        text = "\n".join(body)
        lines = ["import torch", "import torch_tpu  # noqa: F401", "",
                 "nan, inf = float('nan'), float('inf')", ""]
        if title:
            lines = ["# " + ln for ln in title.splitlines()] + lines
        lines.append("def program(DEV):")
        lines += ["    " + ln for ln in text.splitlines()]
        lines.append("    return {k: v for k, v in locals().items() if k != 'DEV'}")
        lines += ["", "", "for dev in ('cpu', 'tpu'):",
                  "    try:",
                  "        out = program(dev)",
                  "        for k, v in out.items():",
                  "            print(dev, k, v.cpu() if isinstance(v, torch.Tensor) else v,",
                  "                  v.stride() if isinstance(v, torch.Tensor) else '')",
                  "    except Exception as e:",
                  "        print(dev, type(e).__name__, str(e).splitlines()[0])"]
        return "\n".join(lines) + "\n"


def new_env(device):
    return {"torch": torch, "DEV": device, "nan": math.nan, "inf": math.inf,
            "__builtins__": __builtins__}


def variables(env):
    # dunder names: exec's __builtins__, the warnings module's __warningregistry__
    return {k: v for k, v in env.items() if k not in BUILTIN_NAMES and not k.startswith("__")}


def synchronize(device):
    if device != "cpu":
        torch.tpu.synchronize()


def run_code(code, env, device):
    """Runs code in env; returns the exception it raised (after a sync), or None."""
    try:
        exec(compile(code, "<fuzz>", "exec"), env)
        synchronize(device)
        return None
    except Exception as e:  # noqa: BLE001 - every exception is a result here
        return e


def _storage_key(t, name):
    s = t.untyped_storage()
    if s.nbytes() == 0:
        return ("empty", name)
    return (t.device.type, s.data_ptr())


def mirror(env, device):
    """A new environment on `device` with the variables of env copied, the
    tensors that share a storage in env sharing one in the copy."""
    out = new_env(device)
    storages = {}

    def copy(name, v):
        if isinstance(v, (tuple, list)):
            return [copy(f"{name}[{i}]", x) for i, x in enumerate(v)]
        if not isinstance(v, torch.Tensor):
            return v
        key = _storage_key(v, name)
        if key not in storages:
            src = v.untyped_storage()
            if v.device.type == device:
                storages[key] = src.clone()
            elif device == "cpu":
                storages[key] = src.cpu()
            else:
                storages[key] = src.to(device)
        t = torch.empty(0, dtype=v.dtype, device=device)
        return t.set_(storages[key], v.storage_offset(), v.size(), v.stride())

    for name, v in variables(env).items():
        out[name] = copy(name, v)
    return out


def storage_source(env, names):
    """Input source that recreates the variables `names` of env (a CPU env)
    exactly: one flat tensor per storage, each variable an as_strided view of
    it unless it covers its storage contiguously."""
    lines, bases = [], {}
    inputs = []
    for name in names:
        v = env[name]
        if not isinstance(v, torch.Tensor):
            lines.append(f"{name} = {literal(v)}")
            continue
        key = _storage_key(v, name)
        storage = v.untyped_storage()
        n = storage.nbytes() // v.element_size()
        whole = (v.storage_offset() == 0 and v.numel() == n and v.is_contiguous())
        if key not in bases:
            flat = torch.empty(0, dtype=v.dtype).set_(storage.cpu(), 0, (n,), (1,))
            base = name if whole else f"{name}_storage"
            bases[key] = base
            inputs.append(Input(base, v.dtype, (n,) if not whole else tuple(v.shape),
                                flat.tolist()))
            if whole:
                continue
        base = bases[key]
        if base != name:
            lines.append(f"{name} = {base}.as_strided({tuple(v.shape)!r}, {tuple(v.stride())!r}, "
                         f"{v.storage_offset()})")
    return inputs, lines


__all__ = ["Step", "Program", "new_env", "variables", "run_code", "mirror", "storage_source",
           "dtype_name"]

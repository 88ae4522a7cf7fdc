"""Shrinks a failing program to a short reproducer that fails the same way.

First choice: the failing step alone, on inputs that recreate exactly what
the tpu held before it (values, strides, sharing). When that does not fail
(the bug needs the history), the program itself is shrunk: steps after the
failure dropped, earlier steps dropped one at a time. Then input values are
simplified (chunks set to zero, floats rounded) while the failure keeps its
signature: same kind of mismatch, same op, same exception classes.
"""

import re
from dataclasses import dataclass, replace

import torch

from .program import Program, mirror, new_env, run_code, storage_source, variables
from .run import DEVICE, run_program
from .values import Input, round_to

MAX_TRIALS = 250


@dataclass
class Alias:
    """A variable that views another input's storage: `name = base<code>`."""

    name: str
    code: str

    def source(self, device_expr="DEV"):
        return self.code


def _names_in(code):
    return set(re.findall(r"\b[A-Za-z_]\w*\b", code))


def _prefix_env(prog, k):
    """The tpu environment after inputs and steps before k, mirrored to the CPU."""
    dev = new_env(DEVICE)
    if run_code(prog.input_source(), dev, DEVICE) is not None:
        return None
    for step in prog.steps[:k]:
        if run_code(step.code, dev, DEVICE) is not None:
            return None
    return mirror(dev, "cpu")


def single_step_candidate(prog, k):
    env = _prefix_env(prog, k)
    if env is None:
        return None
    step = prog.steps[k]
    used = _names_in(step.code) & set(variables(env))
    # variables sharing storage with a used one: a write shows in them too
    ptrs = {env[n].untyped_storage().data_ptr() for n in used
            if isinstance(env[n], torch.Tensor) and env[n].untyped_storage().nbytes()}
    for n, v in variables(env).items():
        if isinstance(v, torch.Tensor) and v.untyped_storage().nbytes() and \
                v.untyped_storage().data_ptr() in ptrs:
            used.add(n)
    names = [n for n in variables(env) if n in used]
    inputs, lines = storage_source(env, names)
    entries = list(inputs)
    for ln in lines:
        entries.append(Alias(ln.split(" = ")[0], ln))
    return Program(entries, [step], label=prog.label + f" step {k} alone")


class Shrinker:
    def __init__(self, signature, budget=MAX_TRIALS):
        self.signature = signature
        self.trials = 0
        self.budget = budget

    def fails(self, prog):
        if self.trials >= self.budget:
            return False
        self.trials += 1
        try:
            o = run_program(prog)
        except AssertionError:
            return False
        return o.status != "pass" and o.signature() == self.signature

    def drop_steps(self, prog, k):
        prog = Program(prog.inputs, prog.steps[:k + 1], prog.label)
        i = len(prog.steps) - 2
        while i >= 0:
            cand = Program(prog.inputs, prog.steps[:i] + prog.steps[i + 1:], prog.label)
            if self.fails(cand):
                prog = cand
            i -= 1
        return prog

    def drop_inputs(self, prog):
        i = len(prog.inputs) - 1
        while i >= 0:
            cand = Program(prog.inputs[:i] + prog.inputs[i + 1:], prog.steps, prog.label)
            if self.fails(cand):
                prog = cand
            i -= 1
        return prog

    def simplify_values(self, prog):
        for idx, inp in enumerate(prog.inputs):
            if not isinstance(inp, Input) or not inp.values:
                continue
            zero = False if inp.dtype == torch.bool else 0
            # delta debugging: chunks of the values set to zero
            n = len(inp.values)
            size = n
            while size >= 1:
                start = 0
                while start < n:
                    vals = list(prog.inputs[idx].values)
                    chunk = vals[start:start + size]
                    if any(v != zero or _is_neg_zero(v) for v in chunk):
                        vals[start:start + size] = [zero] * len(chunk)
                        prog = self._try_values(prog, idx, vals)
                    start += size
                size //= 2
            # rounding floats to fewer digits
            if inp.dtype.is_floating_point:
                for j, v in enumerate(prog.inputs[idx].values):
                    for simpler in _simpler_floats(v):
                        vals = list(prog.inputs[idx].values)
                        vals[j] = round_to(inp.dtype, simpler)
                        before = prog
                        prog = self._try_values(prog, idx, vals)
                        if prog is not before:
                            break
        return prog

    def shrink_shapes(self, prog):
        """Inputs cut down along each dim (to size 1, else 2) while it still
        fails; inputs that others view through as_strided keep their shape."""
        viewed = {a.code.split(" = ", 1)[1].split(".")[0] for a in prog.inputs if isinstance(a, Alias)}
        for idx in range(len(prog.inputs)):
            for d in range(len(getattr(prog.inputs[idx], "base_shape", ()))):
                for size in (1, 2):
                    inp = prog.inputs[idx]
                    if not isinstance(inp, Input) or inp.view or inp.name in viewed:
                        break
                    shape = tuple(inp.base_shape)
                    if shape[d] <= size:
                        continue
                    t = torch.tensor(inp.values, dtype=torch.float64 if inp.dtype.is_floating_point
                                     else torch.int64).reshape(shape).narrow(d, 0, size)
                    vals = [bool(v) if inp.dtype == torch.bool else v for v in t.flatten().tolist()]
                    if not inp.dtype.is_floating_point and inp.dtype != torch.bool:
                        vals = [int(v) for v in vals]
                    inputs = list(prog.inputs)
                    inputs[idx] = replace(inp, base_shape=tuple(t.shape), values=vals)
                    cand = Program(inputs, prog.steps, prog.label)
                    if self.fails(cand):
                        prog = cand
                        break
        return prog

    def _try_values(self, prog, idx, vals):
        if vals == prog.inputs[idx].values:
            return prog
        inputs = list(prog.inputs)
        inputs[idx] = replace(inputs[idx], values=vals)
        cand = Program(inputs, prog.steps, prog.label)
        return cand if self.fails(cand) else prog

    def remove_views(self, prog):
        for idx, inp in enumerate(prog.inputs):
            if isinstance(inp, Input) and inp.view:
                # the same values, contiguous: does the view matter?
                env = new_env("cpu")
                if run_code(inp.source(), env, "cpu") is not None:
                    continue
                t = env[inp.name]
                plain = Input(inp.name, inp.dtype, tuple(t.shape), t.flatten().tolist())
                inputs = list(prog.inputs)
                inputs[idx] = plain
                cand = Program(inputs, prog.steps, prog.label)
                if self.fails(cand):
                    prog = cand
        return prog


def _is_neg_zero(v):
    return isinstance(v, float) and v == 0 and str(v).startswith("-")


def _simpler_floats(v):
    if v != v or v in (float("inf"), float("-inf")) or _is_neg_zero(v):
        return []
    out = []
    for cand in (float(round(v)), round(v, 1), round(v, 2)):
        if cand != v and cand not in out:
            out.append(cand)
    return out


def shrink(prog, outcome, budget=MAX_TRIALS):
    """(reproducer Program, how it was reached)."""
    sig = outcome.signature()
    s = Shrinker(sig, budget)
    k = outcome.step
    if k < 0:
        cand = Program(prog.inputs, [], prog.label)
        how = "inputs"
    else:
        cand = single_step_candidate(prog, k)
        how = "step alone"
        if cand is None or not s.fails(cand):
            cand = s.drop_steps(prog, k)
            how = "program"
    if not s.fails(cand):
        return Program(prog.inputs, prog.steps[:max(k, 0) + 1], prog.label), "unshrunk"
    cand = s.drop_inputs(cand)
    cand = s.remove_views(cand)
    cand = s.shrink_shapes(cand)
    cand = s.simplify_values(cand)
    return cand, how

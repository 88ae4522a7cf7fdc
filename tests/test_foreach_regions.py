"""torch._foreach_* ops on tpu: each call one program in Strict (PyTorch's
per-tensor loop run in one region), values equal to CPU's for in-place and
out-of-place overloads over lists of mixed shapes, dtypes and views; Debug
mode still one launch per tensor; the foreach optimizers and
clip_grad_norm_ built on them."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu
from torch_tpu import debug

DEV = "tpu"
ROOT = Path(__file__).resolve().parent.parent

from torch.testing._internal.common_methods_invocations import (  # noqa: E402
    foreach_binary_op_db, foreach_other_op_db, foreach_pointwise_op_db, foreach_reduce_op_db,
    foreach_unary_op_db)

FOREACH_OPINFOS = {op.name: op for op in (foreach_unary_op_db + foreach_binary_op_db +
                                          foreach_pointwise_op_db + foreach_reduce_op_db +
                                          foreach_other_op_db)}


def _executions():
    torch.tpu.synchronize()
    return debug.metrics()["executions"]


def _lists(device, dtype=torch.float32, seed=0):
    """Three tensors of different shapes: a matrix, a transposed
    (non-contiguous) view of a bigger one's slice, and a 0-dim tensor."""
    g = torch.Generator().manual_seed(seed)
    base = torch.rand(6, 5, generator=g) + 0.5
    ts = [torch.rand(3, 4, generator=g) + 0.5, base, torch.rand((), generator=g) + 0.5]
    ts = [t.to(dtype).to(device) for t in ts]
    ts[1] = ts[1][1:5].t()
    return ts


def test_generated_overload_list_is_current():
    # csrc/ops/foreach_overloads.h is generated from the installed torch.
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_foreach_overloads.py"),
                        "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_listed_overload_has_a_tpu_kernel():
    header = (ROOT / "csrc" / "ops" / "foreach_overloads.h").read_text()
    names = [line.split('"')[1] for line in header.splitlines() if line.startswith('  X("')]
    assert len(names) > 100
    missing = [n for n in names
               if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{n}", "PrivateUse1")]
    assert not missing


def _scalar_list(n):
    return [1.5, -0.25, 2.0][:n]


# (name, call on (lists a, b, c), in_place)
CASES = [
    ("add_scalar", lambda a, b, c: torch._foreach_add(a, 2.5)),
    ("add_list_alpha", lambda a, b, c: torch._foreach_add(a, b, alpha=-0.5)),
    ("add_scalarlist", lambda a, b, c: torch._foreach_add(a, _scalar_list(len(a)))),
    ("add_tensor", lambda a, b, c: torch._foreach_add(a, c[2], alpha=2)),
    ("sub_list", lambda a, b, c: torch._foreach_sub(a, b)),
    ("mul_tensor", lambda a, b, c: torch._foreach_mul(a, c[2])),
    ("div_scalarlist", lambda a, b, c: torch._foreach_div(a, _scalar_list(len(a)))),
    ("addcmul_scalar", lambda a, b, c: torch._foreach_addcmul(a, b, c, value=0.3)),
    ("addcdiv_scalarlist", lambda a, b, c: torch._foreach_addcdiv(a, b, c, _scalar_list(3))),
    ("lerp_scalar", lambda a, b, c: torch._foreach_lerp(a, b, 0.25)),
    ("lerp_list", lambda a, b, c: torch._foreach_lerp(a, b, c)),
    ("pow_scalar_and_tensor", lambda a, b, c: torch._foreach_pow(0.9, a)),
    ("pow_list", lambda a, b, c: torch._foreach_pow(a, b)),
    ("maximum_list", lambda a, b, c: torch._foreach_maximum(a, b)),
    ("clamp_min_scalar", lambda a, b, c: torch._foreach_clamp_min(a, 0.9)),
    ("sqrt", lambda a, b, c: torch._foreach_sqrt(a)),
    ("exp", lambda a, b, c: torch._foreach_exp(a)),
    ("neg", lambda a, b, c: torch._foreach_neg(a)),
    ("sigmoid", lambda a, b, c: torch._foreach_sigmoid(a)),
    ("reciprocal", lambda a, b, c: torch._foreach_reciprocal(a)),
    ("sign", lambda a, b, c: torch._foreach_sign(torch._foreach_sub(a, 1.0))),
    ("norm_2", lambda a, b, c: torch._foreach_norm(a)),
    ("norm_inf", lambda a, b, c: torch._foreach_norm(a, float("inf"))),
    ("max", lambda a, b, c: torch._foreach_max(a)),
]

IN_PLACE = [
    ("add_", lambda a, b, c: torch._foreach_add_(a, b, alpha=3)),
    ("mul_scalar_", lambda a, b, c: torch._foreach_mul_(a, 0.5)),
    ("addcdiv_", lambda a, b, c: torch._foreach_addcdiv_(a, b, c, value=-1.0)),
    ("lerp_", lambda a, b, c: torch._foreach_lerp_(a, b, 0.1)),
    ("sqrt_", lambda a, b, c: torch._foreach_sqrt_(a)),
    ("copy_", lambda a, b, c: torch._foreach_copy_(a, b)),
    ("zero_", lambda a, b, c: torch._foreach_zero_(a)),
    ("clamp_max_list_", lambda a, b, c: torch._foreach_clamp_max_(a, b)),
]


def _same_shapes(device, seed):
    a, b, c = (_lists(device, seed=seed + k) for k in range(3))
    return a, b, c


@pytest.mark.parametrize("mode", ["strict", "defer_and_fuse"])
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_foreach_out_of_place_matches_cpu(name, fn, mode):
    want = fn(*_same_shapes("cpu", 0))
    with torch_tpu.eager_mode(mode):
        args = _same_shapes(DEV, 0)
        before = _executions()
        got = fn(*args)
        ran = _executions() - before
    if mode == "strict" and name != "sign":
        assert ran == 1, f"{name}: {ran} programs"
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.device.type == "tpu" and g.dtype == w.dtype and g.shape == w.shape, (name, k)
        torch.testing.assert_close(g.cpu(), w, atol=1e-6, rtol=1e-5,
                                   msg=lambda m: f"{name}[{k}]: {m}")


@pytest.mark.parametrize("mode", ["strict", "defer_and_fuse"])
@pytest.mark.parametrize("name,fn", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_foreach_in_place_matches_cpu(name, fn, mode):
    a_cpu, b_cpu, c_cpu = _same_shapes("cpu", 1)
    fn(a_cpu, b_cpu, c_cpu)
    with torch_tpu.eager_mode(mode):
        a, b, c = _same_shapes(DEV, 1)
        base = a[1]._base
        before = _executions()
        fn(a, b, c)
        ran = _executions() - before
    if mode == "strict":
        assert ran == 1, f"{name}: {ran} programs"
    for k, (g, w) in enumerate(zip(a, a_cpu)):
        torch.testing.assert_close(g.cpu(), w, atol=1e-6, rtol=1e-5,
                                   msg=lambda m: f"{name}[{k}]: {m}")
    # The transposed view wrote through to its base, as on CPU.
    assert a[1]._base is base
    torch.testing.assert_close(base[1:5].t().cpu(), a_cpu[1])


def test_foreach_mixed_dtypes_promote_like_cpu():
    def make(device):
        return ([torch.arange(4, dtype=torch.int64).to(device),
                 torch.ones(2, 2, dtype=torch.bfloat16).to(device)],
                [torch.full((4,), 2.0).to(device), torch.ones(2, 2).to(device)])
    want = torch._foreach_add(*make("cpu"))
    got = torch._foreach_add(*make(DEV))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        assert torch.equal(g.cpu(), w)
    want = torch._foreach_sqrt(make("cpu")[0])
    got = torch._foreach_sqrt(make(DEV)[0])
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w)


def test_foreach_errors_like_cpu():
    for device in ("cpu", DEV):
        a, b, _ = _same_shapes(device, 2)
        with pytest.raises(RuntimeError, match="same"):
            torch._foreach_add(a, b[:2])
        with pytest.raises(RuntimeError):
            torch._foreach_add_(a, [torch.ones(7, device=device)] * 3)
    # A failing op leaves later Strict work unaffected.
    a, b, _ = _same_shapes(DEV, 2)
    assert torch._foreach_add(a, 1.0)[0].device.type == "tpu"


def test_foreach_empty_list_raises_like_cpu():
    # CPU's check comes before any device is known: tpu gives the same.
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_add([], 1.0)


def test_debug_mode_launches_per_tensor():
    with torch_tpu.eager_mode("debug"):
        a, b, _ = _same_shapes(DEV, 3)
        before = _executions()
        torch._foreach_add_(a, b)
        assert _executions() - before == 3


def _adamw_train(device, steps=3):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1, foreach=True)
    g = torch.Generator().manual_seed(1)
    launches = []
    for _ in range(steps):
        x, y = torch.randn(16, 8, generator=g).to(device), torch.randn(16, 4, generator=g).to(device)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        total = nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=True)
        if device == DEV:
            before = _executions()
        opt.step()
        if device == DEV:
            launches.append(_executions() - before)
    return [p.detach().cpu() for p in model.parameters()], total.cpu(), launches


def test_foreach_adamw_and_clip_match_cpu_in_few_programs():
    want, want_total, _ = _adamw_train("cpu")
    got, total, launches = _adamw_train(DEV)
    for k, (g, w) in enumerate(zip(got, want)):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-4, msg=lambda m: f"param {k}: {m}")
    torch.testing.assert_close(total, want_total, atol=1e-5, rtol=1e-5)
    # One program per for-each op of the step (about a dozen), not one per
    # tensor per op (4 tensors x that).
    assert max(launches) <= 16, launches


@pytest.mark.parametrize("mode,most", [("strict", 8), ("defer_and_fuse", 1)])
def test_clip_grad_norm_programs(mode, most):
    # Strict: _foreach_norm, stack, vector_norm, the coefficient's three
    # scalar ops, _foreach_mul_ (before: one program per gradient in each
    # for-each op, 2 x 12 more); DeferAndFuse: one.
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(6)])
    x = torch.randn(4, 8)
    model(x).sum().backward()
    want = nn.utils.clip_grad_norm_(model.parameters(), 0.1, foreach=True)
    want_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model = model.to(DEV)
    model(x.to(DEV)).sum().backward()
    with torch_tpu.eager_mode(mode):
        before = _executions()
        total = nn.utils.clip_grad_norm_(model.parameters(), 0.1, foreach=True)
        ran = _executions() - before
    assert ran <= most
    torch.testing.assert_close(total.cpu(), want)
    for g, w in zip([p.grad for p in model.parameters()], want_grads):
        torch.testing.assert_close(g.cpu(), w)


def _to(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("variant", ["method_variant", "inplace_variant"])
@pytest.mark.parametrize("name", sorted(FOREACH_OPINFOS))
def test_foreach_opinfo_samples_match_cpu(name, variant, dtype):
    # PyTorch's own for-each OpInfos: their first samples (lists of three
    # tensors, with scalar, scalar-list and tensor operands) out of place
    # and in place, tpu against CPU.
    op = FOREACH_OPINFOS[name]
    fn = getattr(op, variant)
    if fn is None or dtype not in op.dtypes:
        pytest.skip(f"{name} has no {variant} for {dtype}")
    samples = list(op.sample_inputs("cpu", dtype, num_input_tensors=[3]))[:3]
    assert samples
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    for k, sample in enumerate(samples):
        cpu_in = [t.clone() for t in sample.input]
        want = fn(cpu_in, *sample.args, **sample.kwargs)
        tpu_in = [t.clone().to(DEV) for t in sample.input]
        got = fn(tpu_in, *_to(sample.args, DEV), **_to(sample.kwargs, DEV))
        if variant == "inplace_variant":
            want, got = cpu_in, tpu_in
        assert len(got) == len(want)
        for j, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape, (name, k, j)
            torch.testing.assert_close(g.cpu(), w, equal_nan=True, **tol,
                                       msg=lambda m: f"{name} sample {k} [{j}]: {m}")

"""Differential tests of the nn, indexing and random operators: each case runs
on the CPU and on the tpu device and the results must agree.

`check(fn, *args)` builds a CPU and a tpu copy of every tensor argument (the
floating ones as leaves that require grad, unless wrapped in `Const`), runs
`fn` on both, compares every output (values, dtype and shape; integer and bool
outputs exactly), then back-propagates the same random gradient through every
floating output on both devices and compares the gradients of the leaves.
Tolerances: float32 atol 1e-5, rtol 1e-4 everywhere (conv and norms included);
bfloat16 2e-2; integer and bool outputs (indices, nonzero, ...) exactly.

Sections: convolution, normalization, pooling/upsampling, losses, embedding
and attention, indexing/shape ops, random numbers, Debug-mode bounds checks,
optimizers.

The CPU fallback is switched off for the module and every test also asserts
that `torch_tpu.debug.metrics()["cpu_fallbacks"]` did not move, so an operator
without a tpu lowering fails with NotImplementedError instead of passing on the
CPU.

Shapes are shared between cases where possible: every new shape compiles new
XLA programs (~50 ms each), which is most of the run time (~60 s on 2 cores).

Known backend bugs are strict xfails whose reason starts with 'BUG:'.
"""

import copy
import itertools
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu

DEV = "tpu"
ATOL, RTOL = 1e-5, 1e-4
LOW_PRECISION_TOL = 2e-2

pytestmark = [
    pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss:UserWarning"),
    pytest.mark.usefixtures("cpu_fallback_off"),
]


# ---------------------------------------------------------------------------
# fixtures and helpers
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _cheap_tpu_repr():
    """pytest prints the arguments of every frame of a failure's traceback;
    printing a tpu tensor runs (and compiles) hundreds of small programs, which
    made one failure report take a minute. Show a summary instead."""
    orig = torch.Tensor.__repr__

    def short_repr(self, *args, **kwargs):
        if self.device.type == DEV:
            return f"<{DEV} tensor {tuple(self.shape)} {self.dtype}>"
        return orig(self, *args, **kwargs)

    torch.Tensor.__repr__ = short_repr
    yield
    torch.Tensor.__repr__ = orig


@pytest.fixture(autouse=True)
def no_cpu_fallback():
    """Each test runs with fixed CPU seeds and must not use the CPU fallback."""
    torch.manual_seed(0)
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    ops_before = torch_tpu.debug.fallback_ops()
    yield
    after = torch_tpu.debug.metrics()["cpu_fallbacks"]
    if after != before:
        ops_after = torch_tpu.debug.fallback_ops()
        used = {k: v - ops_before.get(k, 0) for k, v in ops_after.items() if v != ops_before.get(k, 0)}
        pytest.fail(f"the CPU fallback ran: {used}")


class Const:
    """An argument of `check` that is moved to the device but never differentiated."""

    def __init__(self, value):
        self.value = value


def _place(a, device, grad):
    if isinstance(a, Const):
        a = a.value
        return a.detach().clone().to(device) if isinstance(a, torch.Tensor) else a
    if isinstance(a, torch.Tensor):
        t = a.detach().clone().to(device)
        if grad and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_()
        return t
    if isinstance(a, (list, tuple)):
        return type(a)(_place(x, device, grad) for x in a)
    return a


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.requires_grad:
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_leaves(a))
    return out


def _tol(t, atol, rtol):
    if t.dtype in (torch.bfloat16, torch.float16):
        return (atol or LOW_PRECISION_TOL), (rtol or LOW_PRECISION_TOL)
    return (ATOL if atol is None else atol), (RTOL if rtol is None else rtol)


def assert_same(actual, expected, what="output", atol=None, rtol=None):
    """`actual` (tpu) against `expected` (CPU): dtype, shape, values."""
    assert isinstance(actual, torch.Tensor), f"{what}: {actual!r} is not a tensor"
    assert actual.device.type == DEV, f"{what} is on {actual.device}"
    at, rt = _tol(expected, atol, rtol)
    torch.testing.assert_close(actual.cpu(), expected, atol=at, rtol=rt, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


def check(fn, *args, grad=True, atol=None, rtol=None, grad_atol=None, grad_rtol=None):
    """Runs fn on CPU and tpu copies of args; compares outputs and gradients.

    Returns (cpu_outputs, tpu_outputs) as flat lists."""
    cpu = [_place(a, "cpu", grad) for a in args]
    tpu = [_place(a, DEV, grad) for a in args]
    oc, ot = _flat(fn(*cpu)), _flat(fn(*tpu))
    assert len(oc) == len(ot), f"{len(ot)} outputs on tpu, {len(oc)} on cpu"
    for i, (e, a) in enumerate(zip(oc, ot)):
        if isinstance(e, torch.Tensor):
            assert_same(a, e, f"output {i}", atol, rtol)
        else:
            assert a == e, f"output {i}: tpu {a!r} cpu {e!r}"
    if not grad:
        return oc, ot
    diff_c = [(i, o) for i, o in enumerate(oc) if isinstance(o, torch.Tensor) and o.requires_grad]
    diff_t = [(i, o) for i, o in enumerate(ot) if isinstance(o, torch.Tensor) and o.requires_grad]
    assert [i for i, _ in diff_c] == [i for i, _ in diff_t], "outputs that require grad differ"
    wrt_c, wrt_t = _leaves(cpu), _leaves(tpu)
    if not diff_c or not wrt_c:
        return oc, ot
    g = torch.Generator().manual_seed(1234)
    gouts = [torch.randn(o.shape, generator=g).to(o.dtype) for _, o in diff_c]
    gc = torch.autograd.grad([o for _, o in diff_c], wrt_c, gouts, allow_unused=True)
    gt = torch.autograd.grad([o for _, o in diff_t], wrt_t, [x.to(DEV) for x in gouts],
                             allow_unused=True)
    for k, (e, a) in enumerate(zip(gc, gt)):
        if e is None:
            assert a is None or not a.cpu().any(), f"grad {k}: None on cpu, nonzero on tpu"
            continue
        assert a is not None, f"grad {k}: None on tpu"
        assert_same(a, e, f"grad {k}", grad_atol if grad_atol is not None else atol,
                    grad_rtol if grad_rtol is not None else rtol)
    return oc, ot


def train_like_cpu(cpu_model, loss_fn, make_opt, steps=3, atol=1e-5, rtol=1e-4):
    """Trains `cpu_model` and a tpu copy for `steps` steps (loss_fn(model,
    device) -> loss) and compares their parameters afterwards: a whole
    module, autograd and optimizer flow, beside the per-op checks."""
    tpu_model = copy.deepcopy(cpu_model).to(DEV)
    for model in (cpu_model, tpu_model):
        device = next(model.parameters()).device
        opt = make_opt(model.parameters())
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(model, device).backward()
            opt.step()
    for a, e in zip(tpu_model.parameters(), cpu_model.parameters()):
        assert_same(a, e, f"parameter after {steps} steps", atol=atol, rtol=rtol)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def L(values):
    """An int64 index tensor."""
    return torch.tensor(values, dtype=torch.long)


def unique_per_row(rows, n, k):
    """(rows, k) int64 index, each row k distinct values in [0, n)."""
    return torch.stack([torch.randperm(n)[:k] for _ in range(rows)])


def xfail_params(cases, ids, bugs):
    """pytest.param list; cases whose id is in `bugs` are strict xfails."""
    return [pytest.param(*(c if isinstance(c, tuple) else (c,)), id=i,
                         marks=[pytest.mark.xfail(strict=True, reason=bugs[i])] if i in bugs else [])
            for c, i in zip(cases, ids)]


def _ids(cases):
    return [c if isinstance(c, str) else "-".join(map(str, c)).replace(" ", "") for c in cases]


# ---------------------------------------------------------------------------
# 0. linear
# ---------------------------------------------------------------------------
# On the CPU plugin x @ W.T takes one of two forms (ops/matmul_forms.cc): the
# transposed-weight form where W has more elements than x and the result
# together (a few rows: decoding), the plain dot otherwise (a training
# batch). Rows, features in, features out: both sides of that rule, one row,
# and a 3-d input.
LINEAR_CASES = [(1, 64, 192), (8, 64, 192), (40, 64, 192), (256, 64, 192), (130, 96, 40),
                (4, 96, 300)]


@pytest.mark.parametrize("rows,k,n", LINEAR_CASES, ids=[f"{m}x{k}x{n}" for m, k, n in LINEAR_CASES])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear_both_matmul_forms(rows, k, n, bias):
    args = [torch.randn(rows, k), torch.randn(n, k) / k ** 0.5]
    if bias:
        args.append(torch.randn(n))
    check(lambda x, w, *b: F.linear(x, w, *b), *args)


def test_linear_3d_input():
    check(lambda x, w, b: F.linear(x, w, b), torch.randn(2, 16, 64), torch.randn(256, 64) / 8,
          torch.randn(256))


# ---------------------------------------------------------------------------
# 1. convolution
# ---------------------------------------------------------------------------
# (stride, padding, dilation, groups, bias): every combination of the first
# four; bias on in half of them, so each value of each parameter is seen with
# and without bias.
CONV2D_CASES = [(s, p, d, g, (s + p + d + g) % 2 == 0)
                for s, p, d, g in itertools.product([1, 2], [0, 1], [1, 2], [1, 2])]


@pytest.mark.parametrize("stride,padding,dilation,groups,bias", CONV2D_CASES,
                         ids=[f"s{s}-p{p}-d{d}-g{g}-{'bias' if b else 'nobias'}"
                              for s, p, d, g, b in CONV2D_CASES])
def test_conv2d(stride, padding, dilation, groups, bias):
    check(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding,
                                   dilation=dilation, groups=groups),
          randn(2, 4, 9, 8), randn(6, 4 // groups, 3, 2), randn(6) if bias else None)


# (stride, padding, dilation, groups, bias): each value of each parameter twice
CONV1D_CASES = [(1, 0, 1, 1, True), (2, 1, 2, 2, False), (1, 1, 2, 1, False), (2, 0, 1, 2, True)]


@pytest.mark.parametrize("stride,padding,dilation,groups,bias", CONV1D_CASES,
                         ids=[f"s{s}-p{p}-d{d}-g{g}-{'bias' if b else 'nobias'}"
                              for s, p, d, g, b in CONV1D_CASES])
def test_conv1d(stride, padding, dilation, groups, bias):
    check(lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=padding,
                                   dilation=dilation, groups=groups),
          randn(2, 4, 11), randn(6, 4 // groups, 3), randn(6) if bias else None)


# (stride, padding, output_padding, dilation, groups, bias); output_padding
# must be smaller than stride or dilation.
CONVT_CASES = [
    (1, 0, 0, 1, 2, True),
    (1, 1, 0, 2, 1, False),
    (2, 0, 0, 2, 1, True),
    (2, 1, 0, 1, 2, False),
    (2, 0, 1, 1, 1, False),
    (2, 1, 1, 2, 2, True),
    (2, 1, 1, 1, 1, True),
    (1, 1, 1, 2, 2, True),  # output_padding < dilation, not < stride
]


CONVT_BUGS = {}


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups,bias", xfail_params(
    CONVT_CASES, [f"s{s}-p{p}-op{op}-d{d}-g{g}-{'bias' if b else 'nobias'}"
                  for s, p, op, d, g, b in CONVT_CASES], CONVT_BUGS))
def test_conv_transpose2d(stride, padding, output_padding, dilation, groups, bias):
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=stride, padding=padding,
                                             output_padding=output_padding, groups=groups,
                                             dilation=dilation),
          randn(2, 4, 5, 6), randn(4, 6 // groups, 3, 3), randn(6) if bias else None)


@pytest.mark.parametrize("kernel,dilation", [((3, 3), 1), ((4, 3), 1), ((3, 2), 2)],
                         ids=["k3x3", "k4x3-asymmetric", "k3x2-d2"])
def test_conv2d_padding_same(kernel, dilation):
    _, (out,) = check(lambda x, w, b: F.conv2d(x, w, b, padding="same", dilation=dilation),
                      randn(2, 4, 9, 8), randn(6, 4, *kernel), randn(6))
    assert out.shape == (2, 6, 9, 8)


def test_conv2d_padding_valid():
    check(lambda x, w: F.conv2d(x, w, padding="valid"), randn(2, 4, 9, 8), randn(6, 4, 3, 2))


@pytest.mark.parametrize("stride,groups", [(1, 1), (2, 2)])
def test_conv2d_bf16_forward(stride, groups):
    check(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=1, groups=groups),
          randn(2, 4, 9, 8, dtype=torch.bfloat16),
          randn(6, 4 // groups, 3, 3, dtype=torch.bfloat16),
          randn(6, dtype=torch.bfloat16), grad=False)


def test_conv2d_batch_norm_channels_last():
    """channels_last (NHWC-strided) inputs."""
    check(lambda x, w, g, b: F.batch_norm(F.conv2d(x, w, padding=1), None, None, g, b, True),
          randn(2, 4, 9, 8).to(memory_format=torch.channels_last), randn(6, 4, 3, 3),
          randn(6), randn(6))


def test_conv2d_module_train_step():
    """nn.Conv2d weight/bias grads after a loss, through the module API."""
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    x = randn(2, 3, 8, 8)
    conv_t = copy.deepcopy(conv).to(DEV)
    conv(x).square().mean().backward()
    conv_t(x.to(DEV)).square().mean().backward()
    assert_same(conv_t.weight.grad, conv.weight.grad, "weight.grad")
    assert_same(conv_t.bias.grad, conv.bias.grad, "bias.grad")


# ---------------------------------------------------------------------------
# 2. normalization
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "noaffine"])
def test_batch_norm_running_stats(training, affine):
    x = randn(4, 3, 5, 5) * 2 + 1
    rm, rv = randn(3) * 0.1, torch.rand(3) + 0.5

    def fn(x, w, b, rm, rv):
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-5)
        return y, rm, rv  # the running stats after the in-place update

    check(fn, x, randn(3) if affine else None, randn(3) if affine else None,
          Const(rm), Const(rv))


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5, 5)], ids=["2d", "4d"])
def test_batch_norm_no_running_stats(shape):
    check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
          randn(*shape) * 3 - 1, randn(3), randn(3))


@pytest.mark.parametrize("momentum", [None, 0.1], ids=["cumulative", "momentum0.1"])
def test_batchnorm2d_module(momentum):
    """nn.BatchNorm2d over 3 training steps, then eval: outputs, grads, running
    stats and num_batches_tracked."""
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(3, momentum=momentum)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    bn_t = copy.deepcopy(bn).to(DEV)
    for step in range(3):
        x = randn(4, 3, 5, 5) * (step + 1) + step
        xc, xt = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        yc, yt = bn(xc), bn_t(xt)
        assert_same(yt, yc, f"step {step} output")
        g = randn(*yc.shape)
        yc.backward(g)
        yt.backward(g.to(DEV))
        assert_same(xt.grad, xc.grad, f"step {step} x.grad")
    assert_same(bn_t.weight.grad, bn.weight.grad, "weight.grad")
    assert_same(bn_t.bias.grad, bn.bias.grad, "bias.grad")
    assert_same(bn_t.running_mean, bn.running_mean, "running_mean")
    assert_same(bn_t.running_var, bn.running_var, "running_var")
    assert bn_t.num_batches_tracked.item() == bn.num_batches_tracked.item() == 3
    bn.eval()
    bn_t.eval()
    x = randn(2, 3, 5, 5)
    with torch.no_grad():
        assert_same(bn_t(x.to(DEV)), bn(x), "eval output")


@pytest.mark.parametrize("normalized_shape,affine", [
    ((4, 5), True), ((4, 5), False), ((5,), True), ((5,), False), ((5,), "weight_only")],
    ids=["2dims-affine", "2dims-noaffine", "1dim-affine", "1dim-noaffine", "1dim-weightonly"])
def test_layer_norm(normalized_shape, affine):
    w = randn(*normalized_shape) if affine else None
    b = randn(*normalized_shape) if affine is True else None
    check(lambda x, w, b: F.layer_norm(x, normalized_shape, w, b, eps=1e-5),
          randn(3, 4, 5) * 2 + 0.5, w, b)


def test_layer_norm_module():
    torch.manual_seed(0)
    ln = nn.LayerNorm(8)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    check(lambda x, w, b: F.layer_norm(x, (8,), w, b, ln.eps), randn(2, 3, 8),
          ln.weight, ln.bias)


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "noaffine"])
def test_layer_norm_bf16(affine):
    check(lambda x, w, b: F.layer_norm(x, (8,), w, b),
          randn(3, 4, 8, dtype=torch.bfloat16),
          randn(8, dtype=torch.bfloat16) if affine else None,
          randn(8, dtype=torch.bfloat16) if affine else None)


@pytest.mark.parametrize("normalized_shape,weight,eps", [
    ((5,), True, None), ((5,), False, None), ((4, 5), True, 1e-3)],
    ids=["1dim-weight", "1dim-noweight", "2dims-eps"])
def test_rms_norm(normalized_shape, weight, eps):
    check(lambda x, w: F.rms_norm(x, normalized_shape, w, eps=eps),
          randn(3, 4, 5), randn(*normalized_shape) if weight else None)


@pytest.mark.parametrize("shape,groups,affine", [
    ((3, 4, 5, 2), 2, True), ((3, 4, 5, 2), 4, False), ((3, 4, 5), 1, True), ((3, 4, 5), 2, False)],
    ids=["4d-g2-affine", "4d-g4-noaffine", "3d-g1-affine", "3d-g2-noaffine"])
def test_group_norm(shape, groups, affine):
    c = shape[1]
    check(lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-5),
          randn(*shape) * 2 + 1, randn(c) if affine else None, randn(c) if affine else None)


def test_batch_norm_entry_points_of_exported_graphs():
    """The names torch.export's and AOTAutograd's graphs call batch norm by,
    values, running statistics and gradients (batch_norm_backward)."""
    torch.manual_seed(0)
    base = (randn(4, 3, 5), torch.rand(3) + 0.5, randn(3), torch.zeros(3), torch.ones(3))
    aten = torch.ops.aten
    calls = {
        "legit": lambda a: aten._native_batch_norm_legit(*a, True, 0.1, 1e-5),
        "legit_eval": lambda a: aten._native_batch_norm_legit(*a, False, 0.1, 1e-5),
        "no_stats": lambda a: aten._native_batch_norm_legit.no_stats(*a[:3], True, 0.1, 1e-5),
        "no_training": lambda a: aten._native_batch_norm_legit_no_training(*a, 0.1, 1e-5),
        "with_update": lambda a: aten._batch_norm_with_update(*a, 0.1, 1e-5)[:3],
        "functional": lambda a: aten._batch_norm_with_update_functional(*a, 0.1, 1e-5),
        "no_update": lambda a: aten._batch_norm_no_update(*a, 0.1, 1e-5)[:3],
    }
    for name, call in calls.items():
        cpu = [t.clone().requires_grad_(i < 3) for i, t in enumerate(base)]
        tpu = [t.clone().to(DEV).requires_grad_(i < 3) for i, t in enumerate(base)]
        outs_cpu, outs_tpu = call(cpu), call(tpu)
        for e, a in zip(outs_cpu, outs_tpu):
            assert_same(a, e.detach(), f"{name} output")
        for e, a in zip(cpu[3:], tpu[3:]):
            assert_same(a, e, f"{name} running statistics")
        if name in ("legit", "with_update", "no_stats"):
            g = randn(*outs_cpu[0].shape)
            outs_cpu[0].backward(g)
            outs_tpu[0].backward(g.to(DEV))
            for e, a in zip(cpu[:3], tpu[:3]):
                assert_same(a.grad, e.grad, f"{name} gradient")


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_exported_program_runs_on_tpu(train):
    """torch.export -> core ATen IR (run_decompositions) -> .module() on tpu:
    batch norm arrives as _native_batch_norm_legit_functional (train) or
    _no_training (eval)."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.act = nn.PReLU(4)
            self.head = nn.Linear(4 * 6 * 6, 2)

        def forward(self, x):
            return self.head(self.act(self.bn(self.conv(x))).flatten(1))

    torch.manual_seed(0)
    model = Net().train(train)
    x = randn(2, 3, 6, 6)
    ep = torch.export.export(model, (x,)).run_decompositions()
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    expected = ("aten._native_batch_norm_legit_functional.default" if train
                else "aten._native_batch_norm_legit_no_training.default")
    assert expected in targets, targets
    on_cpu, on_tpu = ep.module(), copy.deepcopy(ep.module()).to(DEV)
    out_cpu, out_tpu = on_cpu(x), on_tpu(x.to(DEV))
    assert_same(out_tpu, out_cpu.detach(), "output")
    for (name, e), (_, a) in zip(on_cpu.named_buffers(), on_tpu.named_buffers()):
        assert_same(a, e, name)  # the running statistics the train graph updated
    if train:
        return  # (its backward fails on CPU too: the graph updates a buffer it saved)
    out_cpu.sum().backward()
    out_tpu.sum().backward()
    for (name, e), (_, a) in zip(on_cpu.named_parameters(), on_tpu.named_parameters()):
        assert_same(a.grad, e.grad, f"{name}.grad")


def test_shrink_prelu_rsub_channel_shuffle_edges_like_cpu():
    x = torch.tensor([float("nan"), 0.3, -0.7, 0.5, -0.5, 2.0, -3.0, 0.0])
    check(lambda t: (F.softshrink(t, 0.5), F.hardshrink(t, 0.5), F.hardshrink(t, 0.0)), x, grad=False)
    check(lambda t, w: F.prelu(t, w), x.view(1, 8), torch.tensor([0.25]), grad=False)
    check(lambda a, b: torch.rsub(a, b, alpha=2), torch.arange(4), torch.ones(4), grad=False)
    a, b = randn(2, 3), randn(3, 2).t()
    for x, y in ((a, b), (b, a)):  # the result takes other's layout, as CPU's sub(other, self)
        assert torch.rsub(x.to(DEV), y.to(DEV)).stride() == torch.rsub(x, y).stride()
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double"):
            torch.ops.aten.rsub.Tensor_out(a.to(device), a.to(device),
                                           out=torch.empty(2, 3, dtype=torch.float64, device=device))
    check(lambda t: (F.channel_shuffle(t, 3), nn.ChannelShuffle(2)(t)), randn(2, 6, 3, 3))
    cases = [
        (lambda d: F.softshrink(torch.ones(3, device=d), -1), RuntimeError, "lambda must be in range"),
        (lambda d: F.softshrink(torch.ones(3, dtype=torch.long, device=d)), NotImplementedError,
         "not implemented for 'Long'"),
        (lambda d: F.prelu(torch.ones(3, dtype=torch.long, device=d), torch.ones(1, dtype=torch.long, device=d)),
         NotImplementedError, "not implemented for 'Long'"),
        (lambda d: torch.rsub(torch.ones(3, dtype=torch.bool, device=d), torch.ones(3, dtype=torch.bool, device=d)),
         RuntimeError, "with two bool tensors is not supported"),
        (lambda d: torch.channel_shuffle(torch.ones(1, 6, 2, 2, device=d), 4), RuntimeError,
         "Number of channels must be divisible by groups"),
        (lambda d: torch.channel_shuffle(torch.ones(6, device=d), 3), RuntimeError, "expects input with > 2 dims"),
    ]
    for fn, exc, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(exc, match=message):
                fn(device)


# ---------------------------------------------------------------------------
# 3. pooling and upsampling
# ---------------------------------------------------------------------------

# (kernel, stride, padding, dilation, ceil_mode)
MAXPOOL_CASES = [
    (2, None, 0, 1, False),
    (2, 1, 1, 1, False),
    (3, 2, 1, 1, False),
    (3, 2, 1, 1, True),
    (3, 2, 1, 2, True),
    ((3, 2), (2, 1), (1, 0), (1, 2), False),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAXPOOL_CASES,
                         ids=_ids(MAXPOOL_CASES))
def test_max_pool2d(kernel, stride, padding, dilation, ceil_mode):
    """Values, gradients, and (return_indices) the indices, exactly."""
    x = randn(2, 3, 9, 8)
    check(lambda x: F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode),
          x)
    check(lambda x: F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode,
                                 return_indices=True), x)


def test_max_pool2d_unbatched_and_module():
    check(lambda x: nn.MaxPool2d(3, 2, padding=1, return_indices=True)(x), randn(3, 9, 8))


# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVGPOOL_CASES = [
    (2, None, 0, False, True, None),
    (3, 2, 1, False, False, None),
    (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None),
    (2, 2, 1, True, True, None),
    (3, 1, 1, False, True, 4),
    (3, 2, 1, True, False, 5),
    ((3, 2), (2, 1), (1, 0), False, False, None),
]


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor_override",
                         AVGPOOL_CASES, ids=_ids(AVGPOOL_CASES))
def test_avg_pool2d(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    check(lambda x: F.avg_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode,
                                 count_include_pad=count_include_pad,
                                 divisor_override=divisor_override),
          randn(2, 3, 9, 8))


# (kernel, stride, padding, dilation, ceil_mode) over [N, C, D, H, W]
MAXPOOL3D_CASES = [
    (2, None, 0, 1, False),
    (3, 2, 1, 1, True),
    ((2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), False),
    ((1, 3, 3), (1, 2, 2), (0, 1, 1), 1, True),    # a video model's spatial-only pool
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAXPOOL3D_CASES,
                         ids=_ids(MAXPOOL3D_CASES))
def test_max_pool3d(kernel, stride, padding, dilation, ceil_mode):
    x = randn(2, 3, 5, 7, 6)
    check(lambda x: F.max_pool3d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode,
                                 return_indices=True), x)
    check(lambda x: nn.MaxPool3d(kernel, stride, padding, dilation, ceil_mode=ceil_mode)(x),
          randn(3, 5, 7, 6))  # unbatched


# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVGPOOL3D_CASES = [
    (2, None, 0, False, True, None),
    (3, 2, 1, True, False, None),
    (3, 2, 1, True, True, None),
    ((2, 3, 2), (1, 2, 1), (1, 1, 0), False, False, 5),
    ((1, 2, 2), None, 0, True, True, None),
]


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor_override",
                         AVGPOOL3D_CASES, ids=_ids(AVGPOOL3D_CASES))
def test_avg_pool3d(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    kw = dict(ceil_mode=ceil_mode, count_include_pad=count_include_pad,
              divisor_override=divisor_override)
    check(lambda x: F.avg_pool3d(x, kernel, stride, padding, **kw), randn(2, 3, 5, 7, 6))
    check(lambda x: nn.AvgPool3d(kernel, stride, padding, **kw)(x), randn(3, 5, 7, 6))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int64])
def test_pool3d_dtypes_and_out(dtype):
    x = torch.randint(-9, 9, (2, 3, 4, 6, 5)).to(dtype)
    grad = dtype == torch.float64
    check(lambda x: F.max_pool3d(x, 2, return_indices=True), x, grad=grad)
    if dtype == torch.bfloat16:  # CPU's avg_pool3d has no bfloat16 (CUDA's has): float32's, rounded
        got = F.avg_pool3d(x.to(DEV), (2, 3, 2), padding=1).cpu()
        torch.testing.assert_close(got, F.avg_pool3d(x.float(), (2, 3, 2), padding=1).to(dtype))
    else:
        check(lambda x: F.avg_pool3d(x, (2, 3, 2), padding=1), x, grad=grad)  # int64: CPU's rounding
    out, idx = torch.empty(0, dtype=dtype, device=DEV), torch.empty(0, dtype=torch.long, device=DEV)
    torch.ops.aten.max_pool3d_with_indices.out(x.to(DEV), [2, 2, 2], [], [0, 0, 0], [1, 1, 1],
                                               False, out=out, indices=idx)
    expected = torch.ops.aten.max_pool3d_with_indices(x, [2, 2, 2], [], [0, 0, 0], [1, 1, 1], False)
    assert torch.equal(out.cpu(), expected[0]) and torch.equal(idx.cpu(), expected[1])
    avg = torch.empty(3, dtype=dtype, device=DEV)
    torch.ops.aten.avg_pool3d.out(x.to(DEV), [2, 2, 2], [], [0, 0, 0], out=avg)
    ref = x.float() if dtype == torch.bfloat16 else x
    expected = torch.ops.aten.avg_pool3d(ref, [2, 2, 2], [], [0, 0, 0]).to(dtype)
    assert torch.equal(avg.cpu(), expected)


def test_pool3d_bad_input_raises_like_cpu():
    x = randn(1, 2, 5, 5, 5)
    cases = [
        (lambda t: F.max_pool3d(t, (2, 2)), "max_pool3d: kernel_size must either be a single int, or a tuple of three ints"),
        (lambda t: F.max_pool3d(t, 2, stride=(1, 1)), "max_pool3d: stride must either be omitted"),
        (lambda t: F.max_pool3d(t, 2, padding=(1, 1)), "max_pool3d: padding must either be"),
        (lambda t: F.max_pool3d(t, 2, dilation=(1, 1)), "max_pool3d: dilation must be either"),
        (lambda t: F.avg_pool3d(t, (2, 2)), "avg_pool3d: kernel_size must be a single int"),
        (lambda t: F.avg_pool3d(t, 2, divisor_override=0), "divisor must be not zero"),
        (lambda t: F.max_pool3d(t, 2, padding=2), "pad should be at most half of effective kernel size"),
        (lambda t: F.avg_pool3d(t[:, :, :1], 2), "input image \\(T: 1 H: 5 W: 5\\) smaller than kernel size"),
        (lambda t: F.max_pool3d(t[:, :, :1], 2), "Output size is too small"),
        (lambda t: F.max_pool3d(t[0, 0], 2), "non-empty 4D or 5D \\(batch mode\\) tensor expected"),
        (lambda t: F.max_pool3d(t[:, :0], 2), "non-batch dimension 0 has length zero"),
    ]
    for fn, message in cases:
        for t in (x, x.to(DEV)):
            with pytest.raises(RuntimeError, match=message):
                fn(t)
    for dtype, name in ((torch.int32, '"avg_pool3d_out_frame" not implemented for \'Int\''),
                        (torch.bool, '"avg_pool2d" not implemented for \'Bool\''),
                        (torch.uint8, '"avg_pool2d" not implemented for \'Byte\'')):
        for t in (x.to(dtype), x.to(dtype).to(DEV)):
            with pytest.raises(NotImplementedError, match=name):
                (F.avg_pool3d if "3d" in name else F.avg_pool2d)(t if "3d" in name else t[0], 2)
    for t in (x.bool(), x.bool().to(DEV)):
        with pytest.raises(NotImplementedError, match='"max_pool3d" not implemented for \'Bool\''):
            F.max_pool3d(t, 2)
    # an empty batch is an empty result, as on CPU
    assert F.max_pool3d(torch.zeros(0, 2, 4, 4, 4, device=DEV), 2).shape == (0, 2, 2, 2, 2)


def test_video_classifier_trains_like_cpu():
    """A small 3D CNN (conv3d, max_pool3d, avg_pool3d) trained for a few steps."""
    torch.manual_seed(0)
    cpu = nn.Sequential(nn.Conv3d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool3d((1, 2, 2)),
                        nn.Conv3d(4, 6, 3, padding=1), nn.ReLU(), nn.AvgPool3d(2, ceil_mode=True),
                        nn.Flatten(), nn.LazyLinear(5))
    x = randn(2, 3, 4, 8, 8)
    cpu(x)  # materializes the lazy layer
    target = torch.tensor([1, 3])
    train_like_cpu(cpu, lambda m, d: F.cross_entropy(m(x.to(d)), target.to(d)),
                   lambda p: torch.optim.Adam(p, lr=1e-2), atol=1e-4)


@pytest.mark.parametrize("in_hw,out", [((9, 8), 1), ((7, 7), 3), ((9, 8), (4, 3)), ((7, 8), (None, 3))],
                         ids=["to1", "7to3", "9x8to4x3", "keep-h"])
def test_adaptive_avg_pool2d(in_hw, out):
    check(lambda x: F.adaptive_avg_pool2d(x, out), randn(2, 3, *in_hw))


@pytest.mark.parametrize("in_hw,out", [((9, 7), (2, 3)), ((10, 10), 1), ((9, 7), (4, 5)),
                                        ((5, 5), (7, 9)), ((7, 8), (None, 3))],
                         ids=["9x7to2x3", "global", "overlapping", "upsampling", "keep-h"])
def test_adaptive_max_pool2d(in_hw, out):
    # (windows of adaptive pooling overlap when sizes do not divide; the
    # indices are flat h * W + w per plane, compared exactly)
    check(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True), randn(2, 3, *in_hw))


def test_adaptive_max_pool_ties_unbatched_1d_and_modules():
    # Integer-valued floats tie within windows: CPU reports the first
    # maximum in row-major order.
    ties = torch.randint(0, 3, (2, 3, 8, 8)).float()
    check(lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True), ties)
    check(lambda x: nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x), randn(3, 9, 8))
    check(lambda x: nn.AdaptiveMaxPool1d(4)(x), randn(2, 3, 11))


@pytest.mark.parametrize("in_dhw,out", [((5, 9, 7), (2, 4, 3)), ((6, 6, 6), 1), ((4, 5, 6), (6, 3, 7))],
                         ids=["5x9x7to2x4x3", "global", "upsampling"])
def test_adaptive_max_pool3d(in_dhw, out):
    check(lambda x: F.adaptive_max_pool3d(x, out, return_indices=True), randn(2, 3, *in_dhw))


def test_adaptive_max_pool3d_ties_and_unbatched():
    ties = torch.randint(0, 3, (3, 6, 7, 8)).float()  # unbatched [C, D, H, W]
    check(lambda x: nn.AdaptiveMaxPool3d((2, 3, 3), return_indices=True)(x), ties)


def test_adaptive_max_pool2d_bad_input():
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_max_pool2d(torch.zeros(2, 3, 0, 4, device=DEV), 2)
    with pytest.raises(NotImplementedError, match="\"adaptive_max_pool2d\" not implemented for 'Long'"):
        F.adaptive_max_pool2d(torch.zeros(2, 3, 4, 4, dtype=torch.long, device=DEV), 2)


def _pooled(pool, x, kernel, **kw):
    """A pool's values and indices (as max_unpool takes them), computed on CPU."""
    return pool(x, kernel, return_indices=True, **kw)


@pytest.mark.parametrize("shape,kernel,stride,size", [
    ((2, 3, 6, 8), 2, None, None),
    ((2, 3, 7, 9), (2, 3), None, (7, 9)),         # output_size keeps the odd row/column
    ((3, 5, 7), 3, 2, None),                      # unbatched, overlapping windows: no repeats here
    ((1, 4, 5, 5), 2, 1, (5, 5)),                 # stride 1: one max can win two windows
], ids=["2x2", "2x3-size", "unbatched-overlap", "stride1-repeats"])
def test_max_unpool2d(shape, kernel, stride, size):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # CPU keeps the last of repeated indices only on one thread
    try:
        x = torch.randint(0, 50, shape).float()  # ties make repeated indices likely
        y, i = _pooled(F.max_pool2d, x, kernel, stride=stride)
        check(lambda v, idx: F.max_unpool2d(v, idx, kernel, stride=stride, output_size=size),
              y, Const(i))
        check(lambda v, idx: nn.MaxUnpool2d(kernel, stride=stride)(v, idx, output_size=size),
              y, Const(i))
    finally:
        torch.set_num_threads(threads)


def test_max_unpool1d_and_3d():
    y, i = _pooled(F.max_pool1d, randn(2, 3, 11), 2)
    check(lambda v, idx: F.max_unpool1d(v, idx, 2, output_size=(11,)), y, Const(i))
    y, i = _pooled(F.max_pool3d, randn(2, 3, 4, 6, 5), 2)
    check(lambda v, idx: F.max_unpool3d(v, idx, 2, output_size=(4, 6, 5)), y, Const(i))
    y, i = _pooled(F.max_pool3d, randn(3, 5, 4, 6), (1, 2, 3))  # unbatched
    check(lambda v, idx: nn.MaxUnpool3d((1, 2, 3))(v, idx), y, Const(i))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_max_unpool_dtypes_and_layouts(dtype):
    x = randn(2, 3, 6, 8).to(dtype)
    y, i = _pooled(F.max_pool2d, x, 2)
    check(lambda v, idx: F.max_unpool2d(v, idx, 2), y, Const(i), grad=dtype == torch.float64)
    last = y.contiguous(memory_format=torch.channels_last)
    out = F.max_unpool2d(last.to(DEV), i.contiguous(memory_format=torch.channels_last).to(DEV), 2)
    assert out.is_contiguous(memory_format=torch.channels_last)  # as CPU's
    assert torch.equal(out.cpu(), F.max_unpool2d(last, i, 2))
    # out=, given the wrong size: resized, as on CPU
    out = torch.empty(3, dtype=dtype, device=DEV)
    torch.ops.aten.max_unpool2d.out(y.to(DEV), i.to(DEV), [6, 8], out=out)
    assert torch.equal(out.cpu(), F.max_unpool2d(y, i, 2))
    out3 = torch.empty(0, dtype=dtype, device=DEV)
    y3, i3 = _pooled(F.max_pool3d, randn(1, 2, 4, 4, 4).to(dtype), 2)
    torch.ops.aten.max_unpool3d.out(y3.to(DEV), i3.to(DEV), [4, 4, 4], [2, 2, 2], [0, 0, 0],
                                    out=out3)
    assert torch.equal(out3.cpu(), F.max_unpool3d(y3, i3, 2))


def test_max_unpool_invalid_index_raises_at_the_next_read():
    y, i = _pooled(F.max_pool2d, randn(1, 2, 4, 4), 2)
    bad = i.clone()
    bad[0, 1, 1, 0] = 99
    bad[0, 1, 1, 1] = -3
    # CPU names the last bad index (row-major), and so does tpu
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: -3 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(y, bad, 2)
    out = F.max_unpool2d(y.to(DEV), bad.to(DEV), 2)  # launched; nothing raised yet
    with pytest.raises(RuntimeError,
                       match=r"max_unpool2d: Found an invalid max index: -3 \(output volumes are of size 4x4\)"):
        out.cpu()
    # the device stays usable, and a good call afterwards is right
    assert torch.equal(F.max_unpool2d(y.to(DEV), i.to(DEV), 2).cpu(), F.max_unpool2d(y, i, 2))
    with torch_tpu.eager_mode("debug"), pytest.raises(RuntimeError, match="invalid max index: -3"):
        F.max_unpool2d(y.to(DEV), bad.to(DEV), 2)
    y3, i3 = _pooled(F.max_pool3d, randn(1, 1, 2, 4, 6), 2)
    i3.view(-1)[1] = 1000
    with pytest.raises(RuntimeError, match=r"invalid max index: 1000 \(output volumes are of size 2x4x6\)"):
        F.max_unpool3d(y3.to(DEV), i3.to(DEV), 2).cpu()


def test_max_unpool_bad_input_raises_like_cpu():
    y, i = _pooled(F.max_pool2d, randn(1, 2, 4, 4), 2)
    cases = [
        (lambda d: torch.ops.aten.max_unpool2d(y.to(d), i.int().to(d), [4, 4]),
         RuntimeError, "elements in indices should be type int64 but got: Int"),
        (lambda d: torch.ops.aten.max_unpool2d(y.to(d), i.to(d), [4]),
         RuntimeError, "exactly two elements \\(height, width\\) in output_size, but got 1"),
        (lambda d: torch.ops.aten.max_unpool2d(y[0, 0].to(d), i[0, 0].to(d), [4, 4]),
         RuntimeError, "should be a 3d or 4d Tensor, but got a tensor with 2 dimensions"),
        (lambda d: torch.ops.aten.max_unpool2d(y.to(d), i[..., :1].to(d), [4, 4]),
         RuntimeError, "Expected shape of indices to be same as that of the input tensor"),
        (lambda d: torch.ops.aten.max_unpool2d(torch.zeros(1, 2, 0, 2, device=d),
                                               torch.zeros(1, 2, 0, 2, dtype=torch.long, device=d),
                                               [4, 4]),
         RuntimeError, "non-zero size for non-batch dimensions, but got \\[1, 2, 0, 2\\] with dimension 2"),
        (lambda d: torch.ops.aten.max_unpool2d(y.to(d), i.to(d), [-1, 4]),
         RuntimeError, "output_size must contain non-negative spatial dimensions"),
        (lambda d: torch.ops.aten.max_unpool2d(y.int().to(d), i.to(d), [4, 4]),
         NotImplementedError, "\"max_unpool2d\" not implemented for 'Int'"),
        (lambda d: torch.ops.aten.max_unpool3d(y[None].to(d), i[None].to(d), [1, 4, 4], [0, 1, 1], [0, 0, 0]),
         RuntimeError, "strides should be greater than zero"),
        (lambda d: torch.ops.aten.max_unpool3d(y[None].to(d), i[None].to(d), [1, 4, 4], [1, 1, 1], [0, 0]),
         RuntimeError, "three elements \\(depth, height, width\\) in padding, but got: 2"),
        (lambda d: torch.ops.aten.max_unpool3d(y[0].to(d), i[0].to(d), [1, 4, 4], [1, 1, 1], [0, 0, 0]),
         RuntimeError, "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3"),
    ]
    for fn, exc, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(exc, match=message):
                fn(device)
    # an empty output plane is an empty result, on CPU too
    assert torch.ops.aten.max_unpool2d(y.to(DEV), i.to(DEV), [0, 4]).shape == (1, 2, 0, 4)


def test_segnet_style_encoder_decoder_trains_like_cpu():
    """A whole-module flow: pooling indices carried from encoder to decoder."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Conv2d(3, 4, 3, padding=1)
            self.pool = nn.MaxPool2d(2, return_indices=True)
            self.unpool = nn.MaxUnpool2d(2)
            self.dec = nn.Conv2d(4, 3, 3, padding=1)

        def forward(self, x):
            h, idx = self.pool(torch.relu(self.enc(x)))
            return self.dec(self.unpool(h, idx, output_size=x.shape[-2:]))

    torch.manual_seed(0)
    model = Net()
    x = randn(2, 3, 9, 10)
    train_like_cpu(model, lambda m, d: (m(x.to(d)) - x.to(d)).pow(2).mean(),
                   lambda p: torch.optim.SGD(p, lr=0.1))


INTERP_CASES = [
    ("nearest", None, dict(scale_factor=2)),
    ("nearest", None, dict(size=(5, 13))),
    ("nearest", None, dict(scale_factor=(0.5, 1.5))),
    ("bilinear", False, dict(size=(5, 13))),
    ("bilinear", True, dict(size=(5, 13))),
    ("bilinear", False, dict(scale_factor=2)),
    ("bilinear", False, dict(scale_factor=0.6)),
    ("bilinear", True, dict(scale_factor=0.6)),
]


@pytest.mark.parametrize("mode,align_corners,kw", INTERP_CASES,
                         ids=[f"{m}-ac{a}-{list(k)[0]}{list(k.values())[0]}".replace(" ", "")
                              for m, a, k in INTERP_CASES])
def test_interpolate(mode, align_corners, kw):
    check(lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw),
          randn(2, 3, 6, 8))


# (mode, align_corners, kwargs, input sizes): every mode at every rank it has
INTERP_ND_CASES = [
    ("nearest", None, dict(scale_factor=2.5), (2, 3, 7)),
    ("nearest", None, dict(size=(3, 9, 4)), (2, 3, 5, 6, 7)),
    ("nearest-exact", None, dict(scale_factor=1.7), (2, 3, 7)),
    ("nearest-exact", None, dict(size=(5, 13)), (2, 3, 6, 8)),
    ("nearest-exact", None, dict(scale_factor=0.6), (2, 3, 5, 6, 7)),
    ("linear", False, dict(scale_factor=2.5), (2, 3, 7)),
    ("linear", True, dict(size=4), (2, 3, 7)),
    ("bicubic", False, dict(scale_factor=2), (2, 3, 6, 8)),
    ("bicubic", True, dict(size=(5, 13)), (2, 3, 6, 8)),
    ("bicubic", False, dict(scale_factor=0.5), (2, 3, 6, 8)),   # taps clamped at both edges
    ("bicubic", False, dict(size=(14, 14)), (1, 4, 3, 3)),       # a ViT's position grid
    ("trilinear", False, dict(scale_factor=2), (2, 3, 3, 4, 5)),
    ("trilinear", True, dict(size=(3, 4, 9)), (2, 3, 5, 6, 7)),
    ("area", None, dict(size=(2, 3, 3)), (2, 3, 5, 6, 7)),      # adaptive_avg_pool3d
]


@pytest.mark.parametrize("mode,align_corners,kw,shape", INTERP_ND_CASES,
                         ids=[f"{m}{len(s) - 2}d-ac{a}-{list(k)[0]}{list(k.values())[0]}".replace(" ", "")
                              for m, a, k, s in INTERP_ND_CASES])
def test_interpolate_every_mode_and_rank(mode, align_corners, kw, shape):
    check(lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw), randn(*shape))


@pytest.mark.parametrize("mode,align_corners,kw,shape", [
    ("bilinear", False, dict(size=(7, 9)), (2, 3, 32, 24)),        # downscale: a wider filter
    ("bilinear", True, dict(size=(7, 9)), (2, 3, 20, 16)),
    ("bicubic", False, dict(scale_factor=0.37), (2, 3, 32, 24)),
    ("bicubic", False, dict(size=(17, 13)), (2, 3, 8, 6)),         # upscale: plain taps, normalized
], ids=["bilinear-down", "bilinear-down-ac", "bicubic-down", "bicubic-up"])
def test_interpolate_antialias(mode, align_corners, kw, shape):
    """What torchvision's Resize(antialias=True) calls on tensors."""
    check(lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, antialias=True, **kw),
          randn(*shape))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_interpolate_dtypes_and_modules(dtype):
    x = randn(2, 3, 4, 5).to(dtype)
    grad = dtype == torch.float64
    check(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), x, grad=grad)
    check(lambda x: nn.Upsample(scale_factor=(1.5, 2), mode="nearest-exact")(x), x, grad=grad)
    check(lambda x: nn.AdaptiveAvgPool3d((2, None, 3))(x), x, grad=grad)


def test_interpolate_uint8_nearest_and_bad_input_like_cpu():
    img = torch.randint(0, 256, (1, 3, 5, 7), dtype=torch.uint8)
    for mode in ("nearest", "nearest-exact"):
        assert torch.equal(F.interpolate(img.to(DEV), scale_factor=2, mode=mode).cpu(),
                           F.interpolate(img, scale_factor=2, mode=mode))
    for device in ("cpu", DEV):
        with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
            F.interpolate(img.int().to(device), scale_factor=2, mode="bilinear")
        with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
            torch.ops.aten.upsample_bicubic2d(img.float().to(device), [0, 4], False)
        with pytest.raises(RuntimeError, match="It is expected output_size equals to 3, but got size 2"):
            torch.ops.aten.upsample_trilinear3d(img.float()[None].to(device), [2, 2], False)
        with pytest.raises(RuntimeError, match=r"tensor.size\[2\] == 5 but got: dimension 3 and tensor.size\[2\] = 4"):
            torch.ops.aten.upsample_linear1d_backward(torch.zeros(1, 3, 4, device=device), [5],
                                                      [1, 3, 7], False)
        with pytest.raises(RuntimeError, match="Expected grad_output to have the same shape as output"):
            torch.ops.aten.upsample_bicubic2d_backward(torch.zeros(1, 3, 4, 4, device=device), [5, 4],
                                                       [1, 3, 7, 7], False)
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        F.interpolate(torch.zeros(1, 0, 4, 4, device=DEV), scale_factor=2, mode="bicubic")


def test_vit_position_embedding_interpolation_like_cpu():
    """What Hugging Face's ViT/DINOv2 do for another image size: a bicubic
    resize of the position grid, inside the model's forward."""
    grid = randn(1, 16, 4, 4)  # 16 channels of a 4x4 patch grid
    check(lambda g: F.interpolate(g, size=(6, 5), mode="bicubic", align_corners=False)
          .permute(0, 2, 3, 1).reshape(1, -1, 16), grid)


GRID_SAMPLE_CASES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
                     for p in ("zeros", "border", "reflection") for a in (False, True)]


def _grid(*shape, reach=1.3):
    """Sample positions a little past [-1, 1] (so every padding mode acts),
    with a few exactly on the edges and the centre."""
    g = torch.rand(*shape) * 2 * reach - reach
    points = g.view(-1, shape[-1])
    points[0] = torch.tensor([1.0, -1.0, 1.0][:shape[-1]])
    points[1] = torch.tensor([-1.0, 1.0, -1.0][:shape[-1]])
    points[2] = 0.0
    return g


@pytest.mark.parametrize("mode,padding,align_corners", GRID_SAMPLE_CASES,
                         ids=[f"{m}-{p}-ac{a}" for m, p, a in GRID_SAMPLE_CASES])
def test_grid_sample(mode, padding, align_corners):
    """Values, and gradients for both the input and the grid."""
    check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                     align_corners=align_corners),
          randn(2, 3, 5, 7), _grid(2, 4, 6, 2), grad_atol=1e-4, grad_rtol=1e-4)


@pytest.mark.parametrize("mode,padding,align_corners",
                         [(m, p, a) for m in ("bilinear", "nearest")
                          for p in ("zeros", "border", "reflection") for a in (False, True)])
def test_grid_sample_3d(mode, padding, align_corners):
    check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                     align_corners=align_corners),
          randn(2, 3, 4, 5, 6), _grid(2, 3, 4, 5, 3), grad_atol=1e-4, grad_rtol=1e-4)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(torch.zeros(1, 1, 2, 2, 2, device=DEV), torch.zeros(1, 1, 1, 1, 3, device=DEV),
                      mode="bicubic", align_corners=False)


def test_grid_sample_nan_and_inf_positions_like_cpu():
    x = torch.arange(12.0).reshape(1, 1, 3, 4)
    nan, inf = float("nan"), float("inf")
    for g in (torch.tensor([[[[nan, 0.2], [0.1, nan]]]]), torch.tensor([[[[inf, 0.2], [-inf, 0.3]]]])):
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                check(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                                 align_corners=False), x, Const(g), grad=False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_grid_sample_dtypes(dtype):
    x, g = randn(1, 2, 4, 5).to(dtype), _grid(1, 3, 3, 2).to(dtype)
    if dtype == torch.float64:
        check(lambda x, g: F.grid_sample(x, g, align_corners=False), x, g)
        return
    # CPU's half kernels round the pixel coordinates to the dtype (a pixel
    # coordinate of 3.3 is off by 0.01 in bfloat16); tpu computes them in
    # float32, as CUDA does: float32's answer, rounded once.
    got = F.grid_sample(x.to(DEV), g.to(DEV), align_corners=False)
    assert_same(got, F.grid_sample(x.float(), g.float(), align_corners=False).to(dtype))


def test_spatial_transformer_trains_like_cpu():
    """affine_grid + grid_sample inside a model (a spatial transformer), trained."""
    class STN(nn.Module):
        def __init__(self):
            super().__init__()
            self.loc = nn.Linear(3 * 8 * 8, 6)
            nn.init.zeros_(self.loc.weight)
            with torch.no_grad():
                self.loc.bias.copy_(torch.tensor([0.9, 0.1, 0.05, -0.1, 1.1, 0.0]))
            self.head = nn.Linear(3 * 8 * 8, 4)

        def forward(self, x):
            theta = self.loc(x.flatten(1)).view(-1, 2, 3)
            grid = F.affine_grid(theta, list(x.shape), align_corners=False)
            y = F.grid_sample(x, grid, align_corners=False, padding_mode="border")
            return self.head(y.flatten(1))

    torch.manual_seed(0)
    model = STN()
    x, target = randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    train_like_cpu(model, lambda m, d: F.cross_entropy(m(x.to(d)), target.to(d)),
                   lambda p: torch.optim.SGD(p, lr=0.1))


def test_grid_sample_bad_input_like_cpu():
    x, g = randn(2, 3, 4, 4), _grid(2, 3, 3, 2)
    cases = [
        (lambda x, g: F.grid_sample(x, g[:1], align_corners=False), "same batch size"),
        (lambda x, g: F.grid_sample(x, g[..., :1], align_corners=False), "size 2 in last dimension"),
        (lambda x, g: F.grid_sample(x[:, :, :0], g, align_corners=False), "non-empty spatial dimensions"),
        (lambda x, g: torch.grid_sampler_2d(x[None], torch.zeros(1, 2, 3, 3, 3, device=x.device), 0, 0,
                                            False), "expected 4D input and grid"),
    ]
    for fn, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(RuntimeError, match=message):
                fn(x.to(device), g.to(device))


# ---------------------------------------------------------------------------
# 4. losses
# ---------------------------------------------------------------------------
N, C = 6, 5
REDUCTIONS = ["none", "mean", "sum"]


def _targets():
    """Class indices for (N, C) logits: every class but one, class 1 twice."""
    return torch.tensor([0, 1, 4, 1, 2, 3])


def _probs(*shape):
    return torch.softmax(randn(*shape), 1)


LOSS_CASES = {
    # name: (fn(reduction) -> callable, args builder)
    "ce": (lambda r: lambda x, y: F.cross_entropy(x, y, reduction=r),
           lambda: (randn(N, C), Const(_targets()))),
    "ce_weight": (lambda r: lambda x, y, w: F.cross_entropy(x, y, w, reduction=r),
                  lambda: (randn(N, C), Const(_targets()), Const(torch.rand(C) + 0.5))),
    "ce_ignore_index": (lambda r: lambda x, y: F.cross_entropy(x, y, ignore_index=1, reduction=r),
                        lambda: (randn(N, C), Const(_targets()))),
    "ce_ignore_index_default": (
        lambda r: lambda x, y: F.cross_entropy(x, y, reduction=r),
        lambda: (randn(N, C), Const(torch.tensor([0, -100, 4, 1, -100, 3])))),
    "ce_weight_ignore_index": (
        lambda r: lambda x, y, w: F.cross_entropy(x, y, w, ignore_index=1, reduction=r),
        lambda: (randn(N, C), Const(_targets()), Const(torch.rand(C) + 0.5))),
    "ce_label_smoothing": (
        lambda r: lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1, reduction=r),
        lambda: (randn(N, C), Const(_targets()))),
    "ce_smoothing_weight_ignore": (
        lambda r: lambda x, y, w: F.cross_entropy(x, y, w, ignore_index=1, label_smoothing=0.2,
                                                  reduction=r),
        lambda: (randn(N, C), Const(_targets()), Const(torch.rand(C) + 0.5))),
    "ce_probs": (lambda r: lambda x, p: F.cross_entropy(x, p, reduction=r),
                 lambda: (randn(N, C), _probs(N, C))),
    "ce_probs_smoothing_weight": (
        lambda r: lambda x, p, w: F.cross_entropy(x, p, w, label_smoothing=0.15, reduction=r),
        lambda: (randn(N, C), _probs(N, C), Const(torch.rand(C) + 0.5))),
    "ce_spatial": (lambda r: lambda x, y: F.cross_entropy(x, y, reduction=r),
                   lambda: (randn(2, C, 4, 3), Const(torch.randint(0, C, (2, 4, 3))))),
    "nll": (lambda r: lambda x, y: F.nll_loss(x.log_softmax(1), y, reduction=r),
            lambda: (randn(N, C), Const(_targets()))),
    "nll_weight_ignore_index": (
        lambda r: lambda x, y, w: F.nll_loss(x, y, w, ignore_index=4, reduction=r),
        lambda: (randn(N, C), Const(_targets()), Const(torch.rand(C) + 0.5))),
    "nll_spatial": (lambda r: lambda x, y: F.nll_loss(x, y, reduction=r),
                    lambda: (randn(2, C, 4, 3), Const(torch.randint(0, C, (2, 4, 3))))),
    "mse": (lambda r: lambda x, t: F.mse_loss(x, t, reduction=r), lambda: (randn(N, C), randn(N, C))),
    "l1": (lambda r: lambda x, t: F.l1_loss(x, t, reduction=r), lambda: (randn(N, C), randn(N, C))),
    "smooth_l1": (lambda r: lambda x, t: F.smooth_l1_loss(x, t, reduction=r),
                  lambda: (randn(N, C), randn(N, C))),
    "smooth_l1_beta0.5": (lambda r: lambda x, t: F.smooth_l1_loss(x, t, reduction=r, beta=0.5),
                          lambda: (randn(N, C), randn(N, C))),
    "huber": (lambda r: lambda x, t: F.huber_loss(x, t, reduction=r),
              lambda: (randn(N, C), randn(N, C) * 2)),
    "huber_delta0.5": (lambda r: lambda x, t: F.huber_loss(x, t, reduction=r, delta=0.5),
                       lambda: (randn(N, C), randn(N, C) * 2)),
    "bce": (lambda r: lambda p, t: F.binary_cross_entropy(p, t, reduction=r),
            lambda: (torch.rand(N, C) * 0.9 + 0.05, Const(torch.rand(N, C)))),
    "bce_weight": (lambda r: lambda p, t, w: F.binary_cross_entropy(p, t, w, reduction=r),
                   lambda: (torch.rand(N, C) * 0.9 + 0.05, Const(torch.rand(N, C)),
                            Const(torch.rand(N, C) + 0.5))),
    "bce_logits": (lambda r: lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction=r),
                   lambda: (randn(N, C) * 3, torch.rand(N, C))),
    "bce_logits_pos_weight": (
        lambda r: lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw,
                                                                      reduction=r),
        lambda: (randn(N, C) * 3, torch.rand(N, C), Const(torch.rand(C) * 2 + 0.5))),
    "bce_logits_weight_pos_weight": (
        lambda r: lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
            x, t, weight=w, pos_weight=pw, reduction=r),
        lambda: (randn(N, C) * 3, Const(torch.rand(N, C)), Const(torch.rand(C) + 0.5),
                 Const(torch.rand(C) * 2 + 0.5))),
    "kl_div": (lambda r: lambda x, t: F.kl_div(x.log_softmax(1), t, reduction=r),
               lambda: (randn(N, C), _probs(N, C))),
    "kl_div_log_target": (
        lambda r: lambda x, t: F.kl_div(x.log_softmax(1), t.log_softmax(1), reduction=r,
                                        log_target=True),
        lambda: (randn(N, C), randn(N, C))),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(LOSS_CASES))
def test_loss(name, reduction):
    make_fn, make_args = LOSS_CASES[name]
    check(make_fn(reduction), *make_args())


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_batchmean(log_target):
    check(lambda x, t: F.kl_div(x.log_softmax(1), t.log_softmax(1) if log_target else t,
                                reduction="batchmean", log_target=log_target),
          randn(N, C), _probs(N, C))


def test_kl_div_target_with_zeros():
    """xlogy: a zero target contributes 0, not nan."""
    t = _probs(N, C)
    t[0, :2] = 0
    t[3, 4] = 0
    check(lambda x, t: F.kl_div(x.log_softmax(1), t, reduction="sum"), randn(N, C), t)


@pytest.mark.parametrize("kw", [dict(), dict(p=2, margin=0.5), dict(weight=True),
                                dict(p=2, weight=True, reduction="sum"), dict(reduction="none")],
                         ids=["default", "p2-margin", "weight", "p2-weight-sum", "none"])
def test_multi_margin_loss(kw):
    kw = dict(kw)
    args = [randn(5, 4), Const(torch.tensor([1, 0, 3, 3, 2]))]
    if kw.pop("weight", False):
        args.append(Const(torch.rand(4) + 0.5))
        check(lambda x, y, w: F.multi_margin_loss(x, y, weight=w, **kw), *args)
    else:
        check(lambda x, y: F.multi_margin_loss(x, y, **kw), *args)
    check(lambda x, y: nn.MultiMarginLoss()(x, y), randn(4), Const(torch.tensor(2)))  # one sample


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    # targets end at the first -1 (none in the last row), repeats count twice
    targets = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0], [2, 2, -1, 0], [0, 1, 2, 3]])
    check(lambda x, t: F.multilabel_margin_loss(x, t, reduction=reduction), randn(5, 4), Const(targets))
    check(lambda x, t: nn.MultiLabelMarginLoss()(x, t), randn(4), Const(targets[0]))


def test_margin_losses_bad_targets_like_cpu():
    x = randn(5, 4)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, torch.tensor([1, 0, 5, 0, 0]))
    F.multi_margin_loss(x.to(DEV), torch.tensor([1, 0, 5, 0, 0], device=DEV))  # found on the device
    with pytest.raises(RuntimeError, match="target out of range"):
        torch.tpu.synchronize()
    bad = torch.tensor([[5, -1, 0, 0]] * 5)
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        F.multilabel_margin_loss(x, bad)
    F.multilabel_margin_loss(x.to(DEV), bad.to(DEV))
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        torch.tpu.synchronize()
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="inconsistent target size"):
            F.multilabel_margin_loss(x.to(device), bad[:2].to(device))
        with pytest.raises(RuntimeError, match="target tensor should be 1-D"):
            F.multi_margin_loss(x.to(device), torch.tensor([1, 0], device=device))
        with pytest.raises(RuntimeError, match="inconsistent weight size"):
            F.multi_margin_loss(x.to(device), torch.zeros(5, dtype=torch.long, device=device),
                                weight=torch.ones(3, device=device))


# ---------------------------------------------------------------------------
# 5. embedding and attention
# ---------------------------------------------------------------------------

EMB_IDX = torch.tensor([[1, 0, 3, 3], [9, 0, 1, 7]])
EMB_CASES = {
    "basic": dict(),
    "padding_idx": dict(padding_idx=0),
    "padding_idx_negative": dict(padding_idx=-1),
    "scale_grad_by_freq": dict(scale_grad_by_freq=True),
}


@pytest.mark.parametrize("name", list(EMB_CASES))
def test_embedding(name):
    kw = EMB_CASES[name]
    idx = EMB_IDX if name != "padding_idx_negative" else EMB_IDX.clamp(max=8).masked_fill(EMB_IDX == 0, 9)
    check(lambda w, i: F.embedding(i, w, **kw), randn(10, 4), Const(idx))


def test_embedding_padding_row_gets_no_grad():
    w = randn(10, 4).to(DEV).requires_grad_()
    F.embedding(EMB_IDX.to(DEV), w, padding_idx=0).sum().backward()
    g = w.grad.cpu()
    assert not g[0].any()
    assert (g[3] == 2).all() and (g[2] == 0).all()


def test_embedding_module():
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=2)
    check(lambda w, i: F.embedding(i, w, padding_idx=2), emb.weight, Const(EMB_IDX))


B, H, LQ, LK, E = 2, 3, 5, 7, 8


def _bool_mask(*shape):
    m = torch.rand(*shape) > 0.4
    m[..., 0] = True  # no fully-masked row
    return m


SDPA_CASES = {
    "no_mask": (LK, lambda: None, {}),
    "bool_mask_2d": (LK, lambda: _bool_mask(LQ, LK), {}),
    "bool_mask_4d": (LK, lambda: _bool_mask(B, H, LQ, LK), {}),
    "float_mask": (LK, lambda: randn(B, 1, LQ, LK), {}),
    "float_mask_neg_inf": (LK, lambda: torch.zeros(LQ, LK).masked_fill(~_bool_mask(LQ, LK),
                                                                        float("-inf")), {}),
    "is_causal": (LQ, lambda: None, dict(is_causal=True)),
    "is_causal_rectangular": (LK, lambda: None, dict(is_causal=True)),
    "scale": (LK, lambda: None, dict(scale=0.3)),
}


@pytest.mark.parametrize("name", list(SDPA_CASES))
def test_sdpa(name):
    lk, make_mask, kw = SDPA_CASES[name]
    check(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw),
          randn(B, H, LQ, E), randn(B, H, lk, E), randn(B, H, lk, E), Const(make_mask()))


def test_sdpa_bf16_forward():
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          randn(B, H, LQ, E, dtype=torch.bfloat16), randn(B, H, LQ, E, dtype=torch.bfloat16),
          randn(B, H, LQ, E, dtype=torch.bfloat16), grad=False)


def test_sdpa_dropout():
    """dropout_p > 0: shape, same seed -> same result, other seed -> other
    result, and gradients reach q, k and v."""
    q, k, v = (randn(B, H, LQ, E).to(DEV).requires_grad_() for _ in range(3))

    def run(seed):
        torch.manual_seed(seed)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    a, b, c = run(3), run(3), run(4)
    assert a.shape == (B, H, LQ, E) and a.device.type == DEV
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)
    assert not torch.equal(a.cpu(), c.cpu())
    nodrop = F.scaled_dot_product_attention(q, k, v)
    assert not torch.equal(a.cpu(), nodrop.cpu())
    a.square().sum().backward()
    for t in (q, k, v):
        assert t.grad is not None
        g = t.grad.cpu()
        assert torch.isfinite(g).all() and g.abs().sum() > 0


# ---------------------------------------------------------------------------
# 6. indexing and shape ops
# ---------------------------------------------------------------------------


def _setitem(key_fn):
    def fn(x, v, *idx):
        y = x.clone()
        y[key_fn(*idx)] = v
        return y
    return fn


def _x54():
    return randn(5, 4)


def _mask54():
    m = torch.rand(5, 4) > 0.5
    m[0, 0], m[1, 1] = True, False
    return m


def _with_zeros():
    x = randn(5, 4)
    x[x.abs() < 0.5] = 0
    return x


# name: (fn, args builder, check kwargs)
INDEX_CASES = {
    # index_select
    "index_select_dim0": (lambda x, i: x.index_select(0, i), lambda: (_x54(), L([0, 3, 3, 1])), {}),
    "index_select_dim1": (lambda x, i: x.index_select(1, i), lambda: (randn(3, 5, 4), L([2, 0])), {}),
    "index_select_0d_index": (lambda x, i: x.index_select(1, i), lambda: (_x54(), L(2)), {}),
    # gather
    "gather_dim0": (lambda x, i: x.gather(0, i), lambda: (_x54(), torch.randint(0, 5, (3, 4))), {}),
    "gather_dim1": (lambda x, i: x.gather(1, i), lambda: (_x54(), torch.randint(0, 4, (5, 6))), {}),
    "gather_3d_last": (lambda x, i: torch.gather(x, -1, i),
                       lambda: (randn(3, 4, 5), torch.randint(0, 5, (3, 2, 2))), {}),
    "gather_transposed_input": (lambda x, i: x.t().gather(1, i),
                                lambda: (randn(4, 5), torch.randint(0, 4, (5, 3))), {}),
    # scatter / scatter_add
    "scatter_src_dim1": (lambda x, i, s: x.scatter(1, i, s),
                         lambda: (randn(4, 6), unique_per_row(4, 6, 3), randn(4, 3)), {}),
    "scatter_src_dim0": (lambda x, i, s: x.scatter(0, i, s),
                         lambda: (randn(6, 4), unique_per_row(4, 6, 3).t().contiguous(),
                                  randn(3, 4)), {}),
    "scatter_into_slice_of_base": (
        lambda x, i, s: (lambda y: (y[1:].scatter_(1, i, s), y)[1])(x.clone()),
        lambda: (randn(5, 6), unique_per_row(4, 6, 2), randn(4, 2)), {}),
    "scatter_value": (lambda x, i: x.scatter(1, i, 2.5),
                      lambda: (randn(4, 6), torch.randint(0, 6, (4, 3))), {}),
    "scatter_add_dim1": (lambda x, i, s: x.scatter_add(1, i, s),
                         lambda: (randn(4, 6), torch.randint(0, 6, (4, 5)), randn(4, 5)), {}),
    "scatter_add_dim0": (lambda x, i, s: x.scatter_add(0, i, s),
                         lambda: (randn(4, 6), torch.randint(0, 4, (7, 6)), randn(7, 6)), {}),
    # advanced indexing (read)
    "index_1d": (lambda x, i: x[i], lambda: (_x54(), L([4, 0, -1, 2, 0])), {}),
    "index_2d_index": (lambda x, i: x[i], lambda: (_x54(), L([[0, 1, 1], [4, 3, -2]])), {}),
    "index_pair": (lambda x, i, j: x[i, j], lambda: (_x54(), L([0, 4, 2, 2]), L([3, 0, 1, 1])), {}),
    "index_pair_broadcast": (lambda x, i, j: x[i[:, None], j[None, :]],
                             lambda: (_x54(), L([0, 4, 2]), L([3, 0])), {}),
    "index_columns": (lambda x, i: x[:, i], lambda: (_x54(), L([3, 1, 1])), {}),
    "index_3d_middle": (lambda x, i: x[:, i, :], lambda: (randn(3, 5, 4), L([4, 0, 0])), {}),
    "index_3d_nonadjacent": (lambda x, i, j: x[i, :, j],
                             lambda: (randn(3, 5, 4), L([2, 0]), L([3, 1])), {}),
    "index_and_slice": (lambda x, i: x[i, 1:3], lambda: (_x54(), L([1, 3, 3])), {}),
    "index_bool_mask": (lambda x, m: x[m], lambda: (_x54(), _mask54()), {}),
    "index_bool_rows": (lambda x, m: x[m],
                        lambda: (_x54(), torch.tensor([True, False, True, True, False])), {}),
    "index_bool_all_false": (lambda x, m: x[m], lambda: (_x54(), torch.zeros(5, 4, dtype=torch.bool)), {}),
    # take
    "take": (lambda x, i: x.take(i), lambda: (_x54(), L([[0, 19, -1], [7, 7, -20]])), {}),
    # index_put_ / setitem
    "index_put_accumulate": (lambda x, v, i: x.clone().index_put_((i,), v, accumulate=True),
                             lambda: (_x54(), randn(4, 4), L([1, 3, 1, 1])), {}),
    "index_put_no_accumulate": (lambda x, v, i: x.clone().index_put_((i,), v, accumulate=False),
                                lambda: (_x54(), randn(3, 4), L([4, 0, 2])), {}),
    "index_put_pair_accumulate": (
        lambda x, v, i, j: x.clone().index_put_((i, j), v, accumulate=True),
        lambda: (_x54(), randn(4), L([0, 2, 0, 4]), L([1, 3, 1, 0])), {}),
    "index_put_pair_no_accumulate": (
        lambda x, v, i, j: x.clone().index_put_((i, j), v),
        lambda: (_x54(), randn(3), L([0, 2, 4]), L([1, 3, 0])), {}),
    "index_put_into_view_of_base": (
        lambda x, v, i: (lambda y: (y[:, 1:].index_put_((i,), v, accumulate=True), y)[1])(x.clone()),
        lambda: (randn(5, 5), randn(3, 4), L([0, 0, 2])), {}),
    "index_transposed_input": (lambda x, i: x.t()[i], lambda: (randn(4, 5), L([0, 4, 2])), {}),
    "index_put_broadcast_value": (lambda x, v, i: x.clone().index_put_((i,), v),
                                  lambda: (_x54(), randn(4), L([3, 1])), {}),
    "index_put_bool": (lambda x, v, m: x.clone().index_put_((m,), v),
                       lambda: (_x54(), randn(()), _mask54()), {}),
    "setitem_tensor": (_setitem(lambda i: i), lambda: (_x54(), randn(3, 4), L([4, 0, 2])), {}),
    "setitem_scalar": (_setitem(lambda i: i), lambda: (_x54(), 3.5, L([4, 0, 2])), {}),
    "setitem_columns": (_setitem(lambda i: (slice(None), i)),
                        lambda: (_x54(), randn(5, 2), L([3, 0])), {}),
    "setitem_bool_mask": (_setitem(lambda m: m), lambda: (_x54(), -1.0, _mask54()), {}),
    # index_add
    "index_add_dim0": (lambda x, i, s: x.index_add(0, i, s, alpha=2.0),
                       lambda: (_x54(), L([1, 4, 1]), randn(3, 4)), {}),
    "index_add_dim1": (lambda x, i, s: x.index_add(1, i, s),
                       lambda: (_x54(), L([0, 0, 3, 2, 0]), randn(5, 5)), {}),
    # masked_fill / where
    "masked_fill_scalar": (lambda x, m: x.masked_fill(m, -1.5), lambda: (_x54(), _mask54()), {}),
    "masked_fill_tensor_broadcast": (lambda x, m, v: x.masked_fill(m, v),
                                     lambda: (_x54(), torch.tensor([[True, False, False, True]]),
                                              randn(())), {}),
    "where": (lambda c, x, y: torch.where(c, x, y), lambda: (_mask54(), _x54(), _x54()), {}),
    "where_scalar": (lambda c, x: torch.where(c, x, 0.5), lambda: (_mask54(), _x54()), {}),
    "where_scalar_self": (lambda c, x: torch.where(c, -0.5, x), lambda: (_mask54(), _x54()), {}),
    "where_broadcast": (lambda c, x, y: torch.where(c, x, y),
                        lambda: (torch.rand(5, 1) > 0.5, _x54(), randn(4)), {}),
    # take / nonzero / count_nonzero (integer outputs)
    "nonzero": (lambda x: x.nonzero(), lambda: (_with_zeros(),), {}),
    "nonzero_bool_3d": (lambda m: m.nonzero(), lambda: (torch.rand(3, 4, 2) > 0.5,), {}),
    "nonzero_as_tuple": (lambda x: torch.nonzero(x, as_tuple=True), lambda: (_with_zeros(),), {}),
    "nonzero_empty": (lambda x: x.nonzero(), lambda: (torch.zeros(5, 4),), {}),
    "count_nonzero_all": (lambda x: x.count_nonzero(), lambda: (_with_zeros(),), {}),
    "count_nonzero_dim": (lambda x: x.count_nonzero(dim=1), lambda: (_with_zeros(),), {}),
    "count_nonzero_dims": (lambda x: torch.count_nonzero(x, dim=(0, 2)),
                           lambda: (torch.randint(-1, 2, (3, 4, 2)),), {}),
    # scans
    "cumsum_dim1": (lambda x: x.cumsum(-1), lambda: (randn(3, 5, 4),), {}),
    "cumsum_int": (lambda x: x.cumsum(0), lambda: (torch.randint(-5, 5, (5, 4)),), {}),
    "cumsum_bool_to_int": (lambda m: m.cumsum(1), lambda: (_mask54(),), {}),
    "cumprod_dim0": (lambda x: x.cumprod(0), lambda: (torch.rand(5, 4) + 0.5,), {}),
    "cumprod_dim1_signed": (lambda x: x.cumprod(1), lambda: (_x54(),), {}),
    "cumprod_with_zero": (lambda x: x.cumprod(1), lambda: (_with_zeros(),), {}),
    # flip / roll / repeat
    "flip_0": (lambda x: x.flip(0), lambda: (_x54(),), {}),
    "flip_neg_3d": (lambda x: torch.flip(x, (-1, 0)), lambda: (randn(3, 5, 4),), {}),
    "roll_multi": (lambda x: x.roll((1, -3), (0, 1)), lambda: (_x54(),), {}),
    "roll_flat": (lambda x: x.roll(7), lambda: (_x54(),), {}),
    "repeat_new_dims": (lambda x: x.repeat(2, 1, 2), lambda: (_x54(),), {}),
    "repeat_interleave_int_dim0": (lambda x: x.repeat_interleave(3, dim=0), lambda: (_x54(),), {}),
    "repeat_interleave_flat": (lambda x: x.repeat_interleave(2), lambda: (_x54(),), {}),
    "repeat_interleave_tensor": (lambda x, r: x.repeat_interleave(r, dim=1),
                                 lambda: (_x54(), L([1, 0, 3, 2])), {}),
    "repeat_interleave_tensor_output_size": (
        lambda x, r: x.repeat_interleave(r, dim=0, output_size=7),
        lambda: (_x54(), L([2, 0, 1, 3, 1])), {}),
    "repeat_interleave_counts": (lambda r: torch.repeat_interleave(r), lambda: (L([2, 0, 3, 1]),), {}),
    # tril / triu
    "tril_diag_neg1": (lambda x: x.tril(-1), lambda: (_x54(),), {}),
    "triu_diag2": (lambda x: x.triu(2), lambda: (_x54(),), {}),
    "triu_batched_neg": (lambda x: torch.triu(x, -2), lambda: (randn(3, 5, 4),), {}),
    "tril_bool": (lambda m: m.tril(1), lambda: (torch.ones(5, 4, dtype=torch.bool),), {}),
    # one_hot
    "one_hot": (lambda i: F.one_hot(i), lambda: (L([0, 3, 1, 3]),), {}),
    "one_hot_num_classes_2d": (lambda i: F.one_hot(i, 7), lambda: (L([[0, 6], [2, 2]]),), {}),
    # pad
    "pad_constant_1d": (lambda x: F.pad(x, (2, 1)), lambda: (randn(2, 3, 6),), {}),
    "pad_constant_2d_value": (lambda x: F.pad(x, (1, 2, 0, 3), value=-2.0),
                              lambda: (randn(2, 3, 6, 5),), {}),
    "pad_constant_negative": (lambda x: F.pad(x, (-1, 2, 1, -2)), lambda: (randn(2, 3, 6, 5),), {}),
    "pad_reflect_1d": (lambda x: F.pad(x, (2, 3), mode="reflect"), lambda: (randn(2, 3, 6),), {}),
    "pad_reflect_2d": (lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect"),
                       lambda: (randn(2, 3, 6, 5),), {}),
    "pad_reflect_2d_unbatched": (lambda x: F.pad(x, (1, 1, 2, 2), mode="reflect"),
                                 lambda: (randn(3, 6, 5),), {}),
    "pad_replicate_1d": (lambda x: F.pad(x, (3, 1), mode="replicate"), lambda: (randn(2, 3, 6),), {}),
    "pad_replicate_2d": (lambda x: F.pad(x, (2, 0, 1, 3), mode="replicate"),
                         lambda: (randn(2, 3, 6, 5),), {}),
    # stack
    "stack_dim0": (lambda a, b, c: torch.stack([a, b, c]), lambda: (_x54(), _x54(), _x54()), {}),
    "stack_dim_last": (lambda a, b: torch.stack((a, b), dim=-1), lambda: (_x54(), _x54()), {}),
}


INDEX_BUGS = {}


@pytest.mark.parametrize("name", xfail_params(list(INDEX_CASES), list(INDEX_CASES), INDEX_BUGS))
def test_indexing(name):
    fn, make_args, kw = INDEX_CASES[name]
    check(fn, *make_args(), **kw)




def _cpu_index_setitem(x, i):
    y = x.clone()
    y[i] = 1.5
    return y


@pytest.mark.parametrize("op,index", [
    (lambda x, i: x[i], L([0, 4, 2])),
    (lambda x, i: x[i], torch.tensor([True, False, True, False, True])),
    (_cpu_index_setitem, L([0, 4, 2])),
], ids=["index", "bool_mask", "setitem"])
def test_index_with_cpu_index_tensor(op, index):
    """x_tpu[cpu_index]: the index tensors stay on the CPU."""
    x = randn(5, 4)
    out = op(x.to(DEV), index)
    assert out.device.type == DEV
    torch.testing.assert_close(out.cpu(), op(x, index), rtol=0, atol=0)


@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin", "mean"])
@pytest.mark.parametrize("include_self", [True, False], ids=["include_self", "exclude_self"])
def test_scatter_reduce(reduce, include_self):
    # duplicate indices, and rows of the result that no index hits
    idx = torch.tensor([[0, 2, 2, 0, 2], [1, 1, 1, 5, 0], [3, 3, 0, 0, 3], [5, 5, 5, 5, 5]])
    check(lambda x, i, s: x.scatter_reduce(1, i, s, reduce, include_self=include_self),
          randn(4, 6), idx, randn(4, 5))


@pytest.mark.parametrize("reduce", ["sum", "amax"])
def test_scatter_reduce_dim0(reduce):
    check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=False),
          randn(4, 6), torch.randint(0, 4, (7, 6)), randn(7, 6))


# sort/argsort/topk on data without ties: values and indices must agree
# exactly; with ties only the stable sort has defined indices.
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_sort(descending, dim):
    check(lambda x: torch.sort(x, dim=dim, descending=descending), randn(5, 7))


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_sort_stable_with_ties(descending):
    x = torch.randint(0, 4, (5, 9)).float()
    check(lambda x: torch.sort(x, dim=1, descending=descending, stable=True), x)


def test_sort_int64():
    check(lambda x: x.sort(), torch.randint(-50, 50, (5, 7)))


@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_argsort(descending):
    check(lambda x: x.argsort(dim=1, descending=descending), randn(5, 7))
    check(lambda x: torch.argsort(x, dim=0, descending=descending, stable=True),
          torch.randint(0, 3, (9, 4)).float())


@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_topk_sorted(largest, dim):
    check(lambda x: torch.topk(x, 3, dim=dim, largest=largest, sorted=True), randn(5, 7))


@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk_unsorted(largest):
    """sorted=False leaves the order unspecified: compare as sets."""
    x = randn(5, 7)
    vc, ic = torch.topk(x, 3, largest=largest, sorted=False)
    vt, it = torch.topk(x.to(DEV), 3, largest=largest, sorted=False)
    assert vt.device.type == DEV and it.dtype == torch.long
    vt, it = vt.cpu(), it.cpu()
    torch.testing.assert_close(vt.sort(1).values, vc.sort(1).values)
    torch.testing.assert_close(x.gather(1, it), vt)
    torch.testing.assert_close(it.sort(1).values, ic.sort(1).values)


def test_topk_grad_k1():
    check(lambda x: x.topk(1, dim=1).values, randn(5, 7))


# ---------------------------------------------------------------------------
# 7. random numbers
# ---------------------------------------------------------------------------
_WEIGHTS = torch.tensor([[1.0, 0.0, 2.0, 3.0, 0.5, 0.0, 1.0, 4.0, 1.0, 2.0],
                         [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]])

RANDOM_OPS = {
    "rand": lambda: torch.rand(1000, device=DEV),
    "randn": lambda: torch.randn(1000, device=DEV),
    "randint": lambda: torch.randint(-5, 10, (1000,), device=DEV),
    "randperm": lambda: torch.randperm(1000, device=DEV),
    "bernoulli_tensor": lambda: torch.bernoulli(torch.full((1000,), 0.3).to(DEV)),
    "bernoulli_p": lambda: torch.zeros(1000).to(DEV).bernoulli_(0.3),
    "multinomial_replacement": lambda: torch.multinomial(_WEIGHTS.to(DEV), 200, replacement=True),
    "multinomial_no_replacement": lambda: torch.multinomial(_WEIGHTS.to(DEV), 6),
    "normal_": lambda: torch.zeros(1000).to(DEV).normal_(2.0, 3.0),
    "uniform_": lambda: torch.zeros(1000).to(DEV).uniform_(-2.0, 5.0),
    "dropout": lambda: F.dropout(torch.ones(1000).to(DEV), 0.5),
    "exponential_": lambda: torch.zeros(1000).to(DEV).exponential_(2.0),
    "cauchy_": lambda: torch.zeros(1000).to(DEV).cauchy_(1.0, 2.0),
    "log_normal_": lambda: torch.zeros(1000).to(DEV).log_normal_(0.5, 0.3),
    "geometric_": lambda: torch.zeros(1000, dtype=torch.long).to(DEV).geometric_(0.3),
}
RANDOM_DTYPES = {
    "rand": torch.float32, "randn": torch.float32, "randint": torch.long, "randperm": torch.long,
    "bernoulli_tensor": torch.float32, "bernoulli_p": torch.float32,
    "multinomial_replacement": torch.long, "multinomial_no_replacement": torch.long,
    "normal_": torch.float32, "uniform_": torch.float32, "dropout": torch.float32,
    "exponential_": torch.float32, "cauchy_": torch.float32, "log_normal_": torch.float32,
    "geometric_": torch.long,
}


@pytest.mark.parametrize("name", list(RANDOM_OPS))
def test_random_reproducible(name):
    """Same seed -> same numbers; another seed, or the next draw, -> others."""
    op = RANDOM_OPS[name]
    torch.manual_seed(123)
    a = op()
    a2 = op()
    torch.manual_seed(123)
    b = op()
    torch.manual_seed(321)
    c = op()
    assert a.device.type == DEV
    assert a.dtype == RANDOM_DTYPES[name]
    a, a2, b, c = a.cpu(), a2.cpu(), b.cpu(), c.cpu()
    assert torch.equal(a, b), "same seed gave different numbers"
    assert not torch.equal(a, c), "different seeds gave the same numbers"
    assert not torch.equal(a, a2), "two draws in a row gave the same numbers"


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm", "bernoulli_p", "dropout"])
def test_tpu_manual_seed(name):
    """torch.tpu.manual_seed seeds the device generator, like torch.manual_seed."""
    op = RANDOM_OPS[name]
    torch.tpu.manual_seed(7)
    a = op().cpu()
    torch.tpu.manual_seed(7)
    b = op().cpu()
    torch.manual_seed(7)
    c = op().cpu()
    assert torch.equal(a, b)
    assert torch.equal(a, c), "torch.manual_seed(s) and torch.tpu.manual_seed(s) disagree"


def test_rng_state_roundtrip():
    torch.manual_seed(5)
    torch.rand(10, device=DEV)
    state = torch.tpu.get_rng_state()
    a = torch.randn(100, device=DEV).cpu()
    torch.tpu.set_rng_state(state)
    b = torch.randn(100, device=DEV).cpu()
    assert torch.equal(a, b)


def test_tpu_generator_object():
    g = torch.Generator(device=DEV)
    g.manual_seed(11)
    a = torch.rand(100, device=DEV, generator=g).cpu()
    b = torch.randn(100, device=DEV, generator=g).cpu()
    g.manual_seed(11)
    assert torch.equal(torch.rand(100, device=DEV, generator=g).cpu(), a)
    assert torch.equal(torch.randn(100, device=DEV, generator=g).cpu(), b)


def test_random_statistics():
    torch.manual_seed(0)
    u = torch.rand(100_000, device=DEV).cpu()
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean().item() - 0.5) < 0.01
    assert abs(u.var().item() - 1 / 12) < 0.005

    n = torch.randn(100_000, device=DEV).cpu()
    assert abs(n.mean().item()) < 0.02
    assert abs(n.std().item() - 1.0) < 0.02

    bern = torch.bernoulli(torch.full((100_000,), 0.3).to(DEV)).cpu()
    assert set(bern.unique().tolist()) <= {0.0, 1.0}
    assert abs(bern.mean().item() - 0.3) < 0.01

    bern_p = torch.zeros(100_000).to(DEV).bernoulli_(0.3).cpu()
    assert abs(bern_p.mean().item() - 0.3) < 0.01

    nm = torch.zeros(100_000).to(DEV).normal_(2.0, 3.0).cpu()
    assert abs(nm.mean().item() - 2.0) < 0.06 and abs(nm.std().item() - 3.0) < 0.06

    un = torch.zeros(100_000).to(DEV).uniform_(-2.0, 5.0).cpu()
    assert -2.0 <= un.min() and un.max() < 5.0 and abs(un.mean().item() - 1.5) < 0.07

    r = torch.randint(-5, 10, (100_000,), device=DEV).cpu()
    assert r.min().item() == -5 and r.max().item() == 9
    assert abs(r.float().mean().item() - 2.0) < 0.1

    p = torch.randperm(1000, device=DEV).cpu()
    assert torch.equal(p.sort().values, torch.arange(1000))
    assert not torch.equal(p, torch.arange(1000))

    d = F.dropout(torch.ones(100_000).to(DEV), 0.25).cpu()
    kept = d[d != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / 0.75))
    assert abs((d == 0).float().mean().item() - 0.25) < 0.01


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_exponential_cauchy_log_normal_geometric_statistics(dtype):
    """The other in-place distributions: their laws (quantiles and means), the
    support, and CPU's argument checks."""
    torch.manual_seed(0)
    n = 100_000
    x = torch.empty(n, dtype=dtype, device=DEV)
    e = x.clone().exponential_(2.0).cpu().double()
    assert (e > 0).all(), "an exponential value of 0 (a Gumbel-max sampler divides by them)"
    assert abs(e.mean().item() - 0.5) < 0.01 and abs(e.median().item() - math.log(2) / 2) < 0.01
    c = x.clone().cauchy_(1.0, 2.0).cpu().double()
    q = torch.quantile(c[:50_000], torch.tensor([0.25, 0.5, 0.75], dtype=torch.double))
    torch.testing.assert_close(q, torch.tensor([-1.0, 1.0, 3.0], dtype=torch.double), atol=0.06, rtol=0)
    ln = x.clone().log_normal_(0.5, 0.3).cpu().double()
    assert (ln > 0).all() and abs(ln.log().mean().item() - 0.5) < 0.01
    assert abs(ln.log().std().item() - 0.3) < 0.01
    for g in (x.clone().geometric_(0.3), torch.empty(n, dtype=torch.long, device=DEV).geometric_(0.3)):
        g = g.cpu().double()
        assert g.min().item() == 1 and torch.equal(g, g.round())
        assert abs(g.mean().item() - 1 / 0.3) < 0.05


def test_distribution_argument_checks_like_cpu():
    cases = [
        (lambda d: torch.ones(3, device=d).exponential_(0), RuntimeError, "expects lambda > 0.0"),
        (lambda d: torch.ones(3, dtype=torch.long, device=d).exponential_(), RuntimeError,
         "Exponential distribution is a continuous probability distribution"),
        (lambda d: torch.ones(3, device=d).cauchy_(0, 0), RuntimeError, "expects sigma > 0.0"),
        (lambda d: torch.ones(3, device=d).log_normal_(1, 0), RuntimeError, "expects std > 0.0"),
        (lambda d: torch.ones(3, dtype=torch.long, device=d).log_normal_(), NotImplementedError,
         "not implemented for 'Long'"),
        (lambda d: torch.ones(3, device=d).geometric_(1), RuntimeError, r"expects p to be in \(0, 1\)"),
        (lambda d: torch.ones(3, dtype=torch.bool, device=d).geometric_(0.5), NotImplementedError,
         "not implemented for 'Bool'"),
    ]
    for fn, exc, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(exc, match=message):
                fn(device)
    # torch.distributions draws through them
    torch.manual_seed(0)
    d = torch.distributions.Exponential(torch.tensor([2.0], device=DEV))
    assert d.sample((5,)).device.type == DEV


def test_rrelu_training_draws_slopes_and_eval_matches_cpu():
    torch.manual_seed(0)
    y = torch.randn(10000).to(DEV).requires_grad_()
    out = F.rrelu(y, 0.1, 0.3, training=True)
    slope = (out / y).detach().cpu()
    negative = y.detach().cpu() <= 0
    assert 0.1 <= slope[negative].min() and slope[negative].max() <= 0.3
    assert abs(slope[negative].mean().item() - 0.2) < 0.005
    assert torch.all(slope[~negative] == 1)
    out.sum().backward()  # the gradient is the slope each element drew
    torch.testing.assert_close(y.grad.cpu()[negative], slope[negative])
    x = torch.tensor([-1.0, 2.0, float("nan"), 0.0, -3.0])
    check(lambda t: F.rrelu(t, 0.1, 0.3, training=False), x)  # leaky_relu with the mean slope
    noise = torch.full((5,), 7.0, device=DEV)
    torch.ops.aten.rrelu_with_noise(x.to(DEV), noise, 0.1, 0.3, False)
    assert torch.all(noise.cpu() == 7.0)  # evaluation leaves the noise alone, as on CPU
    noise = torch.empty(5, device=DEV)
    assert torch.isnan(torch.ops.aten.rrelu_with_noise(x.to(DEV), noise, 0.1, 0.3, True).cpu()[2])
    assert noise.cpu()[1] == 1.0 and noise.cpu()[2] == 1.0  # positive and NaN keep slope 1
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="noise tensor shape must match"):
            torch.ops.aten.rrelu_with_noise(x.to(device), torch.empty(3, device=device), 0.1, 0.3, True)


def test_gumbel_max_sampling_matches_the_distribution():
    """What vLLM's sampler does: probs / exponential noise, argmax."""
    torch.manual_seed(0)
    probs = torch.tensor([0.1, 0.6, 0.3], device=DEV).expand(20_000, 3)
    q = torch.empty_like(probs).exponential_()
    picks = probs.div(q).argmax(-1).cpu()
    freq = torch.bincount(picks, minlength=3).double() / picks.numel()
    torch.testing.assert_close(freq, torch.tensor([0.1, 0.6, 0.3], dtype=torch.double),
                               atol=0.015, rtol=0)


def test_multinomial_statistics():
    torch.manual_seed(0)
    w = _WEIGHTS.to(DEV)
    s = torch.multinomial(w, 8).cpu()  # row 1 has exactly 8 non-zero weights
    assert s.shape == (2, 8)
    for row in range(2):
        assert len(set(s[row].tolist())) == 8, f"repeated index without replacement: {s[row]}"
        assert (_WEIGHTS[row, s[row]] > 0).all(), "picked a zero-probability category"
    assert set(s[1].tolist()) == set(range(1, 9))

    big = torch.multinomial(w, 20_000, replacement=True).cpu()
    assert (_WEIGHTS.gather(1, big) > 0).all()
    freq = torch.stack([torch.bincount(big[i], minlength=10) for i in range(2)]).float() / 20_000
    expected = _WEIGHTS / _WEIGHTS.sum(1, keepdim=True)
    torch.testing.assert_close(freq, expected, atol=0.015, rtol=0)

    one = torch.multinomial(torch.tensor([0.2, 0.8]).to(DEV), 5000, replacement=True).cpu()
    assert one.shape == (5000,) and abs(one.float().mean().item() - 0.8) < 0.02


def test_dropout_module_train_eval():
    torch.manual_seed(0)
    x = randn(4, 1000).to(DEV).requires_grad_()
    drop = nn.Dropout(0.5)
    y = drop(x)
    kept = (y != 0).cpu()
    assert abs(kept.float().mean().item() - 0.5) < 0.03
    torch.testing.assert_close(y.cpu()[kept], (x.detach().cpu() * 2)[kept])
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), kept.float() * 2)
    drop.eval()
    assert torch.equal(drop(x).detach().cpu(), x.detach().cpu())


# ---------------------------------------------------------------------------
# 8. Debug mode bounds checks
# ---------------------------------------------------------------------------


def _oob_cases():
    x = lambda: torch.arange(20.0).reshape(5, 4).to(DEV)  # noqa: E731
    i = lambda *v: torch.tensor(v).to(DEV)  # noqa: E731

    def setitem():
        y = x()
        y[i(1, 5)] = 1.0

    return {
        "embedding": (lambda: F.embedding(i(0, 10), x()), "embedding"),
        "index_select": (lambda: x().index_select(0, i(1, 5)), "index_select"),
        "gather": (lambda: x().gather(1, i([0, 4], [1, 1], [0, 0], [2, 3], [3, 3])), "gather"),
        "take": (lambda: x().take(i(3, 20)), "take"),
        "index": (lambda: x()[i(0, 5)], "index"),
        "index_negative": (lambda: x()[i(0, -6)], "index"),
        "index_put_": (lambda: x().index_put_((i(2, 7),), torch.zeros(2, 4).to(DEV)), "index_put"),
        "setitem": (setitem, "index_put"),
        "scatter": (lambda: x().scatter(0, i([5, 0, 0, 0]), 1.0), "scatter"),
        "scatter_add": (lambda: x().scatter_add(1, i([0, 4]), torch.ones(1, 2).to(DEV)), "scatter"),
    }


OOB_NAMES = ["embedding", "index_select", "gather", "take", "index", "index_negative",
             "index_put_", "setitem", "scatter", "scatter_add"]


# CPU raises RuntimeError rather than IndexError for these ops' bad indices.
OOB_RUNTIME_ERROR = {"gather", "scatter", "scatter_add"}


@pytest.mark.parametrize("name", OOB_NAMES)
def test_debug_mode_bounds_check(name):
    op, expected_name = _oob_cases()[name]
    error = RuntimeError if name in OOB_RUNTIME_ERROR else IndexError
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(error, match=f"(?i){expected_name}") as raised:
            op()
        assert raised.type is error
        # the device is still usable afterwards
        assert (torch.ones(3).to(DEV) * 2).sum().item() == 6.0


def test_debug_mode_in_range_indices_ok():
    x = torch.arange(20.0).reshape(5, 4)
    i = torch.tensor([4, 0, 4])
    with torch_tpu.eager_mode("debug"):
        xt, it = x.to(DEV), i.to(DEV)
        assert torch.equal(F.embedding(it, xt).cpu(), F.embedding(i, x))
        assert torch.equal(xt.index_select(0, it).cpu(), x.index_select(0, i))
        assert torch.equal(xt[it].cpu(), x[i])
        assert torch.equal(xt[torch.tensor([-5, -1]).to(DEV)].cpu(), x[torch.tensor([-5, -1])])
        assert torch.equal(xt.take(torch.tensor([19, -20]).to(DEV)).cpu(),
                           x.take(torch.tensor([19, -20])))


# ---------------------------------------------------------------------------
# 9. optimizers
# ---------------------------------------------------------------------------
OPT_STEPS = 5


def _opt_model():
    torch.manual_seed(0)
    return nn.Linear(8, 4)


def _opt_train(device, make_opt):
    model = _opt_model().to(device)
    opt = make_opt(model.parameters())
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(32, 8, generator=g).to(device), torch.randn(32, 4, generator=g).to(device)
    for _ in range(OPT_STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    state = [(s["exp_avg"], s["exp_avg_sq"]) for s in opt.state.values()]
    return [p.detach() for p in model.parameters()], state


OPT_CASES = [
    ("Adam", "fused", {}),
    ("Adam", "foreach", {}),
    ("AdamW", "fused", {}),
    ("AdamW", "foreach", {}),
    ("Adam", "fused", dict(weight_decay=0.1, amsgrad=True)),
    ("AdamW", "foreach", dict(amsgrad=True, betas=(0.8, 0.99))),
]


@pytest.mark.parametrize("opt_name,impl,kw", OPT_CASES,
                         ids=[f"{o}-{i}" + ("-" + "-".join(k) if k else "") for o, i, k in OPT_CASES])
def test_adam_matches_cpu(opt_name, impl, kw):
    cls = getattr(torch.optim, opt_name)
    kw = dict(lr=0.01, **kw)
    ref_params, ref_state = _opt_train(
        "cpu", lambda p: cls(p, foreach=False, fused=False, **kw))
    tpu_kw = dict(fused=True) if impl == "fused" else dict(foreach=True)
    params, state = _opt_train(DEV, lambda p: cls(p, **tpu_kw, **kw))
    for k, (a, e) in enumerate(zip(params, ref_params)):
        assert_same(a, e, f"param {k}", atol=1e-5, rtol=1e-4)
    for k, ((m, v), (me, ve)) in enumerate(zip(state, ref_state)):
        assert_same(m, me, f"exp_avg {k}", atol=1e-5, rtol=1e-4)
        assert_same(v, ve, f"exp_avg_sq {k}", atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("n,m,dtype", [(3, None, torch.float32), (2, 5, torch.int64),
                                       (4, 1, torch.bool), (0, 3, torch.float32)])
def test_eye(n, m, dtype):
    args = (n,) if m is None else (n, m)
    expected = torch.eye(*args, dtype=dtype)
    got = torch.eye(*args, dtype=dtype, device="tpu")
    assert got.dtype == dtype and got.device.type == "tpu"
    assert torch.equal(got.cpu(), expected)
    out = torch.empty(0, dtype=dtype, device="tpu")
    torch.eye(*args, out=out)
    assert torch.equal(out.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64, torch.uint8,
                                   torch.float32], ids=str)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_integer_identities(dtype, reduce, include_self):
    """Negative and narrow integers: amax/amin without self start from the
    dtype's extremes, integer mean floors like CPU."""
    signed = dtype != torch.uint8
    x = torch.tensor([-3, 5, 7, 1] if signed else [3, 5, 7, 1]).to(dtype)
    src = torch.tensor([-4, -7, 2, -1] if signed else [4, 7, 2, 1]).to(dtype)
    index = torch.tensor([0, 0, 1, 1])
    expected = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    got = x.to("tpu").scatter_reduce(0, index.to("tpu"), src.to("tpu"), reduce,
                                     include_self=include_self)
    assert torch.equal(got.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.5}, {"posinf": 7.0}, {"neginf": -3.0},
                                    {"nan": 2.0, "posinf": 3.0, "neginf": 4.0}])
def test_nan_to_num_matches_cpu(dtype, kwargs):
    # The defaults are the result dtype's own finite extremes (bf16's max, not f32's).
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.5], dtype=dtype)
    got = torch.nan_to_num(x.to("tpu"), **kwargs).cpu()
    want = torch.nan_to_num(x, **kwargs)
    assert got.dtype == want.dtype and torch.equal(got, want)
    inplace = x.to("tpu")
    inplace[1:].nan_to_num_(**kwargs)
    want_inplace = x.clone()
    want_inplace[1:].nan_to_num_(**kwargs)
    assert torch.equal(inplace.cpu(), want_inplace)
    out = torch.empty(5, dtype=dtype, device="tpu")
    torch.nan_to_num(x.to("tpu"), out=out, **kwargs)
    assert torch.equal(out.cpu(), want)


def test_nan_to_num_integer_is_a_copy():
    x = torch.tensor([1, -2, 3], dtype=torch.int32)
    got = torch.nan_to_num(x.to("tpu"), nan=5.0)
    assert got.dtype == torch.int32 and torch.equal(got.cpu(), x)


RNN_CASES = {
    "lstm": lambda: torch.nn.LSTM(4, 6),
    "lstm_2_layers_bidirectional_batch_first": lambda: torch.nn.LSTM(
        4, 6, num_layers=2, bidirectional=True, batch_first=True),
    "lstm_no_bias": lambda: torch.nn.LSTM(4, 6, bias=False),
    "lstm_projection": lambda: torch.nn.LSTM(4, 6, proj_size=3),
    "gru": lambda: torch.nn.GRU(4, 6),
    "gru_2_layers_bidirectional": lambda: torch.nn.GRU(4, 6, num_layers=2, bidirectional=True),
    "gru_no_bias": lambda: torch.nn.GRU(4, 6, bias=False),
}


@pytest.mark.parametrize("name", list(RNN_CASES))
def test_lstm_and_gru_match_cpu(name):
    """nn.LSTM/nn.GRU go through the fused cells on accelerators
    (_thnn_fused_lstm_cell/_thnn_fused_gru_cell): outputs, final states and
    every gradient as CPU's."""
    torch.manual_seed(0)
    cpu = RNN_CASES[name]()
    tpu = copy.deepcopy(cpu).to(DEV)
    x = torch.randn(5, 3, 4)
    xc, xt = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    (out_c, state_c), (out_t, state_t) = cpu(xc), tpu(xt)
    assert_same(out_t, out_c, "output")
    for a, e in zip(state_t if isinstance(state_t, tuple) else (state_t,),
                    state_c if isinstance(state_c, tuple) else (state_c,)):
        assert_same(a, e, "final state")
    w = torch.randn(out_c.shape)
    (out_c * w).sum().backward()
    (out_t * w.to(DEV)).sum().backward()
    assert_same(xt.grad, xc.grad, "input grad")
    for (pname, a), e in zip(tpu.named_parameters(), cpu.parameters()):
        assert_same(a.grad, e.grad, f"{pname} grad")


def test_rnn_cells_packed_sequences_and_half():
    torch.manual_seed(0)
    for cell, state in ((torch.nn.LSTMCell(4, 6), (torch.randn(3, 6), torch.randn(3, 6))),
                        (torch.nn.GRUCell(4, 6), torch.randn(3, 6))):
        x = torch.randn(3, 4)
        moved = tuple(s.to(DEV) for s in state) if isinstance(state, tuple) else state.to(DEV)
        expected = cell(x, state)
        actual = copy.deepcopy(cell).to(DEV)(x.to(DEV), moved)
        for a, e in zip(actual if isinstance(actual, tuple) else (actual,),
                        expected if isinstance(expected, tuple) else (expected,)):
            assert_same(a, e, type(cell).__name__)
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    x, lengths = torch.randn(5, 3, 4), torch.tensor([5, 3, 2])
    gru = torch.nn.GRU(4, 6)
    out_c, h_c = gru(pack_padded_sequence(x, lengths))
    out_t, h_t = copy.deepcopy(gru).to(DEV)(pack_padded_sequence(x.to(DEV), lengths))
    assert_same(pad_packed_sequence(out_t)[0], pad_packed_sequence(out_c)[0], "packed output")
    assert_same(h_t, h_c, "packed final state")
    lstm = torch.nn.LSTM(4, 6)
    half = copy.deepcopy(lstm).half().to(DEV)(x.half().to(DEV))[0]
    torch.testing.assert_close(half.cpu().float(), lstm(x)[0], atol=3e-3, rtol=0)


def test_lstm_language_model_trains_like_cpu():
    torch.manual_seed(0)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(20, 8)
            self.rnn = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(16, 20)

        def forward(self, tokens):
            return self.head(self.rnn(self.emb(tokens))[0])

    tokens = torch.randint(0, 20, (4, 9))

    def loss_fn(model, device):
        t = tokens.to(device)
        logits = model(t[:, :-1])
        return F.cross_entropy(logits.reshape(-1, 20), t[:, 1:].reshape(-1))

    train_like_cpu(Model(), loss_fn, lambda p: torch.optim.Adam(p, lr=1e-2))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_embedding_max_norm_renormalizes_like_cpu(norm_type):
    """nn.Embedding(max_norm=...) rescales the rows it looks up, in place
    (embedding_renorm_), before the lookup; repeated indices once."""
    torch.manual_seed(0)
    emb = nn.Embedding(30, 6, max_norm=1.5, norm_type=norm_type)
    with torch.no_grad():
        emb.weight.mul_(3)
    idx = torch.tensor([[1, 4, 4, 7], [29, 1, 0, 4]])
    train_like_cpu(emb, lambda m, d: (m(idx.to(d)) ** 2).sum(), lambda p: torch.optim.SGD(p, lr=0.1))
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="Expected 2-dimensional tensor"):
            torch.embedding_renorm_(torch.ones(3, device=device), torch.tensor([0], device=device), 1.0, 2.0)


@pytest.mark.parametrize("spatial,shape,kernel,out,dtype", [
    (2, (2, 3, 9, 11), (3, 2), (4, 5), torch.float32),
    (2, (3, 10, 10), 2, (5, 5), torch.float32),           # unbatched
    (2, (1, 2, 7, 7), 3, (1, 1), torch.float32),
    (2, (2, 2, 16, 12), (2, 3), (9, 10), torch.float64),
    (2, (2, 2, 16, 12), (2, 3), (9, 10), torch.bfloat16),
    (3, (2, 3, 6, 7, 8), (2, 3, 2), (3, 4, 5), torch.float32),
    (3, (3, 6, 7, 8), 2, (4, 4, 4), torch.float32),
])
def test_fractional_max_pool_like_cpu(spatial, shape, kernel, out, dtype):
    """Given the same random samples, CPU's windows, maxima (a NaN wins,
    the first of equal values wins), indices and gradients."""
    torch.manual_seed(0)
    x = torch.randn(*shape).to(dtype)
    x.view(-1)[5] = float("nan")
    x.view(-1)[-12:-4] = 2.0
    batch = shape[0] if len(shape) == spatial + 2 else 1
    samples = torch.rand(batch + 1, shape[-spatial - 1], spatial, dtype=dtype)  # extra: unused
    f = F.fractional_max_pool2d if spatial == 2 else F.fractional_max_pool3d
    results = []
    for device in ("cpu", DEV):
        leaf = x.to(device, copy=True).requires_grad_()
        y, idx = f(leaf, kernel, output_size=out, return_indices=True,
                   _random_samples=samples.to(device))
        y.backward(torch.arange(y.numel(), dtype=dtype).view(y.shape).to(device))
        results.append((y.detach().cpu(), idx.cpu(), leaf.grad.cpu()))
    (yc, ic, gc), (yt, it, gt) = results
    assert torch.equal(yt.nan_to_num(7), yc.nan_to_num(7)) and torch.equal(it, ic)
    torch.testing.assert_close(gt, gc)


def test_fractional_max_pool_module_and_checks():
    pool = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5)).to(DEV)
    x = torch.randn(2, 3, 20, 20, device=DEV)
    y = pool(x)  # samples from tpu's generator: every output is some window's maximum
    assert y.shape == (2, 3, 10, 10)
    assert torch.isin(y.cpu(), x.cpu()).all()
    x = torch.randn(2, 3, 6, 6)
    for bad, message in [(torch.rand(1, 3, 2), "size\\(0\\) no less then input batch size"),
                         (torch.rand(2, 2, 2), "size\\(1\\) equals to input channel size"),
                         (torch.rand(2, 3, 3), "size\\(2\\) equals to 2; got 3"),
                         (torch.rand(2, 3, 2).double(), "same dtype as input")]:
        for device in ("cpu", DEV):
            with pytest.raises(RuntimeError, match=message):
                F.fractional_max_pool2d(x.to(device), 2, output_size=(3, 3),
                                        _random_samples=bad.to(device))
    # CPU's kernels take float types only: the same NotImplementedError (no
    # compiler text) for the others
    for dtype in (torch.int64, torch.uint8, torch.complex64, torch.float8_e4m3fn):
        for device in ("cpu", DEV):
            with pytest.raises(NotImplementedError, match="fractional_max_pool2d_out_frame"):
                F.fractional_max_pool2d(torch.ones(1, 1, 6, 6, dtype=dtype, device=device), 2,
                                        output_size=3,
                                        _random_samples=torch.rand(1, 1, 2).to(dtype).to(device))

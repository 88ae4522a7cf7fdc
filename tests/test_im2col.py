"""Differential tests of aten::im2col / aten::col2im (nn.functional.unfold /
fold, nn.Unfold / nn.Fold): every case runs on the CPU and on tpu and the
results must agree bit for bit (both are data movement; fold sums the
overlapping taps in CPU's order, starting from +0 as CPU does).

Covered: a grid of kernel / dilation / padding / stride (non-square), batched
and unbatched inputs, float32, bfloat16, float16, complex64 and bool, inf /
NaN / -0, non-contiguous inputs, the out= overloads (resizing, dtype
mismatch), gradients through both ops (each is the other's backward), a
module with nn.Unfold trained for two SGD steps, DeferAndFuse, and the bad
inputs CPU refuses (same exception class, message naming the op).

The CPU fallback is off, so a missing lowering fails instead of passing on
the CPU.
"""

import itertools
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu
from cpu_reference import DEV, outcome, same

A = torch.ops.aten


pytestmark = pytest.mark.usefixtures("cpu_fallback_off")


@pytest.fixture(autouse=True)
def _seed_and_no_fallback():
    torch.manual_seed(0)
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    yield
    assert torch_tpu.debug.metrics()["cpu_fallbacks"] == before, "the CPU fallback ran"


def blocks(size, kernel, dilation, padding, stride):
    """Number of sliding blocks along each spatial dim (torch.nn.Fold's formula)."""
    return [(s + 2 * p - d * (k - 1) - 1) // st + 1
            for s, k, d, p, st in zip(size, kernel, dilation, padding, stride)]


# (kernel, dilation, padding, stride): every value of each range from the
# brief appears, mostly non-square, without the full cartesian product (each
# new shape compiles new programs).
GRID = [
    dict(kernel_size=k, dilation=d, padding=p, stride=s)
    for k, d, p, s in itertools.product(
        [(1, 1), (2, 3), (3, 2)], [(1, 1), (2, 1)], [(0, 0), (1, 2), (2, 0)], [(1, 1), (3, 2)])
] + [
    dict(kernel_size=3, dilation=2, padding=1, stride=3),
    dict(kernel_size=(3, 1), dilation=(1, 2), padding=(2, 1), stride=(2, 1)),
    dict(kernel_size=2, dilation=1, padding=0, stride=2),  # non-overlapping blocks
]
GRID_IDS = ["k{kernel_size}-d{dilation}-p{padding}-s{stride}".format(**g).replace(" ", "")
            for g in GRID]
IMAGE = (7, 8)


@pytest.mark.parametrize("args", GRID, ids=GRID_IDS)
def test_unfold_grid(args):
    x = torch.randn(2, 3, *IMAGE)
    same(lambda dev: F.unfold(x.to(dev), **args))


@pytest.mark.parametrize("args", GRID, ids=GRID_IDS)
def test_fold_grid(args):
    full = {k: (v, v) if isinstance(v, int) else v for k, v in args.items()}
    oh, ow = blocks(IMAGE, full["kernel_size"], full["dilation"], full["padding"], full["stride"])
    kh, kw = full["kernel_size"]
    cols = torch.randn(2, 3 * kh * kw, oh * ow)
    same(lambda dev: F.fold(cols.to(dev), IMAGE, **args))


@pytest.mark.parametrize("args", [GRID[0], GRID[17], GRID[-3], GRID[-2]], ids=str)
def test_unbatched(args):
    x = torch.randn(3, *IMAGE)
    same(lambda dev: F.unfold(x.to(dev), **args))
    cols = F.unfold(x, **args)
    same(lambda dev: F.fold(cols.to(dev), IMAGE, **args))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.complex64, torch.bool],
                         ids=str)
def test_other_dtypes(dtype):
    # 3x3 blocks at stride 1: up to 9 taps are summed per output element, each
    # sum rounded to the dtype as CPU rounds it
    args = dict(kernel_size=3, padding=1)
    x = torch.randn(2, 3, 6, 5) * 4
    x = x > 0 if dtype == torch.bool else x.to(dtype)
    same(lambda dev: F.unfold(x.to(dev), **args))
    cols = torch.randn(2, 27, 30) * 4
    cols = cols > 0 if dtype == torch.bool else cols.to(dtype)
    same(lambda dev: F.fold(cols.to(dev), (6, 5), **args))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8], ids=str)
def test_integer_dtypes_refused_like_cpu(dtype):
    x = torch.ones(1, 2, 4, 4, dtype=dtype)
    same(lambda dev: F.unfold(x.to(dev), 2))
    same(lambda dev: F.fold(torch.ones(1, 8, 9, dtype=dtype).to(dev), (4, 4), 2))
    with pytest.raises(NotImplementedError, match="im2col"):
        F.unfold(x.to(DEV), 2)
    with pytest.raises(NotImplementedError, match="col2im"):
        F.fold(torch.ones(1, 8, 9, dtype=dtype, device=DEV), (4, 4), 2)


def test_special_values():
    x = torch.randn(2, 2, 5, 6)
    x[0, 0, 1, 2] = float("inf")
    x[0, 1, 3, 3] = float("-inf")
    x[1, 0, 0, 0] = float("nan")
    x[1, 1, 4, 5] = -0.0
    for args in (dict(kernel_size=2), dict(kernel_size=3, padding=2, dilation=2, stride=2)):
        same(lambda dev: F.unfold(x.to(dev), **args))
        cols = F.unfold(x, **args)
        same(lambda dev: F.fold(cols.to(dev), (5, 6), **args))


def test_fold_of_negative_zeros_is_positive_zero():
    # CPU's sums start from +0, so they are never -0, even where every tap is -0
    # and even with a single tap
    for k in (1, 2):
        cols = torch.full((1, 2 * k * k, (5 - k) ** 2), -0.0)
        same(lambda dev: F.fold(cols.to(dev), (4, 4), k))
        assert not torch.signbit(F.fold(cols.to(DEV), (4, 4), k).cpu()).any()


def test_fold_negative_zero_under_defer_and_fuse():
    cols = torch.full((1, 8, 9), -0.0)
    with torch_tpu.eager_mode("defer_and_fuse"):
        r = F.fold(cols.to(DEV) * 1.0, (4, 4), 2)
        r = (r + 0.0).cpu()
    torch.testing.assert_close(r, F.fold(cols, (4, 4), 2), rtol=0, atol=0)
    assert not torch.signbit(r).any()


def test_noncontiguous_inputs():
    base = torch.randn(3, 9, 2, 10)
    args = dict(kernel_size=(2, 3), padding=1, stride=(1, 2))
    # permuted
    same(lambda dev: F.unfold(base.to(dev).permute(2, 0, 3, 1), **args))
    # sliced with a step and an offset
    same(lambda dev: F.unfold(base.to(dev)[1:, ::2, 1, 1:9].unsqueeze(0), **args))
    cols = torch.randn(20, 2, 18)  # L = 4 * 5 blocks of (5, 8) with these args
    same(lambda dev: F.fold(cols.to(dev).permute(1, 2, 0), (5, 8), **args))
    wide = torch.randn(2, 12, 40)
    same(lambda dev: F.fold(wide.to(dev)[:, ::2, ::2], (5, 8), **args))


def test_zero_batch():
    same(lambda dev: F.unfold(torch.randn(0, 3, 5, 6, device=dev), 2))
    same(lambda dev: F.fold(torch.randn(0, 12, 20, device=dev), (5, 6), 2))


# ---------------------------------------------------------------------------
# out= overloads

IM2COL_ARGS = ([2, 3], [1, 1], [1, 0], [1, 2])  # kernel, dilation, padding, stride
COL2IM_ARGS = ([5, 6], [2, 3], [1, 1], [1, 0], [1, 2])  # output_size first


def _outs(x, shape, dtype, op, args):
    """op(x, *args, out=empty(shape, dtype)) on both devices: (out, warnings)
    or the exception, with out's shape after it."""
    result = {}
    for dev in ("cpu", DEV):
        out = torch.empty(shape, dtype=dtype, device=dev)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = outcome(lambda d: op(x.to(d), *args, out=out), dev)
        result[dev] = (got, out.shape, [str(m.message) for m in w])
    return result["cpu"], result[DEV]


@pytest.mark.parametrize("shape", [(2, 6, 12), (1,), (0,), (3, 4, 5, 6, 7)], ids=str)
def test_im2col_out_resizes_like_cpu(shape):
    x = torch.randn(2, 1, 5, 6)
    (c, c_shape, c_warn), (t, t_shape, t_warn) = _outs(x, shape, torch.float32, A.im2col.out,
                                                       IM2COL_ARGS)
    assert c_shape == t_shape == (2, 6, 12)
    assert c_warn == t_warn == []  # CPU resizes without resize_output's warning
    torch.testing.assert_close(t, c, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(2, 1, 5, 6), (7,), (0,)], ids=str)
def test_col2im_out_resizes_like_cpu(shape):
    cols = torch.randn(2, 6, 12)
    (c, c_shape, c_warn), (t, t_shape, t_warn) = _outs(cols, shape, torch.float32, A.col2im.out,
                                                       COL2IM_ARGS)
    assert c_shape == t_shape == (2, 1, 5, 6)
    assert c_warn == t_warn == []
    torch.testing.assert_close(t, c, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int64], ids=str)
def test_out_dtype_mismatch_like_cpu(dtype):
    x, cols = torch.randn(2, 1, 5, 6), torch.randn(2, 6, 12)
    for op, inp, args in ((A.im2col.out, x, IM2COL_ARGS), (A.col2im.out, cols, COL2IM_ARGS)):
        (c, c_shape, _), (t, t_shape, _) = _outs(inp, (3,), dtype, op, args)
        assert isinstance(c, RuntimeError) and type(t) is type(c), (c, t)
        assert op.__name__.split(".")[0] in str(t)
        assert c_shape == t_shape  # both resized out= before refusing its dtype


def test_noncontiguous_out_gets_the_values():
    # CPU writes its result into a non-contiguous out= as if it were contiguous
    # (a CPU quirk, not matched: tpu writes through the view), so the values
    # are compared with CPU's functional result
    x, cols = torch.randn(2, 1, 5, 6), torch.randn(2, 6, 12)
    out = torch.empty(2, 12, 6, device=DEV).transpose(1, 2)
    A.im2col.out(x.to(DEV), *IM2COL_ARGS, out=out)
    assert out.stride() == (72, 1, 6)
    torch.testing.assert_close(out.cpu(), A.im2col(x, *IM2COL_ARGS), rtol=0, atol=0)
    out = torch.empty(2, 1, 6, 5, device=DEV).transpose(2, 3)
    A.col2im.out(cols.to(DEV), *COL2IM_ARGS, out=out)
    torch.testing.assert_close(out.cpu(), A.col2im(cols, *COL2IM_ARGS), rtol=0, atol=0)


# ---------------------------------------------------------------------------
# autograd


@pytest.mark.parametrize("args", [GRID[5], GRID[-3], GRID[-1]], ids=str)
def test_gradients(args):
    x = torch.randn(2, 3, *IMAGE)
    w_cols = torch.randn(F.unfold(x, **args).shape)
    w_img = torch.randn(2, 3, *IMAGE)

    def grads(dev):
        xi = x.to(dev).requires_grad_()
        cols = F.unfold(xi, **args)
        (gx,) = torch.autograd.grad((cols * w_cols.to(dev)).sum(), xi)
        ci = w_cols.to(dev).requires_grad_()
        (gc,) = torch.autograd.grad((F.fold(ci, IMAGE, **args) * w_img.to(dev)).sum(), ci)
        return gx, gc

    same(grads)


def test_unfold_module_trains_like_cpu():
    """nn.Unfold in front of a linear layer (ConvBERT's span-based dynamic
    convolution unfolds the same way), two SGD steps."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.unfold = nn.Unfold(kernel_size=(3, 1), padding=(1, 0))
            self.proj = nn.Linear(4 * 3, 5)
            self.fold = nn.Fold(output_size=(6, 1), kernel_size=(3, 1), padding=(1, 0))

        def forward(self, x):
            cols = self.unfold(x)  # [N, 12, 6]
            y = self.proj(cols.transpose(1, 2))  # [N, 6, 5]
            back = self.fold(cols * 0.5)  # [N, 4, 6, 1]
            return y.pow(2).mean() + back.abs().mean()

    x = torch.randn(3, 4, 6, 1)
    net = Net()
    results = {}
    for dev in ("cpu", DEV):
        model = Net().to(dev)
        model.load_state_dict(net.state_dict())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = model(x.to(dev))
            loss.backward()
            opt.step()
            losses.append(loss.detach().cpu())
        results[dev] = (losses, {k: v.detach().cpu() for k, v in model.state_dict().items()})
    (cl, cs), (tl, ts) = results["cpu"], results[DEV]
    torch.testing.assert_close(torch.stack(tl), torch.stack(cl), rtol=1e-5, atol=1e-6)
    for k in cs:
        torch.testing.assert_close(ts[k], cs[k], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# bad input: CPU's exception class, raised before any program is built

X4 = (2, 3, 5, 6)
BAD_UNFOLD = {
    "2d": lambda d: F.unfold(torch.randn(5, 6, device=d), 2),
    "1d": lambda d: A.im2col(torch.randn(5, device=d), [2, 2], [1, 1], [0, 0], [1, 1]),
    "0d": lambda d: A.im2col(torch.tensor(1.0, device=d), [2, 2], [1, 1], [0, 0], [1, 1]),
    "5d": lambda d: A.im2col(torch.randn(1, 2, 3, 4, 5, device=d), [2, 2], [1, 1], [0, 0], [1, 1]),
    "kernel3": lambda d: A.im2col(torch.randn(X4, device=d), [2, 2, 2], [1, 1], [0, 0], [1, 1]),
    "dilation1": lambda d: A.im2col(torch.randn(X4, device=d), [2, 2], [1], [0, 0], [1, 1]),
    "padding1": lambda d: A.im2col(torch.randn(X4, device=d), [2, 2], [1, 1], [0], [1, 1]),
    "stride1": lambda d: A.im2col(torch.randn(X4, device=d), [2, 2], [1, 1], [0, 0], [1]),
    "kernel0": lambda d: F.unfold(torch.randn(X4, device=d), 0),
    "kernel-1": lambda d: F.unfold(torch.randn(X4, device=d), (-1, 2)),
    "dilation0": lambda d: F.unfold(torch.randn(X4, device=d), 2, dilation=0),
    "padding-1": lambda d: F.unfold(torch.randn(X4, device=d), 2, padding=-1),
    "stride0": lambda d: F.unfold(torch.randn(X4, device=d), 2, stride=0),
    "too_big": lambda d: F.unfold(torch.randn(X4, device=d), 7),
    "zero_channels": lambda d: F.unfold(torch.randn(2, 0, 5, 6, device=d), 2),
    "zero_height": lambda d: F.unfold(torch.randn(2, 3, 0, 6, device=d), 2),
    "unbatched_zero_channels": lambda d: F.unfold(torch.randn(0, 5, 6, device=d), 2),
    "int_kernel0": lambda d: F.unfold(torch.ones(X4, dtype=torch.long, device=d), 0),
}
COLS = (2, 12, 20)
BAD_FOLD = {
    "4d": lambda d: F.fold(torch.randn(1, 2, 12, 20, device=d), (5, 6), 2),
    "1d": lambda d: A.col2im(torch.randn(12, device=d), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]),
    "0d": lambda d: A.col2im(torch.tensor(1.0, device=d), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]),
    "output_size3": lambda d: A.col2im(torch.randn(COLS, device=d), [5, 6, 7], [2, 2], [1, 1],
                                       [0, 0], [1, 1]),
    "kernel3": lambda d: A.col2im(torch.randn(COLS, device=d), [5, 6], [2, 2, 2], [1, 1],
                                  [0, 0], [1, 1]),
    "channels_not_divisible": lambda d: F.fold(torch.randn(2, 13, 20, device=d), (5, 6), 2),
    "blocks_mismatch": lambda d: F.fold(torch.randn(2, 12, 21, device=d), (5, 6), 2),
    "kernel0": lambda d: F.fold(torch.randn(COLS, device=d), (5, 6), 0),
    "stride0": lambda d: F.fold(torch.randn(COLS, device=d), (5, 6), 2, stride=0),
    "dilation0": lambda d: F.fold(torch.randn(COLS, device=d), (5, 6), 2, dilation=0),
    "padding-1": lambda d: F.fold(torch.randn(COLS, device=d), (5, 6), 2, padding=-1),
    "zero_output": lambda d: F.fold(torch.randn(2, 12, 0, device=d), (0, 6), 2),
    "output_too_small": lambda d: F.fold(torch.randn(2, 12, 1, device=d), (1, 1), 2),
    "negative_output": lambda d: F.fold(torch.randn(2, 12, 1, device=d), (-1, 1), 2),
    "zero_channels": lambda d: F.fold(torch.randn(2, 0, 20, device=d), (5, 6), 2),
    "zero_blocks": lambda d: F.fold(torch.randn(2, 12, 0, device=d), (5, 6), 2),
    "unbatched_zero": lambda d: F.fold(torch.randn(0, 20, device=d), (5, 6), 2),
    "kernel_product_overflows": lambda d: F.fold(torch.randn(COLS, device=d), (5, 6),
                                                 (2 ** 33, 2 ** 33)),
}


@pytest.mark.parametrize("op,name,fn", [("im2col", k, v) for k, v in BAD_UNFOLD.items()]
                         + [("col2im", k, v) for k, v in BAD_FOLD.items()],
                         ids=[f"unfold-{k}" for k in BAD_UNFOLD] + [f"fold-{k}" for k in BAD_FOLD])
def test_bad_input_raises_like_cpu(op, name, fn):
    assert isinstance(outcome(fn, "cpu"), Exception), name
    same(fn)
    err = outcome(fn, DEV)
    if not str(err).startswith("Dimension"):  # IndexErrors from F.unfold's own checks
        assert op in str(err), err
    # the device keeps working
    assert torch.ones(2, device=DEV).sum().item() == 2.0


def test_huge_kernel_raises_instead_of_a_negative_size():
    # CPU's check lets a 2**40 x 2**40 kernel through (sizes overflow int64) and
    # returns a tensor with a negative size; tpu refuses it
    with pytest.raises(RuntimeError, match="im2col"):
        F.unfold(torch.randn(X4, device=DEV), (2 ** 40, 2 ** 40))

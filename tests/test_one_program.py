"""Kernels written as several tpu ops run as one program in Strict mode
(csrc/ops/strict_ops_in_one_region.h): one launch per call, with CPU's values, forward
and backward; Debug mode keeps one launch per op."""

import pytest
import torch
import torch.nn.functional as F

import torch_tpu
from metric_deltas import synced_delta


def _gen():
    return torch.Generator().manual_seed(0)


# name: (the op, inputs made on CPU; what is measured is the op alone)
CASES = {
    "smooth_l1_loss": (lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), lambda g: [_r(g), _r(g)]),
    "huber_loss": (lambda x, y: F.huber_loss(x, y, delta=0.7), lambda g: [_r(g), _r(g)]),
    "binary_cross_entropy": (F.binary_cross_entropy, lambda g: [_r(g).sigmoid(), _r(g).sigmoid()]),
    "log_sigmoid": (F.logsigmoid, lambda g: [_r(g)]),
    "glu": (lambda x: F.glu(x, -1), lambda g: [_r(g)]),
    "reflection_pad1d": (lambda x: F.pad(x, (2, 1), mode="reflect"), lambda g: [_r(g, 2, 3, 4)]),
    "replication_pad2d": (lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"), lambda g: [_r(g, 1, 2, 3, 4)]),
    "prelu": (F.prelu, lambda g: [_r(g, 2, 3, 4), _r(g, 3)]),
    "renorm": (lambda x: torch.renorm(x, 2, 0, 1.0), lambda g: [_r(g)]),
    "count_nonzero": (lambda x: torch.count_nonzero(x, dim=1), lambda g: [_r(g).round()]),
    "addmv": (lambda s, m, v: torch.addmv(s, m, v, beta=0.5, alpha=2.0), lambda g: [_r(g, 6), _r(g), _r(g, 4)]),
    "angle": (torch.angle, lambda g: [_r(g)]),
    "mse_loss": (F.mse_loss, lambda g: [_r(g), _r(g)]),
    "binary_cross_entropy_with_logits": (
        lambda x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw),
        lambda g: [_r(g), _r(g).sigmoid(), _r(g, 4), _r(g, 4).abs()]),
    "constant_pad_nd": (lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), lambda g: [_r(g)]),
    "slice_backward": (lambda grad: torch.ops.aten.slice_backward(grad, [6, 9], 1, 2, 8, 2), lambda g: [_r(g, 6, 3)]),
    "select_backward": (lambda grad: torch.ops.aten.select_backward(grad, [6, 4], 0, 2), lambda g: [_r(g, 4)]),
    "isin": (torch.isin, lambda g: [torch.randint(0, 9, (6, 4), generator=g), torch.tensor([1, 5, 7])]),
    "nll_loss2d": (F.nll_loss, lambda g: [_r(g, 1, 3, 2, 4).log_softmax(1), torch.randint(0, 3, (1, 2, 4), generator=g)]),
}


def _r(g, *shape):
    return torch.randn(shape or (6, 4), generator=g)


def _inputs(name):
    return CASES[name][1](_gen())


@pytest.mark.parametrize("name", list(CASES))
def test_forward_is_one_launch_with_cpus_values(name):
    fn = CASES[name][0]
    xs = _inputs(name)
    want = fn(*xs)
    txs = [x.to("tpu") for x in xs]
    with torch_tpu.eager_mode("strict"):
        got, delta = synced_delta(lambda: fn(*txs))
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    assert delta["executions"] == 1, delta


@pytest.mark.parametrize("name", ["mse_loss", "constant_pad_nd", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "log_sigmoid",
                                  "glu", "reflection_pad1d", "replication_pad2d", "prelu", "nll_loss2d"])
def test_backward_steps_are_one_launch_each_with_cpus_gradients(name):
    fn = CASES[name][0]
    xs = _inputs(name)
    xs[0].requires_grad_()
    out = fn(*xs)
    grad = torch.randn(out.shape, generator=_gen())
    want = torch.autograd.grad(out, xs[:1], grad)
    txs = [x.detach().to("tpu") for x in xs]
    txs[0].requires_grad_()
    tout = fn(*txs)
    tgrad = grad.to("tpu")
    with torch_tpu.eager_mode("strict"):
        got, delta = synced_delta(lambda: torch.autograd.grad(tout, txs[:1], tgrad))
    torch.testing.assert_close(got[0].cpu(), want[0], atol=1e-5, rtol=1e-5)
    assert delta["executions"] == 1, delta


# (prelu's forward, nll_loss2d's and a one-dim padding are one op already)
@pytest.mark.parametrize("name", sorted(set(CASES) - {"prelu", "nll_loss2d", "reflection_pad1d"}))
def test_debug_mode_keeps_one_launch_per_op(name):
    # (so each of these ops is several programs without the scope)
    fn = CASES[name][0]
    txs = [x.to("tpu") for x in _inputs(name)]
    with torch_tpu.eager_mode("debug"):
        _, delta = synced_delta(lambda: fn(*txs))
    assert delta["executions"] > 1, delta


def test_an_error_inside_leaves_the_mode_and_later_ops_run():
    x = torch.randn(3, 5, device="tpu")
    with torch_tpu.eager_mode("strict"):
        with pytest.raises(RuntimeError, match="Halving dimension must be even"):
            F.glu(x, -1)
        assert torch_tpu.get_eager_mode() == "strict"
        _, delta = synced_delta(lambda: x + 1)
        assert delta["executions"] == 1

"""torch.optim's fused kernels on tpu (`_fused_adam_`, `_fused_adamw_`,
`_fused_sgd_`, `_fused_adagrad_`: Adam/AdamW/SGD/Adagrad(fused=True)) against CPU's own fused kernels:
several steps of a small model with every option the kernels take, a
GradScaler's unscaling and inf skipping, tensor learning rates, in Strict,
DeferAndFuse and inside a compiled step; the kernels called directly for
their edge cases (the unscaled gradient written back, a found inf leaving
everything as it was, no momentum buffers, list lengths)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu
from torch_tpu import debug

DEV = "tpu"
STEPS = 4


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _batches():
    g = torch.Generator().manual_seed(3)
    return [(torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g))
            for _ in range(STEPS)]


def _train(device, make_opt, scaler_scale=None, step_fn=None, poison_step=None):
    """Trains _model on `device`; returns (parameters, optimizer state,
    gradients, scaler) on CPU. With `scaler_scale`, a GradScaler of that
    initial scale drives the steps (its growth every step, so the scale
    moves). At `poison_step` the batch holds an inf (the gradients then
    hold inf/NaN)."""
    model = _model().to(device)
    opt = make_opt(model.parameters())
    scaler = None
    if scaler_scale is not None:
        scaler = torch.amp.GradScaler(device, init_scale=scaler_scale, growth_interval=1)
    for i, (x, y) in enumerate(_batches()):
        if i == poison_step:
            x = x.clone()
            x[0, 0] = float("inf")
        opt.zero_grad()
        loss = F.mse_loss(model(x.to(device)), y.to(device))
        if scaler is None:
            loss.backward()
            (step_fn or opt.step)()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    state = [{k: v.detach().cpu() for k, v in s.items() if isinstance(v, torch.Tensor)}
             for s in opt.state.values()]
    params = [p.detach().cpu() for p in model.parameters()]
    grads = [p.grad.detach().cpu() for p in model.parameters()]
    return params, state, grads, scaler


def _assert_close(got, want, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    torch.testing.assert_close(got, want, atol=2e-6, rtol=2e-5, msg=lambda m: f"{what}: {m}")


def _assert_same_training(got, want):
    params, state, grads, _ = got
    params_e, state_e, grads_e, _ = want
    for k, (a, e) in enumerate(zip(params, params_e)):
        _assert_close(a, e, f"param {k}")
    for k, (a, e) in enumerate(zip(grads, grads_e)):
        _assert_close(a, e, f"grad {k}")
    assert len(state) == len(state_e)
    for k, (s, se) in enumerate(zip(state, state_e)):
        assert sorted(s) == sorted(se), f"state {k}: {sorted(s)} != {sorted(se)}"
        for name in s:
            # CPU keeps a fused optimizer's step count on the parameter's
            # device; so does tpu.
            _assert_close(s[name], se[name], f"state {k} {name}")


OPTIMIZERS = {
    "Adam": (torch.optim.Adam, dict(lr=0.01)),
    "Adam-wd-amsgrad": (torch.optim.Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    "Adam-maximize": (torch.optim.Adam, dict(lr=0.01, maximize=True, betas=(0.8, 0.95))),
    "AdamW": (torch.optim.AdamW, dict(lr=0.01)),
    "AdamW-wd-amsgrad-maximize": (torch.optim.AdamW,
                                  dict(lr=0.01, weight_decay=0.05, amsgrad=True, maximize=True)),
    "SGD": (torch.optim.SGD, dict(lr=0.05)),
    "SGD-momentum": (torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
    "SGD-nesterov-wd": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True,
                                              weight_decay=0.01)),
    "SGD-dampening-maximize": (torch.optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.3,
                                                     maximize=True)),
    "Adagrad": (torch.optim.Adagrad, dict(lr=0.05)),
    "Adagrad-decay-wd-maximize": (torch.optim.Adagrad,
                                  dict(lr=0.05, lr_decay=0.1, weight_decay=0.01, maximize=True,
                                       initial_accumulator_value=0.2)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("mode", ["strict", "defer_and_fuse"])
def test_fused_optimizer_matches_cpu_fused(name, mode):
    cls, kw = OPTIMIZERS[name]
    want = _train("cpu", lambda p: cls(p, fused=True, **kw))
    before = debug.metrics()["executions"]
    with torch_tpu.eager_mode(mode):
        got = _train(DEV, lambda p: cls(p, fused=True, **kw))
        torch.tpu.synchronize()
    _assert_same_training(got, want)
    assert debug.metrics()["executions"] > before


@pytest.mark.parametrize("name", ["Adam-wd-amsgrad", "AdamW", "SGD-nesterov-wd",
                                  "Adagrad-decay-wd-maximize"])
def test_fused_matches_cpu_foreach(name):
    # The fused kernels are the same math as the for-each implementation.
    cls, kw = OPTIMIZERS[name]
    want = _train("cpu", lambda p: cls(p, foreach=True, **kw))
    got = _train(DEV, lambda p: cls(p, fused=True, **kw))
    params, _, grads, _ = got
    for k, (a, e) in enumerate(zip(params, want[0])):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4, msg=lambda m: f"param {k}: {m}")


def test_fused_step_is_one_program_for_all_parameters():
    model = _model().to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, fused=True)
    x, y = _batches()[0]
    for _ in range(2):  # the first step compiles
        opt.zero_grad()
        F.mse_loss(model(x.to(DEV)), y.to(DEV)).backward()
        torch.tpu.synchronize()
        before = debug.metrics()["executions"]
        opt.step()
        torch.tpu.synchronize()
    # One program updates all six tensors (plus the step counts' increment,
    # one for-each add).
    assert debug.metrics()["executions"] - before <= 2


@pytest.mark.parametrize("name", ["Adam", "AdamW-wd-amsgrad-maximize", "SGD-momentum", "SGD",
                                  "Adagrad"])
def test_grad_scaler_with_fused_optimizer_matches_cpu(name):
    # GradScaler hands a fused optimizer its scale and found_inf: the kernel
    # unscales (writing the unscaled gradient back) and skips on an inf.
    cls, kw = OPTIMIZERS[name]
    want = _train("cpu", lambda p: cls(p, fused=True, **kw), scaler_scale=2.0 ** 10)
    got = _train(DEV, lambda p: cls(p, fused=True, **kw), scaler_scale=2.0 ** 10)
    _assert_same_training(got, want)
    assert got[3].get_scale() == want[3].get_scale()


@pytest.mark.parametrize("name", ["AdamW", "SGD-momentum", "Adagrad"])
def test_grad_scaler_inf_skips_the_step_like_cpu(name):
    # An inf in the second batch: found_inf is set, that step is skipped
    # (gradients left as they were) and the scale backs off, as on CPU.
    cls, kw = OPTIMIZERS[name]
    runs = {}
    for device in ("cpu", DEV):
        runs[device] = _train(device, lambda p: cls(p, fused=True, **kw), scaler_scale=256.0,
                              poison_step=1)
    params, state, _, scaler = runs[DEV]
    params_e, state_e, _, scaler_e = runs["cpu"]
    for k, (a, e) in enumerate(zip(params, params_e)):
        _assert_close(a, e, f"param {k}")
    for k, (s, se) in enumerate(zip(state, state_e)):
        for name in s:
            _assert_close(s[name], se[name], f"state {k} {name}")
    # Growth every step: 256 -> 512, backoff -> 256, then 512, 1024.
    assert scaler.get_scale() == scaler_e.get_scale() == 1024.0


@pytest.mark.parametrize("name", ["Adam", "AdamW-wd-amsgrad-maximize", "SGD-momentum",
                                  "Adagrad-decay-wd-maximize"])
def test_tensor_learning_rate(name):
    # A tensor lr on the device: the `.tensor_lr` overloads.
    cls, kw = OPTIMIZERS[name]
    kw = dict(kw)
    lr = kw.pop("lr")
    want = _train("cpu", lambda p: cls(p, fused=True, lr=torch.tensor(lr), **kw))
    got = _train(DEV, lambda p: cls(p, fused=True, lr=torch.tensor(lr, device=DEV), **kw))
    _assert_same_training(got, want)


def test_compiled_fused_step_matches_cpu():
    kw = dict(lr=0.01, weight_decay=0.1)
    want = _train("cpu", lambda p: torch.optim.AdamW(p, fused=True, **kw))
    model = _model().to(DEV)
    opt = torch.optim.AdamW(model.parameters(), fused=True, **kw)
    step = torch.compile(opt.step, backend="tpu")
    for x, y in _batches():
        opt.zero_grad()
        F.mse_loss(model(x.to(DEV)), y.to(DEV)).backward()
        step()
    for k, (a, e) in enumerate(zip(model.parameters(), want[0])):
        _assert_close(a.detach().cpu(), e, f"param {k}")


def test_weight_decay_on_and_off_are_different_programs():
    # Two optimizers over tensors of the same shapes, one without weight
    # decay and one with: the second must not reuse the first's program.
    for cls in (torch.optim.Adam, torch.optim.SGD, torch.optim.Adagrad):
        for wd in (0.0, 0.5):
            want = _train("cpu", lambda p: cls(p, fused=True, lr=0.01, weight_decay=wd))
            got = _train(DEV, lambda p: cls(p, fused=True, lr=0.01, weight_decay=wd))
            _assert_same_training(got, want)


def _sgd_args(device, n=3, momentum=True):
    g = torch.Generator().manual_seed(5)
    params = [torch.randn(4, 3, generator=g).to(device) for _ in range(n)]
    grads = [torch.randn(4, 3, generator=g).to(device) for _ in range(n)]
    bufs = [torch.randn(4, 3, generator=g).to(device) for _ in range(n)] if momentum else []
    return params, grads, bufs


@pytest.mark.parametrize("found_inf", [0.0, 1.0])
@pytest.mark.parametrize("momentum,first", [(0.0, False), (0.9, True), (0.9, False)])
def test_fused_sgd_kernel_direct(found_inf, momentum, first):
    results = {}
    for device in ("cpu", DEV):
        params, grads, bufs = _sgd_args(device, momentum=momentum != 0)
        torch._fused_sgd_(params, grads, bufs, weight_decay=0.01, momentum=momentum, lr=0.1,
                          dampening=0.2, nesterov=False, maximize=False, is_first_step=first,
                          grad_scale=torch.tensor(4.0, device=device),
                          found_inf=torch.tensor(found_inf, device=device))
        results[device] = [t.cpu() for t in params + grads + bufs]
    for k, (a, e) in enumerate(zip(results[DEV], results["cpu"])):
        _assert_close(a, e, f"tensor {k}")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_fused_kernels_other_dtypes(dtype):
    results = {}
    for device in ("cpu", DEV):
        params, grads, bufs = _sgd_args(device)
        params, grads, bufs = ([t.to(dtype) for t in ts] for ts in (params, grads, bufs))
        torch._fused_sgd_(params, grads, bufs, weight_decay=0.0, momentum=0.9, lr=0.1,
                          dampening=0.0, nesterov=True, maximize=False, is_first_step=False)
        results[device] = [t.cpu() for t in params + bufs]
    for a, e in zip(results[DEV], results["cpu"]):
        assert a.dtype == dtype
        torch.testing.assert_close(a, e, atol=1e-2 if dtype != torch.float64 else 1e-12,
                                   rtol=1e-2 if dtype != torch.float64 else 1e-12)


def test_fused_sgd_bad_lists_raise_like_cpu():
    for device in ("cpu", DEV):
        params, grads, bufs = _sgd_args(device)
        with pytest.raises(RuntimeError):
            torch._fused_sgd_(params, grads[:2], bufs, weight_decay=0.0, momentum=0.9, lr=0.1,
                              dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    params, grads, bufs = _sgd_args(DEV)
    with pytest.raises(RuntimeError, match="_fused_sgd_"):
        torch._fused_sgd_(params, grads, bufs[:1], weight_decay=0.0, momentum=0.9, lr=0.1,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False)


@pytest.mark.parametrize("name", ["Adam", "SGD-momentum"])
def test_grad_scaler_with_foreach_optimizer_matches_cpu(name):
    # Not fused: the scaler unscales with _amp_foreach_non_finite_check_and_unscale_
    # and the optimizer steps unless found_inf says not to.
    cls, kw = OPTIMIZERS[name]
    runs = {device: _train(device, lambda p: cls(p, foreach=True, **kw), scaler_scale=64.0,
                           poison_step=2)
            for device in ("cpu", DEV)}
    for k, (a, e) in enumerate(zip(runs[DEV][0], runs["cpu"][0])):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4, msg=lambda m: f"param {k}: {m}")
    assert runs[DEV][3].get_scale() == runs["cpu"][3].get_scale()


@pytest.mark.parametrize("scale,tracker,found", [
    (1024.0, 0, 0.0),       # counts a success
    (1024.0, 2, 0.0),       # reaches the interval: grows, tracker back to 0
    (1024.0, 2, 1.0),       # an inf: backs off, tracker back to 0
    (3.0e38, 2, 0.0),       # growing would overflow: scale kept, tracker 0
])
def test_amp_update_scale_matches_cpu(scale, tracker, found):
    results = {}
    for device in ("cpu", DEV):
        s = torch.full((), scale, device=device)
        t = torch.full((), tracker, dtype=torch.int32, device=device)
        ret = torch._amp_update_scale_(s, t, torch.full((), found, device=device), 2.0, 0.5, 3)
        assert ret is s
        results[device] = (s.cpu(), t.cpu())
    assert torch.equal(results[DEV][0], results["cpu"][0])
    assert torch.equal(results[DEV][1], results["cpu"][1])


def test_amp_unscale_matches_cpu_and_checks_arguments():
    results = {}
    for device in ("cpu", DEV):
        grads = [torch.tensor([1.0, float("nan"), 4.0], device=device),
                 torch.tensor(8.0, dtype=torch.bfloat16, device=device),
                 torch.zeros(0, device=device)]
        found = torch.zeros((), device=device)
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found,
                                                         torch.full((), 0.25, device=device))
        results[device] = [g.cpu() for g in grads] + [found.cpu()]
        with pytest.raises(RuntimeError):
            torch._amp_foreach_non_finite_check_and_unscale_(
                grads, found, torch.full((), 0.25, dtype=torch.float64, device=device))
    for a, e in zip(results[DEV], results["cpu"]):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a, e, equal_nan=True)
    assert results[DEV][-1].item() == 1.0

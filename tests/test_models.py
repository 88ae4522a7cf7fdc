"""Models train on tpu with the same losses as on CPU, step by step, with no
CPU fallback, in Strict and Debug mode: an MLP with each torch.optim
optimizer, a CNN (conv, BatchNorm, pooling, AdamW) and a GPT-style decoder
(embedding, causal SDPA, LayerNorm, GELU, dropout, cross-entropy, AdamW
foreach and fused, gradient clipping), in float32 and under bf16 autocast."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu

STEPS = 20


def make_mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(),
                         nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 5))


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 16, generator=g), torch.randint(0, 5, (64,), generator=g)


def train(device, make_optimizer, clip=None, label_smoothing=0.0):
    model = copy.deepcopy(MLP).to(device)
    opt = make_optimizer(model.parameters())
    x, y = (t.to(device) for t in DATA)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y, label_smoothing=label_smoothing)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
    params = [p.detach().cpu() for p in model.parameters()]
    return losses, params


MLP = make_mlp()
DATA = data()

OPTIMIZERS = {
    "sgd_momentum": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), None, 0.0),
    "sgd_nesterov": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), None, 0.0),
    "adam": (lambda p: torch.optim.Adam(p, lr=0.01), None, 0.0),
    "adamw_foreach_clip": (lambda p: torch.optim.AdamW(p, lr=0.01, foreach=True), 0.5, 0.1),
    "adamw_loop": (lambda p: torch.optim.AdamW(p, lr=0.01, foreach=False, weight_decay=0.1), None, 0.0),
}


@pytest.mark.parametrize("mode", ["strict", "debug"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_mlp_trains_like_cpu(name, mode):
    make_opt, clip, smoothing = OPTIMIZERS[name]
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    cpu_losses, cpu_params = train("cpu", make_opt, clip, smoothing)
    with torch_tpu.eager_mode(mode):
        tpu_losses, tpu_params = train("tpu", make_opt, clip, smoothing)
    assert torch_tpu.debug.metrics()["cpu_fallbacks"] == before
    for step, (a, b) in enumerate(zip(cpu_losses, tpu_losses)):
        assert abs(a - b) <= 1e-5 * max(1.0, abs(a)), f"step {step}: cpu {a} tpu {b}"
    assert cpu_losses[-1] < cpu_losses[0]  # it does learn
    for a, b in zip(cpu_params, tpu_params):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)


# --- CNN: conv, BatchNorm (running statistics), max/avg/adaptive pooling, AdamW.

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from model_zoo import CNN, GPT, gpt_loss  # noqa: E402


def autocast_for(device, bf16):
    if not bf16:
        return torch.autocast(device_type=device, enabled=False)
    return torch.autocast(device_type=device, dtype=torch.bfloat16)


def train_cnn(device, bf16):
    torch.manual_seed(0)
    model = CNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g)
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        with autocast_for(device, bf16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad(), autocast_for(device, bf16):
        eval_out = model(x).float().cpu()
    stats = [model.b1.running_mean.cpu(), model.b1.running_var.cpu(), model.b2.running_var.cpu()]
    return losses, eval_out, stats


def train_gpt(device, bf16, optimizer, shared_seed=7, steps=STEPS, dropout_seed=None):
    torch.manual_seed(0)
    model = GPT(shared_seed=shared_seed).to(device)
    if dropout_seed is not None:
        torch.tpu.manual_seed(dropout_seed)
    if optimizer == "fused":
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, fused=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=True)
    idx = torch.randint(0, 64, (4, 17), generator=torch.Generator().manual_seed(3)).to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with autocast_for(device, bf16):
            loss = gpt_loss(model, idx)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


def close_losses(cpu, tpu, rel):
    for step, (a, b) in enumerate(zip(cpu, tpu)):
        assert abs(a - b) <= rel * max(1.0, abs(a)), f"step {step}: cpu {a} tpu {b}"


# float32 must match CPU closely; under bf16 autocast each backend rounds
# matmul inputs to bf16 (CPU's autocast does too), so agreement is to bf16
# precision and the rounding differences compound over the 20 steps.
LOSS_TOL = {False: 2e-4, True: 3e-2}


@pytest.mark.parametrize("mode", ["strict", "debug"])
@pytest.mark.parametrize("bf16", [False, True], ids=["f32", "bf16_autocast"])
def test_cnn_trains_like_cpu(mode, bf16):
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    cpu_losses, cpu_eval, cpu_stats = train_cnn("cpu", bf16)
    with torch_tpu.eager_mode(mode):
        tpu_losses, tpu_eval, tpu_stats = train_cnn("tpu", bf16)
    assert torch_tpu.debug.metrics()["cpu_fallbacks"] == before
    close_losses(cpu_losses, tpu_losses, LOSS_TOL[bf16])
    assert cpu_losses[-1] < cpu_losses[0]
    # After 20 bf16 steps single logits can differ by a few bf16 ulps.
    tol = 1e-1 if bf16 else 1e-3
    torch.testing.assert_close(tpu_eval, cpu_eval, atol=tol, rtol=tol)
    for a, b in zip(cpu_stats, tpu_stats):
        torch.testing.assert_close(b, a, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", ["strict", "debug"])
@pytest.mark.parametrize("bf16", [False, True], ids=["f32", "bf16_autocast"])
@pytest.mark.parametrize("optimizer", ["foreach", "fused"])
def test_gpt_trains_like_cpu(mode, bf16, optimizer):
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    cpu_losses = train_gpt("cpu", bf16, optimizer)
    with torch_tpu.eager_mode(mode):
        tpu_losses = train_gpt("tpu", bf16, optimizer)
    assert torch_tpu.debug.metrics()["cpu_fallbacks"] == before
    close_losses(cpu_losses, tpu_losses, LOSS_TOL[bf16])
    assert cpu_losses[-1] < cpu_losses[0] - 0.5


def test_gpt_native_dropout_is_seeded():
    """With nn.Dropout drawing from the tpu generator: the same seed gives the
    same training run, and dropout is really active (a different seed differs)."""
    before = torch_tpu.debug.metrics()["cpu_fallbacks"]
    runs = []
    for seed in (11, 11, 12):
        runs.append(train_gpt("tpu", False, "fused", shared_seed=None, steps=5, dropout_seed=seed))
    assert torch_tpu.debug.metrics()["cpu_fallbacks"] == before
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]

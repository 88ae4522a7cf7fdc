"""Models train on tpu with the same losses as on CPU, step by step, with no
CPU fallback. (The MLP is here; the CNN and GPT-style models of issue 3 need
conv/batch_norm/pooling/embedding/SDPA/layer_norm lowerings that are not in
yet.)"""

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

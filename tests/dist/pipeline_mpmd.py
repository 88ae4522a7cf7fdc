"""MPMD under torchrun: two ranks run different models (pipeline stages)
and exchange activations and gradients with send/recv; rank 1 runs in
DeferAndFuse, rank 0 in Strict. The stages' parameters must match one CPU
process training the composed model.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu
from params_check import check_parameters, finish

RANK = int(os.environ["RANK"])
STEPS = 3


def stages():
    torch.manual_seed(0)
    first = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
    second = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    return first, second


def data():
    g = torch.Generator().manual_seed(2)
    return torch.randn(6, 8, generator=g), torch.randint(0, 3, (6,), generator=g)


def reference():
    first, second = stages()
    params = list(first.parameters()) + list(second.parameters())
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    x, y = data()
    for _ in range(STEPS):
        opt.zero_grad()
        F.cross_entropy(second(first(x)), y).backward()
        opt.step()
    return first, second


def main():
    dist.init_process_group("tpu_dist")
    assert dist.get_world_size() == 2
    x, y = data()
    mine = stages()[RANK].to("tpu")
    opt = torch.optim.SGD(mine.parameters(), lr=0.1, momentum=0.9)
    if RANK == 1:
        torch_tpu.set_eager_mode("defer_and_fuse")
    for _ in range(STEPS):
        opt.zero_grad()
        if RANK == 0:
            h = mine(x.to("tpu"))
            dist.send(h.detach(), dst=1)
            grad = torch.empty_like(h)
            dist.recv(grad, src=1)
            h.backward(grad)
        else:
            h = torch.empty(6, 16, device="tpu")
            dist.recv(h, src=0)
            h.requires_grad_()
            F.cross_entropy(mine(h), y.to("tpu")).backward()
            dist.send(h.grad, dst=0)
        opt.step()
    expected = dict(reference()[RANK].named_parameters())
    check_parameters(mine.named_parameters(), expected, f"pipeline stage {RANK}", 1e-5)
    finish()


if __name__ == "__main__":
    main()

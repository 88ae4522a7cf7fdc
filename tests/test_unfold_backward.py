"""Gradient of Tensor.unfold (aten::unfold_backward) against the CPU:
overlapping windows add up, gaps (step > size) get none, any dim, 0-d."""

import pytest
import torch

import torch_tpu  # noqa: F401
from cpu_reference import same


@pytest.mark.parametrize("shape,dim,size,step", [
    ((10,), 0, 3, 1),       # overlapping
    ((10,), 0, 2, 3),       # gaps
    ((4, 9, 3), 1, 4, 2),
    ((4, 9, 3), -1, 3, 3),
    ((5, 6), 0, 5, 1),
    ((), 0, 1, 1),          # 0-d
    ((0, 4), 1, 2, 1),      # empty
])
def test_unfold_backward_matches_cpu(shape, dim, size, step):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))

    def fn(dev):
        xd = x.to(dev).requires_grad_()
        y = xd.unfold(dim, size, step)
        w = torch.arange(y.numel(), dtype=torch.float32).reshape(y.shape).to(dev)
        return torch.autograd.grad((y * w).sum(), xd)[0]
    same(fn)

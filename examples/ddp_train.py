"""Data-parallel training on tpu with PyTorch's own DDP.

    torchrun --nproc-per-node=2 examples/ddp_train.py [--epochs 3]

Each process drives one tpu device (on the CPU plugin every process has its
own tpu:0); gradients are averaged across processes by the tpu_dist backend,
which `import torch` registers. The only tpu-specific line is the device.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("tpu", local_rank % torch.tpu.device_count())
    # With a tpu device_id, the default backend for tpu tensors is tpu_dist.
    dist.init_process_group(device_id=device)
    rank = dist.get_rank()

    # A synthetic regression task, the same on every process.
    g = torch.Generator().manual_seed(0)
    x = torch.randn(512, 16, generator=g)
    y = x @ torch.randn(16, 1, generator=g) + 0.1 * torch.randn(512, 1, generator=g)
    sampler = DistributedSampler(TensorDataset(x, y), shuffle=True, seed=0)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, sampler=sampler)

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros((), device=device)
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {total.item() / len(loader):.4f}", flush=True)
    if rank == 0:
        print(f"trained on {dist.get_world_size()} processes with {dist.get_backend()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

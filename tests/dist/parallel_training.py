"""DDP, FSDP2, tensor parallelism and distributed checkpoints on tpu, under
torchrun, each checked against single-process CPU training on the full batch.

Usage: torchrun --nproc-per-node=N parallel_training.py {ddp,fsdp,tp,dcp} [dir]
Prints "PASS <what> max_err=<e>" and exits non-zero on any mismatch.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from params_check import check_parameters, finish

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
TOL = 1e-4
STEPS = 3
VOCAB, DIM, HEADS, SEQ, BATCH = 32, 16, 2, 8, 4 * 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        # No bias: the key bias's gradient is zero in exact arithmetic (softmax
        # ignores a constant added to every key), so AdamW turns rounding noise
        # into full-size steps and no two devices would agree on it.
        self.qkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc1 = nn.Linear(DIM, 4 * DIM)
        self.fc2 = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=-1)
        q, k, v = (z.reshape(b, t, HEADS, DIM // HEADS).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, DIM))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.02)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, idx):
        x = self.emb(idx) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    torch.manual_seed(0)
    return TinyGPT()


def data():
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    return idx, torch.roll(idx, -1, dims=1)


def loss_of(m, idx, target):
    return F.cross_entropy(m(idx).reshape(-1, VOCAB), target.reshape(-1))


def train(m, idx, target, steps=STEPS, **adamw):
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, **adamw)
    for _ in range(steps):
        opt.zero_grad()
        loss_of(m, idx, target).backward()
        opt.step()
    return opt


def reference(steps=STEPS):
    """The same training in one CPU process on the full batch."""
    m = model()
    train(m, *data(), steps=steps)
    return dict(m.named_parameters())


def compare(m, ref, what):
    check_parameters(m.named_parameters(), ref, what, TOL)


def shard_of_batch():
    idx, target = data()
    return idx.chunk(WORLD)[RANK].to("tpu"), target.chunk(WORLD)[RANK].to("tpu")


def run_ddp():
    from torch.nn.parallel import DistributedDataParallel as DDP

    # The default backend map picks tpu_dist for a tpu device_id.
    dist.init_process_group(device_id=torch.device("tpu", 0))
    assert "tpu:tpu_dist" in str(dist.get_backend_config()), dist.get_backend_config()
    # A small bucket size: several buckets, several all-reduces per step.
    m = DDP(model().to("tpu"), bucket_cap_mb=0.01)
    train(m, *shard_of_batch())
    compare(m, reference(), "DDP")
    # DDP's own iteration statistics come from the tpu timer
    # (csrc/dist/ddp_timer.cc); without one it warns and reports none.
    stats = m._get_ddp_logging_data()
    assert stats.get("avg_forward_compute_time", 0) > 0, stats
    check_ddp_unused_parameters_and_no_sync()


class TwoPaths(nn.Module):
    """A model whose second layer is used on every other step only."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x, use_b):
        return self.b(self.a(x)) if use_b else self.a(x)


def check_ddp_unused_parameters_and_no_sync():
    """find_unused_parameters (DDP copies its used-parameter map through
    pinned host memory) and gradient accumulation under no_sync()."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    ref = TwoPaths()
    m = DDP(TwoPaths().to("tpu"), find_unused_parameters=True)
    m.module.load_state_dict(ref.state_dict())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(0)
    for i in range(4):
        x = torch.randn(4, 4, generator=g)
        use_b = i % 2 == 0
        opt.zero_grad()
        ref_opt.zero_grad()
        local = x.chunk(WORLD)[RANK].to("tpu")
        with m.no_sync():  # accumulated locally, reduced with the next backward
            m(local, use_b).sum().backward()
        m(local, use_b).sum().backward()
        opt.step()
        # Two local passes, averaged over ranks: the full batch's gradient.
        (ref(x, use_b).sum() * (2 / WORLD)).backward()
        ref_opt.step()
    check_parameters(m.module.named_parameters(), dict(ref.named_parameters()),
                     "DDP find_unused_parameters + no_sync", TOL)


def fsdp_model(mesh):
    from torch.distributed.fsdp import fully_shard

    m = model().to("tpu")
    for block in m.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(m, mesh=mesh)
    return m


def run_fsdp():
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("tpu", (WORLD,))
    m = fsdp_model(mesh)
    local = m.blocks[0].fc1.weight.to_local()
    assert local.device.type == "tpu" and local.shape[0] == 4 * DIM // WORLD, local.shape
    train(m, *shard_of_batch())
    compare(m, reference(), "FSDP2")


def run_tp():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

    mesh = init_device_mesh("tpu", (WORLD,))
    m = model().to("tpu")
    for block in m.blocks:
        parallelize_module(block, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    # Tensor parallelism: every rank sees the whole batch.
    idx, target = data()
    # foreach=False: the foreach kernels refuse a mix of DTensor and plain
    # parameters (as on CUDA, where foreach is the default too).
    train(m, idx.to("tpu"), target.to("tpu"), foreach=False)
    assert type(m.blocks[0].fc1.weight).__name__ == "DTensor"
    compare(m, reference(), "tensor parallel")
    check_dtensor_random(mesh)


def check_dtensor_random(mesh):
    """DTensor's random ops read and move the tpu generator's offset (the RNG
    state's last 16 bytes): shards draw different numbers, replicas the same."""
    import torch.distributed.tensor as dt

    torch.manual_seed(7)
    sharded = dt.rand((4 * WORLD, 3), device_mesh=mesh, placements=[dt.Shard(0)]).full_tensor()
    blocks = sharded.cpu().chunk(WORLD)
    assert all(not torch.equal(blocks[0], b) for b in blocks[1:]), "shards drew the same numbers"
    replicated = dt.rand((5,), device_mesh=mesh, placements=[dt.Replicate()]).to_local().cpu()
    everyone = [None] * WORLD
    dist.all_gather_object(everyone, replicated)
    assert all(torch.equal(everyone[0], r) for r in everyone), "replicas drew different numbers"
    print("PASS DTensor random ops", flush=True)


def run_dcp(directory):
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("tpu", (WORLD,))
    m = fsdp_model(mesh)
    train(m, *shard_of_batch(), steps=2)
    dcp.save({"model": get_model_state_dict(m)}, checkpoint_id=directory)
    # A fresh sharded model loads the checkpoint, then trains one more step:
    # it must match CPU training of 3 steps... of a fresh optimizer after 2.
    fresh = fsdp_model(mesh)
    state = {"model": get_model_state_dict(fresh)}
    dcp.load(state, checkpoint_id=directory)
    set_model_state_dict(fresh, state["model"])
    compare(fresh, reference(steps=2), "DCP save/load round trip")


def main():
    what = sys.argv[1]
    if what == "ddp":
        run_ddp()
    elif what == "fsdp":
        run_fsdp()
    elif what == "tp":
        run_tp()
    elif what == "dcp":
        run_dcp(sys.argv[2])
    else:
        raise SystemExit(f"unknown run {what}")
    finish()


if __name__ == "__main__":
    main()

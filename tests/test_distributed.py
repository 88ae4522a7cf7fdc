"""tpu_dist under torchrun: collectives against their math, DDP, FSDP2,
tensor parallelism and DCP against single-process CPU training, MPMD
pipeline stages, and ranks that die or stall. The workers are in tests/dist.
"""

import os
import socket
import subprocess
import sys

import pytest
import torch.distributed as dist
from crash_cores import CoreCatcher

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist")

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="this PyTorch has no torch.distributed with Gloo")


def torchrun(script, *args, nproc=2, timeout=300, **env_overrides):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc-per-node={nproc}", os.path.join(HERE, script), *map(str, args)]
    env = dict(os.environ, OMP_NUM_THREADS="1", **env_overrides)
    with CoreCatcher() as cores:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              **cores.kwargs)
        output = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:{cores.report(proc)}\n--- output ---\n{output[-6000:]}"
    return proc.stdout


COLLECTIVE_CHECKS = ["all_gather, gather, scatter", "all_reduce dtypes and ops", "all_to_all",
                     "async work and barrier", "broadcast and reduce", "mismatched calls raise",
                     "object collectives", "reduce_scatter", "send/recv", "views",
                     "point-to-point patterns", "mismatched send/recv raises",
                     "works hold no Python objects"]


@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_match_their_math(nproc):
    out = torchrun("collectives.py", nproc=nproc)
    for check in COLLECTIVE_CHECKS:
        assert out.count(f"PASS {check}") == nproc, (check, out)
    assert out.count("DONE rank") == nproc


@pytest.mark.parametrize("run,label,nproc", [("ddp", "DDP", 2), ("fsdp", "FSDP2", 2),
                                             ("tp", "tensor parallel", 2),
                                             ("fsdp", "FSDP2", 4),
                                             # one rank: collectives that leave their
                                             # tensors as they are skip the staging
                                             ("ddp", "DDP", 1)])
def test_parallel_training_matches_cpu(run, label, nproc):
    out = torchrun("parallel_training.py", run, nproc=nproc)
    assert out.count(f"PASS {label} max_err") == nproc, out
    if run == "ddp":
        assert out.count("PASS DDP find_unused_parameters + no_sync") == nproc, out
    if run == "tp":
        assert out.count("PASS DTensor random ops") == nproc, out


@pytest.mark.parametrize("how", ["ddp", "fsdp"])
def test_hugging_face_llama_trains_like_cpu(how):
    # Transformers' Llama with tied embeddings: the tie survives DDP and
    # fully_shard, and training matches CPU.
    out = torchrun("hf_llama.py", how)
    assert out.count(f"PASS HF Llama {how}") == 2, out


def test_ddp_under_torch_distributed_debug_detail():
    # PyTorch's debug wrapper checks every call with its own Gloo group and
    # reads the backend's sequence numbers.
    out = torchrun("parallel_training.py", "ddp", TORCH_DISTRIBUTED_DEBUG="DETAIL")
    assert out.count("PASS DDP max_err") == 2, out


def test_distributed_checkpoint_round_trip(tmp_path):
    out = torchrun("parallel_training.py", "dcp", tmp_path / "checkpoint")
    assert out.count("PASS DCP save/load round trip") == 2, out
    assert any(name.endswith(".distcp") for name in os.listdir(tmp_path / "checkpoint"))


def test_mpmd_pipeline_stages_exchange_activations():
    out = torchrun("pipeline_mpmd.py")
    assert "PASS pipeline stage 0" in out and "PASS pipeline stage 1" in out, out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how,within_s", [("dies", 8), ("stalls", 25)])
def test_survivor_raises_when_a_rank_dies_or_stalls(how, within_s):
    port = free_port()
    procs = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "rank_failure.py"), how],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    try:
        out, err = procs[0].communicate(timeout=120)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert procs[0].returncode == 0, out + err
    line = next(line for line in out.splitlines() if line.startswith("RAISED"))
    seconds = float(line.split()[1])
    assert seconds < within_s, line

"""The examples run as users run them (a fresh process each, on tpu), so they
cannot rot: each must exit 0 and print what it promises."""

import os
import subprocess
import sys

from crash_cores import CoreCatcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                          capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def test_quickstart():
    out = run_example("quickstart.py")
    assert "tpu available: True" in out
    assert "item: 3.0" in out


def test_hf_generate_prints_the_answer():
    out = run_example("hf_generate.py", "What is the capital of France?",
                      "--max-new-tokens", "8")
    assert "on tpu:0" in out
    assert "Paris" in out
    assert "[8 tokens in" in out


def test_hf_finetune_trains():
    steps = 3
    out = run_example("hf_finetune.py", "--steps", str(steps), "--batch-size", "6")
    assert f"{steps} steps in" in out and "on tpu" in out
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step ")]
    assert len(losses) == 2 and all(loss == loss for loss in losses)  # steps 0 and last
    assert "after:" in out


def test_ddp_train_under_torchrun():
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    with CoreCatcher() as cores:
        proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc-per-node=2", os.path.join(ROOT, "examples", "ddp_train.py")],
                              capture_output=True, text=True, timeout=600, env=env, **cores.kwargs)
        assert proc.returncode == 0, cores.report(proc) + proc.stdout[-2000:] + proc.stderr[-3000:]
    losses = [float(line.split()[-1]) for line in proc.stdout.splitlines()
              if line.startswith("epoch ")]
    assert len(losses) == 3 and losses[-1] < losses[0] / 2, proc.stdout
    assert "trained on 2 processes with tpu_dist" in proc.stdout


def test_pallas_flash_attention_checks_itself_against_sdpa():
    out = run_example("pallas_flash_attention.py")
    assert "causal=False: max |flash - sdpa|" in out and "causal=True" in out

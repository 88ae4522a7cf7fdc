"""The executable cache is bounded: TORCH_TPU_MAX_CACHED_EXECUTABLES caps the
executables held (least recently used dropped first), evictions are counted
in torch_tpu.debug.metrics(), and a dropped program compiles again and still
gives the right values. Child processes, since the cap is read at start-up."""

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, sys, torch, torch_tpu
    from torch_tpu import debug
    peak = 0
    def run(n):
        # A new shape is a new program (fill, add, mul at least).
        x = torch.arange(n, dtype=torch.float32, device="tpu")
        y = (x + 1) * 2
        assert torch.equal(y.cpu(), (torch.arange(n, dtype=torch.float32) + 1) * 2)
    for n in range(1, 41):
        run(n)
        peak = max(peak, debug.metrics()["cached_executables"])
    before = debug.metrics()
    run(1)  # long since dropped under a small cap: compiles again
    after = debug.metrics()
    json.dump({"peak": peak, "before": before, "after": after}, sys.stdout)
""")


def run_child(cap):
    env = dict(os.environ)
    env.pop("TORCH_TPU_MAX_CACHED_EXECUTABLES", None)
    if cap is not None:
        env["TORCH_TPU_MAX_CACHED_EXECUTABLES"] = cap
    return subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=600)


def test_cap_bounds_the_cache_and_counts_evictions():
    import json

    proc = run_child("16")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert 0 < out["peak"] <= 16
    assert out["before"]["executable_evictions"] > 40  # 40 shapes x several programs
    assert out["before"]["compiles"] >= out["before"]["executable_evictions"] + 16
    assert out["after"]["compiles"] > out["before"]["compiles"]  # dropped, compiled again
    assert out["after"]["cached_executables"] <= 16


def test_default_cap_keeps_everything_a_small_run_makes():
    import json

    proc = run_child(None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["before"]["executable_evictions"] == 0
    assert out["after"]["compiles"] == out["before"]["compiles"]  # run(1) was a hit
    assert out["after"]["cached_executables"] == out["before"]["compiles"]


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_a_bad_cap_is_a_clear_error(bad):
    proc = run_child(bad)
    assert proc.returncode == 1  # a Python exception, not an abort
    assert "RuntimeError: TORCH_TPU_MAX_CACHED_EXECUTABLES must be a positive integer" \
        in proc.stderr


MAPS_CHILD = """
import torch, torch_tpu
def maps():
    return sum(1 for _ in open("/proc/self/maps"))
peak = 0
for i in range(1, 251):
    x = torch.ones(i, device="tpu")
    assert (x * 2 + 1).sum().item() == 3 * i
    peak = max(peak, maps())
m = torch_tpu.debug.metrics()
print(peak, m["cached_executables"], m["executable_evictions"])
"""


def test_executables_are_dropped_before_the_process_runs_out_of_memory_maps():
    # Each executable's JIT code takes several memory mappings; a process
    # at the kernel's limit (vm.max_map_count) can no longer compile, and the
    # CPU plugin then leaves it unable to raise. The cache keeps the
    # mappings within a budget (half the limit; here set low: 250 sizes of
    # 3 programs each go past it many times over).
    env = dict(os.environ, TORCH_TPU_MAX_MEMORY_MAPS="1100")
    out = subprocess.run([sys.executable, "-c", MAPS_CHILD], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    peak, cached, evictions = map(int, out.stdout.split())
    assert evictions > 0 and cached < 250
    # (checked every 16 compiles, each adding a few mappings)
    assert peak <= 1100 + 16 * 8, peak

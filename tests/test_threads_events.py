"""Threads and events: concurrent compiles of the same program happen once,
the allocator's memory limit holds under concurrent allocation, and
torch.tpu.Event timing measures the device work between two records."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import torch

import torch_tpu
from torch_tpu import debug

DEV = "tpu"


def _run_threads(n, body):
    """Runs body(i) on n threads released together; re-raises the first error."""
    barrier = threading.Barrier(n)
    errors = []

    def run(i):
        try:
            barrier.wait()
            body(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _run_child(code, env_extra, timeout=240):
    env = dict(os.environ, **env_extra)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, env=env)
    assert r.returncode == 0, f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}"
    return r.stdout


# --- executable cache: single flight per key --------------------------------

@pytest.mark.parametrize("threads", [4, 8])
def test_concurrent_new_programs_compile_once_each(threads):
    # shapes no other test uses, so every program is new to the cache
    rows, cols = 41 + threads, 59

    def ops(i):
        x = torch.full((rows, cols), float(i + 1), device=DEV)
        y = torch.arange(cols, dtype=torch.float32, device=DEV)
        z = (x * y + x).sum(0)
        w = torch.softmax(x, dim=1).amax(1)
        return z.cpu(), w.cpu()

    torch.tpu.synchronize()
    before = debug.metrics()
    results = [None] * threads

    def body(i):
        results[i] = ops(i)

    _run_threads(threads, body)
    after = debug.metrics()
    new_programs = after["cached_executables"] - before["cached_executables"]
    compiles = after["compiles"] - before["compiles"]
    assert new_programs > 0
    # every distinct program was compiled by exactly one thread
    assert compiles == new_programs, (compiles, new_programs)
    # and the values are right in every thread
    for i in range(threads):
        x = torch.full((rows, cols), float(i + 1))
        y = torch.arange(cols, dtype=torch.float32)
        torch.testing.assert_close(results[i][0], (x * y + x).sum(0))
        torch.testing.assert_close(results[i][1], torch.softmax(x, dim=1).amax(1))
    # running the same ops again compiles nothing
    ops(0)
    assert debug.metrics()["compiles"] == after["compiles"]


# --- allocator: the limit check and the accounting are one step ------------

_LIMIT = 64 << 20   # TORCH_TPU_MEMORY_LIMIT_BYTES of the child
_CHUNK = 3 << 20    # does not divide the limit: the last fitting chunk is close to it


def test_memory_limit_holds_under_concurrent_allocation():
    # one child for all of it: starting an interpreter with torch costs seconds
    out = _run_child("""
        import threading, torch
        LIMIT, CHUNK, THREADS, ROUNDS = %d, %d, 8, 150
        # TORCH_TPU_MEMORY_LIMIT_BYTES is the device's capacity
        print("TOTAL", torch.tpu.get_device_properties(0).total_memory,
              torch.tpu.mem_get_info()[1])
        barrier = threading.Barrier(THREADS)
        wrong = []
        ooms = [0]
        lock = threading.Lock()
        def work():
            for _ in range(ROUNDS):
                barrier.wait()
                held = []
                while True:
                    try:
                        held.append(torch.empty(CHUNK, dtype=torch.uint8, device="tpu"))
                    except torch.OutOfMemoryError:
                        with lock:
                            ooms[0] += 1
                        break
                    except BaseException as e:  # noqa: BLE001
                        wrong.append(repr(e))
                        break
                barrier.wait()   # everyone holds as much as fit at once
                del held
        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for t in threads: t.start()
        for t in threads: t.join()
        stats = torch.tpu.memory_stats()
        print("PEAK", stats["allocated_bytes.all.peak"])
        print("CURRENT", stats["allocated_bytes.all.current"])
        print("NUM_OOMS", stats["num_ooms"], ooms[0])
        print("WRONG", wrong[:3])
    """ % (_LIMIT, _CHUNK), {"TORCH_TPU_MEMORY_LIMIT_BYTES": str(_LIMIT)})
    values = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert values["TOTAL"] == f"{_LIMIT} {_LIMIT}", out
    # every failure was torch.OutOfMemoryError
    assert values["WRONG"] == "[]", out
    peak = int(values["PEAK"])
    assert peak <= _LIMIT, f"peak {peak} exceeds the limit {_LIMIT}"
    # the limit was reached: the peak is the most whole chunks that fit
    assert peak == (_LIMIT // _CHUNK) * _CHUNK, out
    assert int(values["CURRENT"]) == 0, out
    num_ooms, seen = map(int, values["NUM_OOMS"].split())
    assert num_ooms == seen == 8 * 150, out

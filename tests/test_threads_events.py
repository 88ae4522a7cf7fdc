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
    # (a program stored may push an old one out of the bounded cache)
    new_programs = (after["cached_executables"] - before["cached_executables"]
                    + after["executable_evictions"] - before["executable_evictions"])
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


# --- events: timing on the device -------------------------------------------

def _long_work(x):
    """Device work that takes measurably long (about 0.1-1 s on the CPU plugin)."""
    y = x
    for _ in range(4):
        y = (y @ x) * 0.001
    return y


@pytest.fixture(scope="module")
def matrix():
    x = torch.randn(1024, 1024, device=DEV)
    _long_work(x)  # compiles
    torch.tpu.synchronize()
    return x


def _timed_section(matrix):
    """One event-timed run of the work: (elapsed, launch_ms, section_ms)."""
    start = torch.tpu.Event(enable_timing=True)
    end = torch.tpu.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    _long_work(matrix)
    end.record()
    t1 = time.perf_counter()
    end.synchronize()
    t2 = time.perf_counter()
    return start.elapsed_time(end), (t1 - t0) * 1e3, (t2 - t0) * 1e3


def test_elapsed_time_measures_device_work_not_launch(matrix):
    walls = []
    for _ in range(2):
        t0 = time.perf_counter()
        _long_work(matrix)
        torch.tpu.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
    # The launch time is a host wall-clock figure, which another process on
    # a shared machine can stretch in any one try: the section whose launch
    # was quickest is the one that shows whether launching is asynchronous
    # (a synchronous launch is slow in every try).
    sections = [_timed_section(matrix) for _ in range(3)]
    for elapsed, _, section_ms in sections:
        # both timestamps lie inside the timed section
        assert 0 <= elapsed <= section_ms + 1.0, (elapsed, section_ms)
    elapsed, launch_ms, _ = min(sections, key=lambda s: s[1])
    # the work's device time, not the host's launch time (the launches are
    # asynchronous and take a small fraction of it)
    assert launch_ms < min(walls) / 4, (launch_ms, walls)
    assert elapsed >= 0.5 * min(walls), (elapsed, walls)
    assert elapsed > 2 * launch_ms, (elapsed, launch_ms)


def test_elapsed_time_after_device_synchronize(matrix):
    # the CUDA idiom: synchronize the device, not the event
    start = torch.Event(device=DEV, enable_timing=True)
    end = torch.Event(device=DEV, enable_timing=True)
    start.record()
    _long_work(matrix)
    end.record()
    torch.tpu.synchronize()
    assert end.query() and start.query()
    forward = start.elapsed_time(end)
    assert forward > 0
    assert end.elapsed_time(start) == -forward


def test_elapsed_time_in_debug_mode(matrix):
    # Debug mode launches synchronously: nothing is in flight at record()
    with torch_tpu.eager_mode("debug"):
        start = torch.tpu.Event(enable_timing=True)
        end = torch.tpu.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        _long_work(matrix)
        end.record()
        host_ms = (time.perf_counter() - t0) * 1e3
    end.synchronize()
    assert 0.5 * host_ms <= start.elapsed_time(end) <= host_ms + 1.0


def test_event_kinds_pair_with_each_other(matrix):
    stream = torch.tpu.Stream()
    tpu_event = torch.tpu.Event(enable_timing=True)
    generic = torch.Event(device=DEV, enable_timing=True)
    accel = torch.Event(enable_timing=True)  # the current accelerator: tpu
    assert accel.device.type == "tpu"
    for e in (tpu_event, generic, accel):
        assert isinstance(e, torch.Event) and isinstance(e, torch.tpu.Event)
    assert not isinstance(torch.Event(device="cpu"), torch.tpu.Event)
    stream.record_event(tpu_event)
    _long_work(matrix)
    torch.accelerator.current_stream().record_event(generic)
    _long_work(matrix)
    accel.record(torch.tpu.current_stream())
    accel.synchronize()
    a, b = tpu_event.elapsed_time(generic), generic.elapsed_time(accel)
    assert a > 0 and b > 0
    assert tpu_event.elapsed_time(accel) == pytest.approx(a + b, abs=1e-3)
    # events made by record_event() without an event do not time, as on CUDA
    plain = stream.record_event()
    assert isinstance(plain, torch.tpu.Event)
    with pytest.raises(ValueError, match=r"^Both events must be created with argument "
                                         r"'enable_timing=True'\.$"):
        plain.elapsed_time(tpu_event)


def test_elapsed_time_errors_match_cuda(matrix):
    # CUDA (c10/cuda/CUDAEvent.h) raises ValueError for the first two and
    # RuntimeError for events that have not completed
    a, b = torch.tpu.Event(), torch.tpu.Event()
    a.record()
    b.record()
    with pytest.raises(ValueError, match="Both events must be created with argument "
                                         "'enable_timing=True'"):
        a.elapsed_time(b)
    timed, unrecorded = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)
    timed.record()
    with pytest.raises(ValueError, match="Both events must be recorded"):
        timed.elapsed_time(unrecorded)
    _long_work(matrix)
    unrecorded.record()
    if not unrecorded.query():  # the work takes far longer than this line
        with pytest.raises(RuntimeError, match="Both events must be completed"):
            timed.elapsed_time(unrecorded)
    unrecorded.synchronize()
    assert timed.elapsed_time(unrecorded) > 0


def test_query_synchronize_wait_and_wait_event(matrix):
    stream = torch.tpu.Stream()
    event = torch.tpu.Event()
    assert event.query()  # never recorded
    y = _long_work(matrix)
    event.record(stream)
    assert not event.query()
    event.wait(stream)
    stream.wait_event(event)
    torch.tpu.current_stream().wait_event(event)
    event.synchronize()
    assert event.query()
    assert y.shape == matrix.shape


def test_record_stream_keeps_the_value_and_checks_the_stream():
    """Tensor.record_stream, as CUDA code calls it after side-stream work
    (prefetching, FSDP): accepted for tpu streams, the value intact."""
    side = torch.tpu.Stream()
    x = torch.arange(6.0, device="tpu")
    with torch.tpu.stream(side):
        y = x * 2
    y.record_stream(side)
    x.record_stream(torch.tpu.current_stream())
    del x
    torch.tpu.current_stream().wait_stream(side)
    assert torch.equal(y.cpu(), torch.arange(6.0) * 2)
    with pytest.raises(RuntimeError, match="record_stream: expected a tpu stream"):
        y.record_stream(torch.Stream(device="cpu"))

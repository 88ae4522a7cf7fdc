"""DeferAndFuse eager mode (issue 11): ops join the device's open region
instead of running, and a cut runs the whole region as one program.

Each test checks values against PyTorch CPU (or Strict) and reads the
metrics to check what ran: how many programs, which cuts, what compiled.
Whole-library flows (a GPT training loop with AdamW, threads, mode switches)
sit beside the per-behaviour checks.
"""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

import torch_tpu
from torch_tpu import debug

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_zoo import GPT, gpt_train_step  # noqa: E402


@pytest.fixture(autouse=True)
def defer_and_fuse():
    previous = torch_tpu.get_eager_mode()
    torch_tpu.set_eager_mode("defer_and_fuse")
    yield
    torch_tpu.set_eager_mode(previous)


def _delta(fn):
    before = debug.metrics()
    result = fn()
    after = debug.metrics()
    return result, {k: after[k] - before.get(k, 0) for k in after}


def test_a_chain_of_ops_runs_as_one_program_when_read():
    x_cpu = torch.randn(16, 8)
    x = x_cpu.to("tpu")
    torch.tpu.synchronize()

    def compute():
        y = (x * 2 + 1).relu()
        z = y.exp().sum(0) / 3
        return torch.tanh(z) - z.mean()

    def chain():
        return compute().cpu()  # y and z are dead by the read

    got, delta = _delta(chain)
    expected = torch.tanh((((x_cpu * 2 + 1).relu().exp().sum(0)) / 3))
    expected = expected - ((x_cpu * 2 + 1).relu().exp().sum(0) / 3).mean()
    torch.testing.assert_close(got, expected)
    assert delta["executions"] == 1, delta
    assert delta["deferred_ops"] >= 8 and delta["regions_executed"] == 1, delta
    assert delta["cuts_host_read"] == 1, delta
    # only the value read is written to memory: the intermediates die in the region
    assert delta["region_outputs"] == 1, delta


def test_deferred_values_are_not_computed_until_read():
    x = torch.randn(64, 64).to("tpu")
    torch.tpu.synchronize()
    _, delta = _delta(lambda: [x @ x + 1 for _ in range(5)])
    assert delta["executions"] == 0 and delta["deferred_ops"] >= 10, delta


def test_reading_one_output_runs_the_region_once_for_all_of_them():
    x_cpu = torch.randn(5, 7)
    x = x_cpu.to("tpu")
    torch.tpu.synchronize()

    def three_outputs():
        a, b, c = x.sin(), x.cos() * 2, x.max(dim=1)
        return a.cpu(), b.cpu(), c.values.cpu(), c.indices.cpu()

    (a, b, cv, ci), delta = _delta(three_outputs)
    torch.testing.assert_close(a, x_cpu.sin())
    torch.testing.assert_close(b, x_cpu.cos() * 2)
    torch.testing.assert_close(cv, x_cpu.max(dim=1).values)
    torch.testing.assert_close(ci, x_cpu.max(dim=1).indices)
    assert delta["executions"] == 1 and delta["regions_executed"] == 1, delta
    assert delta["region_outputs"] == 4, delta


def test_views_in_place_and_out_variants_match_cpu():
    def work(device):
        torch.manual_seed(3)
        base = torch.randn(6, 8).to(device)
        other = torch.randn(8, 6).to(device)
        row = base[2]
        row.mul_(3)  # in place through a view
        base[:, 1:4].add_(other.t()[:, 2:5])  # view written from a transposed view
        flat = base.view(-1)
        flat[5:9] = 7.0
        out = torch.empty(6, 8, device=device)
        torch.add(base, 2, alpha=3, out=out)
        torch.mul(out[1:3], base[1:3], out=out[3:5])
        reinterpreted = base.view(torch.int32)
        reinterpreted[0, :2] += 1
        base.t()[3].neg_()
        torch.as_strided(base, (3, 2), (5, 2), 4).sub_(0.5)
        return base, out, row, flat

    for e, g in zip(work("cpu"), work("tpu")):
        torch.testing.assert_close(g.cpu(), e, rtol=0, atol=0)


def test_a_view_read_after_its_base_is_written_in_the_region():
    x_cpu = torch.arange(12.0).reshape(3, 4)
    x = x_cpu.to("tpu")
    torch.tpu.synchronize()

    def reads():
        v = x.t()
        x.add_(1)
        first = v[1].clone()
        x[1].zero_()
        return v.cpu(), first.cpu()

    (v, first), delta = _delta(reads)
    x_cpu.add_(1)
    expected_first = x_cpu.t()[1].clone()
    x_cpu[1].zero_()
    torch.testing.assert_close(v, x_cpu.t())
    torch.testing.assert_close(first, expected_first)
    assert delta["executions"] == 1, delta


def test_a_storage_overwritten_in_a_region_donates_its_buffer():
    big_cpu = torch.randn(1 << 20)
    big = big_cpu.to("tpu")  # only `big` holds its buffer
    torch.tpu.synchronize()

    def writes():
        for k in range(0, 1000, 100):
            big[k : k + 16].add_(k)
        return big[:1100].cpu()

    got, delta = _delta(writes)
    for k in range(0, 1000, 100):
        big_cpu[k : k + 16].add_(k)
    torch.testing.assert_close(got, big_cpu[:1100], rtol=0, atol=0)
    # ten writes in one region: the old buffer is donated once, updated in place
    assert delta["donated_buffers"] == 1 and delta["undonatable_buffers"] == 0, delta

    held = big.cpu()  # noqa: F841
    reader = big[5:9] * 1  # a pending reader of the buffer the write below replaces
    torch.tpu.synchronize()
    kept = big.clone()  # another storage, its own buffer

    def write_while_read():
        big.add_(1)
        return reader.cpu(), big[:8].cpu(), kept[:8].cpu()

    (r, b, k), delta = _delta(write_while_read)
    torch.testing.assert_close(r, big_cpu[5:9])
    torch.testing.assert_close(b, big_cpu[:8] + 1)
    torch.testing.assert_close(k, big_cpu[:8])


def test_random_numbers_match_strict_for_the_same_seed():
    def draw():
        torch.manual_seed(1234)
        a = torch.rand(4, 5, device="tpu")
        b = torch.randn(3, device="tpu")
        c = torch.nn.functional.dropout(torch.ones(64, device="tpu"), 0.5)
        d = torch.empty(10, device="tpu").uniform_(-2, 2)
        e = torch.randint(0, 100, (6,), device="tpu")
        return [t.cpu() for t in (a, b, c, d, e)]

    deferred = draw()
    with torch_tpu.eager_mode("strict"):
        strict = draw()
    for d, s in zip(deferred, strict):
        torch.testing.assert_close(d, s, rtol=0, atol=0)


def test_cuts_by_reason():
    x = torch.randn(8).to("tpu")
    torch.tpu.synchronize()

    def item():
        return (x * 2).sum().item()

    value, delta = _delta(item)
    assert value == pytest.approx((x.cpu() * 2).sum().item(), rel=1e-5)
    assert delta["cuts_host_read"] == 1 and delta["regions_executed"] == 1, delta

    for read in (lambda t: t.tolist(), lambda t: bool(t[0] > -100)):
        _, delta = _delta(lambda: read(x + 1))
        assert delta["cuts_host_read"] == 1 and delta["regions_executed"] == 1, delta
    # (printing reads the tensor several times, as PyTorch formats it)
    text, delta = _delta(lambda: repr(x + 1))
    squeezed = "".join(text.split())
    assert squeezed == "".join(repr(x.cpu() + 1).split())[:-1] + ",device='tpu:0')", text
    assert delta["cuts_host_read"] >= 1 and delta["cuts_device_read"] == 0, delta

    def sync():
        y = x + 1
        torch.tpu.synchronize()
        return y

    _, delta = _delta(sync)
    assert delta["cuts_sync"] == 1 and delta["executions"] == 1, delta

    def event():
        y = x * 3
        e = torch.tpu.Event()
        e.record()
        return y

    _, delta = _delta(event)
    assert delta["cuts_sync"] == 1, delta

    def stream():
        s = torch.tpu.Stream()
        with torch.tpu.stream(s):
            y = x + 2
        s.synchronize()
        return y

    y, delta = _delta(stream)
    assert delta["cuts_sync"] == 1 and delta["executions"] == 1, delta
    torch.testing.assert_close(y.cpu(), x.cpu() + 2)

    def switch():
        y = x - 1
        with torch_tpu.eager_mode("strict"):
            pass
        return y

    _, delta = _delta(switch)
    assert delta["cuts_mode_switch"] == 1 and delta["executions"] == 1, delta


def test_data_dependent_shapes_cut_and_give_cpu_values():
    x_cpu = torch.tensor([0.0, 1.5, -2.0, 0.0, 3.0, 1.5])
    x = x_cpu.to("tpu")
    y = x * 2
    nz = torch.nonzero(y)
    torch.testing.assert_close(nz.cpu(), torch.nonzero(x_cpu * 2))
    m = torch.masked_select(x + 1, x > 0)
    torch.testing.assert_close(m.cpu(), torch.masked_select(x_cpu + 1, x_cpu > 0))
    u = torch.unique(x - 1)
    torch.testing.assert_close(u.cpu(), torch.unique(x_cpu - 1))


def test_errors_are_raised_at_the_call():
    a = torch.randn(3, 4).to("tpu")
    b = torch.randn(5, 4).to("tpu")
    pending = a * 2
    with pytest.raises(RuntimeError, match="size of tensor a"):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + torch.randn(3, 4)
    with pytest.raises(RuntimeError):
        torch.mm(a, a)
    # the region the failed calls left behind still gives the right values
    torch.testing.assert_close(pending.cpu(), a.cpu() * 2)


def test_an_index_out_of_range_is_raised_at_the_next_read():
    w = torch.randn(4, 3).to("tpu")
    torch.tpu.synchronize()
    y = w.index_select(0, torch.tensor([1, 7], device="tpu"))
    z = w + 1
    with pytest.raises(IndexError, match="index_select"):
        y.cpu()
    # raised once; the device stays usable and other values are right
    torch.testing.assert_close(z.cpu(), w.cpu() + 1)
    torch.tpu.synchronize()


def test_host_copies_and_resize_see_pending_writes():
    x_cpu = torch.randn(4, 6)
    x = x_cpu.to("tpu")
    y = x * 2
    y[1].copy_(torch.ones(6))  # a host upload into part of a pending storage
    expected = x_cpu * 2
    expected[1] = 1
    torch.testing.assert_close(y.cpu(), expected)

    z = x + 1
    z.copy_(torch.zeros(4, 6))  # a whole overwrite: the pending value is dead
    torch.testing.assert_close(z.cpu(), torch.zeros(4, 6))

    r = (x - 1).reshape(-1)
    r.resize_(40)
    torch.testing.assert_close(r[:24].cpu(), (x_cpu - 1).reshape(-1))

    moved = (x * 3).to("cpu", non_blocking=True)
    torch.tpu.synchronize()
    torch.testing.assert_close(moved, x_cpu * 3)


def test_fills_zeros_and_resize_are_recorded_in_the_region():
    def work():
        e = torch.empty(10, device="tpu")  # never written: reads as zeros
        e[2:5] = 3.0
        f = torch.full((4, 3), 2.5, device="tpu")
        z = torch.zeros(4, 3, device="tpu")
        f[1].fill_(-1.0)
        r = (f + z).reshape(-1)
        r.resize_(20)
        return (e[:6] * 2).cpu(), r[:12].cpu()

    (e, r), delta = _delta(work)
    torch.testing.assert_close(e, torch.tensor([0.0, 0, 6, 6, 6, 0]))
    expected = torch.full((4, 3), 2.5)
    expected[1] = -1.0
    torch.testing.assert_close(r, expected.reshape(-1))
    assert delta["executions"] == 1 and delta["regions_executed"] == 1, delta


def test_threads_record_and_read_their_own_values():
    errors = []

    def worker(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            a_cpu = torch.randn(32, 32, generator=g)
            a = a_cpu.to("tpu")
            expected = a_cpu
            for _ in range(20):
                a = (a * 0.5 + 1).tanh()
                expected = (expected * 0.5 + 1).tanh()
            torch.testing.assert_close(a.cpu(), expected)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_loop_that_never_reads_is_cut_where_it_repeats_and_stops_compiling():
    x = torch.randn(32).to("tpu")
    expected = x.cpu()
    torch.tpu.synchronize()

    def loop(steps):
        nonlocal x, expected
        for _ in range(steps):
            x = x * 0.5 + 1
            expected = expected * 0.5 + 1

    _, warm = _delta(lambda: loop(2000))
    assert warm["cuts_repeat"] >= 1, warm
    _, steady = _delta(lambda: loop(2000))
    torch.testing.assert_close(x.cpu(), expected)
    assert steady["compiles"] == 0 and steady["cuts_repeat"] >= 1, steady


def test_equal_scalar_values_do_not_change_a_region():
    # Scalars are runtime arguments; two that happen to be equal must still
    # be two arguments, or the region's key would depend on values.
    x_cpu = torch.randn(16)
    x = x_cpu.to("tpu")

    def step(a, b):
        return ((x * a + b) * 2).cpu()

    step(0.5, 0.25)
    got, delta = _delta(lambda: [step(a, b) for a, b in ((0.5, 0.5), (2.0, 2.0), (0.3, 0.7))])
    assert delta["compiles"] == 0, delta
    for g, (a, b) in zip(got, ((0.5, 0.5), (2.0, 2.0), (0.3, 0.7))):
        torch.testing.assert_close(g, (x_cpu * a + b) * 2)


def test_a_cut_region_executes_while_python_traces_the_next():
    # A cut launches the region and returns: the program runs on the
    # plugin's threads while Python goes on recording the next region.
    a = torch.randn(1024, 1024).to("tpu")
    torch.tpu.synchronize()
    b = a
    for _ in range(6):
        b = (b @ a) * 1e-3
    done = torch.tpu.Event()
    (_, delta) = _delta(done.record)  # cuts and launches the region
    assert delta["regions_executed"] == 1 and delta["cuts_sync"] == 1
    assert not done.query(), "the region had finished before record() returned"
    c = torch.ones(8, device="tpu") * 2  # recorded while the region runs
    assert not done.query()
    done.synchronize()
    assert done.query()
    expected = a.cpu()
    ref = expected
    for _ in range(6):
        ref = (ref @ expected) * 1e-3
    torch.testing.assert_close(b.cpu(), ref, rtol=1e-3, atol=1e-5)
    assert c.cpu().tolist() == [2.0] * 8


def test_the_size_cap_cuts_a_region():
    code = """
import torch, torch_tpu
from torch_tpu import debug
torch_tpu.set_eager_mode("defer_and_fuse")
x = torch.randn(16).to("tpu")
y = x
for op in ("exp", "sin", "cos", "tanh", "abs", "neg", "sigmoid", "relu", "sqrt", "floor"):
    y = getattr(y, op)()
ref = x.cpu()
for op in ("exp", "sin", "cos", "tanh", "abs", "neg", "sigmoid", "relu", "sqrt", "floor"):
    ref = getattr(ref, op)()
torch.testing.assert_close(y.cpu(), ref, equal_nan=True)
m = debug.metrics()
print(m["cuts_size_cap"], m["region_ops_max"], m["regions_executed"])
"""
    env = dict(os.environ, TORCH_TPU_REGION_MAX_OPS="4")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    size_cuts, max_ops, regions = map(int, r.stdout.split())
    assert size_cuts == 2 and max_ops == 4 and regions == 3, r.stdout

    env = dict(os.environ, TORCH_TPU_REGION_MAX_OPS="0")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode != 0 and "TORCH_TPU_REGION_MAX_OPS must be a positive integer" in r.stderr


def test_dropped_uploads_are_released_at_the_byte_cap():
    # A region keeps the buffers it reads until it runs; a loop that uploads,
    # updates and drops 16 MiB tensors without reading them back is cut at
    # the byte cap (512 MiB read and produced) instead of holding them all.
    chunk = torch.randn(16 << 20 >> 2)

    def loop():
        for _ in range(40):
            x = chunk.to("tpu")
            x.add_(1)
            del x
        torch.tpu.synchronize()

    _, delta = _delta(loop)
    assert delta["cuts_size_cap"] == 2 and delta["regions_executed"] == 3, delta
    assert delta["region_outputs"] == 0, delta


def _train(mode, steps, read_loss_every_step=True):
    """Losses and per-step metrics of a small GPT trained with AdamW and
    gradient clipping in `mode`."""
    torch.manual_seed(0)
    model = GPT(vocab=64, ctx=16, d=32, heads=4, layers=2, p=0.0).to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    idx = torch.randint(0, 64, (4, 17)).to("tpu")
    losses, deltas = [], []
    with torch_tpu.eager_mode(mode):
        for _ in range(steps):

            def step():
                loss = gpt_train_step(model, opt, idx)
                if read_loss_every_step:
                    return loss.item()
                return loss

            loss, delta = _delta(step)
            losses.append(loss)
            deltas.append(delta)
        torch.tpu.synchronize()
    return [float(v.detach()) if torch.is_tensor(v) else v for v in losses], deltas


def test_training_loop_launches_a_tenth_of_strict_and_compiles_nothing_when_warm():
    strict_losses, strict = _train("strict", 4)
    losses, deferred = _train("defer_and_fuse", 6)
    torch.testing.assert_close(losses[:4], strict_losses, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]
    strict_launches = strict[-1]["executions"]
    for d in deferred[2:]:
        assert d["executions"] * 10 <= strict_launches, (d, strict_launches)
        assert d["compiles"] == 0, d


def test_training_loop_without_reads_reuses_its_regions():
    _, deltas = _train("defer_and_fuse", 14, read_loss_every_step=False)
    steady = {k: sum(d[k] for d in deltas[8:]) for k in deltas[0]}
    assert steady["compiles"] == 0, steady
    assert steady["executions"] <= 6, steady  # regions span steps: at most one per step


def test_metrics_report_shows_regions(capsys):
    x = torch.randn(4).to("tpu")
    (x + 1).cpu()
    report = debug.metrics_report()
    assert "DeferAndFuse regions executed" in report
    assert "mean ops per region" in report
    assert "region cuts: a host read" in report

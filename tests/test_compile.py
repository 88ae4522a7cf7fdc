"""`torch.compile(backend="tpu")` (issue 12): values against PyTorch CPU
eager (the same function, not compiled), and what ran read from the metrics.

Covers what users' compiled code does: input mutation (also through a view),
outputs that alias inputs or each other, graph breaks, no_grad, integer and
bool dtypes, several outputs, BatchNorm's running statistics, dynamic shapes,
and training (MLP, CNN, GPT; forward and backward compiled; a compiled
optimizer step).
"""

import copy
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu
from torch_tpu import debug

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_zoo import CNN, GPT, gpt_loss  # noqa: E402
from metric_deltas import synced_delta as _delta  # noqa: E402

DEV = "tpu"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _both(fn, *cpu_args):
    """fn compiled on tpu copies of the arguments, fn eager on CPU."""
    tpu_args = [a.to(DEV) if isinstance(a, torch.Tensor) else a for a in cpu_args]
    got = torch.compile(fn, backend="tpu")(*tpu_args)
    want = fn(*cpu_args)
    return got, want, tpu_args


def _cpu(tree):
    return torch.utils._pytree.tree_map(
        lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, tree
    )


def test_the_backend_comes_from_the_entry_point():
    names = {ep.name: ep.value for ep in entry_points(group="torch_dynamo_backends")}
    assert names.get("tpu") == "torch_tpu.compiler:tpu_backend"
    assert "tpu" in torch._dynamo.list_backends()


def test_default_backend_runs_tpu_graphs_through_the_tpu_backend():
    """torch.compile(model) with no backend, as CUDA code writes it: Inductor
    would compile a tpu graph to Pallas TPU kernels (which need a TPU chip),
    so the graph goes to the tpu backend: one program, replayed."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    tpu_model = torch.compile(copy.deepcopy(model).to(DEV))
    x = torch.randn(5, 8)
    tx = x.to(DEV).requires_grad_()
    out, delta = _delta(lambda: tpu_model(tx))
    assert delta["graphs_captured"] >= 1, delta
    out.sum().backward()
    cx = x.clone().requires_grad_()
    model(cx).sum().backward()
    torch.testing.assert_close(out.detach().cpu(), model(x), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(tx.grad.cpu(), cx.grad, atol=1e-6, rtol=1e-6)
    # tpu tensors made inside the graph, with no tensor input, route too
    make = torch.compile(lambda: torch.arange(4.0, device=DEV) * 2)
    assert make().device.type == DEV and make().cpu().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_default_backend_keeps_cpu_graphs_on_inductor(monkeypatch):
    from torch_tpu import _inductor_routing

    seen = []
    original = _inductor_routing.involves_tpu
    monkeypatch.setattr(_inductor_routing, "involves_tpu",
                        lambda gm, inputs: seen.append(original(gm, inputs)) or seen[-1])
    f = torch.compile(lambda x: x.sin() + 1)
    out, delta = _delta(lambda: f(torch.ones(3)))
    torch.testing.assert_close(out, torch.ones(3).sin() + 1)
    assert seen == [False]  # asked, and left to Inductor
    assert delta["graphs_captured"] == 0 and delta["executions"] == 0, delta


def test_inductor_on_a_tpu_graph_says_what_to_use():
    code = ("import torch, torch_tpu\n"
            "f = torch.compile(lambda x: x.sin() + 1)\n"
            "f(torch.ones(3, device='tpu'))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TORCH_TPU_INDUCTOR_ROUTING="0"))
    assert r.returncode != 0
    assert "NotImplementedError: Inductor compiled a tpu graph to Pallas TPU kernels" in r.stderr
    assert "backend='tpu'" in r.stderr


def test_a_graph_is_one_program_and_later_calls_replay_it_without_dispatch():
    def f(x, y):
        z = (x @ y).relu() * 2 + 1
        return torch.tanh(z).sum(0) - z.mean()

    x, y = torch.randn(8, 16), torch.randn(16, 4)
    cf = torch.compile(f, backend="tpu")
    tx, ty = x.to(DEV), y.to(DEV)
    first, delta = _delta(lambda: cf(tx, ty).cpu())
    torch.testing.assert_close(first, f(x, y))
    # The first call runs the graph's ops as one region, and records it.
    assert delta["regions_executed"] == 1 and delta["executions"] == 1, delta
    assert delta["region_ops"] >= 6 and delta["graphs_captured"] == 1, delta
    for _ in range(3):
        x2 = torch.randn(8, 16)
        tx2 = x2.to(DEV)
        again, delta = _delta(lambda: cf(tx2, ty).cpu())
        torch.testing.assert_close(again, f(x2, y))
        # Later calls: one launch of the recorded executable, no op dispatched.
        assert delta["compiles"] == 0 and delta["executions"] == 1, delta
        assert delta["graph_replays"] == 1 and delta["deferred_ops"] == 0, delta


def test_input_mutation_is_visible_to_the_caller():
    def f(x, y):
        x.add_(1)
        y[1:].mul_(3)  # through a view
        return x * y

    cf = torch.compile(f, backend="tpu")
    x, y = torch.randn(5), torch.randn(5)
    tx, ty = x.to(DEV), y.to(DEV)
    view = tx[2:]  # another alias of a written input sees the writes
    before = debug.metrics()["graph_replays"]
    for _ in range(3):  # the first call records, the others replay
        got = cf(tx, ty)
        want = f(x, y)
        torch.testing.assert_close(got.cpu(), want)
        torch.testing.assert_close(tx.cpu(), x)
        torch.testing.assert_close(ty.cpu(), y)
        torch.testing.assert_close(view.cpu(), x[2:])
    assert debug.metrics()["graph_replays"] - before == 2


def test_replay_never_donates_a_buffer_still_read():
    # A buffer a pending DeferAndFuse region still reads, or another storage
    # shares, must survive the in-place update of a replayed graph.
    def bump(x):
        x.mul_(2)
        return x.sum()

    cf = torch.compile(bump, backend="tpu")
    x = torch.arange(6.0)
    tx = x.to(DEV)
    cf(tx)
    x.mul_(2)
    with torch_tpu.eager_mode("defer_and_fuse"):
        pending = tx * 1  # deferred: reads tx's current buffer later
        total = cf(tx)  # replayed: writes a new buffer into tx
        torch.testing.assert_close(pending.cpu(), x)
    x.mul_(2)
    torch.testing.assert_close(tx.cpu(), x)
    torch.testing.assert_close(total.cpu(), x.sum())
    # A storage that shares the buffer (a copy made by copy_data) keeps the
    # old values when the other is rewritten in place.
    shared = torch_tpu._C._testing_share_storage_buffer(tx)
    cf(tx)
    x.mul_(2)
    torch.testing.assert_close(shared.cpu(), x / 2)
    torch.testing.assert_close(tx.cpu(), x)


def test_inputs_that_differ_from_the_recording_run_op_by_op():
    def f(x):
        return x * 2 + x.sum()

    cf = torch.compile(f, backend="tpu")
    base = torch.randn(12)
    tb = base.to(DEV)
    before = debug.metrics()
    for start in (0, 0, 3, 5):  # another storage offset: another layout
        torch.testing.assert_close(cf(tb[start:start + 4]).cpu(), f(base[start:start + 4]))
    after = debug.metrics()
    assert after["graph_replays"] - before["graph_replays"] == 1


def _views_at_offsets(x, y):
    """Views that start inside their storage (a recorded graph reads them at
    fixed offsets), scaled by Python numbers (fixed too)."""
    a, b, c = x.chunk(3, -1)
    return [
        x[:, :, 4:8] * 0.5, x[1] - 2.5, x[:, 2] * 3, b * c, x[..., ::3] + 1,
        x.transpose(0, 2)[3:5] * 2, x.unbind(1)[5], x[2:4, 1:7:2, 3:11:4] - 1,
        y * 2, y.t()[1:3] + a[0, 0, 0], x.sum(0)[1:, 2:] / 7,
    ]


def test_views_at_offsets_in_a_graph_match_cpu_on_every_call():
    def f(x, y):
        # also a view whose rows run across the rows of its storage
        return _views_at_offsets(x, y) + [x.as_strided((5, 7), (12, 1), 9) * 2]

    cf = torch.compile(f, backend="tpu")
    before = debug.metrics()["graph_replays"]
    for _ in range(3):  # the first call records, the others replay
        x, base = torch.randn(6, 8, 12), torch.randn(7, 9)
        tx, tbase = x.to(DEV), base.to(DEV)
        got = cf(tx, tbase[2:, 1:])  # an input at an offset itself
        want = f(x, base[2:, 1:])
        for g, w in zip(got, want):
            torch.testing.assert_close(g.cpu(), w)
    assert debug.metrics()["graph_replays"] - before == 2


def test_writes_through_views_at_offsets_in_a_graph_match_cpu():
    # In-place writes through strided, transposed and offset views of the
    # inputs: a recorded graph writes them at fixed offsets.
    def f(x, y, z):
        x[:, 1::2].mul_(2)
        x[2:4, 3:7].add_(z)
        y[3:9].copy_(z.flatten()[:6])
        x.t()[1:4].sub_(1)
        y.view(3, 4)[:, 1:3].fill_(7)
        return x.sum(), y * 1

    cf = torch.compile(f, backend="tpu")
    before = debug.metrics()["graph_replays"]
    for _ in range(3):
        x, y, z = torch.randn(6, 8), torch.randn(12), torch.randn(2, 4)
        tx, ty, tz = x.to(DEV), y.to(DEV), z.to(DEV)
        got = cf(tx, ty, tz)
        want = f(x, y, z)
        torch.testing.assert_close(tx.cpu(), x)
        torch.testing.assert_close(ty.cpu(), y)
        for g, w in zip(got, want):
            torch.testing.assert_close(g.cpu(), w)
    assert debug.metrics()["graph_replays"] - before == 2


def test_a_recorded_graph_takes_its_fixed_values_as_constants(tmp_path):
    # A recorded graph replays with the offsets and Python numbers it was
    # recorded with: its program holds them as constants (XLA folds the views
    # into static slices), and takes only tensors.
    script = tmp_path / "graph.py"
    script.write_text(
        "import sys, torch, torch_tpu\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from test_compile import _views_at_offsets\n"
        "cf = torch.compile(_views_at_offsets, backend='tpu')\n"
        "x, base = torch.randn(6, 8, 12, device='tpu'), torch.randn(7, 9, device='tpu')\n"
        "cf(x, base[2:, 1:])\n"
        "torch.tpu.synchronize()\n"
    )
    env = dict(os.environ, TORCH_TPU_DUMP_HLO="1", TORCH_TPU_CACHE_DIR="")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    program = r.stderr.split("[torch_tpu] compiling a DeferAndFuse region")[-1]
    main = re.search(r"func\.func public @main\((.*?)\) ->", program)
    assert main, program[-2000:]
    params = re.findall(r"tensor<([^>]*)>", main.group(1))
    assert params and all("x" in t for t in params), params  # no 0-d parameter
    assert "dynamic_slice" not in program and "stablehlo.pad" not in program


def test_python_numbers_of_every_dtype_are_constants_of_the_replayed_program():
    # Each Python number below becomes a constant of the recorded program in
    # its operand's dtype (raw bytes; bool spelled out): replays match CPU.
    def f(i8, b, c, h, bf, l, u, d):
        return [i8 + 3, i8 * -2, b.masked_fill(b, False) | True, torch.where(b, 1.5, -2.0),
                c * (1 + 2j), c + 0.5j, h * 0.5 + 1, bf + 1.5, l * 7 - 3, u + 200, d * 1e-300,
                (l > 5) & b, torch.full_like(h, 3.25), i8.clamp(min=-3, max=4), l // 3]

    cf = torch.compile(f, backend="tpu")
    before = debug.metrics()["graph_replays"]
    for _ in range(3):
        args = [torch.randint(-100, 100, (5,), dtype=torch.int8), torch.rand(5) > 0.5,
                torch.randn(5, dtype=torch.complex64), torch.randn(5).half(),
                torch.randn(5).bfloat16(), torch.randint(-10, 10, (5,)),
                torch.randint(0, 255, (5,), dtype=torch.uint8),
                torch.randn(5, dtype=torch.float64)]
        got = cf(*[a.to(DEV) for a in args])
        for g, w in zip(got, f(*args)):
            torch.testing.assert_close(g.cpu(), w)
    assert debug.metrics()["graph_replays"] - before == 2


def test_random_ops_are_never_replayed_with_the_same_numbers():
    def f(x):
        return F.dropout(x, 0.5, training=True) + torch.rand_like(x)

    cf = torch.compile(f, backend="tpu")
    x = torch.ones(64, device=DEV)
    outs = [cf(x).cpu() for _ in range(3)]
    assert not torch.equal(outs[0], outs[1]) and not torch.equal(outs[1], outs[2])
    # The same seed gives the same numbers as eager Strict.
    torch.manual_seed(7)
    compiled = cf(x).cpu()
    torch.manual_seed(7)
    eager = f(x).cpu()
    torch.testing.assert_close(compiled, eager)


def test_cpu_scalar_tensor_inputs_are_read_every_call():
    def f(x, scale):
        return x * scale + 1

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(4)
    tx = x.to(DEV)
    for value in (2.0, 3.0, -1.5):
        scale = torch.tensor(value)
        torch.testing.assert_close(cf(tx, scale).cpu(), f(x, scale))


def test_cpu_scalar_inputs_enter_the_replay_as_uploads():
    # The 0-dim CPU input is uploaded each call: the graph replays (no op
    # dispatched) and still sees each call's value.
    cf = torch.compile(lambda x, scale: x * scale + 1, backend="tpu")
    x = torch.randn(4)
    tx = x.to(DEV)
    cf(tx, torch.tensor(2.0))
    before = debug.metrics()
    for value in (3.0, -1.5, 0.25):
        torch.testing.assert_close(cf(tx, torch.tensor(value)).cpu(), x * value + 1)
    after = debug.metrics()
    assert after["graph_replays"] - before["graph_replays"] == 3
    assert after["deferred_ops"] == before["deferred_ops"]


def test_default_adamw_compiled_replays_with_its_cpu_step_counts():
    # AdamW without capturable keeps its step counts on the CPU: the graph's
    # CPU part (step += 1, the bias corrections) runs every call and feeds
    # the replayed tpu part, so the corrections follow the step.
    torch.manual_seed(0)
    cpu_params = [nn.Parameter(torch.randn(5, 3)), nn.Parameter(torch.randn(4))]
    tpu_params = [nn.Parameter(p.detach().to(DEV)) for p in cpu_params]
    cpu_opt = torch.optim.AdamW(cpu_params, lr=0.1)
    tpu_opt = torch.optim.AdamW(tpu_params, lr=0.1)
    step = torch.compile(tpu_opt.step, backend="tpu")
    replays = 0
    for i in range(6):
        grads = [torch.randn_like(p) for p in cpu_params]
        for p, g in zip(cpu_params, grads):
            p.grad = g.clone()
        for p, g in zip(tpu_params, grads):
            p.grad = g.to(DEV)
        cpu_opt.step()
        before = debug.metrics()
        step()
        after = debug.metrics()
        replays += after["graph_replays"] - before["graph_replays"]
        if i > 0:
            assert after["deferred_ops"] == before["deferred_ops"], f"step {i} ran op by op"
        for q, p in zip(tpu_params, cpu_params):
            # float32 bias corrections in the graph, Python floats in eager
            torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-5)
        assert [tpu_opt.state[p]["step"].item() for p in tpu_params] == [i + 1.0] * 2
    assert replays == 5


def test_mutating_a_view_of_an_input_writes_the_base():
    def f(base):
        view = base[:, 1]
        view.copy_(torch.arange(3.0, device=base.device))
        return base.sum()

    base = torch.randn(3, 4)
    got, want, (tb,) = _both(f, base.clone())
    f(base)
    torch.testing.assert_close(got.cpu(), want)
    torch.testing.assert_close(tb.cpu(), base)


def test_outputs_aliasing_inputs_and_each_other_are_views_as_in_eager():
    def f(x):
        y = x * 2
        return x.view(-1), x[1:], y, y.t(), y[0]

    x = torch.randn(3, 4)
    tx = x.to(DEV)
    cf = torch.compile(f, backend="tpu")
    cf(tx)
    out = cf(tx)  # replayed
    want = f(x)
    for o, w in zip(out, want):
        torch.testing.assert_close(o.cpu(), w)
        assert o.shape == w.shape and o.stride() == w.stride()
    # Writing through an output that aliases the input writes the input, and
    # outputs that alias each other stay aliased.
    out[0][0] = 100.0
    assert tx[0, 0].item() == 100.0
    out[2][0, 0] = -7.0
    assert out[3][0, 0].item() == -7.0 and out[4][0].item() == -7.0


def test_graph_breaks_item_and_print(capsys):
    def f(x):
        s = x.sum().item()  # a graph break (Dynamo's default)
        print("sum is", round(s, 3))
        return x * s, (x + 1).relu()

    x = torch.randn(6)
    got, want, _ = _both(f, x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)
    assert "sum is" in capsys.readouterr().out


def test_no_grad_and_requires_grad_inputs():
    w = torch.randn(4, 4, requires_grad=True)
    tw = w.detach().to(DEV).requires_grad_()

    def f(w, x):
        with torch.no_grad():
            scale = w.abs().max()
        return (x @ w / scale).sum()

    x = torch.randn(3, 4)
    cf = torch.compile(f, backend="tpu")
    got = cf(tw, x.to(DEV))
    got.backward()
    want = f(w, x)
    want.backward()
    torch.testing.assert_close(got.cpu(), want.detach())
    torch.testing.assert_close(tw.grad.cpu(), w.grad)


def test_integer_and_bool_dtypes_and_several_outputs():
    def f(a, b, m):
        return (a * 3 + b) % 5, a > b, a & b, torch.where(m, a, -b), m.logical_not().sum()

    cf = torch.compile(f, backend="tpu")
    for _ in range(3):
        a = torch.randint(-50, 50, (7,), dtype=torch.int64)
        b = torch.randint(1, 9, (7,), dtype=torch.int32)
        m = torch.rand(7) > 0.5
        got = cf(a.to(DEV), b.to(DEV), m.to(DEV))
        for g, w in zip(got, f(a, b, m)):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g.cpu(), w)


def test_batchnorm_running_stats_update_as_in_eager():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(6)
    tbn = nn.BatchNorm1d(6).to(DEV)
    tbn.load_state_dict(bn.state_dict())
    cbn = torch.compile(tbn, backend="tpu")
    for _ in range(3):
        x = torch.randn(10, 6)
        torch.testing.assert_close(cbn(x.to(DEV)).cpu(), bn(x))
    for name, value in bn.state_dict().items():
        torch.testing.assert_close(tbn.state_dict()[name].cpu(), value)


def test_dynamic_shapes_specialize_per_shape():
    def f(x):
        return (x.softmax(-1) * x.shape[0]).sum(0)

    cf = torch.compile(f, backend="tpu", dynamic=True)
    for n in (3, 5, 9, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x))


def _train(model, steps, batches, compile_model, compile_step=False):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    step = torch.compile(opt.step, backend="tpu") if compile_step else opt.step
    run = torch.compile(model, backend="tpu") if compile_model else model
    losses = []
    for i in range(steps):
        x, y = batches[i]
        opt.zero_grad()
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        step()
        losses.append(loss.detach())
    return [float(l) for l in losses]


def test_mlp_trains_compiled_like_cpu():
    torch.manual_seed(0)
    cpu = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5))
    tpu = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5))
    tpu.load_state_dict(cpu.state_dict())
    tpu.to(DEV)
    batches = [(torch.randn(16, 12), torch.randint(0, 5, (16,))) for _ in range(4)]
    want = _train(cpu, 4, batches, compile_model=False)
    got = _train(tpu, 4, [(x.to(DEV), y.to(DEV)) for x, y in batches], True, True)
    assert got == pytest.approx(want, rel=1e-4, abs=1e-5)
    for (name, p), q in zip(cpu.named_parameters(), tpu.parameters()):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5, msg=name)


def test_cnn_trains_compiled_like_cpu():
    torch.manual_seed(1)
    cpu, tpu = CNN(), CNN()
    tpu.load_state_dict(cpu.state_dict())
    tpu.to(DEV)
    batches = [(torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))) for _ in range(3)]
    want = _train(cpu, 3, batches, compile_model=False)
    got = _train(tpu, 3, [(x.to(DEV), y.to(DEV)) for x, y in batches], True)
    assert got == pytest.approx(want, rel=1e-4, abs=1e-4)
    for name, value in cpu.state_dict().items():  # running stats included
        torch.testing.assert_close(tpu.state_dict()[name].cpu(), value, rtol=1e-4, atol=1e-4,
                                   msg=name)


def test_gpt_trains_compiled_like_cpu_with_few_programs_per_step():
    torch.manual_seed(2)
    cpu = GPT(p=0.0)
    tpu = GPT(p=0.0)
    tpu.load_state_dict(cpu.state_dict())
    tpu.to(DEV)
    idx = [torch.randint(0, 64, (4, 16)) for _ in range(4)]
    opt_c = torch.optim.AdamW(cpu.parameters(), lr=3e-3)
    opt_t = torch.optim.AdamW(tpu.parameters(), lr=3e-3)
    loss_fn = torch.compile(gpt_loss, backend="tpu")
    want, got, deltas = [], [], []
    for batch in idx:
        opt_c.zero_grad()
        loss = gpt_loss(cpu, batch)
        loss.backward()
        opt_c.step()
        want.append(loss.item())

        def step():
            opt_t.zero_grad()
            loss = loss_fn(tpu, batch.to(DEV))
            loss.backward()
            return loss

        loss, delta = _delta(step)
        deltas.append(delta)
        opt_t.step()
        got.append(loss.item())
    assert got == pytest.approx(want, rel=1e-4)
    # After the first step: forward and backward are one program each (plus
    # the input's upload), and nothing compiles.
    for delta in deltas[1:]:
        assert delta["compiles"] == 0, delta
        assert delta["executions"] <= 3, delta

"""User kernels (torch_tpu.kernels, issue 28): JAX, Pallas and StableHLO
functions called on tpu tensors, against the same math in PyTorch on CPU;
their gradients, views, DeferAndFuse regions, compiled graphs, the fast
Strict call and bad input."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import torch_tpu
import torch_tpu.kernels as kernels

jax = pytest.importorskip("jax")
jnp = jax.numpy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "tests"))
from metric_deltas import synced_delta as _delta  # noqa: E402
from pallas_flash_attention import flash_attention  # noqa: E402

DEV = "tpu"


@kernels.jax_kernel
def rms_norm(x, w, eps):
    x32 = x.astype(jnp.float32)
    scale = jax.lax.rsqrt((x32 * x32).mean(-1, keepdims=True) + eps)
    return (x32 * scale).astype(x.dtype) * w


def rms_norm_cpu(x, w, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt((x32 * x32).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


@kernels.jax_kernel
def swiglu(x, w1, w3, w2):
    return (jax.nn.silu(x @ w1) * (x @ w3)) @ w2


def swiglu_cpu(x, w1, w3, w2):
    return (F.silu(x @ w1) * (x @ w3)) @ w2


def _tol(dtype):
    return {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {"atol": 1e-5, "rtol": 1e-5}


def _grads(fn, args):
    """fn(*args) and the gradients of a fixed scalar of it w.r.t. args."""
    args = [a.detach().requires_grad_() for a in args]
    out = fn(*args)
    weights = torch.linspace(-1, 1, out.numel(), dtype=torch.float32).reshape(out.shape)
    (out.float() * weights.to(out.device)).sum().backward()
    return out.detach().cpu(), [a.grad.cpu() for a in args]


def _views(cpu, layout):
    """A tpu tensor with `cpu`'s values: contiguous, or a strided view at an
    offset of a larger tensor, and its CPU twin."""
    if layout == "contiguous":
        return cpu.to(DEV), cpu
    base = torch.randn(cpu.shape[0] * 2 + 1, *[2 * s for s in cpu.shape[1:]], dtype=cpu.dtype)
    index = (slice(1, None, 2),) + tuple(slice(None, None, 2) for _ in cpu.shape[1:])
    base[index] = cpu
    tpu_view = base.to(DEV)[index]
    assert tpu_view.storage_offset() > 0 and not tpu_view.is_contiguous()
    return tpu_view, base[index]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_rms_norm_forward_and_gradients(dtype, layout):
    torch.manual_seed(0)
    x, xc = _views(torch.randn(6, 32, dtype=dtype), layout)
    w = torch.randn(32, dtype=dtype)
    got, got_grads = _grads(lambda a, b: rms_norm(a, b, 1e-6), [x, w.to(DEV)])
    want, want_grads = _grads(lambda a, b: rms_norm_cpu(a, b, 1e-6), [xc, w])
    assert got.dtype == dtype
    torch.testing.assert_close(got, want, **_tol(dtype))
    for g, e in zip(got_grads, want_grads):
        torch.testing.assert_close(g, e, **_tol(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_swiglu_mlp_forward_and_gradients(dtype, layout):
    torch.manual_seed(1)
    x, xc = _views(torch.randn(8, 16, dtype=dtype), layout)
    ws = [torch.randn(16, 24, dtype=dtype) / 4, torch.randn(16, 24, dtype=dtype) / 4,
          torch.randn(24, 16, dtype=dtype) / 4]
    got, got_grads = _grads(swiglu, [x] + [w.to(DEV) for w in ws])
    want, want_grads = _grads(swiglu_cpu, [xc] + ws)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}
    torch.testing.assert_close(got, want, **tol)
    for g, e in zip(got_grads, want_grads):
        torch.testing.assert_close(g, e, **tol)


@pytest.mark.parametrize("causal", [False, True])
def test_pallas_flash_attention_matches_sdpa(causal):
    torch.manual_seed(2)
    q, k, v = (torch.randn(2, 3, 128, 32) for _ in range(3))
    got = flash_attention(q.to(DEV), k.to(DEV), v.to(DEV), causal, 32, 32).cpu()
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_a_strict_call_is_one_program_and_a_seen_signature_compiles_nothing():
    x, w = torch.randn(4, 32).to(DEV), torch.randn(32).to(DEV)
    rms_norm(x, w, 1e-5)
    y, delta = _delta(lambda: rms_norm(x, w, 1e-5))
    assert delta["executions"] == 1 and delta["compiles"] == 0, delta
    torch.testing.assert_close(y.cpu(), rms_norm_cpu(x.cpu(), w.cpu(), 1e-5))
    # a new value of a static argument is a new lowering, with its own result
    z = rms_norm(x, w, 10.0)
    torch.testing.assert_close(z.cpu(), rms_norm_cpu(x.cpu(), w.cpu(), 10.0))


def test_defer_and_fuse_joins_the_kernel_into_the_region():
    x, w = torch.randn(4, 32), torch.randn(32)
    tx, tw = x.to(DEV), w.to(DEV)

    def loop(x, w, norm):
        for _ in range(4):
            x = norm(x * 2, w, 1e-6) + 1
        return x

    with torch_tpu.eager_mode("defer_and_fuse"):
        got, delta = _delta(lambda: loop(tx, tw, rms_norm).cpu())
    assert delta["regions_executed"] == 1 and delta["executions"] == 1, delta
    torch.testing.assert_close(got, loop(x, w, rms_norm_cpu))


class _NormedMLP(torch.nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.w = torch.nn.Parameter(torch.ones(32))
        self.down = torch.nn.Linear(32, 4)
        self.norm = norm

    def forward(self, x):
        return self.down(F.gelu(self.norm(self.up(x), self.w, 1e-6)))


def test_a_kernel_in_a_compiled_training_step():
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(3)
    cpu_model = _NormedMLP(rms_norm_cpu)
    model = _NormedMLP(rms_norm).to(DEV)
    model.load_state_dict(cpu_model.state_dict())
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (cpu_model, model)]

    def step(m, opt, x, y):
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    compiled_forward = torch.compile(model, backend="tpu")
    for i in range(3):
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        want = step(cpu_model, opts[0], x, y)
        if i == 2:
            tx = x.to(DEV)
            out, delta = _delta(lambda: compiled_forward(tx))
            # the whole forward, kernel included, replays as one program
            assert delta["executions"] == 1 and delta["graph_replays"] == 1, delta
        got = step(compiled_forward, opts[1], x.to(DEV), y.to(DEV))
        torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    assert not counters["graph_break"], dict(counters["graph_break"])
    for p, q in zip(model.parameters(), cpu_model.parameters()):
        torch.testing.assert_close(p.cpu(), q, atol=1e-5, rtol=1e-5)
    torch._dynamo.reset()


def test_compiled_calls_with_changing_shapes_and_static_values():
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    f = torch.compile(lambda x, w, eps: rms_norm(x + 1, w, eps).sum(0), backend="tpu")
    w = torch.randn(32)
    # a new length, then a new eps: torch.compile makes them symbolic; the
    # kernel specializes on them (lowered again) without a graph break
    for n, eps in ((4, 1e-6), (6, 1e-6), (8, 1e-6), (8, 1e-3), (8, 1e-2)):
        x = torch.randn(n, 32)
        got = f(x.to(DEV), w.to(DEV), eps).cpu()
        torch.testing.assert_close(got, rms_norm_cpu(x + 1, w, eps).sum(0))
    assert not counters["graph_break"], dict(counters["graph_break"])
    torch._dynamo.reset()


def test_torch_vmap_batches_the_kernel_with_jax_vmap():
    x, ws = torch.randn(3, 5, 8), torch.randn(5, 8)
    got = torch.vmap(lambda a, b: rms_norm(a, b, 1e-6), in_dims=(1, 0))(x.to(DEV), ws.to(DEV))
    torch.testing.assert_close(got.cpu(), rms_norm_cpu(x.transpose(0, 1), ws[:, None, :], 1e-6))
    w = torch.randn(8)
    got = torch.vmap(lambda a: rms_norm(a, w.to(DEV), 1e-6))(x.to(DEV))
    torch.testing.assert_close(got.cpu(), rms_norm_cpu(x, w, 1e-6))


def test_torch_func_per_sample_gradients_and_jacobians():
    x, w = torch.randn(5, 3, 8), torch.randn(8)

    def per_sample(norm, w, x):
        return torch.func.vmap(torch.func.grad(lambda wv, xv: norm(xv, wv, 1e-6).sum()),
                               in_dims=(None, 0))(w, x)

    torch.testing.assert_close(per_sample(rms_norm, w.to(DEV), x.to(DEV)).cpu(),
                               per_sample(rms_norm_cpu, w, x))
    jac = torch.func.jacrev(lambda a: rms_norm(a, w.to(DEV), 1e-6))(x[0, 0].to(DEV))
    torch.testing.assert_close(jac.cpu(), torch.func.jacrev(lambda a: rms_norm_cpu(a, w, 1e-6))(x[0, 0]))


def test_several_outputs_integer_inputs_and_64_bit_dtypes():
    @kernels.jax_kernel
    def stats(x, index):
        picked = x[index]
        return picked.sum(), (picked * 2, index + 1)

    x = torch.randn(6, 3, dtype=torch.float64)
    index = torch.tensor([5, 0, 2])
    tx = x.to(DEV).requires_grad_()
    total, (doubled, shifted) = stats(tx, index.to(DEV))
    assert total.dtype == torch.float64 and shifted.dtype == torch.int64
    torch.testing.assert_close(total.cpu(), x[index].sum())
    torch.testing.assert_close(doubled.cpu(), x[index] * 2)
    assert torch.equal(shifted.cpu(), index + 1)
    (total + doubled.sum()).backward()
    want = torch.zeros_like(x)
    want[index] = 3.0
    torch.testing.assert_close(tx.grad.cpu(), want)


def test_a_given_bwd_is_used_and_second_order_gradients_work():
    calls = []

    def cube_bwd(x, cotangent):
        calls.append(1)
        return (3 * x * x * cotangent,)

    cube = kernels.jax_kernel(lambda x: x ** 3, name="cube", bwd=cube_bwd)
    x = torch.tensor([0.5, -1.0, 2.0])
    tx = x.to(DEV).requires_grad_()
    (g,) = torch.autograd.grad(cube(tx).sum(), tx, create_graph=True)
    torch.testing.assert_close(g.detach().cpu(), 3 * x * x)
    assert calls, "the given bwd was not lowered"
    (gg,) = torch.autograd.grad(g.sum(), tx)
    torch.testing.assert_close(gg.cpu(), 6 * x)


def test_same_name_different_math_never_shares_a_program():
    first = kernels.jax_kernel(lambda x: x + 1, name="shift")
    second = kernels.jax_kernel(lambda x: x - 1, name="shift")
    x = torch.arange(4.0).to(DEV)
    assert torch.equal(first(x).cpu(), torch.arange(4.0) + 1)
    assert torch.equal(second(x).cpu(), torch.arange(4.0) - 1)


def test_calls_from_threads():
    from concurrent.futures import ThreadPoolExecutor

    xs = [torch.randn(4, 32) for _ in range(8)]
    w = torch.randn(32)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: rms_norm(x.to(DEV), w.to(DEV), 1e-6).cpu(), xs))
    for g, x in zip(got, xs):
        torch.testing.assert_close(g, rms_norm_cpu(x, w, 1e-6))


STABLEHLO_AXPY = """
func.func @main(%a: tensor<f32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ab = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %ax = stablehlo.multiply %ab, %x : tensor<4xf32>
  %r = stablehlo.add %ax, %y : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_a_stablehlo_kernel():
    axpy = kernels.stablehlo_kernel(STABLEHLO_AXPY, [(torch.float32, (4,))], name="axpy")
    x, y = torch.randn(8)[::2], torch.randn(4)
    (got,) = axpy(torch.tensor(3.0).to(DEV), x.to(DEV), y.to(DEV))
    torch.testing.assert_close(got.cpu(), 3 * x + y)
    with pytest.raises(TypeError, match="kernel axpy: takes"):
        axpy(torch.tensor(3.0).to(DEV), torch.randn(5).to(DEV), y.to(DEV))
    with pytest.raises(TypeError, match="kernel axpy: out_types"):
        kernels.stablehlo_kernel(STABLEHLO_AXPY, [(torch.float16, (4,))], name="axpy")


STABLEHLO_F8_DOT = """
func.func @main(%a: tensor<8x32xf8E4M3FN>, %b: tensor<32x4xf8E5M2>) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<8x32xf8E4M3FN>, tensor<32x4xf8E5M2>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""


def test_a_stablehlo_kernel_on_float8_tensors():
    dot = kernels.stablehlo_kernel(STABLEHLO_F8_DOT, name="f8dot")
    # small integers: every sum is exact
    a = torch.randint(-8, 9, (8, 32)).float().to(torch.float8_e4m3fn)
    b = torch.randint(-8, 9, (32, 4)).float().to(torch.float8_e5m2)
    (got,) = dot(a.to(DEV), b.to(DEV))
    assert got.dtype == torch.float32
    assert torch.equal(got.cpu(), (a.double() @ b.double()).float())


def test_bad_input_is_a_clear_error_naming_the_kernel():
    x = torch.randn(3, 4)

    @kernels.jax_kernel
    def broken(x):
        return x @ x  # (3, 4) @ (3, 4) does not trace

    with pytest.raises(TypeError, match="kernel broken: JAX could not lower it"):
        broken(x.to(DEV))
    with pytest.raises(RuntimeError, match="kernel rms_norm: tensor argument 0 is on cpu"):
        rms_norm(x, torch.ones(4), 1e-6)
    with pytest.raises(TypeError, match="kernel rms_norm: argument 2 is a list"):
        rms_norm(x.to(DEV), torch.ones(4).to(DEV), [1e-6])
    # (no tpu tensor has a dtype JAX lacks today: the lowering is asked directly)
    with pytest.raises(TypeError, match="kernel rms_norm: tensor argument 0 has dtype "
                                        "torch.complex32, which JAX has no type for"):
        rms_norm._lowered((("tensor", torch.complex32, (2, 4)), ("tensor", torch.float32, (4,)),
                           ("value", "float", 1e-6)))
    with pytest.raises(TypeError, match="kernel rms_norm: a kernel's Python arguments are"):
        rms_norm(x.to(DEV), torch.ones(4).to(DEV), frozenset([1e-6]))
    with pytest.raises(TypeError, match="kernel named: returns a dict"):
        kernels.jax_kernel(lambda x: {"y": x}, name="named")(x.to(DEV))
    bad_bwd = kernels.jax_kernel(lambda x, y: x * y, name="product",
                                 bwd=lambda x, y, g: (g * y,))
    tx = x.to(DEV).requires_grad_()
    with pytest.raises(TypeError, match="bwd returned 1 gradients for 2 tensor arguments"):
        bad_bwd(tx, x.to(DEV)).sum().backward()
    with pytest.raises(TypeError, match="kernel bad: the module does not parse"):
        kernels.stablehlo_kernel("func.func @main(%a: tensor<4xf32>) {", name="bad")
    with pytest.raises(TypeError, match="kernel nomain: the module has no function @main"):
        kernels.stablehlo_kernel(STABLEHLO_AXPY.replace("@main", "@other"), name="nomain")
    # the process goes on: the same kernel still works
    torch.testing.assert_close(rms_norm(x.to(DEV), torch.ones(4).to(DEV), 1e-6).cpu(),
                               rms_norm_cpu(x, torch.ones(4), 1e-6))


WARM_PROGRAM = """
import sys, jax, torch, torch_tpu, torch_tpu.kernels as kernels
from torch_tpu import debug
plus = float(sys.argv[1])
k = kernels.jax_kernel(lambda x: jax.numpy.tanh(x) * 3 + plus, name="warm")
x = torch.linspace(-1, 1, 8)
y = torch.compile(lambda a: k(a * 2).sum(), backend="tpu")(x.to("tpu"))
z = k(x.to("tpu"))
m = debug.metrics()
print(m["compiles"], m["persistent_cache_hits"], y.item(), z.cpu().tolist())
"""


def test_a_warm_process_takes_kernel_programs_from_the_persistent_cache(tmp_path):
    import os

    def run(plus):
        env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(tmp_path))
        out = subprocess.run([sys.executable, "-c", WARM_PROGRAM, str(plus)], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        compiles, hits, y, z = out.stdout.strip().splitlines()[-1].split(" ", 3)
        return int(compiles), int(hits), float(y), z

    x = torch.linspace(-1, 1, 8)
    cold = run(1.0)
    assert cold[0] >= 2 and abs(cold[2] - (torch.tanh(x * 2) * 3 + 1).sum().item()) < 1e-4
    warm = run(1.0)
    assert warm[0] == 0 and warm[1] >= 2 and warm[2:] == cold[2:], (cold, warm)
    # the same kernel with other math (its name and shapes unchanged):
    # programs of its own, not the cached ones
    changed = run(5.0)
    assert changed[0] >= 2
    assert abs(changed[2] - (torch.tanh(x * 2) * 3 + 5).sum().item()) < 1e-4


def test_importing_torch_tpu_does_not_import_jax():
    code = ("import sys, torch, torch_tpu, torch_tpu.kernels; "
            "assert 'jax' not in sys.modules, 'jax imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_readme_example_runs():
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport jax, jax.numpy as jnp, torch, torch_tpu.kernels")
    code = readme[start + len("```python\n"):readme.index("```", start + 3)]
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    x, w = scope["x"], scope["w"]
    xc = x.detach().cpu().requires_grad_()
    wc = w.detach().cpu().requires_grad_()
    (xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-6) * wc).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), xc.grad, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(w.grad.cpu(), wc.grad, atol=1e-5, rtol=1e-5)

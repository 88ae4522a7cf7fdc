"""PyTorch's precompile caches with `torch.compile(backend="tpu")`.

A warm process that loads what `torch.compiler.save_cache_artifacts()`
saved (Dynamo's precompile cache, `TORCH_CACHING_PRECOMPILE=1`) or what
`aot_compile(...).save_compiled_function` wrote runs the tpu backend's
graphs without Dynamo or AOTAutograd tracing anything, and with the
persistent executable cache, without XLA compiling anything. Each process
here is a fresh Python, as a user's next run would be.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

MODEL = """
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.down(F.{activation}(self.up(self.norm(x))))


def loss(model, x, y):
    return F.mse_loss(model(x), y)


def clip(params, max_norm):
    grads = [p.grad for p in params]
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
    torch._foreach_mul_(grads, torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total
"""

TRAIN = """
import json, sys
sys.path.insert(0, {model_dir!r})
import torch
import torch_tpu
from torch._dynamo.utils import counters
from torch_tpu import debug
import precompile_model as pm

device = {device!r}
torch.manual_seed(0)
model = pm.Net().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, fused=True)
x = torch.randn(16, 32).to(device)
y = torch.randn(16, 8).to(device)
compiled = device == "tpu"
loss_fn = torch.compile(pm.loss, backend="tpu") if compiled else pm.loss
clip = torch.compile(pm.clip, backend="tpu") if compiled else pm.clip
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = loss_fn(model, x, y)
    loss.backward()
    with torch.no_grad():
        clip(list(model.parameters()), 0.5)
    opt.step()
    losses.append(loss.item())
params = [p.detach().cpu().numpy().tobytes().hex() for p in model.parameters()]
if compiled and {save!r}:
    torch.compiler.save_cache_artifacts()
print(json.dumps({{
    "losses": losses, "params": params,
    "frames_traced": counters["frames"]["total"],
    "dynamo_cache": dict(counters["dynamo_cache"]),
    "xla_compiles": debug.metrics()["compiles"] if compiled else 0,
    "aot": dict(counters["aot_autograd"]),
}}))
"""


def _write_model(directory, activation):
    path = directory / "precompile_model.py"
    path.write_text(MODEL.format(activation=activation))
    return path


def _train(tmp_path, cache, *, precompile=True, save=True, device="tpu", **env_overrides):
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(tmp_path / cache / "tpu"),
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / cache / "torch"),
               TORCH_CACHING_PRECOMPILE="1" if precompile else "0", **env_overrides)
    code = TRAIN.format(model_dir=str(tmp_path), device=device, save=save)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_warm_process_traces_and_compiles_nothing(tmp_path):
    _write_model(tmp_path, "gelu")
    cold = _train(tmp_path, "cache")
    warm = _train(tmp_path, "cache")
    plain = _train(tmp_path, "plain", precompile=False)
    cpu = _train(tmp_path, "cpu", device="cpu")

    assert cold["frames_traced"] == 2 and cold["xla_compiles"] > 0
    assert cold["dynamo_cache"].get("dynamo_cache_miss") == 2
    # The warm process installs both functions from the cache: Dynamo traces
    # no frame (so AOTAutograd traces nothing either), XLA compiles nothing.
    assert warm["dynamo_cache"].get("dynamo_cache_hit") == 2, warm
    assert warm["frames_traced"] == 0, warm
    assert warm["xla_compiles"] == 0, warm
    # Same programs, same bits: cold, warm and a process without precompile.
    assert warm["losses"] == cold["losses"] == plain["losses"]
    assert warm["params"] == cold["params"] == plain["params"]
    assert torch.allclose(torch.tensor(warm["losses"]), torch.tensor(cpu["losses"]), rtol=1e-5)


def test_changed_model_is_traced_again(tmp_path):
    """The loss function's source is the same; the model it calls changed
    (same shapes, same parameters): Dynamo's package notices the inlined
    source changed, so the stale graph is not replayed."""
    _write_model(tmp_path, "gelu")
    gelu = _train(tmp_path, "cache")
    _write_model(tmp_path, "relu")
    relu_warm = _train(tmp_path, "cache")
    relu_plain = _train(tmp_path, "plain", precompile=False)

    assert relu_warm["frames_traced"] > 0, relu_warm
    assert relu_warm["losses"] == relu_plain["losses"]
    assert relu_warm["params"] == relu_plain["params"]
    assert relu_warm["losses"][1:] != gelu["losses"][1:]


AOT = """
import sys, torch
sys.path.insert(0, {model_dir!r})
import torch_tpu
from torch._dynamo.utils import counters
from torch_tpu import debug
import precompile_model as pm

torch.manual_seed(0)
model = pm.Net().to("tpu")
x = torch.randn(16, 32).to("tpu")
y = torch.randn(16, 8).to("tpu")
if {save!r}:
    fn = torch.compile(pm.loss, backend="tpu", fullgraph=True).aot_compile(((model, x, y), {{}}))
    fn.save_compiled_function({path!r})
else:
    with open({path!r}, "rb") as f:
        fn = torch.compiler.load_compiled_function(f)
loss = fn(model, x, y)
loss.backward()
print(loss.item(), model.up.weight.grad.sum().item(), counters["frames"]["total"],
      debug.metrics()["compiles"])
"""


def test_aot_compile_saves_and_loads_a_tpu_function(tmp_path):
    _write_model(tmp_path, "gelu")
    path = str(tmp_path / "loss.pt2")
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(tmp_path / "tpu"))
    results = []
    for save in (True, False):
        code = AOT.format(model_dir=str(tmp_path), path=path, save=save)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-4000:]
        results.append(out.stdout.split())
    saved, loaded = results
    assert loaded[:2] == saved[:2]  # loss and gradient
    assert loaded[2] == "0" and loaded[3] == "0"  # no frame traced, no XLA compile

    sys.path.insert(0, str(tmp_path))
    try:
        import precompile_model as pm
    finally:
        sys.path.pop(0)
    torch.manual_seed(0)
    model = pm.Net()
    x, y = torch.randn(16, 32), torch.randn(16, 8)
    loss = pm.loss(model, x, y)
    loss.backward()
    assert float(saved[0]) == pytest.approx(loss.item(), rel=1e-5)
    assert float(saved[1]) == pytest.approx(model.up.weight.grad.sum().item(), rel=1e-4, abs=1e-6)


def test_loaded_dynamic_graph_keeps_its_shape_buckets(tmp_path):
    """A graph with dynamic sizes, saved and loaded again (whose example
    inputs are then concrete), still runs at each size's bucket: five
    lengths, two programs (buckets 8 and 16), CPU's values."""
    from torch_tpu import debug, shape_buckets

    def f(x, w):
        return torch.softmax(x @ w, dim=0).sum(0)

    w = torch.randn(16, 8)
    path = str(tmp_path / "f.pt2")
    compiled = torch.compile(f, backend="tpu", fullgraph=True, dynamic=True)
    compiled.aot_compile(((torch.randn(5, 16).to("tpu"), w.to("tpu")), {})).save_compiled_function(path)
    with open(path, "rb") as file:
        loaded = torch.compiler.load_compiled_function(file)
    before, refused = debug.metrics()["compiles"], shape_buckets.refusals()
    for n in (3, 5, 7, 9, 12):
        x = torch.randn(n, 16)
        torch.testing.assert_close(loaded(x.to("tpu"), w.to("tpu")).cpu(), f(x, w))
    assert debug.metrics()["compiles"] - before == 2
    assert shape_buckets.refusals() == refused
    torch._dynamo.reset()


BUCKETS = """
import torch, torch_tpu
from torch_tpu import debug

def f(x):
    return torch.softmax(x, dim=0).sum(0)

fn = torch.compile(f, backend="tpu", dynamic=True)
with torch.no_grad():
    for n in (3, 5, 6, 7):
        x = torch.randn(n, 4)
        torch.testing.assert_close(fn(x.to("tpu")).cpu(), f(x))
print(debug.metrics()["compiles"])
torch.compiler.save_cache_artifacts()
"""


def test_loaded_graph_takes_the_process_wide_buckets(tmp_path):
    """A graph compiled without `options=` buckets as the loading process
    says (TORCH_TPU_SHAPE_BUCKETS), not as the saving one did."""
    def run(buckets):
        env = dict(os.environ, TORCH_TPU_CACHE_DIR="", TORCH_CACHING_PRECOMPILE="1",
                   TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "torch"), TORCH_TPU_SHAPE_BUCKETS=buckets)
        out = subprocess.run([sys.executable, "-c", BUCKETS], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-4000:]
        return int(out.stdout.split()[-1])

    assert run("off") == 4  # one program per length, saved
    assert run("pow2") == 1  # loaded: lengths 3..7 in bucket 8
    assert run("off") == 4


def test_graphs_are_tagged_with_what_shapes_them():
    """AOTAutograd's cache key does not name the backend: the tag on the
    graph names the tpu backend's decompositions and options, so another
    backend's entry, or one made with other shape buckets, differs."""
    from torch_tpu import _graph_cache, compiler, shape_buckets

    pow2 = _graph_cache.cache_tag(compiler._decompositions, shape_buckets.parse("pow2"))
    listed = _graph_cache.cache_tag(compiler._decompositions, shape_buckets.parse([128, 512]))
    off = _graph_cache.cache_tag(compiler._decompositions, None)
    assert len({pow2, listed, off}) == 3
    assert "_native_batch_norm_legit_functional" in off


def test_plain_compiles_keep_their_graphs_in_autograd_cache(tmp_path):
    """Without precompile Dynamo traces in every process, but AOTAutograd's
    cache (on by default, as for Inductor) keeps the backend's graphs: a
    warm process loads the training graph (forward and backward) and the
    clipping graph instead of tracing them, and trains to the same bits.
    PyTorch's switch turns it off."""
    _write_model(tmp_path, "gelu")
    cold = _train(tmp_path, "plain", precompile=False, save=False)
    warm = _train(tmp_path, "plain", precompile=False, save=False)
    off = _train(tmp_path, "off", precompile=False, save=False, TORCHINDUCTOR_AUTOGRAD_CACHE="0")

    assert cold["aot"].get("autograd_cache_saved") == 2, cold
    assert warm["aot"].get("autograd_cache_hit") == 2, warm
    assert "autograd_cache_miss" not in warm["aot"], warm
    assert warm["frames_traced"] == 2 and warm["xla_compiles"] == 0, warm
    assert off["aot"].get("autograd_cache_saved") is None, off
    assert off["aot"].get("autograd_cache_hit") is None, off
    assert warm["losses"] == cold["losses"] == off["losses"]
    assert warm["params"] == cold["params"] == off["params"]


def test_plain_compiles_pickle_no_graph_when_the_cache_is_off(monkeypatch):
    """The backend's graphs are the plain runners (no OutputCode, nothing
    pickled) when AOTAutograd's cache is off, and go through it when on."""
    from torch_tpu import _graph_cache

    made = []
    original = _graph_cache.TpuGraphCode.build

    def counting_build(self, example_inputs):
        made.append(self)
        return original(self, example_inputs)

    monkeypatch.setattr(_graph_cache.TpuGraphCode, "build", counting_build)
    with torch._functorch.config.patch(enable_autograd_cache=False):
        torch._dynamo.reset()
        fn = torch.compile(lambda a: (a * 2).sum(), backend="tpu")
        assert fn(torch.ones(4, device="tpu")).item() == 8.0
    assert made == []
    torch._dynamo.reset()
    fn = torch.compile(lambda a: (a * 3).sum(), backend="tpu")
    assert fn(torch.ones(4, device="tpu")).item() == 12.0
    assert len(made) == 1
    torch._dynamo.reset()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"] + sys.argv[1:]))

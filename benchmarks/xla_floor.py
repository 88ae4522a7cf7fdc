"""The ladder's GPT training step written directly in JAX, jitted into ONE
XLA program, and run through the same PJRT plugin torch_tpu uses: what XLA
itself makes of the whole step on this device, with no PyTorch, no Dynamo
and no program boundaries. A reference, not a proven floor: where the step
is small and its cost is per-kernel overhead, an executor built on XLA
(Strict, DeferAndFuse, `torch.compile(backend="tpu")`) has little left to
win over it, so `strict / jax` shows how far `strict / compiled` can go
there; at larger sizes the program JAX emits can be the slower one (on the
CPU plugin the ladder's mid size runs faster compiled than here).

benchmarks/ladder.py starts this file as a child process (`serve`) and times
it between its own executors, so machine noise hits all columns alike:

    python benchmarks/xla_floor.py serve VOCAB,SEQ,D,HEADS,LAYERS,BATCH PLUGIN_PATH
    # prints "ready"; then each line "N" on stdin runs N steps and prints
    # their seconds per step

The step matches tests/model_zoo.py's GPT and benchmarks/ladder.py's
Trainer: token + position embeddings, pre-LayerNorm blocks with causal
attention and an exact-erf GELU MLP, a final LayerNorm and a bias-free head,
next-token cross-entropy, gradients clipped to norm 1.0, AdamW (lr 1e-4,
weight decay 0.01, betas 0.9/0.999, eps 1e-8). Needs jax (installed with
the test dependencies by scripts/setup.sh).
"""

import sys
import time

import numpy as np


def _model(vocab, seq, d, heads, layers):
    import jax
    import jax.numpy as jnp

    def layer_norm(x, w, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * w + b

    def block(p, x):
        batch, t, c = x.shape
        qkv = layer_norm(x, p["ln1_w"], p["ln1_b"]) @ p["qkv_w"].T + p["qkv_b"]
        q, k, v = (z.reshape(batch, t, heads, c // heads).transpose(0, 2, 1, 3)
                   for z in jnp.split(qkv, 3, axis=2))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(c // heads)
        scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -jnp.inf)
        y = (jax.nn.softmax(scores, -1) @ v).transpose(0, 2, 1, 3).reshape(batch, t, c)
        x = x + y @ p["proj_w"].T + p["proj_b"]
        h = layer_norm(x, p["ln2_w"], p["ln2_b"]) @ p["fc1_w"].T + p["fc1_b"]
        return x + jax.nn.gelu(h, approximate=False) @ p["fc2_w"].T + p["fc2_b"]

    def loss(p, idx):
        inputs, targets = idx[:, :-1], idx[:, 1:]
        x = p["tok"][inputs] + p["pos"][jnp.arange(seq)]
        for i in range(layers):
            x = block(p["blocks"][i], x)
        logits = layer_norm(x, p["ln_w"], p["ln_b"]) @ p["head"].T
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(logp, targets[..., None], -1).mean()

    def step(p, m, v, t, idx):
        value, g = jax.value_and_grad(loss)(p, idx)
        leaves = jax.tree_util.tree_leaves(g)
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in leaves))
        g = jax.tree_util.tree_map(lambda x: x * jnp.minimum(1.0, 1.0 / (norm + 1e-6)), g)
        t = t + 1
        lr, wd, b1, b2, eps = 1e-4, 0.01, 0.9, 0.999, 1e-8
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        p = jax.tree_util.tree_map(
            lambda p, m, v: p * (1 - lr * wd)
            - lr * (m / (1 - b1**t)) / (jnp.sqrt(v / (1 - b2**t)) + eps), p, m, v)
        return p, m, v, t, value

    return jax.jit(step)


def _parameters(vocab, seq, d, layers):
    import jax.numpy as jnp

    rng = np.random.default_rng(0)

    def normal(*shape):
        return jnp.asarray(rng.normal(0, 0.02, shape), jnp.float32)

    def ones(n):
        return jnp.ones((n,), jnp.float32)

    def zeros(n):
        return jnp.zeros((n,), jnp.float32)

    blocks = [{
        "ln1_w": ones(d), "ln1_b": zeros(d), "ln2_w": ones(d), "ln2_b": zeros(d),
        "qkv_w": normal(3 * d, d), "qkv_b": zeros(3 * d),
        "proj_w": normal(d, d), "proj_b": zeros(d),
        "fc1_w": normal(4 * d, d), "fc1_b": zeros(4 * d),
        "fc2_w": normal(d, 4 * d), "fc2_b": zeros(d),
    } for _ in range(layers)]
    return {"tok": normal(vocab, d), "pos": normal(seq, d), "blocks": blocks,
            "ln_w": ones(d), "ln_b": zeros(d), "head": normal(vocab, d)}


def serve(size: str, plugin_path: str) -> None:
    """`size` as ladder.py's SIZES spell it, comma-separated (this process
    imports no torch: `import torch` would load torch_tpu too)."""
    from jax._src import xla_bridge

    # the options torch_tpu gives a CPU plugin (core/runtime.cc): one device
    options = {"cpu_device_count": 1} if "cpu" in plugin_path else None
    xla_bridge.register_plugin("torch_tpu_plugin", library_path=plugin_path, options=options)
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "torch_tpu_plugin")
    vocab, seq, d, heads, layers, batch = (int(n) for n in size.split(","))
    step = _model(vocab, seq, d, heads, layers)
    p = _parameters(vocab, seq, d, layers)
    m = jax.tree_util.tree_map(jnp.zeros_like, p)
    v = jax.tree_util.tree_map(jnp.zeros_like, p)
    t = jnp.float32(0)
    idx = jnp.asarray(np.random.default_rng(1).integers(0, vocab, (batch, seq + 1)), jnp.int32)
    for _ in range(3):  # compiles, warms up
        p, m, v, t, value = step(p, m, v, t, idx)
    jax.block_until_ready(value)
    print("ready", flush=True)
    for line in sys.stdin:
        steps = int(line)
        start = time.perf_counter()
        for _ in range(steps):
            p, m, v, t, value = step(p, m, v, t, idx)
        jax.block_until_ready((p, value))
        print((time.perf_counter() - start) / steps, flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    serve(sys.argv[2], sys.argv[3])

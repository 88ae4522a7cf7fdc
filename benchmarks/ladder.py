"""One GPT training step in five executors, side by side in one run:
PyTorch CPU eager, PyTorch Inductor on CPU tensors, tpu Strict, tpu
DeferAndFuse and tpu compiled (`torch.compile(backend="tpu")`), at a small
and a mid size; and, for reference, the same step written in JAX as one XLA
program on the same PJRT plugin (benchmarks/xla_floor.py, "jax"): what XLA
makes of the whole step with no PyTorch and no program boundaries, the
reference for how far "strict/compiled" can go at the small size
("strict/jax"; at the mid size compiled can beat it: "jax/compiled" > 1).

Run: python benchmarks/ladder.py [--repeats 5] [--steps 3] [--sizes small,mid]
     [--no-inductor] [--no-jax]

Where the torch build has CUDA and a GPU is there (a CUDA torch on a GPU
machine, where tpu runs on the XLA CUDA plugin), two more columns time the
same step in PyTorch's own CUDA eager ("cuda") and Inductor on CUDA
("inductor-cuda"), the anchors tpu on that GPU is measured against
("cuda/compiled", "inductor-cuda/compiled").

A step is forward, cross-entropy, backward, clip_grad_norm_(1.0) and an
AdamW update (the default for-each implementation: many small ops, the case
DeferAndFuse is for). Each executor is warmed up for three steps (tpu
compiles its programs, DeferAndFuse its regions), then timed over --steps
steps, --repeats times; the best repeat counts. A tpu timing ends with
torch.tpu.synchronize(). The executors alternate within each repeat so that
machine noise hits them alike. Also printed: programs launched per step in
each tpu mode (torch_tpu.debug.metrics()["executions"]).

Targets at the small size: DeferAndFuse at least 1.5x faster than Strict
(issue 11, "strict/defer"); compiled at least 4x faster than Strict and
faster than Inductor (issue 12, "strict/compiled", "inductor/compiled").
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from model_zoo import GPT, gpt_loss, gpt_train_step  # noqa: E402

SIZES = {
    # name: (vocab, seq, d_model, heads, layers, batch)
    "small": (128, 32, 64, 4, 2, 8),
    "mid": (512, 128, 256, 8, 4, 8),
}


def clip_grad_norm(params, max_norm):
    """torch.nn.utils.clip_grad_norm_'s for-each path, written out: Dynamo
    (torch 2.13) breaks the graph inside the library function, which would
    leave the clipping eager in the compiled columns."""
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
    torch._foreach_mul_(grads, torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total


class Trainer:
    """A model, its optimizer and a batch on one device, in one eager mode,
    eager or compiled with `backend` (the loss, clipping and optimizer step
    each compiled: what a user wraps in torch.compile)."""

    def __init__(self, device, mode, size, backend=None, fused_optimizer=False):
        vocab, seq, d, heads, layers, batch = SIZES[size]
        self.device, self.mode = device, mode
        torch.manual_seed(0)
        self.model = GPT(vocab=vocab, ctx=seq, d=d, heads=heads, layers=layers, p=0.0).to(device)
        if fused_optimizer:
            # AdamW(fused=True): one program per step already, not compiled.
            self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, fused=True)
        else:
            # Compiled: the optimizer keeps its step counts on the device
            # (capturable), so its compiled step is a tpu graph that replays
            # whole; with the counts on the CPU it runs op by op in one region.
            self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4,
                                         capturable=backend is not None and device != "cpu")
        self.idx = torch.randint(0, vocab, (batch, seq + 1)).to(device)
        self.backend = backend
        if backend is not None:
            self.loss = torch.compile(gpt_loss, backend=backend)
            self.clip = torch.compile(clip_grad_norm, backend=backend)
            self.opt_step = (self.opt.step if fused_optimizer
                             else torch.compile(self.opt.step, backend=backend))

    def _step(self):
        if self.backend is None:
            return gpt_train_step(self.model, self.opt, self.idx)
        self.opt.zero_grad()
        loss = self.loss(self.model, self.idx)
        loss.backward()
        with torch.no_grad():
            self.clip(list(self.model.parameters()), 1.0)
        self.opt_step()
        return loss

    def run(self, steps):
        """Seconds per step over `steps` steps."""
        import torch_tpu

        if self.device in ("cpu", "cuda"):
            sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)
            sync()
            start = time.perf_counter()
            for _ in range(steps):
                self._step()
            sync()
            return (time.perf_counter() - start) / steps
        with torch_tpu.eager_mode(self.mode):
            torch.tpu.synchronize()
            start = time.perf_counter()
            for _ in range(steps):
                self._step()
            torch.tpu.synchronize()
            return (time.perf_counter() - start) / steps

    def executions_per_step(self, steps):
        from torch_tpu import debug

        before = debug.metrics()["executions"]
        self.run(steps)
        return (debug.metrics()["executions"] - before) / steps


class JaxFloor:
    """benchmarks/xla_floor.py's JAX step, served by a child process on the
    PJRT plugin torch_tpu loaded; timed like a Trainer (the parent waits
    while the child runs)."""

    def __init__(self, size):
        plugin = torch.tpu.get_device_properties(0).plugin_path
        script = Path(__file__).resolve().parent / "xla_floor.py"
        dims = ",".join(str(n) for n in SIZES[size])
        self.proc = subprocess.Popen([sys.executable, str(script), "serve", dims, plugin],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{script} did not start (exit code {self.proc.wait()})")

    def run(self, steps):
        self.proc.stdin.write(f"{steps}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sizes", default="small,mid")
    parser.add_argument("--no-inductor", action="store_true",
                        help="skip the Inductor-on-CPU column (its C++ compile takes minutes)")
    parser.add_argument("--no-jax", action="store_true",
                        help="skip the JAX one-program reference column")
    args = parser.parse_args()
    import torch_tpu  # noqa: F401  (registers the device)

    columns = ["cpu", "inductor", "strict", "defer", "compiled", "jax"]
    if args.no_inductor:
        columns.remove("inductor")
    if args.no_jax:
        columns.remove("jax")
    cuda_columns = ["cuda"] + ([] if args.no_inductor else ["inductor-cuda"])
    if torch.cuda.is_available():
        columns[1:1] = cuda_columns
        tpu = torch.tpu.get_device_properties(0)
        print(f"cuda: {torch.cuda.get_device_name(0)} (torch {torch.__version__}); "
              f"tpu: {tpu.name} ({tpu.platform})")
    print("times in ms per step; a ratio a/b is column a's time over column b's")
    header = f"{'size':<6}" + "".join(f"{c + ' ms':>13}" for c in columns)
    header += f"{'strict/defer':>13}{'strict/compiled':>16}{'inductor/compiled':>18}"
    header += f"{'strict/jax':>11}{'jax/compiled':>13}"
    if "cuda" in columns:
        header += "".join(f"{c + '/compiled':>{len(c) + 11}}" for c in cuda_columns)
    header += f"{'launches strict':>16}{'defer':>7}{'compiled':>9}"
    print(header)
    for size in args.sizes.split(","):
        make = {
            "cpu": lambda: Trainer("cpu", "strict", size),
            "inductor": lambda: Trainer("cpu", "strict", size, backend="inductor"),
            "cuda": lambda: Trainer("cuda", "strict", size),
            "inductor-cuda": lambda: Trainer("cuda", "strict", size, backend="inductor"),
            "strict": lambda: Trainer("tpu", "strict", size),
            "defer": lambda: Trainer("tpu", "defer_and_fuse", size),
            "compiled": lambda: Trainer("tpu", "strict", size, backend="tpu"),
            "jax": lambda: JaxFloor(size),
        }
        trainers = {name: make[name]() for name in columns}
        for t in trainers.values():
            t.run(3)  # warm-up: compiles, region executables, allocator
        launches = {k: trainers[k].executions_per_step(2) for k in ("strict", "defer", "compiled")}
        best = {k: float("inf") for k in trainers}
        for _ in range(args.repeats):
            for name, t in trainers.items():
                best[name] = min(best[name], t.run(args.steps))
        row = f"{size:<6}" + "".join(f"{best[c] * 1e3:>13.1f}" for c in columns)
        row += f"{best['strict'] / best['defer']:>12.2f}x"
        row += f"{best['strict'] / best['compiled']:>15.2f}x"
        inductor = best.get("inductor")
        row += f"{inductor / best['compiled']:>17.2f}x" if inductor else f"{'-':>18}"
        jax = best.get("jax")
        if jax:
            row += f"{best['strict'] / jax:>10.2f}x{jax / best['compiled']:>12.2f}x"
        else:
            row += f"{'-':>11}{'-':>13}"
        if "cuda" in columns:
            row += "".join(f"{best[c] / best['compiled']:>{len(c) + 10}.2f}x" for c in cuda_columns)
        row += f"{launches['strict']:>16.1f}{launches['defer']:>7.1f}{launches['compiled']:>9.1f}"
        print(row, flush=True)
        if "jax" in trainers:
            trainers["jax"].close()


if __name__ == "__main__":
    main()

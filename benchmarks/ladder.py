"""One GPT training step in three executors, side by side in one run:
PyTorch CPU eager, tpu Strict and tpu DeferAndFuse, at a small and a mid size.

Run: python benchmarks/ladder.py [--repeats 5] [--steps 3] [--sizes small,mid]

A step is forward, cross-entropy, backward, clip_grad_norm_(1.0) and an
AdamW update (the default for-each implementation: many small ops, the case
DeferAndFuse is for). Each executor is warmed up for three steps (tpu
compiles its programs, DeferAndFuse its regions), then timed over --steps
steps, --repeats times; the best repeat counts. A tpu timing ends with
torch.tpu.synchronize(). The executors alternate within each repeat so that
machine noise hits them alike. Also printed: programs launched per step in
each tpu mode (torch_tpu.debug.metrics()["executions"]).

Issue 11's target: DeferAndFuse at least 1.5x faster than Strict at the small
size (the "strict/defer" column).
"""

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from model_zoo import GPT, gpt_train_step  # noqa: E402

SIZES = {
    # name: (vocab, seq, d_model, heads, layers, batch)
    "small": (128, 32, 64, 4, 2, 8),
    "mid": (512, 128, 256, 8, 4, 8),
}


class Trainer:
    """A model, its optimizer and a batch on one device, in one eager mode."""

    def __init__(self, device, mode, size):
        vocab, seq, d, heads, layers, batch = SIZES[size]
        self.device, self.mode = device, mode
        torch.manual_seed(0)
        self.model = GPT(vocab=vocab, ctx=seq, d=d, heads=heads, layers=layers, p=0.0).to(device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.idx = torch.randint(0, vocab, (batch, seq + 1)).to(device)

    def _step(self):
        return gpt_train_step(self.model, self.opt, self.idx)

    def run(self, steps):
        """Seconds per step over `steps` steps."""
        import torch_tpu

        if self.device == "cpu":
            start = time.perf_counter()
            for _ in range(steps):
                self._step()
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sizes", default="small,mid")
    args = parser.parse_args()
    import torch_tpu  # noqa: F401  (registers the device)

    print(
        f"{'size':<6} {'cpu ms':>9} {'strict ms':>10} {'defer ms':>9} "
        f"{'strict/defer':>13} {'defer/cpu':>10} {'launches strict':>16} {'launches defer':>15}"
    )
    for size in args.sizes.split(","):
        trainers = {
            "cpu": Trainer("cpu", "strict", size),
            "strict": Trainer("tpu", "strict", size),
            "defer": Trainer("tpu", "defer_and_fuse", size),
        }
        for t in trainers.values():
            t.run(3)  # warm-up: compiles, region executables, allocator
        launches = {k: trainers[k].executions_per_step(2) for k in ("strict", "defer")}
        best = {k: float("inf") for k in trainers}
        for _ in range(args.repeats):
            for name, t in trainers.items():
                best[name] = min(best[name], t.run(args.steps))
        print(
            f"{size:<6} {best['cpu'] * 1e3:>9.1f} {best['strict'] * 1e3:>10.1f} "
            f"{best['defer'] * 1e3:>9.1f} {best['strict'] / best['defer']:>12.2f}x "
            f"{best['defer'] / best['cpu']:>9.2f}x {launches['strict']:>16.1f} "
            f"{launches['defer']:>15.1f}"
        )


if __name__ == "__main__":
    main()

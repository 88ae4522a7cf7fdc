"""GPT-style training step time: tpu Strict eager vs PyTorch CPU eager,
measured side by side in one run, at two sizes (tiny, and about 25M
parameters).

Run: python benchmarks/train_step.py [--steps 3] [--sizes tiny,25m]

A step is forward, cross-entropy, backward, clip_grad_norm_ and a fused
AdamW update. Each backend is warmed up (tpu compiles its programs in the
first step), then timed over --steps steps; the tpu timing ends with
torch.tpu.synchronize(). Ratio = tpu step time / CPU step time (issue
target <= 1.5x at 25M). CPU runs first for each size: the XLA CPU plugin's
worker threads keep spinning briefly after tpu work and would slow CPU.
"""

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from model_zoo import GPT, gpt_train_step  # noqa: E402

SIZES = {
    # name: (vocab, ctx, d_model, heads, layers, batch)
    "tiny": (64, 16, 32, 4, 2, 4),
    "25m": (4096, 128, 512, 8, 7, 8),
}


def step_time(device, size, steps):
    vocab, ctx, d, heads, layers, batch = SIZES[size]
    torch.manual_seed(0)
    model = GPT(vocab=vocab, ctx=ctx, d=d, heads=heads, layers=layers, p=0.1).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, vocab, (batch, ctx + 1)).to(device)
    sync = torch.tpu.synchronize if device == "tpu" else (lambda: None)

    def step():
        return gpt_train_step(model, opt, idx)

    for _ in range(2):
        step()
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step()
    sync()
    elapsed = (time.perf_counter() - start) / steps
    params = sum(p.numel() for p in model.parameters())
    return elapsed, params, loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sizes", default="tiny,25m")
    args = parser.parse_args()
    import torch_tpu  # noqa: F401  (registers the device)

    print(f"{'model':<8} {'params':>10} {'cpu ms/step':>12} {'tpu ms/step':>12} {'ratio':>7}")
    for size in args.sizes.split(","):
        cpu, params, _ = step_time("cpu", size, args.steps)
        tpu, _, _ = step_time("tpu", size, args.steps)
        print(f"{size:<8} {params / 1e6:>9.2f}M {cpu * 1e3:>12.1f} {tpu * 1e3:>12.1f} "
              f"{tpu / cpu:>6.2f}x")


if __name__ == "__main__":
    main()

"""One optimizer step over a GPT's parameters, side by side: PyTorch CPU
(for-each and fused kernels) and tpu (for-each in Strict and DeferAndFuse,
fused in Strict), for AdamW and SGD with momentum, at the small and mid
sizes of benchmarks/ladder.py.

Run: python benchmarks/optimizer_step.py [--repeats 5] [--steps 20] [--sizes small,mid]

Gradients are fixed random tensors (no forward/backward: the step alone is
timed). Each column is warmed up (tpu compiles; eager_overhead.per_call),
then timed over --steps steps, --repeats times; the best repeat counts; a tpu timing
ends with torch.tpu.synchronize(). Printed per size and optimizer: ms per
step, programs launched per tpu step, and "cpu/x": CPU's fused step over
column x's (above 1: x is faster than CPU's fastest).
"""

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from eager_overhead import per_call  # noqa: E402
from ladder import SIZES  # noqa: E402
from model_zoo import GPT  # noqa: E402

OPTIMIZERS = {
    "AdamW": lambda params, **kw: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw),
    "SGD": lambda params, **kw: torch.optim.SGD(params, lr=1e-2, momentum=0.9, **kw),
}

# (column, device, tpu eager mode, optimizer keyword)
COLUMNS = [
    ("cpu foreach", "cpu", None, dict(foreach=True)),
    ("cpu fused", "cpu", None, dict(fused=True)),
    ("tpu foreach", "tpu", "strict", dict(foreach=True)),
    ("tpu defer", "tpu", "defer_and_fuse", dict(foreach=True)),
    ("tpu fused", "tpu", "strict", dict(fused=True)),
]


def make_step(size, device, opt_name, kw):
    vocab, seq, d, heads, layers, _ = SIZES[size]
    torch.manual_seed(0)
    model = GPT(vocab=vocab, ctx=seq, d=d, heads=heads, layers=layers, p=0.0).to(device)
    for p in model.parameters():
        p.grad = torch.randn_like(p) * 1e-2
    opt = OPTIMIZERS[opt_name](model.parameters(), **kw)
    return opt.step


def time_column(step, device, mode, steps, repeats):
    """(best seconds per step, programs per tpu step or None)."""
    if device == "cpu":
        return per_call(step, steps, repeats), None
    import torch_tpu
    from torch_tpu import debug

    with torch_tpu.eager_mode(mode):
        best = per_call(step, steps, repeats, torch.tpu.synchronize)
        before = debug.metrics()["executions"]
        step()
        torch.tpu.synchronize()
        return best, debug.metrics()["executions"] - before


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--sizes", default="small,mid")
    args = parser.parse_args()
    names = [c[0] for c in COLUMNS]
    print("ms per optimizer step; launches: programs per tpu step; cpu/x: CPU fused over x")
    header = f"{'size':<6} {'optimizer':<9}" + "".join(f" {n + ' ms':>15}" for n in names)
    header += "".join(f" {'launches ' + n[4:]:>17}" for n in names if n.startswith("tpu"))
    header += "".join(f" {'cpu/' + n[4:]:>13}" for n in names if n.startswith("tpu"))
    print(header)
    for size in args.sizes.split(","):
        for opt_name in OPTIMIZERS:
            times, launches = {}, {}
            for name, device, mode, kw in COLUMNS:
                step = make_step(size, device, opt_name, kw)
                times[name], launches[name] = time_column(step, device, mode, args.steps,
                                                          args.repeats)
            row = f"{size:<6} {opt_name:<9}" + "".join(f" {times[n] * 1e3:>15.3f}" for n in names)
            row += "".join(f" {launches[n]:>17}" for n in names if n.startswith("tpu"))
            row += "".join(f" {times['cpu fused'] / times[n]:>12.2f}x" for n in names
                           if n.startswith("tpu"))
            print(row, flush=True)


if __name__ == "__main__":
    main()

"""Per-op latency on small tensors: tpu Strict eager vs PyTorch CPU eager,
measured side by side in one run.

Run: python benchmarks/eager_overhead.py [--size 64] [--iters 2000]

Each op is warmed up (so compilation is excluded: the executable cache is
hit), then timed over N calls; the tpu loop ends with torch.tpu.synchronize()
so queued work is included. Each measurement is repeated (--repeats) and the
fastest repeat is reported, for CPU and tpu alike: on a shared 2-core machine
single runs swing by 2x with the neighbours' load, and the minimum is the
cost of the op itself (as timeit reports it). Ratio = tpu time / CPU time
(issue target <= 4x).
All CPU timings run before any tpu work: the XLA CPU plugin's worker threads
spin for a while after each program and would otherwise slow PyTorch's own
CPU threads on a small machine.
"""

import argparse
import time

import torch


def per_call(fn, iters, repeats, sync=None):
    for _ in range(20):
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.size
    cpu = {"x": torch.randn(n, n), "y": torch.randn(n, n), "v": torch.randn(n)}
    ops = {
        "add": lambda t: t["x"] + t["y"],
        "mul_scalar": lambda t: t["x"] * 1.5,
        "relu": lambda t: torch.relu(t["x"]),
        "exp": lambda t: torch.exp(t["x"]),
        "add_ (in-place)": lambda t: t["x"].add_(t["y"], alpha=0.0),
        "sum": lambda t: t["x"].sum(),
        "mean(dim)": lambda t: t["x"].mean(1),
        "mm": lambda t: t["x"] @ t["y"],
        "softmax": lambda t: torch.softmax(t["x"], 1),
        "slice copy": lambda t: t["x"][:, 1:5].contiguous(),
    }
    print(f"tensors {n}x{n} float32, {args.iters} calls per op, best of {args.repeats}")
    print(f"{'op':<18} {'cpu us':>9} {'tpu us':>9} {'ratio':>7}")
    cpu_times = {name: per_call(lambda: fn(cpu), args.iters, args.repeats) for name, fn in ops.items()}
    tpu = {k: v.to("tpu") for k, v in cpu.items()}
    ratios = []
    for name, fn in ops.items():
        t_cpu = cpu_times[name]
        t_tpu = per_call(lambda: fn(tpu), args.iters, args.repeats, torch.tpu.synchronize)
        ratios.append(t_tpu / t_cpu)
        print(f"{name:<18} {t_cpu * 1e6:>9.1f} {t_tpu * 1e6:>9.1f} {t_tpu / t_cpu:>7.1f}")
    geo = 1.0
    for r in ratios:
        geo *= r
    print(f"geometric mean ratio: {geo ** (1 / len(ratios)):.1f}")
    print(f"worst ratio: {max(ratios):.1f} (target <= 4)")


if __name__ == "__main__":
    main()

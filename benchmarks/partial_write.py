"""The cost of a small write into a large tensor: 16 elements written
through a view (`big[k:k + 16] = v`, `big[k:k + 16].add_(1)`) into storages
of 64 KiB to 256 MiB, on tpu Strict and on PyTorch CPU eager, side by side
in one run.

Run: python benchmarks/partial_write.py [--iters 300] [--repeats 5]

The write donates the storage's buffer to its program, which updates it in
place, so the cost must not grow with the storage (issue target: 64 MiB at
most 3x the 64 KiB cost). Positions vary per call (a runtime argument, never
a recompile). Best of --repeats; PyTorch's threads pinned (--threads).
"""

import argparse
import time

import torch

import torch_tpu  # noqa: F401
from torch_tpu import debug


def per_call(fn, iters, repeats, sync=None):
    fn(0)
    if sync:
        sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for k in range(iters):
            fn(k)
        if sync:
            sync()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sizes = [64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20]
    print(f"16-element writes, best of {args.repeats}; torch threads {torch.get_num_threads()}")
    print(f"{'storage':>10} {'op':<10} {'cpu us':>8} {'tpu us':>8} {'tpu/cpu':>8} {'vs 64 KiB':>10}")
    first = {}
    for nbytes in sizes:
        n = nbytes // 4
        for name in ("assign", "add_"):
            if name == "assign":
                def op(big, v, k):
                    big[k : k + 16] = v
            else:
                def op(big, v, k):
                    big[k : k + 16].add_(1)
            cpu_big, cpu_v = torch.zeros(n), torch.ones(16)
            t_cpu = per_call(lambda k: op(cpu_big, cpu_v, k), args.iters, args.repeats)
            big, v = torch.zeros(n, device="tpu"), torch.ones(16, device="tpu")
            big.add_(0)  # materialize: the loop measures writes, not the first fill
            t_tpu = per_call(lambda k: op(big, v, k), args.iters, args.repeats, torch.tpu.synchronize)
            first.setdefault(name, t_tpu)
            label = f"{nbytes >> 10} KiB" if nbytes < 1 << 20 else f"{nbytes >> 20} MiB"
            print(
                f"{label:>10} {name:<10} {t_cpu * 1e6:>8.1f} {t_tpu * 1e6:>8.1f} "
                f"{t_tpu / t_cpu:>8.1f} {t_tpu / first[name]:>10.2f}"
            )
            del big, cpu_big
    m = debug.metrics()
    print(f"buffers donated {m['donated_buffers']}, copied {m['undonatable_buffers']}")


if __name__ == "__main__":
    main()

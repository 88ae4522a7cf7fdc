"""User kernels (torch_tpu.kernels) against the native ops they stand in
for, side by side in one run.

Run: python benchmarks/kernels.py [--size 64] [--iters 2000] [--repeats 5]

Three elementwise functions written in JAX (`x + y`, `exp(x) * y`, GELU
with tanh) and the same math as PyTorch ops on tpu:
- per call in Strict: each a single call (one program for the kernel; the
  native column is the one ATen op for add, and the op sequence otherwise),
  us per call, and kernel/native (target <= 1.2 for the one-op case);
- inside a compiled graph (`torch.compile(backend="tpu")` of a function
  that calls the kernel between native ops): programs launched per call of
  the graph, kernel and native versions alike (target: no extra program),
  and us per call.
Each is warmed up (lowered and compiled) first; the best of --repeats
timings counts; a tpu timing ends with torch.tpu.synchronize().
"""

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eager_overhead import per_call  # noqa: E402

import torch_tpu.kernels as kernels  # noqa: E402
from torch_tpu import debug  # noqa: E402


def jax_functions():
    import jax
    import jax.numpy as jnp

    return {
        "add": (kernels.jax_kernel(lambda x, y: x + y, name="add"), lambda x, y: x + y),
        "exp_mul": (kernels.jax_kernel(lambda x, y: jnp.exp(x) * y, name="exp_mul"),
                    lambda x, y: torch.exp(x) * y),
        "gelu_tanh": (kernels.jax_kernel(lambda x, y: jax.nn.gelu(x, approximate=True) + y,
                                         name="gelu_tanh"),
                      lambda x, y: torch.nn.functional.gelu(x, approximate="tanh") + y),
    }


def launches(fn):
    torch.tpu.synchronize()
    before = debug.metrics()["executions"]
    fn()
    torch.tpu.synchronize()
    return debug.metrics()["executions"] - before


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.size
    x, y = torch.randn(n, n).to("tpu"), torch.randn(n, n).to("tpu")
    sync = torch.tpu.synchronize
    print(f"{n}x{n} float32, us per call (best of {args.repeats} x {args.iters})")
    print(f"{'function':<10}{'native':>9}{'kernel':>9}{'kernel/native':>15}"
          f"{'compiled native':>17}{'compiled kernel':>17}{'programs n/k':>14}")
    for name, (kernel, native) in jax_functions().items():
        torch.testing.assert_close(kernel(x, y).cpu(), native(x, y).cpu(), atol=1e-5, rtol=1e-5)
        eager_native = per_call(lambda: native(x, y), args.iters, args.repeats, sync) * 1e6
        eager_kernel = per_call(lambda: kernel(x, y), args.iters, args.repeats, sync) * 1e6

        def graph(f):
            return torch.compile(lambda a, b: (f(a * 2, b) + 1).sum(0), backend="tpu")

        compiled = {}
        for label, f in (("native", native), ("kernel", kernel)):
            g = graph(f)
            torch.testing.assert_close(g(x, y).cpu(), (native(x * 2, y) + 1).sum(0).cpu(),
                                       atol=1e-4, rtol=1e-5)
            compiled[label] = (per_call(lambda: g(x, y), args.iters // 4, args.repeats, sync) * 1e6,
                               launches(lambda: g(x, y)))
        print(f"{name:<10}{eager_native:>9.1f}{eager_kernel:>9.1f}{eager_kernel / eager_native:>15.2f}"
              f"{compiled['native'][0]:>17.1f}{compiled['kernel'][0]:>17.1f}"
              f"{compiled['native'][1]:>9} / {compiled['kernel'][1]}")


if __name__ == "__main__":
    main()

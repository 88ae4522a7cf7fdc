"""Per-op latency on small tensors: tpu Strict eager vs PyTorch CPU eager,
measured side by side in one run.

Run: python benchmarks/eager_overhead.py [--size 64] [--iters 2000] [--threads 2]

Each op is warmed up (so compilation is excluded: the executable cache is
hit), then timed over N calls; the tpu loop ends with torch.tpu.synchronize()
so queued work is included. Each measurement is repeated (--repeats) and the
fastest repeat is reported, for CPU and tpu alike: on a shared 2-core machine
single runs swing by 2x with the neighbours' load, and the minimum is the
cost of the op itself (as timeit reports it). Ratio = tpu time / CPU time;
the targets: a median <= 2.5 (goal 2), no op above 4. PyTorch's intra-op
thread count is pinned (--threads) and printed; the XLA CPU plugin runs its
programs on its own pool.
All CPU timings run before any tpu work: the XLA CPU plugin's worker threads
spin for a while after each program and would otherwise slow PyTorch's own
CPU threads on a small machine.

Targets (issue 31): median <= 1.5, worst <= 3.

Two more figures come with the table:
- the PJRT launch floor: benchmarks/launch_floor.cc (built as
  tpu_launch_floor) launches a 64x64 add, exp and sum through the same
  plugin with nothing of PyTorch or torch_tpu around it; a Strict op can not
  cost less than its one launch.
- the allocator: with glibc's malloc the plugin's worker threads and the
  launching thread contend for the allocator on every launch. By default
  (--allocators glibc,jemalloc) the table is measured once per allocator,
  each in a child process of its own (jemalloc through
  LD_PRELOAD=libjemalloc.so.2, CPU and tpu alike; Debian's libjemalloc2,
  which scripts/setup.sh installs); --allocators current measures in this
  process.
"""

import argparse
import glob
import os
import subprocess
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def jemalloc_path():
    found = sorted(glob.glob("/usr/lib/*-linux-gnu/libjemalloc.so.2"))
    return found[0] if found else None


def allocator_in_use():
    with open("/proc/self/maps") as maps:
        return "jemalloc" if "libjemalloc" in maps.read() else "glibc"


def launch_floor(plugin_path, iters):
    """{program: (wall us, launching thread's CPU us)} from tpu_launch_floor,
    or None when it is not built."""
    found = glob.glob(os.path.join(ROOT, "build", "*", "tpu_launch_floor"))
    if not found:
        return None
    env = dict(os.environ, TORCH_TPU_PJRT_PLUGIN=plugin_path)
    out = subprocess.run(
        [found[0], str(iters)], env=env, capture_output=True, text=True, check=True
    ).stdout
    return {name: (float(wall), float(cpu)) for name, wall, cpu in (line.split() for line in out.splitlines())}


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
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated op names (profiling)")
    parser.add_argument(
        "--allocators",
        default="glibc,jemalloc",
        help="one table per allocator, each in a child process (glibc, jemalloc); "
        "'current': this process's only",
    )
    args = parser.parse_args()
    if args.allocators == "current":
        table(args)
        return
    # One child process per allocator, this one doing no tpu work: a
    # process's plugin threads keep spinning for a while after its last
    # program and would slow the next table's CPU timings.
    rest, skip = [], False
    for a in sys.argv[1:]:
        if skip or a.startswith("--allocators"):
            skip = a == "--allocators"
            continue
        rest.append(a)
    for i, allocator in enumerate(args.allocators.split(",")):
        if i:
            print()
        env = dict(os.environ)
        preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and "jemalloc" not in p]
        if allocator == "jemalloc":
            library = jemalloc_path()
            if library is None:
                print("jemalloc: not installed (Debian's libjemalloc2; scripts/setup.sh installs it)")
                continue
            preload.append(library)
        elif allocator != "glibc":
            sys.exit(f"--allocators: unknown allocator {allocator!r} (glibc, jemalloc)")
        env["LD_PRELOAD"] = ":".join(preload)
        sys.stdout.flush()
        subprocess.run([sys.executable, __file__, *rest, "--allocators", "current"], env=env, check=True)


def table(args):
    torch.set_num_threads(args.threads)
    n = args.size
    cpu = {
        "x": torch.randn(n, n),
        "y": torch.randn(n, n),
        "v": torch.randn(n),
        "m": torch.randn(n, n) > 0,
        "w": torch.randn(n),
        "b": torch.randn(n),
    }
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
        "where": lambda t: torch.where(t["m"], t["x"], t["y"]),
        "layer_norm": lambda t: torch.nn.functional.layer_norm(t["x"], (n,), t["w"], t["b"]),
    }
    if args.only:
        ops = {k: v for k, v in ops.items() if k in args.only.split(",")}
    print(
        f"tensors {n}x{n} float32, {args.iters} calls per op, best of {args.repeats}; "
        f"torch intra-op threads {torch.get_num_threads()}; allocator {allocator_in_use()}"
    )
    print(f"{'op':<18} {'cpu us':>9} {'tpu us':>9} {'ratio':>7}")
    # The bare launch first, while this process has launched nothing.
    floor = launch_floor(torch.tpu.get_device_properties().plugin_path, args.iters * 5)
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
    ordered = sorted(ratios)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    print(f"median ratio: {median:.2f} (target <= 1.5)")
    print(f"geometric mean ratio: {geo ** (1 / len(ratios)):.2f}")
    print(f"worst ratio: {max(ratios):.2f} (target <= 3)")
    if floor is None:
        print("PJRT launch floor: tpu_launch_floor not built (scripts/setup.sh builds it)")
        return
    figures = ", ".join(f"{name} {wall:.1f} us (thread {cpu:.1f})" for name, (wall, cpu) in floor.items())
    print(f"PJRT launch alone, no PyTorch (benchmarks/launch_floor.cc): {figures}")
    if "add" in cpu_times:
        print(f"  one launch of an add is {floor['add'][0] / (cpu_times['add'] * 1e6):.2f}x CPU eager's whole add")

if __name__ == "__main__":
    main()

"""Memory held by compiled executables when a process keeps making new
programs (new shapes): resident memory and executables held after N distinct
programs, with the cache capped (TORCH_TPU_MAX_CACHED_EXECUTABLES) and
uncapped, side by side in one run (each in its own child process).

Run: python benchmarks/executable_cache.py [--programs 3000] [--cap 256]

Each program is `x + 1` on a new length, so each compiles once and is never
used again: the worst case for an unbounded cache. "uncapped" sets the cap
above --programs.
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = """
import json, sys, time, torch, torch_tpu
from torch_tpu import debug

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

n = int(sys.argv[1])
torch.ones(1, device="tpu").cpu()
start_rss, start = rss_mb(), time.perf_counter()
for i in range(1, n + 1):
    (torch.empty(i, device="tpu") + 1).cpu()
m = debug.metrics()
json.dump({"rss_mb": rss_mb() - start_rss, "held": m["cached_executables"],
           "evictions": m["executable_evictions"], "compiles": m["compiles"],
           "seconds": time.perf_counter() - start}, sys.stdout)
"""


def run(programs, cap):
    env = dict(os.environ, TORCH_TPU_MAX_CACHED_EXECUTABLES=str(cap))
    out = subprocess.run([sys.executable, "-c", CHILD, str(programs)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=3000)
    parser.add_argument("--cap", type=int, default=256)
    args = parser.parse_args()
    capped = run(args.programs, args.cap)
    uncapped = run(args.programs, 10 * args.programs)
    print(f"{args.programs} distinct programs (x + 1 on a new length each)")
    print(f"{'':<22} {'held':>6} {'evictions':>10} {'compiles':>9} {'RSS growth':>11} {'time':>8}")
    for name, r in ((f"cap {args.cap}", capped), ("uncapped", uncapped)):
        print(f"{name:<22} {r['held']:>6} {r['evictions']:>10} {r['compiles']:>9} "
              f"{r['rss_mb']:>9.0f}MB {r['seconds']:>7.1f}s")
    print(f"RSS growth capped / uncapped: {capped['rss_mb'] / max(uncapped['rss_mb'], 1e-9):.2f}")


if __name__ == "__main__":
    main()

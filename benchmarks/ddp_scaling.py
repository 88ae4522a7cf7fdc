"""tpu_dist at 1 and 2 processes, side by side with Gloo on CPU tensors.

Run: python benchmarks/ddp_scaling.py [--procs 1,2] [--repeats 5]

For each process count it starts `torchrun --standalone` on this script
with one process group "cpu:gloo,tpu:tpu_dist", so the tpu tensors go
through tpu_dist and the CPU tensors through Gloo in the same run, and
prints from rank 0:

  * all_reduce of 1 MiB and 16 MiB of float32: time per call and bus
    bandwidth (bytes x 2(n-1)/n per second, the usual all-reduce measure),
    tpu_dist vs Gloo; the ratio is tpu_dist time / Gloo time (the cost of
    staging through host memory and of the call check).
  * one DDP training step of a small GPT (AdamW, each rank its own batch of
    8): tpu Strict vs PyTorch CPU eager, and the step time at n processes
    over 1 process (weak scaling: 1.0 is perfect).

Best of --repeats; thread counts are printed. On this 2-core machine two
processes share two cores, so the 2-process figures include that contention
on both sides.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SIZES_MIB = (1, 16)
GPT_SIZE = dict(vocab=256, ctx=64, d=128, heads=4, layers=2, p=0.0)
BATCH = 8


def timed(fn, repeats, inner):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def worker(repeats):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from model_zoo import GPT, gpt_loss

    dist.init_process_group("cpu:gloo,tpu:tpu_dist")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {"procs": world, "torch_threads": torch.get_num_threads(), "all_reduce": {}}
    for mib in SIZES_MIB:
        n = mib * (1 << 20) // 4
        row = {}
        for name, device in (("tpu", "tpu"), ("cpu", "cpu")):
            x = torch.ones(n, device=device)

            def reduce_once(x=x):
                dist.all_reduce(x)

            reduce_once()
            seconds = timed(reduce_once, repeats, 3)
            row[name] = seconds
        result["all_reduce"][mib] = row

    def ddp_step_time(device):
        torch.manual_seed(0)
        model = DDP(GPT(**GPT_SIZE).to(device))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        g = torch.Generator().manual_seed(rank)
        idx = torch.randint(0, GPT_SIZE["vocab"], (BATCH, GPT_SIZE["ctx"]), generator=g).to(device)

        def step():
            opt.zero_grad()
            gpt_loss(model, idx).backward()
            opt.step()
            if device == "tpu":
                torch.tpu.synchronize()

        for _ in range(3):
            step()
        return timed(step, repeats, 2)

    result["ddp_step"] = {"tpu": ddp_step_time("tpu"), "cpu": ddp_step_time("cpu")}
    dist.barrier()
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def launch(procs, repeats):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc-per-node={procs}", __file__, "--worker", "--repeats", str(repeats)]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--procs", default="1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()
    if args.worker:
        worker(args.repeats)
        return
    results = [launch(int(p), args.repeats) for p in args.procs.split(",")]
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '1')} per process, "
          f"torch threads {results[0]['torch_threads']}")
    print(f"{'procs':>5} {'size':>7} {'tpu_dist ms':>12} {'gloo ms':>9} {'tpu/gloo':>9} "
          f"{'tpu_dist GB/s':>14} {'gloo GB/s':>10}")
    for r in results:
        n = r["procs"]
        for mib, row in r["all_reduce"].items():
            nbytes = int(mib) * (1 << 20)
            bus = nbytes * 2 * (n - 1) / n if n > 1 else 0.0
            print(f"{n:>5} {mib + ' MiB':>7} {row['tpu'] * 1e3:>12.2f} {row['cpu'] * 1e3:>9.2f} "
                  f"{row['tpu'] / row['cpu']:>8.2f}x {bus / row['tpu'] / 1e9:>14.2f} "
                  f"{bus / row['cpu'] / 1e9:>10.2f}")
    print()
    base = results[0]["ddp_step"]
    print(f"{'procs':>5} {'DDP step tpu ms':>16} {'cpu ms':>8} {'tpu/cpu':>8} "
          f"{'tpu weak scaling':>17} {'cpu weak scaling':>17}")
    for r in results:
        s = r["ddp_step"]
        print(f"{r['procs']:>5} {s['tpu'] * 1e3:>16.1f} {s['cpu'] * 1e3:>8.1f} "
              f"{s['tpu'] / s['cpu']:>7.2f}x {base['tpu'] / s['tpu']:>17.2f} "
              f"{base['cpu'] / s['cpu']:>17.2f}")


if __name__ == "__main__":
    main()

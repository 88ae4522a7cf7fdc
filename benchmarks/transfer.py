"""Host<->device transfer throughput, 1 KiB to 256 MiB, next to a plain
PyTorch CPU copy of the same size, measured side by side in one run.

Run: python benchmarks/transfer.py [--max-mib 256] [--repeats N]

Columns: GB/s of host->tpu (`t.to("tpu")` then synchronize), tpu->host
(`x.cpu()`), and a plain PyTorch CPU copy (`src.clone()`: a new tensor, like
the transfers make), then each transfer's throughput as a ratio of the CPU
copy's (1.0 = as fast as copying within host memory).
"""

import argparse
import time

import torch


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=0, help="0: adapt to size")
    args = parser.parse_args()

    props = torch.tpu.get_device_properties(0)
    print(f"device: {props.name} ({props.platform}, PJRT {props.pjrt_api_version})")
    header = (f"{'size':>9} {'h2d GB/s':>10} {'d2h GB/s':>10} {'cpu GB/s':>10} "
              f"{'h2d/cpu':>8} {'d2h/cpu':>8}")
    print(header)
    print("-" * len(header))
    size = 1024
    while size <= args.max_mib * 1024 * 1024:
        repeats = args.repeats or max(10, min(200, (64 << 20) // size))
        src = torch.randint(0, 255, (size,), dtype=torch.uint8)
        dev = src.to("tpu")
        torch.tpu.synchronize()

        def h2d():
            src.to("tpu")
            torch.tpu.synchronize()

        t_h2d = best_of(h2d, repeats)
        t_d2h = best_of(lambda: dev.cpu(), repeats)
        t_cpu = best_of(lambda: src.clone(), repeats)
        assert torch.equal(dev.cpu(), src)
        gbs = [size / t / 1e9 for t in (t_h2d, t_d2h, t_cpu)]
        label = f"{size // 1024} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        print(f"{label:>9} {gbs[0]:>10.2f} {gbs[1]:>10.2f} {gbs[2]:>10.2f} "
              f"{gbs[0] / gbs[2]:>8.2f} {gbs[1] / gbs[2]:>8.2f}")
        size *= 4


if __name__ == "__main__":
    main()

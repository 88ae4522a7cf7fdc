"""Where a program's time goes, kernel by kernel.

Takes the StableHLO programs torch_tpu compiled (the stderr of a run with
TORCH_TPU_DUMP_HLO=1 and TORCH_TPU_CACHE_DIR= so that nothing comes from the
disk cache), runs each through jaxlib's XLA CPU (jaxlib comes with the test
dependencies) on arguments of the right shapes, and prints its time per run
and its costliest kernels (XLA's fusions, dots, copies), from an XLA trace.

    TORCH_TPU_DUMP_HLO=1 TORCH_TPU_CACHE_DIR= python3 my_step.py 2> dump.txt
    python3 tools/kernel_profile.py dump.txt [--min-chars 20000] [--top 15]

jaxlib's XLA is not the default plugin's version: take the kernels' shares
as the guide, not their absolute times. Argument values are small random
floats and zero integers (an index program may take other branches than in
the real run).
"""

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys
import tempfile
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_enable_xprof_traceme=true")

import numpy as np  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
          "i32": np.int32, "i16": np.int16, "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}


def programs(dump: str, min_chars: int):
    """(label, module text) for each program of the dump."""
    for part in dump.split("[torch_tpu] compiling ")[1:]:
        label, body = part.split("\n", 1)
        module = body[:body.find("\n}\n") + 3]
        if len(module) >= min_chars:
            yield label, module


def arguments(module: str, device):
    """Arguments for the module's main, of the right shapes and types."""
    signature = re.search(r"func\.func public @main\((.*?)\) ->", module, re.S).group(1)
    args = []
    for spec in re.findall(r"tensor<([^>]*)>", signature):
        *dims, element = spec.split("x")
        shape = [int(d) for d in dims]
        dtype = DTYPES[element]
        if np.issubdtype(dtype, np.floating):
            value = np.asarray(np.random.rand(*shape) * 0.01, dtype)
        else:
            value = np.zeros(shape, dtype)
        args.append(jax.device_put(value, device))
    return args


def profile(module: str, runs: int, top: int):
    # (no donation: the same arguments serve every run)
    module = re.sub(r" \{tf\.aliasing_output = \d+ : i32\}", "", module)
    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    exe = backend.compile_and_load(module, xla_client.DeviceList((device,)),
                                   xla_client.CompileOptions())
    args = arguments(module, device)
    for _ in range(10):
        out = exe.execute(args)
    jax.block_until_ready(out)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            out = exe.execute(args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / runs)
    with tempfile.TemporaryDirectory() as trace_dir:
        jax.profiler.start_trace(trace_dir, create_perfetto_trace=True)
        for _ in range(runs):
            out = exe.execute(args)
        jax.block_until_ready(out)
        jax.profiler.stop_trace()
        trace = sorted(glob.glob(f"{trace_dir}/**/*.trace.json.gz", recursive=True))[-1]
        events = json.load(gzip.open(trace))["traceEvents"]
    total = collections.Counter()
    for e in events:
        name = e.get("name", "")
        # kernels only: XLA's own instruction names (fusions, dots, copies)
        if e.get("ph") == "X" and re.fullmatch(r"[a-z_\-]+(\.\d+)?", name):
            total[name] += e.get("dur", 0)
    print(f"  {best * 1e3:.3f} ms per run; costliest kernels (us per run):")
    for name, dur in total.most_common(top):
        print(f"  {dur / runs:9.1f}  {name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dump", help="stderr of a run with TORCH_TPU_DUMP_HLO=1")
    parser.add_argument("--min-chars", type=int, default=20000,
                        help="skip programs shorter than this (single ops)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    with open(args.dump) as f:
        dump = f.read()
    for i, (label, module) in enumerate(programs(dump, args.min_chars)):
        print(f"program {i}: {label} ({len(module)} chars)")
        profile(module, args.runs, args.top)
        sys.stdout.flush()


if __name__ == "__main__":
    main()

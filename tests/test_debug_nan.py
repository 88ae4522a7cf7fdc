"""TORCH_TPU_DEBUG_NAN=1 raises at the first op that produces NaN or Inf,
naming it; without the variable the same code runs and yields NaN, as on
CPU. (The variable is read once per process, hence the subprocesses.)"""

import os
import subprocess
import sys

SCRIPT = r"""
import torch, torch_tpu
x = torch.tensor([1.0, 0.0, -1.0], device="tpu")
y = (x * 2).sum()            # finite: no error
try:
    torch.log(x)
    print("NO ERROR")
except RuntimeError as e:
    print("ERROR", str(e).splitlines()[0])
"""


def run(env_value):
    env = dict(os.environ)
    env.pop("TORCH_TPU_DEBUG_NAN", None)
    if env_value is not None:
        env["TORCH_TPU_DEBUG_NAN"] = env_value
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_debug_nan_raises_naming_the_op():
    line = run("1")
    assert line.startswith("ERROR TORCH_TPU_DEBUG_NAN: aten::log produced NaN"), line


def test_without_debug_nan_nan_flows_like_cpu():
    assert run(None) == "NO ERROR"

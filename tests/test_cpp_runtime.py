"""Runs the C++ runtime tests (tests/cpp, GoogleTest; no PyTorch inside)
against each installed CPU plugin: the one the header comes from (PJRT API
0.81) and a newer one (about 0.115), which exercises the forward-compatible
argument structs. TORCH_TPU_CPP_TEST_BINARY selects another build of the
binary (scripts/test.sh --asan points it at the sanitized one)."""

import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("TORCH_TPU_CPP_TEST_BINARY",
                        os.path.join(ROOT, "build", "cmake", "tpu_runtime_tests"))


def test_cpp_runtime(plugin_path):
    if not os.path.exists(BINARY):
        pytest.fail(f"{BINARY} was not built (is libgtest-dev installed?)")
    env = dict(os.environ, TORCH_TPU_PJRT_PLUGIN=plugin_path)
    result = subprocess.run([BINARY], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "[  PASSED  ]" in result.stdout

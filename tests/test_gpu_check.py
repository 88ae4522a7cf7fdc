"""scripts/gpu_check.sh, the check run once on a machine with an NVIDIA GPU,
kept working on the CPU plugin: its --quick form runs every step (device
properties, an eager test file, a model test, a one-step ladder) and must
pass, print its summary, and fail when a step fails."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check.sh")


def _run(tmp_path, **env):
    return subprocess.run(["bash", SCRIPT, "--quick"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, GPU_CHECK_DIR=str(tmp_path), **env))


def test_quick_check_passes_on_the_cpu_plugin(tmp_path):
    result = _run(tmp_path)
    out = result.stdout
    assert result.returncode == 0, out[-4000:] + result.stderr[-2000:]
    assert "chosen because: default XLA CPU plugin" in out
    assert "a matmul on tpu matches CPU" in out
    summary = out[out.index("== gpu_check summary"):]
    for step in ("properties", "eager_tests", "model_tests", "ladder"):
        assert f"{step} " in summary and "FAILED" not in summary, summary
        assert (tmp_path / f"{step}.log").exists()
    # The ladder printed a row of timings for the small size.
    ladder = (tmp_path / "ladder.log").read_text()
    assert any(line.startswith("small") for line in ladder.splitlines()), ladder


def test_a_failing_step_fails_the_check(tmp_path):
    # A plugin path that does not exist: every step that touches tpu fails
    # (two of them are enough to show it, and each costs a process start).
    result = _run(tmp_path, TORCH_TPU_PJRT_PLUGIN="/nonexistent/plugin.so",
                  GPU_CHECK_STEPS="properties ladder")
    assert result.returncode != 0
    summary = result.stdout[result.stdout.index("== gpu_check summary"):]
    assert "properties" in summary and "ladder" in summary, summary
    assert summary.count("FAILED") == 2 and "eager_tests" not in summary, summary

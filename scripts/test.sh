#!/usr/bin/env bash
# Runs the whole test suite. Exit code 5 (no tests collected) is a failure.
# It includes CI-sized runs of the fuzzers in tests/fuzz (sizes and seed from
# TORCH_TPU_FUZZ_PROGRAMS, TORCH_TPU_FUZZ_CALLS, TORCH_TPU_FUZZ_SEED); the long
# runs are commands, see README.md ("Fuzzing against the CPU").
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pytest -q tests "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit $rc

#!/usr/bin/env bash
# Runs the whole test suite. Exit code 5 (no tests collected) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m pytest -q tests "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit $rc

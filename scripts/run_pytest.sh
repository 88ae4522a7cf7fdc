# Sourced by scripts/test.sh and scripts/gpu_check.sh: pytest, quietly, where
# exit code 5 (no tests collected) is a failure, not a pass.
run_pytest() {
  python3 -m pytest -q "$@"
  local rc=$?
  if [ $rc -eq 5 ]; then
    echo "pytest collected no tests" >&2
    return 1
  fi
  return $rc
}

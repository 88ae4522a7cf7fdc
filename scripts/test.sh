#!/usr/bin/env bash
# Runs the whole test suite. Exit code 5 (no tests collected) is a failure.
#
#   scripts/test.sh [pytest args]   the suite, against the normal build
#   scripts/test.sh --asan          sanitizer job: builds the extension and the
#                                   C++ tests with ASan+UBSan in build/asan and
#                                   runs the C++ tests (both plugins) and a fast
#                                   Python subset with them (not part of CI: see
#                                   asan_job below for why and how long)
#
# It includes CI-sized runs of the fuzzers in tests/fuzz (sizes and seed from
# TORCH_TPU_FUZZ_PROGRAMS, TORCH_TPU_FUZZ_CALLS, TORCH_TPU_FUZZ_SEED); the long
# runs are commands, see README.md ("Fuzzing against the CPU").
set -uo pipefail
cd "$(dirname "$0")/.."

source scripts/run_pytest.sh

# The sanitized build lives in its own directory (TORCH_TPU_ASAN_BUILD_DIR,
# default build/asan) and puts the extension in its package/torch_tpu, next
# to links to the Python sources, so the normal build is never touched.
# A full build takes about 16 CPU-minutes (ccache makes rebuilds cheap);
# the runs take a few minutes more. That does not fit CI's budget next to
# the normal suite, so CI does not run it.
asan_job() {
  local build_dir="${TORCH_TPU_ASAN_BUILD_DIR:-build/asan}"
  local root="$PWD"
  local start=$SECONDS
  mkdir -p "$build_dir"
  if [ ! -f "$build_dir/build.ninja" ]; then
    cmake -S . -B "$build_dir" -G Ninja -DTORCH_TPU_SANITIZE=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
      -DPython3_EXECUTABLE="$(command -v python3)" || return 1
  fi
  ninja -C "$build_dir" -j "${TORCH_TPU_BUILD_JOBS:-$(nproc)}" || return 1
  echo "test.sh --asan: build done after $((SECONDS - start)) s"

  local package="$build_dir/package/torch_tpu"
  for f in torch_tpu/*; do
    case "$f" in *.so|*/__pycache__) continue ;; esac
    ln -sfn "$root/$f" "$package/$(basename "$f")"
  done

  # Reports go to files (pytest captures stderr, and a process that a
  # sanitizer stops loses what was captured); any report fails the job.
  local logs="$root/$build_dir/sanitizer-logs"
  rm -rf "$logs"
  mkdir -p "$logs"
  local suppressions="$root/scripts/lsan_suppressions.txt"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan"
  local rc=0

  # C++ tests (no PyTorch, no Python in the process): leak checking on, with
  # the plugins' own allocations suppressed.
  ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$logs/asan" \
    LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0" \
    TORCH_TPU_CPP_TEST_BINARY="$root/$build_dir/tpu_runtime_tests" \
    run_pytest tests/test_cpp_runtime.py || rc=1
  echo "test.sh --asan: C++ tests done after $((SECONDS - start)) s"

  # Python subset, with the ASan runtime preloaded into the interpreter (and
  # libstdc++ right after it: python does not link it, and ASan must find
  # the real __cxa_throw when it starts). Python, PyTorch and the XLA plugin
  # are not built for LeakSanitizer and leak by design at exit, so leak
  # checking is off here; the C++ tests cover leaks of csrc/pjrt.
  # allocator_may_return_null: the out-of-memory tests ask for absurd sizes.
  local subset=(tests/test_tensor_basics.py tests/test_device.py
                tests/test_views_differential.py tests/test_threads_events.py
                tests/test_bad_input.py tests/test_embedding_bag.py
                tests/test_module_apply.py tests/test_fuzz_regressions.py tests/test_hf_ops.py
                tests/test_positions_and_donation.py tests/test_transfers.py
                # a slice of the op tests: one of each kernel family
                tests/test_nn_ops.py::test_conv2d_padding_valid
                tests/test_nn_ops.py::test_layer_norm_module
                tests/test_nn_ops.py::test_max_pool2d_unbatched_and_module
                tests/test_nn_ops.py::test_embedding_module
                tests/test_nn_ops.py::test_sdpa_dropout
                tests/test_nn_ops.py::test_sort_int64
                tests/test_nn_ops.py::test_topk_grad_k1
                tests/test_nn_ops.py::test_rng_state_roundtrip
                tests/test_nn_ops.py::test_debug_mode_in_range_indices_ok
                tests/test_nn_ops.py::test_nan_to_num_integer_is_a_copy)
  LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)" \
    ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:allocator_may_return_null=1:detect_odr_violation=0:log_path=$logs/asan" \
    PYTHONPATH="$root/$build_dir/package${PYTHONPATH:+:$PYTHONPATH}" \
    run_pytest -p no:cacheprovider "${subset[@]}" "$@" || rc=1

  if compgen -G "$logs/*" > /dev/null; then
    echo "test.sh --asan: sanitizer reports:" >&2
    for f in "$logs"/*; do
      echo "==== $f" >&2
      cat "$f" >&2
    done
    rc=1
  fi
  echo "test.sh --asan: finished after $((SECONDS - start)) s (rc=$rc)"
  return $rc
}

if [ "${1:-}" = "--asan" ]; then
  shift
  asan_job "$@"
  exit $?
fi
if [ $# -gt 0 ]; then
  run_pytest tests "$@"
  exit $?
fi
# Test files run in TORCH_TPU_TEST_WORKERS processes at once (pytest-xdist,
# default 2; 0 runs them in this process), a whole file per process: much of
# the suite is XLA compiling on one thread, so two processes on this 2-core
# machine take ~24 minutes where one took ~35. Files are kept whole because
# tests in a file share their process's compiled programs and settings.
workers=(-n "${TORCH_TPU_TEST_WORKERS:-2}" --dist loadfile)
# (the 60 slowest tests listed at the end: where the suite's time goes)
run_pytest tests "${workers[@]}" --durations=60
rc=$?
# DeferAndFuse replays (issue 11): the model tests, and every 4th OpInfo op
# (the whole replay, about 7 minutes more, is a README command). The view
# fuzzer replays its seeds in DeferAndFuse by itself.
TORCH_TPU_EAGER_MODE=defer_and_fuse TORCH_TPU_OPINFO_EVERY=4 \
  run_pytest tests/test_models.py tests/test_opinfo.py "${workers[@]}" || rc=1
exit $rc

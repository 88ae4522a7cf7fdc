"""CI-sized runs of the two fuzzers (the long runs are commands: README).

Each fails on a crash, a hang, a fuzzer error, or a failure that no entry of
known.py matches; the reproducers of those are in the failure message.
TORCH_TPU_FUZZ_PROGRAMS / TORCH_TPU_FUZZ_CALLS / TORCH_TPU_FUZZ_SEED change
the size and the seed.
"""

import os

from . import bad_input, differential

PROGRAMS = int(os.environ.get("TORCH_TPU_FUZZ_PROGRAMS", "200"))
CALLS = int(os.environ.get("TORCH_TPU_FUZZ_CALLS", "400"))
SEED = int(os.environ.get("TORCH_TPU_FUZZ_SEED", "0"))


def _classes(report):
    """The summary line and one short line per class found (no reproducers)."""
    lines = report.split("\n# ----")[0].splitlines()
    return "\n" + "\n".join(ln[:150] for ln in lines)


def _check(summary, report, total_key):
    crashes = [f for f in summary["crashes"] + summary["hangs"] if not f.get("known")]
    assert not crashes, "crashes or hangs:\n" + report
    errors = [c for c in summary["classes"] if "harness_error" in c["key"]]
    assert not errors, "the fuzzer itself failed:\n" + report
    unknown = [c for c in summary["classes"] if c["key"][0] == "UNKNOWN"]
    assert not unknown, f"{len(unknown)} failure classes not in known.py:\n" + report
    assert summary["completed"] + len(summary["crashes"]) + len(summary["hangs"]) \
        == summary[total_key], report


def test_differential_fuzz(capsys):
    s = differential.run(PROGRAMS, seed=SEED, shrink="unknown")
    report = differential.format_summary(s)
    with capsys.disabled():
        print(_classes(report))
    _check(s, report, "programs")
    assert s["status"].get("pass", 0) > PROGRAMS // 2, report


def test_bad_input_fuzz(capsys):
    s = bad_input.run(CALLS, seed=SEED)
    report = bad_input.format_summary(s)
    with capsys.disabled():
        print(_classes(report))
    _check(s, report, "calls")

"""The tests' crash reporter (tests/crash_cores.py) reads a dying process's
native stack back, where the machine lets it."""

import os
import shutil
import subprocess
import sys

import pytest
from crash_cores import CoreCatcher


def _cores_land_in_the_working_directory():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        return False
    return not pattern.startswith("|") and "/" not in pattern


@pytest.mark.skipif(shutil.which("gdb") is None or not _cores_land_in_the_working_directory(),
                    reason="needs gdb and cores written to the working directory")
def test_an_aborting_subprocess_reports_its_native_stack():
    with CoreCatcher() as cores:
        proc = subprocess.run([sys.executable, "-c", "import os; os.abort()"],
                              capture_output=True, text=True, **cores.kwargs)
        report = cores.report(proc)
        directory = cores.directory
    assert proc.returncode != 0
    assert "native stack from core" in report, report
    assert "abort" in report, report  # the crashing thread's frames
    # ... before the list of threads (a long failure text is shown cut).
    assert report.index("abort") < report.index("Target Id"), report
    assert not os.path.exists(directory)


def test_a_succeeding_subprocess_reports_nothing():
    with CoreCatcher() as cores:
        proc = subprocess.run([sys.executable, "-c", "print('ok')"], capture_output=True,
                              text=True, **cores.kwargs)
        assert proc.stdout == "ok\n" and cores.report(proc) == ""

"""Native stacks of a test's subprocesses that die of a signal.

A rare crash in a process a test starts (a torchrun rank aborting at exit)
otherwise reaches the failure message as an exit code and a line of stderr,
and cannot be reproduced on demand. `CoreCatcher` runs the command with core
dumps enabled, in a fresh working directory (where the kernel writes `core`
when `/proc/sys/kernel/core_pattern` is a plain name, as on the CI machine),
and, when the command failed and left cores, reads each back with gdb: the
crashing thread's stack first, then the other threads' top frames, so that
the one CI run that hits the crash says where it happened (a failure's
shown text is cut from the end: the crashing stack must come before the
long thread list, and the report before the process's own output). Nothing changes for a command
that succeeds; the directory and its cores are removed either way.
"""

import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile


def _allow_core_dumps():
    # Runs in the child between fork and exec; its children inherit it.
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def _native_stacks(core):
    gdb = shutil.which("gdb")
    if gdb is None:
        return f"(a core was dumped, {core}, but gdb is not installed to read it)"
    try:
        proc = subprocess.run(
            [gdb, "-batch", "-nx", "-iex", "set auto-load python-scripts off", "-ex", "bt 40",
             "-ex", "info threads", "-ex", "thread apply all bt 8", sys.executable, core],
            capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return f"(gdb did not read {core} within 240 s)"
    lines = [line for line in proc.stdout.splitlines()
             if not line.startswith(("[New LWP", "warning:", "Reading symbols", "[Thread debugging",
                                     "Using host libthread_db"))]
    return "\n".join(lines[:300])


class CoreCatcher:
    """`with CoreCatcher() as cc: proc = subprocess.run(..., **cc.kwargs)`, then
    `cc.report(proc)` says what the cores show ('' when there are none)."""

    def __enter__(self):
        self.directory = tempfile.mkdtemp(prefix="torch_tpu_cores_")
        self.kwargs = {"cwd": self.directory, "preexec_fn": _allow_core_dumps}
        return self

    def report(self, proc):
        if proc.returncode == 0:
            return ""
        cores = sorted(glob.glob(os.path.join(self.directory, "core*")))
        return "".join(f"\n--- native stack from {os.path.basename(core)} ---\n"
                       + _native_stacks(core) for core in cores)

    def __exit__(self, *exc):
        shutil.rmtree(self.directory, ignore_errors=True)
        return False

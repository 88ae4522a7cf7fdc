"""Runs numbered fuzz items in child processes; finds crashes and hangs.

A worker child runs items [start, end) in order and reports on stdout, one
line each, prefixed with TAG: {"event": "begin", "i": i} before an item,
{"event": "step", "i": i, "step": k} before each step that touches the
device, and {"event": "result", "i": i, ...} after it. The parent reads the
lines with a deadline per item. When the child dies (a signal, an abort) or
stops reporting (a hang, killed with its process group), the item it had
begun is the suspect: it is run again alone in a fresh child, and if it then
passes, the range before it is bisected for the shortest run that still
fails, so a crash that needs earlier items is pinned to them too. The run
then resumes after the suspect.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

TAG = "@@FUZZ "
REPO = Path(__file__).resolve().parents[2]


def emit(obj):
    """Worker side: report one event to the parent."""
    sys.stdout.write(TAG + json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def _reader(stream, q):
    for line in stream:
        if line.startswith(TAG):
            try:
                q.put(json.loads(line[len(TAG):]))
            except json.JSONDecodeError:
                pass
    q.put(None)


class Child:
    """One worker process over items [start, end)."""

    def __init__(self, argv, start, end, env=None):
        self.start, self.end = start, end
        self.proc = subprocess.Popen(
            [sys.executable] + argv + ["--start", str(start), "--end", str(end)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO),
            start_new_session=True, env=env or dict(os.environ))
        self.q = queue.Queue()
        self.stderr = []
        threading.Thread(target=_reader, args=(self.proc.stdout, self.q), daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line)
            del self.stderr[:-60]

    def events(self, timeout):
        """Yields events; ('hang', None) after `timeout` s of silence,
        ('exit', returncode) at the end."""
        while True:
            try:
                ev = self.q.get(timeout=timeout)
            except queue.Empty:
                self.kill()
                yield "hang", None
                return
            if ev is None:
                rc = self.proc.wait()
                yield "exit", rc
                return
            yield "event", ev

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the child's own process group
        except ProcessLookupError:
            pass
        self.proc.wait()


def _run_range(argv, start, end, timeout, env):
    """(results by index, failure or None): failure is (kind, index, step,
    returncode, stderr tail) for a crash or a hang at `index`."""
    child = Child(argv, start, end, env)
    results, current, step = {}, None, None
    for kind, ev in child.events(timeout):
        if kind == "event":
            if ev["event"] == "begin":
                current, step = ev["i"], None
            elif ev["event"] == "step":
                step = ev.get("step")
            elif ev["event"] == "result":
                results[ev["i"]] = ev
                current, step = None, None
            continue
        tail = "".join(child.stderr[-30:])
        if kind == "hang":
            return results, ("hang", current if current is not None else start, step, None, tail)
        if kind == "exit":
            if ev == 0 and current is None:
                return results, None
            if current is None and len(results) == end - start:
                return results, ("exit_crash", end - 1, None, ev, tail)
            idx = current if current is not None else (max(results) + 1 if results else start)
            return results, ("crash", idx, step, ev, tail)
    return results, None


def run_items(argv, start, end, timeout=120.0, batch=400, env=None, log=None, bisect=True):
    """Runs every item in [start, end); returns (results, failures): failures
    is a list of dicts {kind, i, step, returncode, stderr, alone, needs_from}."""
    results, failures = {}, []
    pos = start
    t0 = time.time()
    while pos < end:
        stop = min(end, pos + batch)
        got, fail = _run_range(argv, pos, stop, timeout, env)
        results.update(got)
        if fail is None:
            pos = stop
            if log:
                log(f"{len(results)} items done, {len(failures)} crashes/hangs, {time.time() - t0:.0f}s")
            continue
        kind, idx, step, rc, tail = fail
        rec = {"kind": kind, "i": idx, "step": step, "returncode": rc, "stderr": tail[-3000:]}
        if bisect and kind != "exit_crash":
            _, again = _run_range(argv, idx, idx + 1, timeout, env)
            rec["alone"] = again is not None and again[1] == idx
            if not rec["alone"] and idx > pos:
                rec["needs_from"] = _bisect_start(argv, pos, idx, timeout, env)
        failures.append(rec)
        if log:
            log(f"{kind} at item {idx} step {step} (rc {rc}); alone: {rec.get('alone')}")
        pos = idx + 1
    return results, failures


def _bisect_start(argv, lo, idx, timeout, env):
    """The largest start s in [lo, idx) such that running [s, idx] fails at
    idx (assuming running [lo, idx] does); None if it no longer does."""
    _, f = _run_range(argv, lo, idx + 1, timeout, env)
    if f is None or f[1] != idx:
        return None
    good, bad = lo, idx  # [good..idx] fails; [bad..idx] (alone) does not
    while bad - good > 1:
        mid = (good + bad) // 2
        _, f = _run_range(argv, mid, idx + 1, timeout, env)
        if f is not None and f[1] == idx:
            good = mid
        else:
            bad = mid
    return good

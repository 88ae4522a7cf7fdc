"""Differential fuzzer: random short programs run on tpu and on the CPU.

    python tests/fuzz/differential.py --n 10000 --seed 1     # long run
    python -m tests.fuzz.differential --n 300 --seed 0 --json out.json

Program i of seed S is the same on every run. Each program runs in a worker
child (a crash or hang is pinned to its program and step by children.py);
each step is checked against the CPU on the tpu's own inputs (run.py); a
failure is shrunk to a runnable reproducer (shrink.py) and classified
against known.py. The summary lists every failure class with a reproducer;
--json writes everything.
"""

import argparse
import collections
import json
import os
import sys
import time
import traceback
import warnings

if __package__ in (None, ""):  # run as a script path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "fuzz"  # noqa: A001
    import fuzz  # noqa: F401

from . import children  # noqa: E402
from .known import classify  # noqa: E402

WORKER_SCRIPT = os.path.abspath(__file__)


def _worker_argv(args):
    argv = [WORKER_SCRIPT, "--worker", "--seed", str(args.seed), "--mode", args.mode,
            "--shrink", args.shrink, "--max-steps", str(args.max_steps)]
    if args.subnormals:
        argv.append("--subnormals")
    return argv


def worker(args):
    warnings.simplefilter("ignore")
    import torch_tpu

    from .generate import generate
    from .ops import TABLE
    from .run import run_program
    from .shrink import shrink
    from .values import Opts

    torch_tpu._C._set_cpu_fallback(False)
    torch_tpu.set_eager_mode(args.mode)
    opts = Opts(subnormals=args.subnormals)
    shrunk = set()
    for i in range(args.start, args.end):
        children.emit({"event": "begin", "i": i})
        prog = generate(args.seed, i, opts, TABLE, max_steps=args.max_steps)
        t0 = time.time()
        try:
            out = run_program(prog, on_step=lambda k, i=i: children.emit(
                {"event": "step", "i": i, "step": k}))
        except Exception:  # noqa: BLE001 - a bug of the fuzzer, reported as such
            children.emit({"event": "result", "i": i, "status": "fail", "kind": "harness_error",
                           "op": "", "form": "", "known": None, "steps": len(prog.steps),
                           "detail": traceback.format_exc()[-1500:]})
            continue
        rec = {"event": "result", "i": i, "status": out.status, "steps": len(prog.steps),
               "seconds": round(time.time() - t0, 3), "judged": out.judged}
        if out.status != "pass":
            m = out.mismatches[0]
            rec.update(kind=m.kind, op=out.op, form=out.form, step=out.step, var=m.var,
                       detail=m.detail, info=out.info, cpu_exc=out.cpu_exc, tpu_exc=out.tpu_exc,
                       tpu_msg=out.tpu_msg, cpu_msg=out.cpu_msg, code=out.code)
            rec["known"] = classify(rec) if out.status == "fail" else None
            key = (m.kind, out.op, out.form, rec["known"])
            want = out.status == "fail" and (
                (args.shrink == "all" and key not in shrunk)
                or (args.shrink == "unknown" and rec["known"] is None))
            if want:
                shrunk.add(key)
                children.emit({"event": "step", "i": i, "step": "shrink"})
                repro, how = shrink(prog, out)
                again = run_program(repro)
                shown = again.mismatches[0] if again.mismatches else m
                rec["repro"] = repro.source(title=f"{prog.label}: {m.kind} in {out.op} ({how})\n"
                                            f"{shown}")
        children.emit(rec)


def _classify_failure(f, args):
    """A crash or hang: the op of the step it happened in, and its known id."""
    from .generate import generate
    from .ops import TABLE
    from .values import Opts

    prog = generate(args.seed, f["i"], Opts(subnormals=args.subnormals), TABLE,
                    max_steps=args.max_steps)
    step = f.get("step")
    f["op"] = prog.steps[step].op if isinstance(step, int) and step < len(prog.steps) else ""
    f["repro"] = prog.source(upto=step if isinstance(step, int) else None,
                             title=f"{prog.label}: {f['kind']} at step {step}")
    kind = "hang" if f["kind"] == "hang" else "crash"
    f["known"] = classify({"kind": kind, "op": f["op"], "code": prog.steps[step].code
                           if f["op"] else ""})
    return f


def summarize(results, failures, n):
    status = collections.Counter(r["status"] for r in results.values())
    # steps the plain CPU disagreed with and another reference (run.py) accepted
    judged = collections.Counter((ref, op) for r in results.values()
                                 for _, op, ref in r.get("judged", ()))
    classes = collections.OrderedDict()
    for i in sorted(results):
        r = results[i]
        if r["status"] == "pass":
            continue
        if r["status"] == "missing":
            key = ("missing", r["detail"])
        else:
            r["known"] = classify(r)  # by this process's known.py, the same for every batch
            key = (r["known"] or "UNKNOWN", r["kind"], r["op"], r.get("form", ""))
        c = classes.setdefault(key, {"count": 0, "first": i, "repro": None, "detail": r["detail"]})
        c["count"] += 1
        if c["repro"] is None and r.get("repro"):
            c["repro"] = r["repro"]
    return {"programs": n, "completed": len(results), "status": dict(status),
            "judged": [{"reference": ref, "op": op, "steps": c}
                       for (ref, op), c in sorted(judged.items())],
            "crashes": [f for f in failures if f["kind"] != "hang"],
            "hangs": [f for f in failures if f["kind"] == "hang"],
            "classes": [{"key": list(k), **v} for k, v in classes.items()]}


def unknown_classes(summary):
    return [c for c in summary["classes"] if c["key"][0] == "UNKNOWN"]


def format_summary(s, show_repro=True):
    lines = [f"differential fuzzer: {s['completed']}/{s['programs']} programs ran: {s['status']}; "
             f"{len(s['crashes'])} crashes, {len(s['hangs'])} hangs"]
    if s.get("judged"):
        lines.append("  steps judged by another reference than the plain CPU (run.py): " +
                     ", ".join(f"{j['op']} {j['reference']} x{j['steps']}" for j in s["judged"]))
    for c in s["classes"]:
        lines.append(f"  {c['count']:5d}  {' | '.join(str(x) for x in c['key'])}   (first: program "
                     f"{c['first']}: {c['detail'][:160]})")
    for f in s["crashes"] + s["hangs"]:
        lines.append(f"  {f['kind']} at program {f['i']} step {f['step']} ({f.get('op')}) "
                     f"rc={f['returncode']} alone={f.get('alone')} needs_from={f.get('needs_from')} "
                     f"known={f.get('known')}")
        if not f.get("known") or show_repro == "all":
            lines.append(f"{f.get('repro', '')}\n{f['stderr'][-1500:]}")
    if show_repro:
        for c in s["classes"]:
            if c["repro"] and (c["key"][0] == "UNKNOWN" or show_repro == "all"):
                lines.append(f"\n# ---- {' | '.join(str(x) for x in c['key'])}\n{c['repro']}")
    return "\n".join(lines)


def run(n, seed=0, start=0, mode="strict", shrink="unknown", subnormals=False, max_steps=6,
        timeout=180.0, batch=400, log=None):
    args = argparse.Namespace(seed=seed, mode=mode, shrink=shrink, subnormals=subnormals,
                              max_steps=max_steps)
    env = dict(os.environ)
    env.pop("TORCH_TPU_CPU_FALLBACK", None)
    results, failures = children.run_items(_worker_argv(args), start, start + n, timeout=timeout,
                                           batch=batch, env=env, log=log)
    return summarize(results, [_classify_failure(f, args) for f in failures], n)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=300, help="number of programs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first program index")
    p.add_argument("--end", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--mode", default="strict", choices=["strict", "debug", "defer_and_fuse"])
    p.add_argument("--shrink", default="all", choices=["all", "unknown", "none"],
                   help="shrink the first failure of each class (all), only unknown ones, or none")
    p.add_argument("--subnormals", action="store_true", help="include subnormal floats in inputs")
    p.add_argument("--max-steps", type=int, default=6)
    p.add_argument("--timeout", type=float, default=180.0, help="seconds without progress = hang")
    p.add_argument("--batch", type=int, default=400, help="programs per worker process")
    p.add_argument("--json", help="write the full summary (with reproducers) here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    t0 = time.time()
    s = run(args.n, args.seed, args.start, args.mode, args.shrink, args.subnormals, args.max_steps,
            args.timeout, args.batch, log=lambda m: print(m, file=sys.stderr, flush=True))
    s["seconds"] = round(time.time() - t0, 1)
    print(format_summary(s, show_repro="all"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1, default=str)
    bad = unknown_classes(s) or [f for f in s["crashes"] + s["hangs"] if not f.get("known")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

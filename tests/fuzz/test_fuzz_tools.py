"""The fuzzers' own machinery: each part is shown to catch what it is for."""

import sys
import textwrap

import torch

from . import children
from .compare import compare_envs
from .generate import generate
from .ops import TABLE
from .program import Program, Step, mirror, new_env, run_code
from .run import run_program
from .shrink import shrink
from .values import Input, Opts

inf = float("inf")

WORKER = textwrap.dedent("""
    import argparse, os, sys, time
    sys.path.insert(0, {path!r})
    from fuzz import children
    p = argparse.ArgumentParser()
    p.add_argument("--start", type=int)
    p.add_argument("--end", type=int)
    a = p.parse_args()
    for i in range(a.start, a.end):
        children.emit({{"event": "begin", "i": i}})
        if i == {crash} and ({needs} is None or a.start <= {needs}):
            os.abort()
        if i == {hang}:
            time.sleep(60)
        children.emit({{"event": "result", "i": i, "status": "pass"}})
""")


def _worker(tmp_path, crash=-1, hang=-1, needs=None):
    path = tmp_path / "worker.py"
    path.write_text(WORKER.format(path=str(children.REPO / "tests"), crash=crash, hang=hang,
                                  needs=needs))
    return [str(path)]


def test_children_pin_a_crash_and_a_hang(tmp_path):
    results, failures = children.run_items(_worker(tmp_path, crash=3, hang=6), 0, 9, timeout=5)
    assert sorted(results) == [0, 1, 2, 4, 5, 7, 8]
    assert [(f["kind"], f["i"], f["alone"]) for f in failures] == [("crash", 3, True),
                                                                    ("hang", 6, True)]
    assert failures[0]["returncode"] < 0  # SIGABRT


def test_children_bisect_a_crash_that_needs_an_earlier_item(tmp_path):
    # item 7 crashes only in a process that ran item 4 before it
    results, failures = children.run_items(_worker(tmp_path, crash=7, needs=4), 0, 9, timeout=5)
    assert len(failures) == 1 and failures[0]["i"] == 7
    assert failures[0]["alone"] is False
    assert failures[0]["needs_from"] == 4


def test_generation_is_deterministic():
    a = generate(5, 17, Opts(), TABLE)
    b = generate(5, 17, Opts(), TABLE)
    assert a.source() == b.source()
    assert a.source() != generate(5, 18, Opts(), TABLE).source()


def test_mirror_keeps_views_views():
    env = new_env("tpu")
    assert run_code("b = torch.arange(6.0).to(DEV)\nv = b[::2]\nw = b.reshape(2, 3).t()", env,
                    "tpu") is None
    cpu = mirror(env, "cpu")
    cpu["v"].fill_(-1.0)
    assert cpu["b"].tolist() == [-1.0, 1.0, -1.0, 3.0, -1.0, 5.0]
    assert cpu["w"].stride() == env["w"].stride() and cpu["w"].storage_offset() == 0


def _deliberate_bug_program():
    # the step computes something else on tpu than on the CPU, as a bug would
    x = Input("x0", torch.float32, (2, 3), [1.5, -2.0, 0.25, 4.0, 8.0, -1.0])
    y = Input("x1", torch.float32, (3,), [0.5, 1.0, 2.0])
    steps = [Step("mul", "func", "v1 = x0 * x1", ["x0", "x1"]),
             Step("add", "func", "v2 = v1 + (x1 if DEV == 'cpu' else x1.flip(0))", ["v1", "x1"]),
             Step("neg", "func", "v3 = -v2", ["v2"])]
    return Program([x, y], steps, "deliberate")


def test_run_program_names_the_failing_step():
    out = run_program(_deliberate_bug_program())
    assert out.status == "fail" and out.step == 1 and out.op == "add"
    assert out.kind == "value"


def test_a_step_the_cpu_rounds_twice_is_judged_by_float64():
    # CPU's half logsumexp rounds the sum to half before the log (0.00487);
    # tpu rounds once (0.00528, as float64 rounded to half)
    x = Input("x0", torch.float16, (2,), [0.0, -5.2421875])
    out = run_program(Program([x], [Step("logsumexp", "func", "v1 = torch.logsumexp(x0, 0)",
                                         ["x0"])], "twice"))
    assert out.status == "pass" and out.judged == [(0, "logsumexp", "float64")]


def test_a_subnormal_intermediate_is_judged_by_the_flushing_cpu():
    # 0.6 * -1.17e-38 is subnormal: flushed on tpu (and -0 * -inf is NaN)
    x = Input("x0", torch.float32, (3,), [0.6, -1.1754943508222875e-38, -inf])
    out = run_program(Program([x], [Step("prod", "func", "v1 = torch.prod(x0)", ["x0"])], "ftz"))
    assert out.status == "pass" and out.judged == [(0, "prod", "flush_denormal")]


def test_other_references_do_not_excuse_a_real_bug():
    out = run_program(_deliberate_bug_program())
    assert out.status == "fail" and out.judged == []


def test_shrink_reduces_to_the_failing_step():
    prog = _deliberate_bug_program()
    out = run_program(prog)
    repro, how = shrink(prog, out)
    assert how == "step alone" and len(repro.steps) == 1
    again = run_program(repro)
    assert again.signature() == out.signature()
    # values nobody needs became zero
    assert sum(v != 0 for i in repro.inputs for v in getattr(i, "values", [])) < 9
    src = repro.source()
    assert "def program(DEV)" in src and "v2 = v1 +" in src
    compile(src, "<repro>", "exec")


def test_compare_finds_each_kind_of_difference():
    cpu, dev = new_env("cpu"), new_env("tpu")
    code = ("a = torch.tensor([1.0, -0.0, float('nan')]).to(DEV)\n"
            "b = torch.ones(2, 3).to(DEV).t().contiguous() if DEV == 'cpu' else torch.ones(3, 2).to(DEV)\n"
            "c = torch.tensor([1, 2]).to(DEV)")
    assert run_code(code, cpu, "cpu") is None and run_code(code, dev, "tpu") is None
    assert compare_envs(cpu, dev) == []
    dev["a"] = torch.tensor([1.0, 0.0, float("nan")]).to("tpu")
    dev["c"] = torch.tensor([1, 3]).to("tpu")
    dev["b"] = torch.ones(2, 3).to("tpu").t()
    kinds = {m.var: m.kind for m in compare_envs(cpu, dev)}
    assert kinds == {"a": "signed_zero", "b": "stride", "c": "value"}


def test_ties_are_checked_through_gather():
    x = Input("x0", torch.float32, (6,), [1.0, 2.0, 1.0, 2.0, 1.0, 0.0])
    ok = Step("argsort", "func", "i1 = torch.argsort(x0, dim=0)", ["x0"],
              tie={"src": "x0", "dim": 0, "idx": "i1"})
    assert run_program(Program([x], [ok])).status == "pass"
    # indices that select other values are caught
    bad = Step("argsort", "func", "i1 = torch.argsort(x0, dim=0) if DEV == 'cpu' else "
               "torch.arange(6).to(DEV)", ["x0"], tie={"src": "x0", "dim": 0, "idx": "i1"})
    out = run_program(Program([x], [bad]))
    assert out.status == "fail" and out.kind == "tie"


def test_reproducer_runs(tmp_path):
    path = tmp_path / "repro.py"
    path.write_text(_deliberate_bug_program().source())
    import subprocess

    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "cpu v3" in r.stdout and "tpu v3" in r.stdout

"""tools/model_zoo.py: the CI subset of Hugging Face architectures passes on
tpu (forward, backward and greedy generate match the CPU), and the tool
classifies failures right (missing op, mismatch, CPU error, crash, timeout),
checked with tiny stand-in models from model_zoo_fakes.py."""

import importlib.util
import os
import sys

import pytest

import torch_tpu  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = os.path.join(HERE, "model_zoo_fakes.py")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


zoo = _load("tools_model_zoo", os.path.join(HERE, os.pardir, "tools", "model_zoo.py"))
fakes = _load("model_zoo_fakes", FAKES)

@pytest.mark.parametrize("name", zoo.CI_SUBSET)
def test_ci_subset(name):
    row = zoo.run_model(name, timeout=240)
    spec = zoo.BY_NAME[name]
    phases = row["phases"]
    assert set(phases) == set(zoo.planned_phases(spec, ("default", "eager")))
    for phase in ("fwd_bwd", "fwd_bwd_eager"):
        assert phases[phase]["status"] in ("pass", "n/a"), (phase, phases[phase])
    assert phases["fwd_bwd"]["status"] == "pass"
    assert phases["fwd_bwd"]["compared"] > 2  # outputs and gradients were compared
    if spec.generate:
        gen = phases["generate"]
        assert gen["status"] == "pass", gen


def test_ci_subset_covers_families():
    families = {zoo.BY_NAME[n].family for n in zoo.CI_SUBSET}
    assert {"decoder", "encoder", "vision"} <= families


def test_classify_missing_op_message():
    got = zoo.classify_exception(NotImplementedError(fakes.MISSING_MESSAGE))
    assert got["status"] == "missing_op" and got["op"] == "aten::fake_op.default"
    # The same words in another exception class are an error, not a missing op.
    assert zoo.classify_exception(RuntimeError(fakes.MISSING_MESSAGE))["status"] == "error"


def test_phase_missing_op_in_process():
    got = zoo.fwd_bwd_phase(fakes.missing_op(zoo), None)
    assert got["status"] == "missing_op" and got["op"] == "aten::fake_op.default"


def test_phase_pass_in_process():
    got = zoo.fwd_bwd_phase(fakes.passing(zoo), None)
    assert got["status"] == "pass"
    # The output and both parameters' gradients.
    assert got["compared"] == 3


def test_phase_mismatch_names_the_tensor():
    got = zoo.fwd_bwd_phase(fakes.off_by_a_bit(zoo), None)
    assert got["status"] == "mismatch"
    assert set(got["failing"]) == {"output", "grad:linear.weight", "grad:linear.bias"}
    assert got["worst"]["max_abs"] > 1e-3


def test_phase_judged_by_float64_only_when_tpu_is_as_close_as_cpu():
    # tpu off: its error against float64 dwarfs the CPU's, a mismatch.
    got = zoo.fwd_bwd_phase(fakes.off_by_a_bit(zoo), None)
    assert "judged_by" not in got
    assert got["float64"]["output"]["tpu"] > 100 * got["float64"]["output"]["cpu"]
    # The CPU's float32 run off, tpu right: a pass, marked as judged by float64.
    got = zoo.fwd_bwd_phase(fakes.cpu_float32_off(zoo), None)
    assert got["status"] == "pass" and got["judged_by"] == "float64"
    assert "output" in got["failing"]
    assert "pass*" in zoo.format_report([{"name": "fake_cpu_off", "family": "other",
                                          "phases": {"fwd_bwd": got}}],
                                        zoo.summarize([{"phases": {"fwd_bwd": got}}]))


def test_phase_cpu_error_and_error():
    got = zoo.fwd_bwd_phase(fakes.cpu_fails(zoo), None)
    assert got["status"] == "cpu_error" and "ValueError" in got["detail"]
    got = zoo.fwd_bwd_phase(fakes.wrong_error(zoo), None)
    assert got["status"] == "error"
    assert got["detail"].startswith("RuntimeError: something else went wrong")
    assert "second line" not in got["detail"]


def test_compare_rules():
    import torch

    a = torch.tensor([1.0, float("nan"), float("inf"), 0.0])
    assert zoo.compare(a, a.clone())["ratio"] == 0
    assert zoo.compare(a, a + 1e-5)["ratio"] <= 1  # within atol + rtol * |cpu|
    assert zoo.compare(a, a.flip(0))["ratio"] == float("inf")  # nan vs a number
    assert zoo.compare(a, a[:3])["ratio"] == float("inf")  # shapes differ
    assert zoo.compare(torch.tensor([1, 2]), torch.tensor([1, 3]))["ratio"] == float("inf")


def test_child_missing_op():
    row = zoo.run_model("fake", timeout=120, hook=f"{FAKES}:missing_op")
    got = row["phases"]["fwd_bwd"]
    assert got["status"] == "missing_op" and got["op"] == "aten::fake_op.default"
    assert zoo.summarize([row])["missing_ops"] == {"aten::fake_op.default": 1}


def test_child_crash():
    row = zoo.run_model("fake", timeout=120, hook=f"{FAKES}:aborts")
    got = row["phases"]["fwd_bwd"]
    assert got["status"] == "crash", got
    assert "SIGABRT" in got["detail"]


def test_child_timeout():
    row = zoo.run_model("fake", timeout=5, hook=f"{FAKES}:sleeps")
    got = row["phases"]["fwd_bwd"]
    assert got["status"] == "timeout", got
    assert row["time_s"] < 60  # killed, not waited for


def test_report_and_rates():
    rows = [
        {"name": "a", "family": "decoder", "phases": {
            "fwd_bwd": {"status": "pass", "detail": ""},
            "generate": {"status": "missing_op", "op": "aten::x", "detail": "aten::x"}}},
        {"name": "b", "family": "encoder", "phases": {
            "fwd_bwd": {"status": "cpu_error", "detail": "ValueError: v"}}},
        {"name": "c", "family": "vision", "phases": {
            "fwd_bwd": {"status": "crash", "detail": "killed by SIGSEGV: "}}},
    ]
    summary = zoo.summarize(rows)
    assert summary["fwd_bwd"] == {"pass": 1, "of": 2}  # cpu_error is left out
    assert summary["generate"] == {"pass": 0, "of": 1}
    assert summary["missing_ops"] == {"aten::x": 1}
    text = zoo.format_report(rows, summary)
    assert "c fwd_bwd: crash: killed by SIGSEGV" in text
    assert "1/2 (50%)" in text


def test_broken_ties():
    import copy

    import torch.nn as nn

    tied = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 4, bias=False))
    tied[1].weight = tied[0].weight
    assert zoo.broken_ties(tied, copy.deepcopy(tied)) == []
    split = copy.deepcopy(tied)
    split[1].weight = nn.Parameter(split[0].weight.detach().clone())
    assert zoo.broken_ties(tied, split) == [["0.weight", "1.weight"]]


def test_token_difference_names_the_first_differing_token():
    import types

    import torch

    cpu = torch.tensor([[5, 6, 7, 8], [5, 6, 9, 9]])
    scores = [torch.tensor([[0.0, 3.0], [0.0, 2.0]]), torch.tensor([[1.0, 0.5], [4.0, 1.0]])]
    out = types.SimpleNamespace(sequences=cpu, scores=scores)  # 2 prompt tokens, 2 new
    tpu = cpu.clone()
    tpu[1, 3] = 4
    assert zoo.token_difference(out, tpu) == (
        "row 1 new token 1: cpu 9 tpu 4 (cpu top-2 logit margin 3)")

"""Every elementwise overload, every dtype: tpu behaves like the CPU.

For each overload registered by csrc/ops/elementwise.cc
(torch_tpu._C._elementwise_overloads()) and each dtype in DTYPES, the
overload is called with small inputs built from its schema, on the CPU and
on tpu:

* where the CPU raises, tpu raises the same exception class;
* where the CPU succeeds, tpu gives the same dtype, shape and values, or
  (only for the (op, dtype) pairs in GAPS: lowerings that do not take a dtype
  the CPU supports) raises NotImplementedError naming the op;
* no compiler text (StableHLO, PJRT) ever reaches the user, and nothing
  crashes the process.

The calls run in child interpreters (this file run as a script): each prints
a line before every call and one verdict after it, so a segfault is pinned to
its call and the parent starts a new child after it.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.complex64, torch.complex128,
    torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
    torch.float8_e8m0fnu,
]
SHORT = {torch.bool: "b8", torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16",
         torch.int32: "i32", torch.int64: "i64", torch.float16: "f16",
         torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
         torch.complex64: "c64", torch.complex128: "c128", torch.float8_e4m3fn: "f8e4m3fn",
         torch.float8_e5m2: "f8e5m2", torch.float8_e4m3fnuz: "f8e4m3fnuz",
         torch.float8_e5m2fnuz: "f8e5m2fnuz", torch.float8_e8m0fnu: "f8e8m0fnu"}

# (op, dtype) pairs the CPU computes but tpu refuses with NotImplementedError.
# Empty: every dtype the CPU takes is lowered.
# (overload, dtype) a lowering does not take yet (NotImplementedError where
# CPU computes): complex logaddexp (its lowering takes the larger operand,
# which complex numbers do not have).
GAPS = {(op, dt) for op in ("logaddexp", "logaddexp.out", "logaddexp_") for dt in ("c64", "c128")}

# Values of the tensor operands: the first operand, and a second set with no
# zeros for divisors.
_FIRST = {"int": [1, -2, 0, 3], "uint": [1, 2, 0, 3], "bool": [True, False, True, False],
          "float": [1.5, -2.25, 0.0, 3.0], "complex": [1.5 + 1j, -2.25, 0, 3 - 0.5j]}
_SECOND = {"int": [2, 3, -1, 1], "uint": [2, 3, 1, 1], "bool": [True, True, True, True],
           "float": [0.5, 3.0, -1.25, 2.0], "complex": [0.5 - 1j, 3, -1.25 + 2j, 2]}
_FIRST_NAMES = {"self", "grad_output", "self_or_result"}


def _kind(dtype):
    if dtype == torch.bool:
        return "bool"
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating_point:
        return "float"
    return "uint" if dtype == torch.uint8 else "int"


def _tensor(name, dtype, device, layout=None):
    """A 4-element operand; for the layout cases a 2x2 one, transposed when
    layout is "t"."""
    if name == "value":  # masked_fill.Tensor: a 0-dim value
        return torch.tensor(_SECOND[_kind(dtype)][0], dtype=dtype, device=device)
    if name in ("condition", "mask"):
        t = torch.tensor([True, False, False, True], device=device)
    else:
        values = _FIRST if name in _FIRST_NAMES else _SECOND
        t = torch.tensor(values[_kind(dtype)], dtype=dtype, device=device)
    if layout is None:
        return t
    t = t.reshape(2, 2)
    return t.t() if layout == "t" else t


# Scalar arguments by name (ints where the op takes integers, so integer
# dtypes stay integer).
_SCALARS = {"alpha": 2, "other": 2, "value": 2, "exponent": 2, "self": 2, "min": 0, "max": 2,
            "min_val": -1, "max_val": 1, "threshold": 0.5, "negative_slope": 0.1,
            "beta": 1, "input_scale": 1, "scale": 1, "weight": 0.25, "eps": 0.1,
            "decimals": 1, "is_result": False, "self_is_result": False}


def _variants(schema):
    """String attributes to try, as a list of {name: value}."""
    names = {a.name for a in schema.arguments}
    if "rounding_mode" in names:
        return [{"rounding_mode": "trunc"}, {"rounding_mode": "floor"}]
    if "approximate" in names:
        return [{"approximate": "none"}, {"approximate": "tanh"}]
    return [{}]


def _build(schema, dtype, device, variant, out_dtype, transposed=None):
    """Arguments from the schema; `transposed` (an index among the tensor
    operands) asks for 2x2 operands, that one transposed."""
    args, kwargs = [], {}
    tensor_index = 0
    for a in schema.arguments:
        t = str(a.type)
        if a.name in variant:
            v = variant[a.name]
        elif a.alias_info is not None and a.alias_info.is_write and a.name != "self":
            v = torch.empty(0, dtype=out_dtype, device=device)
        elif "Tensor" in t:
            layout = None
            if transposed is not None:
                layout = "t" if tensor_index == transposed else "c"
            v = _tensor(a.name, dtype, device, layout)
            tensor_index += 1
        elif a.name in ("nan", "posinf", "neginf"):
            v = None
        elif a.name in _SCALARS:
            v = _SCALARS[a.name]
        else:
            raise AssertionError(f"no value for argument {a.name}: {t}")
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            args.append(v)
    return args, kwargs


def _call(name, dtype, device, variant, out_dtype, transposed=None):
    fn = _op(name)
    args, kwargs = _build(fn._schema, dtype, device, variant, out_dtype, transposed)
    return fn(*args, **kwargs)


def _op(name):
    op, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, op), overload or "default")


def _tensor_operands(name):
    return [a for a in _op(name)._schema.arguments
            if "Tensor" in str(a.type) and not (a.alias_info is not None and a.alias_info.is_write)]


def _has_out(name):
    return any(a.alias_info is not None and a.alias_info.is_write and a.name != "self"
               for a in _op(name)._schema.arguments)


def _is_functional(name):
    return not any(a.alias_info is not None and a.alias_info.is_write
                   for a in _op(name)._schema.arguments)


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001
        return None, e


_RAW = ("stablehlo", "PJRT", "compiling", "chlo.", "error: ")


def _compare(cpu, cpu_exc, tpu, tpu_exc, strides=False, computed_in=None):
    """A verdict: 'ok', 'gap', or a sentence saying what differs (one line).
    `computed_in`: the dtype both computed in, when wider than the result's
    (values are compared with its tolerance)."""
    if computed_in is not None and cpu_exc is None and tpu_exc is None:
        if cpu.dtype.is_floating_point and tpu.dtype == cpu.dtype:
            cpu, tpu = cpu.to(computed_in), tpu.to(computed_in)
    verdict = _verdict(cpu, cpu_exc, tpu, tpu_exc)
    if verdict == "ok" and strides and cpu_exc is None and tpu.stride() != cpu.stride():
        verdict = f"cpu strides {cpu.stride()}, tpu {tpu.stride()}"
    return " ".join(verdict.split())


def _verdict(cpu, cpu_exc, tpu, tpu_exc):
    if tpu_exc is not None and any(s in str(tpu_exc) for s in _RAW):
        return f"raw compiler error {type(tpu_exc).__name__}: {str(tpu_exc)[:300]}"
    if cpu_exc is not None:
        if tpu_exc is None:
            return f"cpu raises {type(cpu_exc).__name__} ({str(cpu_exc)[:200]}), tpu returns"
        if type(cpu_exc) is not type(tpu_exc):
            return (f"cpu raises {type(cpu_exc).__name__} ({str(cpu_exc)[:200]}), "
                    f"tpu {type(tpu_exc).__name__} ({str(tpu_exc)[:200]})")
        return "ok"
    if tpu_exc is not None:
        if isinstance(tpu_exc, NotImplementedError):
            return "gap: " + str(tpu_exc)[:200]
        return f"cpu returns, tpu raises {type(tpu_exc).__name__}: {str(tpu_exc)[:300]}"
    if cpu.dtype != tpu.dtype or cpu.shape != tpu.shape:
        return f"cpu {cpu.dtype}{tuple(cpu.shape)}, tpu {tpu.dtype}{tuple(tpu.shape)}"
    got = tpu.cpu()
    if cpu.dtype.is_floating_point and cpu.element_size() == 1:  # float8: compare as float
        got, cpu = got.float(), cpu.float()
    try:
        if cpu.dtype.is_floating_point or cpu.dtype.is_complex:
            torch.testing.assert_close(got, cpu, equal_nan=True)
        elif not torch.equal(got, cpu):
            raise AssertionError(f"cpu {cpu.tolist()}, tpu {got.tolist()}")
    except AssertionError as e:
        return "values differ: " + str(e).replace("\n", " ")[:300]
    return "ok"


# The special functions lowered as long float64 programs (series,
# recurrences, quadrature: ops/bessel_*.cc, ops/orthogonal_polynomials.cc,
# ops/normal_tail_functions.cc, ops/hurwitz_zeta.cc) each cost a compile of
# seconds' share per (overload, dtype), and handle every dtype of a class
# the same way (converted to one compute type first), so they are audited
# on a few dtypes of each class rather than on all 17.
ONE_PER_CLASS = [torch.bool, torch.uint8, torch.int64, torch.float16, torch.bfloat16,
                 torch.float32, torch.float64, torch.complex64, torch.float8_e4m3fn,
                 torch.float8_e8m0fnu]
_LONG_PROGRAMS = ("polynomial", "bessel_j", "bessel_y", "bessel_k", "erfcx", "log_ndtr", "ndtri",
                  "zeta")


def _dtypes_for(name):
    long_program = name.startswith("special_") and any(k in name for k in _LONG_PROGRAMS)
    return ONE_PER_CLASS if long_program else DTYPES


def cases(names):
    """(label, overload, string attributes, dtype, mode): mode "dtype" for
    every dtype; "out_f64" for out= overloads, float32 operands with a
    float64 out (some ops take any castable out, others only their own
    dtype); "t<k>" for functional overloads, 2x2 float32 operands with the
    k-th transposed (the result's strides)."""
    for name in names:
        schema = _op(name)._schema
        for variant in _variants(schema):
            base = name + "".join(f"[{v}]" for v in variant.values())
            for dtype in _dtypes_for(name):
                yield f"{base}:{SHORT[dtype]}", name, variant, dtype, "dtype"
            if _has_out(name):
                yield f"{base}:out_f64", name, variant, torch.float32, "out_f64"
            if _is_functional(name):
                for k in range(len(_tensor_operands(name))):
                    yield f"{base}:t{k}", name, variant, torch.float32, f"t{k}"


def _run_case(name, variant, dtype, mode):
    if mode == "out_f64":
        cpu, cpu_exc = _outcome(lambda: _call(name, dtype, "cpu", variant, torch.float64))
        tpu, tpu_exc = _outcome(lambda: _call(name, dtype, "tpu", variant, torch.float64))
        return _compare(cpu, cpu_exc, tpu, tpu_exc, computed_in=dtype)
    if mode.startswith("t"):
        k = int(mode[1:])
        cpu, cpu_exc = _outcome(lambda: _call(name, dtype, "cpu", variant, dtype, k))
        tpu, tpu_exc = _outcome(lambda: _call(name, dtype, "tpu", variant, dtype, k))
        return _compare(cpu, cpu_exc, tpu, tpu_exc, strides=True)
    out_dtype = dtype
    if _has_out(name):
        # The first out dtype the CPU accepts (the op's result dtype), so
        # out= is compared on values too.
        for candidate in (dtype, torch.get_default_dtype(), torch.bool):
            _, e = _outcome(lambda: _call(name, dtype, "cpu", variant, candidate))
            if e is None:
                out_dtype = candidate
                break
    cpu, cpu_exc = _outcome(lambda: _call(name, dtype, "cpu", variant, out_dtype))
    tpu, tpu_exc = _outcome(lambda: _call(name, dtype, "tpu", variant, out_dtype))
    return _compare(cpu, cpu_exc, tpu, tpu_exc)


def child_main(names, skip):
    import torch_tpu  # noqa: F401

    for label, name, variant, dtype, mode in cases(names):
        if label in skip:
            continue
        print("BEGIN " + label, flush=True)
        verdict = _run_case(name, variant, dtype, mode)
        print("RESULT " + json.dumps([label, verdict]), flush=True)


def audit(names, timeout=1800):
    """{label: verdict} for every case of `names`, a crash included."""
    results = {}
    while True:
        payload = json.dumps({"names": names, "skip": sorted(results)})
        proc = subprocess.run([sys.executable, __file__, "--child"], input=payload,
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ))
        begun = None
        for line in proc.stdout.splitlines():
            if line.startswith("BEGIN "):
                begun = line[len("BEGIN "):]
            elif line.startswith("RESULT "):
                label, verdict = json.loads(line[len("RESULT "):])
                results[label] = verdict
                begun = None
        if proc.returncode == 0:
            return results
        if begun is None:
            raise AssertionError(f"audit child failed outside a case (rc {proc.returncode}):\n"
                                 f"{proc.stderr[-3000:]}")
        results[begun] = f"crash: the process died (rc {proc.returncode})"


def _overloads():
    import torch_tpu

    return sorted(torch_tpu._C._elementwise_overloads())


def _problems(results):
    bad = {}
    for label, verdict in results.items():
        if verdict == "ok":
            continue
        if verdict.startswith("gap: "):
            op_dtype = label.split("[")[0].split(":")[0], label.rsplit(":", 1)[1]
            if op_dtype in GAPS:
                continue
        bad[label] = verdict
    return bad


def parallel_audit(names, workers=2):
    """audit() of `names` split among `workers` children running at once
    (each case compiles programs of its own, one core each)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        parts = pool.map(audit, [names[i::workers] for i in range(workers)])
    return {label: verdict for part in parts for label, verdict in part.items()}


def test_dtype_audit():
    results = parallel_audit(_overloads())
    bad = _problems(results)
    report = "\n".join(f"{k}: {v}" for k, v in sorted(bad.items()))
    assert not bad, f"{len(bad)} of {len(results)} cases differ from the CPU:\n{report}"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        request = json.load(sys.stdin)
        child_main(request["names"], set(request["skip"]))
    else:
        # python tests/test_dtype_audit.py [overload ...]: print every verdict
        names = sys.argv[1:] or _overloads()
        for label, verdict in sorted(audit(names).items()):
            print(f"{label}: {verdict}")

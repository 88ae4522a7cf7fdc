"""Bad input must raise the same Python exception types PyTorch uses, never crash.

Risky cases (out of memory, invalid device indices, huge resizes) run in a
child interpreter: the child catches the exception, prints its type and
message, then checks that the device still works; the parent asserts that the
child exited normally (no segfault or abort) and inspects what it printed.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

DEV = "tpu"


def run_child(body, timeout=240):
    """Runs `body` in a fresh interpreter; returns the list of results it reported.

    Inside `body`, `check(label, fn)` runs fn() and records either
    {"ok": repr} or {"exc": type name, "mro": [...], "msg": message}.
    """
    code = textwrap.dedent("""
        import json, sys, torch
        results = {}
        def check(label, fn):
            try:
                r = fn()
                results[label] = {"ok": repr(r)[:200]}
            except BaseException as e:  # noqa: BLE001
                results[label] = {"exc": type(e).__name__,
                                  "mro": [c.__name__ for c in type(e).__mro__],
                                  "msg": str(e)[:2000]}
        def still_works():
            x = torch.arange(6.0, device="tpu").reshape(2, 3)
            x[1].fill_(7.0)
            return x.t().contiguous().cpu().tolist()
    """) + textwrap.dedent(body) + textwrap.dedent("""
        results["__still_works__"] = still_works()
        print("RESULTS=" + json.dumps(results))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ))
    assert r.returncode == 0, (f"child died with return code {r.returncode}\n"
                               f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}")
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULTS=")]
    assert line, r.stdout + r.stderr
    results = json.loads(line[-1][len("RESULTS="):])
    assert results.pop("__still_works__") == [[0.0, 7.0], [1.0, 7.0], [2.0, 7.0]]
    return results


# ----------------------------------------------------------------------------
# shape and device mismatches (in process: these are ordinary errors)


def test_copy_shape_mismatch_mentions_sizes():
    t = torch.ones(3, device=DEV)
    with pytest.raises(RuntimeError, match=r"\(3\).*\(5\)"):
        t.copy_(torch.ones(5))  # cpu -> tpu
    with pytest.raises(RuntimeError, match=r"\(3\).*\(5\)"):
        t.copy_(torch.ones(2, 5, device=DEV))  # tpu -> tpu
    with pytest.raises(RuntimeError, match=r"\(4\).*\(3\)"):
        torch.zeros(4).copy_(t)  # tpu -> cpu
    with pytest.raises(RuntimeError, match=r"\(2\).*\(3\)"):
        torch.zeros(2, 2, device=DEV).t().copy_(torch.ones(2, 3))
    # a source with more dimensions than the destination cannot broadcast
    with pytest.raises(RuntimeError):
        torch.zeros(3, device=DEV).copy_(torch.ones(2, 3, device=DEV))
    # the failed copies changed nothing
    assert t.cpu().tolist() == [1.0, 1.0, 1.0]


def test_mixing_devices_where_pytorch_forbids():
    t = torch.ones(3, device=DEV)
    c = torch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        c.add_(t)
    with pytest.raises(RuntimeError, match="same device"):
        torch.add(t, c)
    with pytest.raises(RuntimeError, match="device"):
        torch.empty(0, device=DEV).set_(c)
    with pytest.raises(RuntimeError, match="device"):
        torch.empty(0).set_(t)
    with pytest.raises(RuntimeError, match="device"):
        torch.empty(0, device=DEV).set_(c.untyped_storage(), 0, (3,), (1,))
    with pytest.raises(TypeError, match="numpy"):
        t.numpy()


def test_invalid_views_raise_runtime_error():
    t = torch.ones(3, 4, device=DEV)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.t().view(12)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided((13,), (1,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        t.as_strided((2,), (-1,))
    with pytest.raises(RuntimeError, match="shape '\\[5\\]' is invalid"):
        t.view(5)
    with pytest.raises(RuntimeError):
        t.view(torch.float64).t().view(torch.float32).t().view(torch.float64)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        torch.ones(3, device=DEV).view(torch.float64)
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t.select(1, -5)
    with pytest.raises(IndexError):
        t.transpose(0, 2)
    with pytest.raises(RuntimeError):
        t.expand(2, 3)
    with pytest.raises(RuntimeError):
        t.unfold(1, 5, 1)
    with pytest.raises(RuntimeError):
        t.diagonal(dim1=0, dim2=0)


def test_bad_scalar_and_value_arguments():
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        torch.ones(3, device=DEV).item()
    # an out-of-range fill through a view raises at the call
    y = torch.zeros(3, dtype=torch.int8, device=DEV)
    with pytest.raises(RuntimeError, match="overflow"):
        y[1:].fill_(300)
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(3, dtype=torch.float16, device=DEV)[:2].fill_(1e6)
    assert y.cpu().tolist() == [0, 0, 0]
    with pytest.raises(RuntimeError, match="0-dimension"):
        torch.zeros(3, device=DEV).fill_(torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.empty(-1, device=DEV)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.empty(3, device=DEV).resize_(-1)
    with pytest.raises(RuntimeError, match="overflow"):
        torch.empty(2**40, 2**40, device=DEV)
    with pytest.raises(RuntimeError):
        torch.arange(0, 10, 0, device=DEV)
    with pytest.raises(RuntimeError):
        torch.arange(10, 0, 1, device=DEV)
    with pytest.raises(ValueError, match="Expected a tpu device"):
        torch.tpu.set_device("cpu")


def test_fill_overflow_raises_at_the_call():
    x = torch.zeros(3, dtype=torch.int8, device=DEV)
    with pytest.raises(RuntimeError, match="overflow"):
        x.fill_(300)
    # the rejected fill left nothing pending behind
    assert x.cpu().tolist() == [0, 0, 0]


def test_full_overflow_raises_at_the_call():
    with pytest.raises(RuntimeError, match="overflow"):
        torch.full((3,), 300, dtype=torch.uint8, device=DEV)
    assert torch.full((3,), 255, dtype=torch.uint8, device=DEV).cpu().tolist() == [255, 255, 255]


def test_fill_overflow_raises_eventually():
    """Whatever the timing, the bad value never reaches memory silently."""
    x = torch.zeros(3, dtype=torch.int8, device=DEV)
    with pytest.raises(RuntimeError, match="overflow"):
        x.fill_(300)
        x.cpu()


# ----------------------------------------------------------------------------
# missing lowerings and unsupported dtypes


# Ops with no tpu lowering yet (when one gets a lowering, pick another here).
MISSING = [
    ("aten::special_airy_ai", lambda t: torch.special.airy_ai(t)),
    ("aten::linalg_ldl_factor_ex.out", lambda t: torch.linalg.ldl_factor(t[0, 0])),
]


@pytest.mark.parametrize("name,fn", MISSING, ids=[n.split("::")[1] for n, _ in MISSING])
def test_missing_lowering_raises_not_implemented(name, fn):
    t = torch.ones(1, 1, 4, 4, device=DEV)
    with pytest.raises(NotImplementedError) as info:
        fn(t)
    msg = str(info.value)
    assert name in msg, msg
    assert "tpu" in msg and "TORCH_TPU_CPU_FALLBACK" in msg
    # NotImplementedError is what PyTorch uses for missing kernels (a RuntimeError subclass)
    assert issubclass(NotImplementedError, RuntimeError)
    # the device keeps working
    assert t.sum().item() == 16.0


# (the float8 dtypes are supported: tests/test_float8.py; float4_e2m1fn_x2
# as the storage PyTorch defines it: tests/test_float4.py)
UNSUPPORTED = [torch.complex32, torch.bits8]


@pytest.mark.parametrize("dtype", UNSUPPORTED, ids=[str(d).replace("torch.", "") for d in UNSUPPORTED])
def test_unsupported_dtype_raises_type_error(dtype):
    with pytest.raises(TypeError, match="not supported on the tpu device"):
        torch.empty(2, dtype=dtype, device=DEV)
    with pytest.raises(TypeError, match="not supported"):
        torch.zeros(2, dtype=dtype, device=DEV)
    if dtype not in (torch.bits8, torch.complex32):
        with pytest.raises(TypeError, match="not supported"):
            torch.zeros(2, dtype=dtype).to(DEV)
    with pytest.raises(TypeError, match="not supported"):
        torch.empty(2, device=DEV).to(dtype)


def test_unsupported_dtype_message_names_dtype():
    with pytest.raises(TypeError) as info:
        torch.empty(2, dtype=torch.complex32, device=DEV)
    assert "ComplexHalf" in str(info.value)


def test_quantized_dtype_is_rejected():
    with pytest.raises((NotImplementedError, TypeError, RuntimeError)):
        torch.empty(2, dtype=torch.qint8, device=DEV)


# ----------------------------------------------------------------------------
# writes PyTorch rejects because of memory overlap


def test_overlap_checks_on_cpu_reference():
    """The reference behaviour the tpu cases below are compared with."""
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(1).expand(3).copy_(torch.ones(3))
    x = torch.arange(5.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[1:].copy_(x[:-1])
    # copying a tensor onto itself is allowed
    x.copy_(x)


def test_copy_into_expanded_destination_raises():
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(1, device=DEV).expand(3).copy_(torch.ones(3))


def test_copy_into_expanded_destination_from_tpu_raises():
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(1, device=DEV).expand(3).copy_(torch.ones(3, device=DEV))


def test_copy_partial_overlap_raises():
    x = torch.arange(5.0, device=DEV)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[1:].copy_(x[:-1])


def test_copy_from_own_transpose_raises():
    x = torch.arange(4.0, device=DEV).reshape(2, 2)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.copy_(x.t())


def test_copy_onto_itself_is_allowed():
    x = torch.arange(4.0, device=DEV)
    x.copy_(x)
    assert x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------
# risky cases, each in a child process


def test_invalid_device_index_in_child():
    res = run_child("""
        check("empty", lambda: torch.empty(2, device="tpu:5"))
        check("zeros", lambda: torch.zeros(2, device="tpu:1"))
        check("to", lambda: torch.ones(2).to("tpu:3"))
        check("generator", lambda: torch.Generator(device="tpu:5"))
        check("set_device", lambda: torch.tpu.set_device(5))
        check("synchronize", lambda: torch.tpu.synchronize(5))
        check("props", lambda: torch.tpu.get_device_properties(5))
        check("device_ctx", lambda: torch.tpu.device(5).__enter__())
        check("mem_get_info", lambda: torch.tpu.mem_get_info(5))
        check("stream", lambda: torch.tpu.Stream(device="tpu:5"))
        check("current_after", lambda: torch.tpu.current_device())
    """)
    for label, index in [("empty", 5), ("zeros", 1), ("to", 3), ("generator", 5),
                         ("set_device", 5), ("synchronize", 5), ("props", 5),
                         ("device_ctx", 5), ("mem_get_info", 5), ("stream", 5)]:
        r = res[label]
        assert "exc" in r, (label, r)
        # like CUDA's "invalid device ordinal": a RuntimeError (not IndexError)
        # from tensor factories, generators and the device module alike, naming
        # the bad index
        assert "RuntimeError" in r["mro"], (label, r)
        assert "IndexError" not in r["mro"], (label, r)
        assert re.search(rf"\b{index}\b", r["msg"]), (label, r)
        assert "tpu" in r["msg"] or "device" in r["msg"], (label, r)
    # a failed set_device leaves the current device alone
    assert res["current_after"] == {"ok": "0"}


def test_invalid_device_string_in_child():
    res = run_child("""
        check("neg", lambda: torch.empty(2, device="tpu:-1"))
        check("junk", lambda: torch.empty(2, device="tpu:x"))
    """)
    for label in ("neg", "junk"):
        assert "RuntimeError" in res[label]["mro"], res[label]


def test_out_of_memory_in_child():
    res = run_child("""
        import gc
        gc.collect()
        before = torch.accelerator.memory_allocated()
        check("empty", lambda: torch.empty(2**45, dtype=torch.uint8, device="tpu"))
        check("empty_2_62", lambda: torch.empty(2**62, dtype=torch.uint8, device="tpu"))
        check("strided", lambda: torch.empty_strided((2**40,), (2**20,), device="tpu"))
        check("zeros", lambda: torch.zeros(2**43, device="tpu"))
        check("to", lambda: torch.ones(1).expand(2**43).to("tpu"))
        x = torch.ones(3, device="tpu")
        check("resize", lambda: x.resize_(2**45))
        # like on cpu, a failed resize_ keeps the new sizes but not the storage
        check("x_after", lambda: (x.untyped_storage().nbytes(), x[:3].cpu().tolist()))
        check("allocated_unchanged",
              lambda: torch.accelerator.memory_allocated() == before + 12)
        # a big but possible allocation still works after the failures
        check("big_ok", lambda: torch.empty(2**24, dtype=torch.uint8, device="tpu").shape)
    """)
    for label in ("empty", "empty_2_62", "strided", "zeros", "resize"):
        r = res[label]
        assert r.get("exc") == "OutOfMemoryError", (label, r)
        assert "RuntimeError" in r["mro"]
        assert "out of memory" in r["msg"], r
    assert res["to"].get("exc") in ("OutOfMemoryError", None) or "RuntimeError" in res["to"]["mro"]
    # the failed resize_ left the storage as it was
    assert res["x_after"] == {"ok": "(12, [1.0, 1.0, 1.0])"}
    assert res["allocated_unchanged"] == {"ok": "True"}
    assert res["big_ok"] == {"ok": "torch.Size([16777216])"}


def test_out_of_memory_is_catchable_in_process():
    with pytest.raises(torch.OutOfMemoryError, match="out of memory"):
        torch.empty(2**45, dtype=torch.uint8, device=DEV)
    assert torch.ones(2, device=DEV).cpu().tolist() == [1.0, 1.0]


def test_huge_resize_in_child():
    res = run_child("""
        def fresh():
            return torch.arange(4.0, device="tpu")
        check("resize_2_45", lambda: fresh().resize_(2**45))
        check("resize_2_2d", lambda: fresh().resize_(2**20, 2**25))
        check("resize_overflow", lambda: fresh().resize_(2**40, 2**40))
        check("resize_neg", lambda: fresh().resize_(-5))
        check("as_strided_huge", lambda: fresh().as_strided((2**40,), (2**30,)))
        t = fresh()
        check("resize_fail", lambda: t.resize_(2**45))
        check("after", lambda: (t.untyped_storage().nbytes(), t[:4].cpu().tolist()))
        check("shrink_back", lambda: t.resize_(4).cpu().tolist())
        check("grow_ok", lambda: (t.resize_(1000).shape, t[:4].cpu().tolist()))
    """)
    for label in ("resize_2_45", "resize_2_2d", "resize_fail"):
        assert res[label].get("exc") == "OutOfMemoryError", (label, res[label])
    for label in ("resize_overflow", "resize_neg", "as_strided_huge"):
        assert "RuntimeError" in res[label]["mro"], (label, res[label])
    assert res["after"] == {"ok": "(16, [0.0, 1.0, 2.0, 3.0])"}
    assert res["shrink_back"] == {"ok": "[0.0, 1.0, 2.0, 3.0]"}
    assert res["grow_ok"] == {"ok": "(torch.Size([1000]), [0.0, 1.0, 2.0, 3.0])"}


def test_resize_byte_overflow_raises_in_child():
    res = run_child("""
        def fresh():
            return torch.arange(4.0, device="tpu")
        t = fresh()
        check("resize_2_62", lambda: tuple(t.resize_(2**62).shape))
        check("shape_after", lambda: tuple(t.shape))
        check("fill_after", lambda: t.fill_(1.0) is t)
        check("resize_2_61", lambda: tuple(fresh().resize_(2**61).shape))
        check("cpu_reference", lambda: torch.arange(4.0).resize_(2**62))
    """)
    assert "overflow" in res["cpu_reference"]["msg"], res["cpu_reference"]
    for label in ("resize_2_62", "resize_2_61"):
        assert res[label].get("exc") == "RuntimeError", (label, res[label])
        assert "overflow" in res[label]["msg"], (label, res[label])
    # cpu's failed resize_ keeps the new sizes over the old 16-byte storage; if tpu
    # does the same, writing through the tensor must fail cleanly instead of
    # writing out of bounds, otherwise the old shape must be intact and usable
    if res["shape_after"] == {"ok": str((2**62,))}:
        assert "RuntimeError" in res["fill_after"].get("mro", []), res["fill_after"]
    else:
        assert res["shape_after"] == {"ok": "(4,)"}, res["shape_after"]
        assert res["fill_after"] == {"ok": "True"}, res["fill_after"]


def test_unsupported_dtype_and_missing_op_in_child():
    res = run_child("""
        check("f8", lambda: torch.empty(2, dtype=torch.complex32, device="tpu"))
        check("missing", lambda: torch.special.airy_ai(torch.ones(3, device="tpu")))
        check("repr", lambda: repr(torch.ones(3, device="tpu")))
    """)
    assert res["f8"]["exc"] == "TypeError", res["f8"]
    assert res["missing"]["exc"] == "NotImplementedError", res["missing"]
    assert "aten::special_airy_ai" in res["missing"]["msg"]
    r = res["repr"]
    assert "ok" in r or r["exc"] == "NotImplementedError", r


def test_errors_with_launch_blocking_in_child():
    """Errors surface synchronously (and do not abort) in the debug eager mode too."""
    code = textwrap.dedent("""
        import torch, torch_tpu
        out = []
        with torch_tpu.eager_mode("debug"):
            for fn in (lambda: torch.empty(2**45, dtype=torch.uint8, device="tpu"),
                       lambda: torch.special.airy_ai(torch.ones(3, device="tpu")),
                       lambda: torch.ones(3, device="tpu").copy_(torch.ones(4)),
                       lambda: torch.empty(2, device="tpu:7")):
                try:
                    fn()
                    out.append("none")
                except Exception as e:
                    out.append(type(e).__name__)
            out.append(torch.full((2,), 3.0, device="tpu").cpu().tolist())
        print(out)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert ("['OutOfMemoryError', 'NotImplementedError', 'RuntimeError', 'RuntimeError', "
            "[3.0, 3.0]]") in r.stdout, r.stdout + r.stderr[-2000:]

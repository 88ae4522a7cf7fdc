"""Destinations and arguments the CPU refuses or accepts, tpu against the CPU.

Each case is a function of the device; it runs once on "cpu" and once on
"tpu". Where the CPU raises, tpu must raise the same exception class with the
CPU's message inside its own (tpu may prefix the op name). Where the CPU
returns, tpu must return the same values, dtypes and shapes, and leave every
tensor the case names (out=, self of an in-place op) the same.
"""

import re
import warnings

import pytest
import torch
import torch_tpu  # noqa: F401

F, L, I32, H = torch.float32, torch.int64, torch.int32, torch.float16


def mat(d, dtype=F, shape=(2, 3)):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n) % 5 - 2).reshape(shape).to(dtype).to(d)


def run(case, dev):
    """(result, exception) of case(dev); the result moved to the CPU."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = case(dev)
        if dev == "tpu":
            torch.tpu.synchronize()
    except Exception as e:  # noqa: BLE001
        return None, e
    if isinstance(r, (tuple, list)):
        return tuple(t.cpu() for t in r), None
    return r.cpu(), None


def check(case):
    want, cpu_exc = run(case, "cpu")
    got, tpu_exc = run(case, "tpu")
    if cpu_exc is not None:
        assert tpu_exc is not None, f"cpu raised {type(cpu_exc).__name__}: {cpu_exc}; tpu returned {got}"
        assert type(tpu_exc) is type(cpu_exc), (type(cpu_exc), cpu_exc, type(tpu_exc), tpu_exc)
        cpu_msg = str(cpu_exc).splitlines()[0]
        # A dtype refusal names CPU's kernel ("nextafter_cpu"); tpu names its
        # own, for the same dtype.
        kernel = re.match(r'"\w+" (not implemented for .*)', cpu_msg)
        assert (kernel.group(1) if kernel else cpu_msg) in str(tpu_exc), (cpu_msg, str(tpu_exc))
        return
    assert tpu_exc is None, f"cpu returned {want}; tpu raised {type(tpu_exc).__name__}: {tpu_exc}"
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and w.shape == g.shape, (w, g)
        torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


def zeros(d, shape, dtype=F):
    return torch.zeros(shape, dtype=dtype, device=d)


# ---- out= dtypes --------------------------------------------------------------------------

OUT_DTYPE = {
    "mm_long": lambda d: torch.mm(mat(d), mat(d, shape=(3, 2)), out=zeros(d, (2, 2), L)),
    "mm_half": lambda d: torch.mm(mat(d), mat(d, shape=(3, 2)), out=zeros(d, (2, 2), H)),
    "mm_int_into_float": lambda d: torch.mm(mat(d, L), mat(d, L, (3, 2)), out=zeros(d, (2, 2))),
    "mm_ok_resized": lambda d: torch.mm(mat(d), mat(d, shape=(3, 2)), out=zeros(d, (4,))),
    "addmm_long": lambda d: torch.addmm(zeros(d, (2, 2)), mat(d), mat(d, shape=(3, 2)),
                                        out=zeros(d, (2, 2), L)),
    "addmm_inplace_long_self": lambda d: zeros(d, (2, 2), L).addmm_(mat(d), mat(d, shape=(3, 2))),
    "bmm_long": lambda d: torch.bmm(mat(d)[None], mat(d, shape=(3, 2))[None],
                                    out=zeros(d, (1, 2, 2), L)),
    "baddbmm_long": lambda d: torch.baddbmm(zeros(d, (1, 2, 2)), mat(d)[None],
                                            mat(d, shape=(3, 2))[None], out=zeros(d, (1, 2, 2), L)),
    "matmul_long": lambda d: torch.matmul(mat(d), mat(d, shape=(3, 2)), out=zeros(d, (2, 2), L)),
    "matmul_3d_long": lambda d: torch.matmul(mat(d)[None], mat(d, shape=(3, 2)),
                                             out=zeros(d, (1, 2, 2), L)),
    "mv_long": lambda d: torch.mv(mat(d), mat(d, shape=(3,)), out=zeros(d, (2,), L)),
    "addmv_long": lambda d: torch.addmv(zeros(d, (2,)), mat(d), mat(d, shape=(3,)),
                                        out=zeros(d, (2,), L)),
    "argmax_float": lambda d: torch.argmax(mat(d), 0, out=zeros(d, (3,))),
    "argmin_int32": lambda d: torch.argmin(mat(d), 0, out=zeros(d, (3,), I32)),
    "argmax_all_float": lambda d: torch.argmax(mat(d), out=zeros(d, ())),
    "argmax_ok": lambda d: torch.argmax(mat(d), 1, out=zeros(d, (2,), L)),
    "sort_values_as_indices": lambda d: torch.sort(mat(d), 0, out=(zeros(d, (2, 3)),) * 2),
    "sort_int32_indices": lambda d: torch.sort(mat(d), 0, out=(zeros(d, (2, 3)),
                                                                zeros(d, (2, 3), I32))),
    "sort_long_values": lambda d: torch.sort(mat(d), 0, out=(zeros(d, (2, 3), L),
                                                              zeros(d, (2, 3), L))),
    "sort_ok": lambda d: torch.sort(mat(d), 1, out=(zeros(d, (1,)), zeros(d, (1,), L))),
    "topk_int32_indices": lambda d: torch.topk(mat(d), 1, 0, out=(zeros(d, (1, 3)),
                                                                   zeros(d, (1, 3), I32))),
    "topk_half_values": lambda d: torch.topk(mat(d), 1, 0, out=(zeros(d, (1, 3), H),
                                                                 zeros(d, (1, 3), L))),
    "max_dim_int32_indices": lambda d: torch.max(mat(d), 0, out=(zeros(d, (3,)),
                                                                  zeros(d, (3,), I32))),
    "min_dim_double_values": lambda d: torch.min(mat(d), 0, out=(zeros(d, (3,), torch.float64),
                                                                  zeros(d, (3,), L))),
    "max_dim_ok": lambda d: torch.max(mat(d), 1, True, out=(zeros(d, (0,)), zeros(d, (0,), L))),
    "index_select_long": lambda d: torch.index_select(mat(d), 0, torch.tensor([1], device=d),
                                                      out=zeros(d, (1, 3), L)),
    "index_select_double": lambda d: torch.index_select(mat(d), 1, torch.tensor([0, 2], device=d),
                                                        out=zeros(d, (2, 2), torch.float64)),
    "gather_double": lambda d: torch.gather(mat(d), 0, torch.tensor([[0, 1, 0]], device=d),
                                            out=zeros(d, (1, 3), torch.float64)),
    "mean_long": lambda d: torch.mean(mat(d), 0, out=zeros(d, (3,), L)),
    "mean_bool": lambda d: torch.mean(mat(d, torch.float64), 0, out=zeros(d, (3,), torch.bool)),
    "mean_dtype_mismatch": lambda d: torch.mean(mat(d), 0, dtype=F, out=zeros(d, (3,), L)),
    "mean_double_ok": lambda d: torch.mean(mat(d), 0, out=zeros(d, (3,), torch.float64)),
    "std_long": lambda d: torch.std(mat(d, torch.float64), 0, out=zeros(d, (3,), L)),
    "amax_long": lambda d: torch.amax(mat(d), 0, out=zeros(d, (3,), L)),
    "amin_int_into_double": lambda d: torch.amin(mat(d, L), 0, out=zeros(d, (3,), torch.float64)),
    "logsumexp_long": lambda d: torch.logsumexp(mat(d, L), 0, out=zeros(d, (3,), L)),
    "vector_norm_double": lambda d: torch.linalg.vector_norm(mat(d), 2, 0,
                                                             out=zeros(d, (3,), torch.float64)),
    "all_long": lambda d: torch.all(mat(d, L), 0, out=zeros(d, (3,), L)),
    "any_float": lambda d: torch.any(mat(d, L), 0, out=zeros(d, (3,))),
    "softmax_double": lambda d: torch.softmax(mat(d), 0, out=zeros(d, (2, 3), torch.float64)),
    "log_softmax_long": lambda d: torch._log_softmax(mat(d), 0, False, out=zeros(d, (2, 3), L)),
    "clamp_long": lambda d: torch.clamp(mat(d), 0, 1, out=zeros(d, (2, 3), L)),
    "clamp_int_into_float": lambda d: torch.clamp(mat(d, L), 0, 1, out=zeros(d, (2, 3))),
}


@pytest.mark.parametrize("name", sorted(OUT_DTYPE))
def test_out_dtype(name):
    check(OUT_DTYPE[name])


# ---- scans: out's dtype, in place ---------------------------------------------------------

SCANS = {
    "cumsum_int32_inplace": lambda d: mat(d, I32).cumsum_(1),
    "cumsum_uint8_inplace_wraps": lambda d: (mat(d, L) * 60 + 130).to(torch.uint8).cumsum_(1),
    "cumprod_int8_inplace_wraps": lambda d: (mat(d, L) * 7 + 20).to(torch.int8).cumprod_(1),
    "cumsum_bool_inplace": lambda d: mat(d, torch.bool).cumsum_(0),
    "cumsum_empty_bool_inplace": lambda d: zeros(d, (1, 0), torch.bool).cumsum_(0),
    "cumprod_0d_bool_inplace": lambda d: torch.tensor(True, device=d).cumprod_(0),
    "cumsum_0d_bool_out": lambda d: torch.cumsum(torch.tensor(True, device=d), 0,
                                                 out=zeros(d, (), torch.bool)),
    "cumprod_bool_inplace": lambda d: mat(d, torch.bool).cumprod_(0),
    "cumsum_int_into_float": lambda d: torch.cumsum(mat(d, L), 1, out=zeros(d, (2, 3))),
    "cumsum_float_into_int32": lambda d: torch.cumsum(mat(d) * 0.75, 1, out=zeros(d, (2, 3), I32)),
    "cumprod_float_into_long": lambda d: torch.cumprod(mat(d) + 0.5, 1, out=zeros(d, (2, 3), L)),
    "cumsum_into_bool": lambda d: torch.cumsum(mat(d), 1, out=zeros(d, (2, 3), torch.bool)),
    "cumsum_dtype_bool": lambda d: torch.cumsum(mat(d), 1, dtype=torch.bool),
    "cumsum_dtype_out_mismatch": lambda d: torch.cumsum(mat(d), 1, dtype=L,
                                                        out=zeros(d, (2, 3), I32)),
    "cumsum_functional_int": lambda d: torch.cumsum(mat(d, I32), 0),
    "cumsum_half_into_float": lambda d: torch.cumsum(mat(d, H) * 1000, 1, out=zeros(d, (2, 3))),
}


@pytest.mark.parametrize("name", sorted(SCANS))
def test_scan_dtypes(name):
    check(SCANS[name])


# ---- memory overlap -----------------------------------------------------------------------

def arange(d, n=5, dtype=F):
    return torch.arange(n, device=d).to(dtype)


def _x_after(fn):
    """The written tensor after fn(x): the written-to view's base."""
    def case(d):
        x = arange(d)
        fn(x, d)
        return x
    return case


OVERLAP = {
    "add_partial_inplace": _x_after(lambda x, d: x[1:].add_(x[:-1])),
    "add_out_partial": _x_after(lambda x, d: torch.add(x[:-1], 1, out=x[1:])),
    "mul_out_transposed_resized": lambda d: torch.mul(mat(d), 2, out=mat(d).t()),
    "mul_out_transposed_self": lambda d: (lambda x: torch.mul(x, 2, out=x.t()))(mat(d)),
    "mul_out_same_ok": _x_after(lambda x, d: torch.mul(x, 2, out=x)),
    "cumsum_out_partial": _x_after(lambda x, d: torch.cumsum(x[:-1], 0, out=x[1:])),
    "cumsum_out_same_ok": _x_after(lambda x, d: torch.cumsum(x, 0, out=x)),
    "cumsum_out_expanded": lambda d: torch.cumsum(arange(d, 3), 0, out=zeros(d, (1,)).expand(3)),
    "cumsum_inplace_expanded": lambda d: zeros(d, (1,)).expand(3).cumsum_(0),
    "sort_values_partial": _x_after(lambda x, d: torch.sort(x[:-1], 0, out=(x[1:], zeros(d, (4,), L)))),
    "sort_values_same_ok": _x_after(lambda x, d: torch.sort(x, 0, True, out=(x, zeros(d, (5,), L)))),
    "topk_values_partial": _x_after(lambda x, d: torch.topk(x[:-1], 2, out=(x[1:3], zeros(d, (2,), L)))),
    "topk_indices_partial": lambda d: (lambda x: torch.topk(x[:-1], 2, out=(zeros(d, (2,), L), x[1:3])))(arange(d, 5, L)),
    "max_dim_values_partial": _x_after(lambda x, d: torch.max(x[:-1].reshape(2, 2), 0, out=(x[1:3], zeros(d, (2,), L)))),
    "max_dim_values_keepdim_view_ok": lambda d: (lambda x: torch.max(x, 0, out=(x[0], zeros(d, (3,), L))))(mat(d, shape=(1, 3))),
    "index_select_out_partial": _x_after(lambda x, d: torch.index_select(x[:-1], 0, torch.tensor([0, 1, 2], device=d), out=x[1:4])),
    "index_select_out_is_self": _x_after(lambda x, d: torch.index_select(x, 0, torch.tensor([4, 3, 2, 1, 0], device=d), out=x)),
    "index_select_out_is_index": lambda d: (lambda i: torch.index_select(arange(d, 3, L), 0, i, out=i))(torch.tensor([0, 1, 2], device=d)),
    "index_select_out_expanded": lambda d: torch.index_select(arange(d, 3), 0, torch.tensor([0, 1, 2], device=d), out=zeros(d, (1,)).expand(3)),
    "gather_out_partial": _x_after(lambda x, d: torch.gather(x[:-1], 0, torch.tensor([0, 1, 2], device=d), out=x[1:4])),
    "gather_out_is_index_ok": lambda d: (lambda i: torch.gather(arange(d, 3, L), 0, i, out=i))(torch.tensor([2, 1, 0], device=d)),
    "mm_out_expanded": lambda d: torch.mm(torch.ones(2, 2, device=d), torch.ones(2, 2, device=d), out=zeros(d, (1, 2)).expand(2, 2)),
}


@pytest.mark.parametrize("name", sorted(OVERLAP))
def test_overlap(name):
    check(OVERLAP[name])


# ---- in-place writes into expanded views --------------------------------------------------

def _expanded(op):
    def case(d):
        base = mat(d, shape=(1, 3))
        op(base.expand(2, 3), d)
        return base
    return case


EXPANDED = {
    "masked_fill_all": _expanded(lambda x, d: x.masked_fill_(torch.ones(2, 3, dtype=torch.bool, device=d), 1.0)),
    # Locations written by one row only: the CPU writes them, whatever the other row says.
    "masked_fill_one_row": _expanded(lambda x, d: x.masked_fill_(torch.tensor([[True, False, False], [False, False, True]], device=d), 7.0)),
    "masked_fill_tensor_value": _expanded(lambda x, d: x.masked_fill_(torch.tensor([[False, True, False], [False, False, False]], device=d), torch.tensor(-3.0, device=d))),
    "masked_fill_broadcast_mask": _expanded(lambda x, d: x.masked_fill_(torch.tensor([False, True, False], device=d), 5.0)),
    "masked_fill_middle_dim": lambda d: (lambda b: (b.expand(2, 2, 3).masked_fill_(
        torch.tensor([[[True, False, False], [False, False, False]],
                      [[False, False, False], [False, True, False]]], device=d), 9.0), b)[1])(mat(d, shape=(2, 1, 3))),
    "nan_to_num_refused": _expanded(lambda x, d: x.nan_to_num_()),
    "add_refused": _expanded(lambda x, d: x.add_(1)),
    "uniform_refused": _expanded(lambda x, d: x.uniform_()),
}


@pytest.mark.parametrize("name", sorted(EXPANDED))
def test_expanded_writes(name):
    check(EXPANDED[name])


def test_masked_fill_expanded_warns_like_cpu():
    for d in ("cpu", "tpu"):
        x = mat(d, shape=(1, 3)).expand(2, 3)
        with pytest.warns(UserWarning, match="masked_fill_ on expanded tensors is deprecated"):
            x.masked_fill_(torch.ones(2, 3, dtype=torch.bool, device=d), 1.0)


# ---- empty integer softmax, order statistics of 0-d bools ---------------------------------

SOFTMAX = {}
for _f in ("softmax", "log_softmax"):
    for _dt in (torch.int64, torch.uint8, torch.bool):
        for _shape in ((2, 0), (0, 3), (2, 3), ()):
            for _dim in (0, -1):
                if _shape == () and _dim == 0:
                    continue
                SOFTMAX[f"{_f}_{str(_dt)[6:]}_{_shape}_{_dim}"] = (
                    lambda d, f=_f, dt=_dt, s=_shape, dim=_dim:
                    getattr(torch, f)(torch.zeros(s, dtype=dt, device=d), dim))


@pytest.mark.parametrize("name", sorted(SOFTMAX))
def test_integer_softmax(name):
    check(SOFTMAX[name])


ORDER = {
    "kthvalue_0d_bool": lambda d: torch.kthvalue(torch.tensor(True, device=d), 1),
    "kthvalue_bool": lambda d: torch.kthvalue(mat(d, torch.bool), 1, 1),
    "kthvalue_0d_k2": lambda d: torch.kthvalue(torch.tensor(True, device=d), 2),
    "nanmedian_bool": lambda d: torch.nanmedian(mat(d, torch.bool)),
    "median_bool": lambda d: torch.median(mat(d, torch.bool)),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_order_statistics_dtypes(name):
    check(ORDER[name])


# ---- trace and nextafter ------------------------------------------------------------------

NEW_OPS = {
    f"trace_{str(dt)[6:]}": (lambda d, dt=dt: torch.trace(mat(d, dt, (3, 4))))
    for dt in (F, torch.float64, H, torch.bfloat16, L, I32, torch.uint8, torch.bool)
}
NEW_OPS.update({
    "trace_1d": lambda d: torch.trace(mat(d, shape=(3,))),
    "trace_empty": lambda d: torch.trace(zeros(d, (0, 3))),
    "trace_transposed": lambda d: torch.trace(mat(d, shape=(4, 3)).t()),
})
_NA_X = [0.0, 1.0, -1.0, float("inf"), -float("inf"), float("nan"), 1e-30, -0.0, 65504.0, 3.0]
_NA_Y = [1.0, 0.0, -2.0, 0.0, 0.0, 1.0, 0.0, 0.0, float("inf"), 3.0]
for _dt in (F, torch.float64, H, torch.bfloat16, L, torch.bool):
    _n = str(_dt)[6:]
    NEW_OPS[f"nextafter_{_n}"] = (lambda d, dt=_dt: torch.nextafter(
        torch.tensor(_NA_X, device=d).to(dt), torch.tensor(_NA_Y, device=d).to(dt)))
    NEW_OPS[f"nextafter_inplace_{_n}"] = (lambda d, dt=_dt: torch.tensor(_NA_X, device=d).to(dt)
                                          .nextafter_(torch.tensor(_NA_Y, device=d).to(dt)))
NEW_OPS.update({
    # (A wider out= computes in the out dtype: known.py's out_dtype_compute.)
    "nextafter_out": lambda d: torch.nextafter(torch.tensor([1.0, 0.0], device=d),
                                               torch.tensor([2.0, -1.0], device=d),
                                               out=zeros(d, (2,))[:2]),
    "nextafter_mixed": lambda d: torch.nextafter(torch.tensor([1.0], device=d),
                                                 torch.tensor([2.0], dtype=torch.float64, device=d)),
    "nextafter_broadcast": lambda d: torch.nextafter(mat(d), torch.tensor(0.0, device=d)),
})


@pytest.mark.parametrize("name", sorted(NEW_OPS))
def test_trace_nextafter(name):
    check(NEW_OPS[name])


# Dtypes CPU refuses before it looks at anything else (bad-input fuzzer).
BOOL_REFUSALS = {
    "argmax_all": lambda d: mat(d, torch.bool).argmax(),
    "argmax_dim_empty": lambda d: torch.zeros(2, 0, dtype=torch.bool, device=d).argmax(1),
    "argmin_dim": lambda d: mat(d, torch.bool).argmin(0),
    "arange_bool": lambda d: torch.arange(0, 3, dtype=torch.bool, device=d),
    "max_dim_bool_ok": lambda d: mat(d, torch.bool).max(0),
}


@pytest.mark.parametrize("name", sorted(BOOL_REFUSALS))
def test_bool_refusals(name):
    check(BOOL_REFUSALS[name])

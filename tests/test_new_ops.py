"""Differential tests (tpu against CPU) of the operators added for issue 8,
for what the OpInfo suite covers thinly: data-dependent result sizes (one
small host sync, no compile per count), edge cases (empty, 0-d, all-true and
all-false masks, NaN, -0.0, infinities, shifts by out-of-range amounts),
in-place / out= variants, CPU's exception classes, and that scalars are
runtime arguments (no recompile per value).

`same(fn, *args)` runs fn on CPU tensors and on tpu copies and compares every
output exactly (values, NaN positions, dtype, shape); `close(...)` allows
float rounding; `same_error(...)` requires the same exception class.
"""

import io

import pytest
import torch

import torch_tpu
from torch_tpu import debug

DEV = "tpu"
NAN, INF = float("nan"), float("inf")


pytestmark = pytest.mark.usefixtures("cpu_fallback_off")


def _to(x):
    if isinstance(x, torch.Tensor):
        return x.to(DEV)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v) for v in x)
    return x


def _outputs(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _compare(actual, expected, **tol):
    actual, expected = _outputs(actual), _outputs(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if not isinstance(e, torch.Tensor):
            assert a == e
            continue
        assert a.device.type == DEV
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
        torch.testing.assert_close(a.cpu(), e, equal_nan=True, **tol)


def same(fn, *args):
    _compare(fn(*_to(args)), fn(*args), rtol=0, atol=0)


def close(fn, *args, rtol=1.3e-6, atol=1e-5):
    _compare(fn(*_to(args)), fn(*args), rtol=rtol, atol=atol)


def same_error(fn, *args):
    with pytest.raises(Exception) as cpu:
        fn(*args)
    with pytest.raises(type(cpu.value)):
        fn(*_to(args))


def counters():
    torch.tpu.synchronize()
    return debug.metrics()


def delta(before, after, key):
    return after[key] - before[key]


# ---------------------------------------------------------------------------
# data-dependent sizes: one small host read, no compile per count
# ---------------------------------------------------------------------------

MILLION = torch.randn(1 << 20, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("op", ["nonzero", "masked_select"])
def test_one_small_sync_for_a_million_elements(op):
    x = MILLION.to(DEV)
    mask = x > 0.5
    fn = (lambda: mask.nonzero()) if op == "nonzero" else (lambda: torch.masked_select(x, mask))
    fn()  # compile
    before = counters()
    result = fn()
    after = counters()
    assert delta(before, after, "host_syncs") == 1
    assert delta(before, after, "d2h_bytes") == 8  # the count, nothing else
    expected = (MILLION > 0.5).nonzero() if op == "nonzero" else MILLION[MILLION > 0.5]
    assert torch.equal(result.cpu(), expected)


def test_varying_counts_reuse_programs():
    # Counts from 1025 to 2048 share one bucket: after the first, no compiles.
    x = torch.arange(4096.0).to(DEV)
    # (x[mask] is not in the list: advanced indexing gathers with the count's
    # shape after nonzero, one program per count.)
    for op in (lambda m: m.nonzero(), lambda m: torch.masked_select(x, m)):
        op(x < 1500)
        before = counters()
        for count in (1025, 1300, 1777, 2048):
            assert op(x < count).shape[0] == count
        assert delta(before, counters(), "compiles") == 0
    # Every count from 0 to n: at most one fill program per power of two.
    y = torch.arange(64.0).to(DEV)
    before = counters()
    for count in range(65):
        assert (y < count).nonzero().shape[0] == count
    assert delta(before, counters(), "compiles") <= 2 + 7 + 1  # count, compare, fills


def test_unique_varying_counts_reuse_programs():
    # 65 to 128 groups of 256 elements: one bucket, so after the first call
    # no compiles, neither for unique nor for reading its results back.
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randperm(256, generator=gen) % groups for groups in (70, 65, 100, 128)]
    torch.unique(xs[0].to(DEV), return_inverse=True, return_counts=True)[0].cpu()
    before = counters()
    for x in xs:
        same(lambda t: torch.unique(t, return_inverse=True, return_counts=True), x)
    assert delta(before, counters(), "compiles") == 0


def test_reading_results_back_does_not_compile_per_count():
    x = torch.arange(1000.0).to(DEV)
    (x < 600).nonzero().cpu()
    torch.masked_select(x, x < 600).tolist()
    before = counters()
    for count in (513, 600, 777, 1000):
        assert (x < count).nonzero().cpu().shape == (count, 1)
        assert torch.masked_select(x, x < count).tolist() == list(range(count))
    assert delta(before, counters(), "compiles") == 0


def test_sync_counts_of_other_data_dependent_ops():
    r = torch.tensor([2, 0, 3, 1]).to(DEV)
    x = torch.tensor([0, 4, 4, 1, 9]).to(DEV)
    for fn, syncs, nbytes in [
        (lambda: torch.repeat_interleave(r), 1, 16),  # total and smallest count
        (lambda: torch.repeat_interleave(r, output_size=6), 0, 0),
        (lambda: torch.bincount(x), 1, 16),  # smallest and largest value
        (lambda: torch.unique(x), 1, 8),
        (lambda: torch.equal(x, x), 1, 1),
        (lambda: x.float().masked_scatter_(x > 3, x.float() * 2), 0, 0),
        (lambda: x.clone().index_fill_(0, r[:2], r[0]), 0, 0),
    ]:
        fn()
        before = counters()
        fn()
        after = counters()
        assert delta(before, after, "host_syncs") == syncs
        assert delta(before, after, "d2h_bytes") == nbytes


# ---------------------------------------------------------------------------
# nonzero, masked_select, repeat_interleave, bincount, unique
# ---------------------------------------------------------------------------

MASK_INPUTS = [
    torch.tensor(0.0),
    torch.tensor(-2.5),
    torch.tensor([0.0, -0.0, NAN, 1.0, -INF]),
    torch.zeros(3, 4),
    torch.ones(2, 3, 2, dtype=torch.bool),
    torch.zeros(0, 3),
    torch.tensor([[0, 3, 0], [7, 0, 1]]),
]


@pytest.mark.parametrize("x", MASK_INPUTS, ids=range(len(MASK_INPUTS)))
def test_nonzero_and_masked_select(x):
    same(torch.nonzero, x)
    same(lambda t: torch.nonzero(t, as_tuple=True), x)
    same(torch.argwhere, x)
    same(lambda t: torch.masked_select(t, t != 0), x)
    same(lambda t: torch.masked_select(t, torch.ones_like(t, dtype=torch.bool)), x)
    same(lambda t: t[t != 0], x)


def test_nonzero_masked_select_out_and_broadcast():
    x = torch.arange(12.0).view(3, 4) - 5
    same(lambda t: torch.nonzero(t > 0, out=torch.empty(7, 2, dtype=torch.long, device=t.device)), x)
    same(lambda t: torch.masked_select(t, t > 0, out=torch.empty(0, device=t.device)), x)
    same(lambda t, m: torch.masked_select(t, m), x, torch.tensor([True, False, True, True]))
    same(lambda t, m: torch.masked_select(t, m), torch.tensor([1.0, 2.0]), torch.ones(3, 2) > 0)
    same_error(lambda t: torch.masked_select(t, t.long()), x)
    same_error(lambda t: torch.nonzero(t, out=torch.empty(0, device=t.device)), x)


def test_repeat_interleave():
    for r in [torch.tensor([2, 0, 3]), torch.tensor([0, 0]), torch.tensor([1], dtype=torch.int32),
              torch.tensor([], dtype=torch.long)]:
        same(torch.repeat_interleave, r)
    same(lambda r: torch.repeat_interleave(r, output_size=5), torch.tensor([2, 0, 3]))
    x = torch.arange(8.0).view(4, 2)
    same(lambda t, r: torch.repeat_interleave(t, r, dim=0), x, torch.tensor([1, 0, 3, 1]))
    same(lambda t: torch.repeat_interleave(t, 2, dim=1), x)
    same_error(torch.repeat_interleave, torch.tensor([1, -1]))
    same_error(torch.repeat_interleave, torch.tensor([[1]]))
    same_error(torch.repeat_interleave, torch.tensor([1.0]))


def test_bincount():
    v = torch.tensor([0, 2, 2, 5])
    same(torch.bincount, v)
    same(lambda t: torch.bincount(t, minlength=9), v)
    same(lambda t: torch.bincount(t, minlength=3), torch.tensor([], dtype=torch.long))
    for w in [torch.tensor([0.5, 1.5, 2.0, -1.0]), torch.tensor([1, 2, 3, 4]),
              torch.tensor([0.5, 1.5, 2.0, -1.0], dtype=torch.float64)]:
        close(lambda t, ww: torch.bincount(t, ww), v, w)
    same_error(torch.bincount, torch.tensor([-1, 2]))
    same_error(torch.bincount, torch.tensor([1.0]))
    same_error(torch.bincount, torch.tensor([[1]]))
    same_error(lambda t: torch.bincount(t, minlength=-1), v)


UNIQUE_INPUTS = [
    torch.tensor([NAN, 1.0, NAN, 1.0, -0.0, 0.0, 2.0]),
    torch.tensor(3.0),
    torch.tensor([]),
    torch.tensor([True, False, True]),
    torch.tensor([[4, 1, 4], [1, 1, 0]]),
]


@pytest.mark.parametrize("x", UNIQUE_INPUTS, ids=range(len(UNIQUE_INPUTS)))
@pytest.mark.parametrize("inverse,counts", [(False, False), (True, True), (False, True)])
def test_unique(x, inverse, counts):
    same(lambda t: torch.unique(t, return_inverse=inverse, return_counts=counts), x)
    same(lambda t: torch.unique(t, sorted=False, return_inverse=inverse, return_counts=counts), x)
    same(lambda t: torch.unique_consecutive(t, return_inverse=inverse, return_counts=counts), x)
    same(lambda t: torch._unique(t, return_inverse=inverse), x)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim(dim):
    x = torch.randint(0, 2, (3, 5, 2), generator=torch.Generator().manual_seed(2))
    for fn in (torch.unique, torch.unique_consecutive):
        actual = fn(x.to(DEV), dim=dim, return_inverse=True, return_counts=True)
        expected = fn(x, dim=dim, return_inverse=True, return_counts=True)
        _compare(actual, expected, rtol=0, atol=0)
        assert actual[0].stride() == expected[0].stride()
    same(lambda t: torch.unique(t, dim=1), torch.zeros(2, 0))
    same_error(lambda t: torch.unique(t, dim=0), torch.zeros(2, 0))
    same_error(lambda t: torch.unique(t, dim=0), torch.tensor(1.0))


# ---------------------------------------------------------------------------
# elementwise: shifts, number theory, special functions
# ---------------------------------------------------------------------------

INT_TYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_shifts_match_cpu_for_every_amount(dtype):
    info = torch.iinfo(dtype)
    values = torch.tensor([1, 5, 3, info.max, info.min, 0, 7, info.max // 3], dtype=dtype)
    if dtype != torch.uint8:
        values[1], values[2] = -1, -8
    bits = info.bits
    amounts = torch.tensor([0, 1, 3, bits - 1, bits, bits + 1, 100 % (info.max + 1), 2])
    if dtype != torch.uint8:
        amounts[-1] = -1
    amounts = amounts.to(dtype)
    x, s = values.repeat(len(amounts)), amounts.repeat_interleave(len(values))
    same(torch.bitwise_left_shift, x, s)
    same(torch.bitwise_right_shift, x, s)
    same(lambda a, b: a << b, x, s)
    same(lambda a, b: a >> b, x, s)
    same(lambda a: a << 3, x)
    same(lambda a: a >> 2, x)
    same(lambda b: torch.bitwise_left_shift(3, b), s.clamp(0, bits - 1))
    same(lambda b: torch.bitwise_right_shift(-100 if dtype != torch.uint8 else 200, b), s)


def test_shift_variants_promotion_and_errors():
    x = torch.tensor([1, 2, 3], dtype=torch.int8)

    def inplace(t):
        t = t.clone()
        t <<= 2
        t >>= torch.tensor([1], device=t.device)
        t.bitwise_left_shift_(1)
        return t

    same(inplace, x)
    same(lambda t: t << torch.tensor([2], device=t.device), x)  # int8 << int64 -> int64
    same(lambda t: torch.bitwise_left_shift(t, 2, out=torch.empty(3, dtype=torch.int8,
                                                                   device=t.device)), x)
    same(lambda t: torch.bitwise_right_shift(t, t, out=torch.empty(0, dtype=torch.int8,
                                                                    device=t.device)), x)
    same(lambda t: torch.tensor([True, False], device=t.device) << t[:2], x)
    for bad, amount in ((torch.tensor([1.5]), 1), (torch.tensor([True]), True)):
        with pytest.raises(NotImplementedError, match="lshift_cpu"):
            bad.to(DEV) << amount
        with pytest.raises(NotImplementedError, match="rshift_cpu"):
            torch.bitwise_right_shift(bad.to(DEV), amount)
    same(lambda t: t << 1, torch.tensor([True, False]))  # an int scalar promotes bool to long


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_gcd_lcm(dtype):
    info = torch.iinfo(dtype)
    a = torch.tensor([0, 0, 6, 6, 12, info.max, info.min, 89, 34], dtype=dtype)
    b = torch.tensor([0, 5, 4, 0, 18, 8, 2, 55, 21], dtype=dtype)
    if dtype != torch.uint8:
        a[2], b[3] = -6, -4
    same(torch.gcd, a, b)
    same(torch.lcm, a, b)
    same(lambda x, y: x.clone().gcd_(y), a, b)
    same(lambda x, y: torch.lcm(x, y, out=torch.empty(0, dtype=dtype, device=x.device)), a, b)
    same_error(torch.gcd, torch.tensor([1.0]), torch.tensor([2.0]))
    same_error(torch.lcm, torch.tensor([True]), torch.tensor([True]))


def test_gcd_of_consecutive_fibonacci_numbers():
    # The longest runs of Euclid's algorithm.
    fib = [1, 1]
    while fib[-1] < 2**62:
        fib.append(fib[-1] + fib[-2])
    same(torch.gcd, torch.tensor(fib[1:]), torch.tensor(fib[:-1]))
    same(torch.gcd, torch.tensor(fib[10:24], dtype=torch.int32), torch.tensor(fib[9:23],
                                                                            dtype=torch.int32))


SPECIAL_POINTS = torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -2.5, 0.5, 1e-30, -1e-30, 7.9,
                               8.0, 8.1, 30.0, 50.0, 100.0, -100.0, INF, -INF, NAN])
GRID = torch.cat([torch.linspace(-12, 12, 241), SPECIAL_POINTS])


@pytest.mark.parametrize("fn", [torch.sinc, torch.erfc, torch.lgamma, torch.digamma, torch.i0,
                                torch.special.i1, lambda t: torch.polygamma(1, t)],
                         ids=["sinc", "erfc", "lgamma", "digamma", "i0", "i1", "trigamma"])
def test_special_functions(fn):
    close(fn, GRID)
    close(fn, GRID.bfloat16(), rtol=1.6e-2, atol=1e-2)
    close(fn, torch.arange(-3, 4))  # integers compute in the default float type


def test_special_function_variants():
    x = torch.linspace(-3, 3, 13)
    for name in ("sinc_", "erfc_", "lgamma_", "digamma_", "i0_"):
        close(lambda t: getattr(t.clone(), name)(), x)
    close(lambda t: torch.i0(t, out=torch.empty(0, device=t.device)), x)
    close(lambda t: t.clone().polygamma_(1), x)
    same_error(lambda t: torch.polygamma(-1, t), x)
    # n >= 2 through CPU's Hurwitz zeta, poles at the non-positive integers included
    close(lambda t: torch.polygamma(2, t), x)
    close(lambda t: t.clone().polygamma_(3), x + 0.25)


def test_logaddexp():
    a = torch.tensor([1.0, INF, -INF, INF, NAN, -3.0, 100.0, -INF, 0.0, -50.0])
    b = torch.tensor([2.0, INF, -INF, -INF, 1.0, 1e-3, -100.0, 5.0, 0.0, -50.0])
    for fn in (torch.logaddexp, torch.logaddexp2):
        close(fn, a, b)
        close(fn, a.bfloat16(), b.bfloat16(), rtol=1.6e-2, atol=1e-2)
        close(lambda x, y: fn(x, y, out=torch.empty(0, device=x.device)), a, b)
    same_error(torch.logaddexp, torch.tensor([1]), torch.tensor([2]))


def test_signbit_and_heaviside():
    x = torch.tensor([-0.0, 0.0, -NAN, NAN, -1.0, 2.0, INF, -INF])
    same(torch.signbit, x)
    same(torch.signbit, x.bfloat16())
    same(torch.signbit, torch.tensor([-3, 0, 4]))
    same(torch.signbit, torch.tensor([True, False]))
    same(lambda t: torch.signbit(t, out=torch.empty(0, dtype=torch.bool, device=t.device)), x)
    same(torch.heaviside, x, torch.tensor([0.5]))
    same(torch.heaviside, torch.tensor([True, False]), torch.tensor([False, True]))
    same(torch.heaviside, torch.tensor([-2, 0, 5]), torch.tensor(7))
    same(lambda t, v: t.clone().heaviside_(v), x, torch.tensor(0.25))
    same_error(torch.heaviside, torch.tensor([1.0]), torch.tensor([1]))


# ---------------------------------------------------------------------------
# index_copy, index_fill, masked_scatter
# ---------------------------------------------------------------------------

BASE = torch.arange(12.0).view(3, 4)


def test_index_copy():
    same(lambda s, i, src: s.clone().index_copy_(0, i, src), BASE, torch.tensor([2, 0]),
         -torch.ones(2, 4))
    same(lambda s, i, src: torch.index_copy(s, -1, i, src), BASE, torch.tensor([3, 1, 0]),
         -torch.ones(3, 3))
    same(lambda s, i, src: torch.index_copy(s, 1, i, src, out=torch.empty(3, 4, device=s.device)),
         BASE, torch.tensor([3]), -torch.ones(3, 1))
    same(lambda s, i, src: s.clone().index_copy_(0, i, src), torch.tensor(1.0), torch.tensor([0]),
         torch.tensor(3.0))
    same(lambda s, i, src: s.clone().index_copy_(0, i, src), BASE.bool(), torch.tensor([1]),
         torch.zeros(1, 4, dtype=torch.bool))
    for index, source in [(torch.tensor([0], dtype=torch.int32), torch.ones(1, 4)),
                          (torch.tensor([0]), torch.ones(1, 4, dtype=torch.float64)),
                          (torch.tensor([0]), torch.ones(1, 3)),
                          (torch.tensor([0, 1]), torch.ones(1, 4)),
                          (torch.tensor([[0]]), torch.ones(1, 4))]:
        same_error(lambda s, i, src: s.clone().index_copy_(0, i, src), BASE, index, source)


def test_index_fill():
    same(lambda s, i: s.clone().index_fill_(0, i, -5.0), BASE, torch.tensor([0, -1]))
    same(lambda s, i: torch.index_fill(s, 1, i, 7), BASE, torch.tensor([-4, 2]))
    same(lambda s, i, v: s.clone().index_fill_(1, i, v), BASE, torch.tensor([1]), torch.tensor(2.5))
    same(lambda s, i, v: s.clone().index_fill_(1, i, v), BASE.long(), torch.tensor([1]),
         torch.tensor(2.5))
    same(lambda s, i: s.clone().index_fill_(1, i, 1.5), BASE.long(), torch.tensor([1]))
    same(lambda s, i: s.clone().index_fill_(1, i, True), BASE.bool(), torch.tensor([1, 3]))
    same(lambda s, i: s.clone().index_fill_(0, i, 3.0), torch.tensor(1.0), torch.tensor([0]))
    # a CPU value tensor is a host number already
    same(lambda s, i: s.clone().index_fill_(0, i, torch.tensor(4.0)), BASE, torch.tensor([2]))
    same_error(lambda s, i: s.clone().index_fill_(0, i, 3.0), BASE,
               torch.tensor([0], dtype=torch.int32))
    same_error(lambda s, i, v: s.clone().index_fill_(0, i, v), BASE, torch.tensor([0]),
               torch.tensor([1.0, 2.0]))


def test_masked_scatter():
    gen = torch.Generator().manual_seed(3)
    source = torch.arange(100.0, 120.0)
    for mask in [torch.tensor([True, False, True, True]), torch.rand(3, 4, generator=gen) > 0.5,
                 torch.zeros(3, 4, dtype=torch.bool), torch.ones(3, 4, dtype=torch.bool),
                 torch.tensor(True)]:
        same(lambda s, m, src: s.clone().masked_scatter_(m, src), BASE, mask, source)
        same(lambda s, m, src: torch.masked_scatter(s, m, src), BASE, mask, source)
    same(lambda s, m, src: torch.masked_scatter(s, m, src), torch.zeros(4),
         torch.rand(3, 4, generator=gen) > 0.5, source)
    same(lambda s, m, src: s.clone().masked_scatter_(m, src), BASE,
         torch.zeros(3, 4, dtype=torch.bool), torch.zeros(0))
    same_error(lambda s, m, src: s.clone().masked_scatter_(m, src), BASE,
               torch.ones(3, 4, dtype=torch.bool), torch.zeros(0))
    same_error(lambda s, m, src: s.clone().masked_scatter_(m, src), BASE,
               torch.ones(3, 4, dtype=torch.uint8), source)
    same_error(lambda s, m, src: s.clone().masked_scatter_(m, src), BASE,
               torch.ones(3, 4, dtype=torch.bool), source.long())


def test_masked_scatter_checks_source_size_in_debug_mode():
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(RuntimeError, match="Number of elements of source"):
            BASE.to(DEV).masked_scatter_(torch.ones(3, 4, dtype=torch.bool, device=DEV),
                                         torch.zeros(5, device=DEV))


@pytest.mark.parametrize("op", ["masked_select", "masked_scatter", "index_copy", "index_fill"])
def test_gradients(op):
    mask = torch.tensor([True, False, False, True])
    fns = {
        "masked_select": lambda x: torch.masked_select(x, mask.to(x.device)),
        "masked_scatter": lambda x: torch.masked_scatter(x, mask.to(x.device), x * 3),
        "index_copy": lambda x: torch.index_copy(x, 0, torch.tensor([2, 0], device=x.device),
                                                 x[:2] * 2),
        "index_fill": lambda x: torch.index_fill(x, 1, torch.tensor([1], device=x.device), 0.5),
    }
    grads = []
    for device in ("cpu", DEV):
        x = BASE.clone().to(device).requires_grad_()
        (fns[op](x) ** 2).sum().backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])


# ---------------------------------------------------------------------------
# reductions: aminmax, nansum, var/std_mean, equal, logcumsumexp
# ---------------------------------------------------------------------------

WITH_NAN = torch.tensor([[1.0, NAN, -2.0], [NAN, NAN, NAN], [-0.0, 4.0, 0.5]])


def test_aminmax():
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(4))
    for kwargs in [{}, {"dim": 1}, {"dim": 0, "keepdim": True}]:
        same(lambda t: torch.aminmax(t, **kwargs), x)
        same(lambda t: torch.aminmax(t, **kwargs), WITH_NAN)
        same(lambda t: torch.aminmax(t, **kwargs), x > 0)
    same(lambda t: torch.aminmax(t, dim=0), torch.tensor(2.0))
    same(lambda t: torch.aminmax(t, dim=0), torch.zeros(3, 0))
    same_error(torch.aminmax, torch.zeros(0))
    same_error(lambda t: torch.aminmax(t, dim=1), torch.zeros(3, 0))


def test_nansum_nanmean():
    for kwargs in [{}, {"dim": 1}, {"dim": [0, 1], "keepdim": True}, {"dim": []}]:
        close(lambda t: torch.nansum(t, **kwargs), WITH_NAN)
        close(lambda t: torch.nanmean(t, **kwargs), WITH_NAN)
    same(torch.nansum, torch.tensor([True, True, False]))
    same(lambda t: torch.nansum(t, dtype=torch.float32), torch.tensor([1, 2], dtype=torch.int8))
    close(lambda t: torch.nansum(t, 0, out=torch.empty(0, device=t.device)), WITH_NAN)
    close(torch.nansum, WITH_NAN.bfloat16(), rtol=1.6e-2, atol=1e-2)
    same_error(torch.nansum, torch.tensor([1 + 1j]))


def test_var_mean_std_mean_and_no_recompile_per_correction():
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(5))
    for fn in (torch.var_mean, torch.std_mean):
        for kwargs in [{}, {"dim": 1}, {"dim": 0, "correction": 0, "keepdim": True}]:
            close(lambda t: fn(t, **kwargs), x)
    same_error(torch.std_mean, torch.tensor([1, 2]))
    torch.var_mean(x.to(DEV), dim=1, correction=0.5)
    before = counters()
    for correction in (0.25, 1.5, 2.0, 3.0):
        close(lambda t: torch.var_mean(t, dim=1, correction=correction), x)
    assert delta(before, counters(), "compiles") == 0


def test_equal():
    a = torch.tensor([[1.0, 2.0], [3.0, -0.0]])
    same(torch.equal, a, a.clone())
    same(torch.equal, a, a + 1)
    same(torch.equal, a, torch.tensor([[1, 2], [3, 0]]))  # compared in the promoted dtype
    same(torch.equal, a, a.t())
    same(torch.equal, a, a[0])  # sizes differ: False, no broadcasting
    same(torch.equal, torch.zeros(0), torch.zeros(0))
    x = torch.tensor([NAN, 1.0]).to(DEV)
    assert torch.equal(x, x) is False and torch.equal(x.cpu(), x.cpu()) is False
    with pytest.raises(RuntimeError, match="different devices"):
        torch.equal(a.to(DEV), a)


def test_logcumsumexp():
    x = torch.tensor([[INF, INF, -INF, NAN, 1.0], [-INF, -INF, 1.0, 2.0, -INF],
                      [1e4, 1.0, -1e4, 30.0, 30.0]])
    for dim in (0, 1):
        close(lambda t: torch.logcumsumexp(t, dim), x)
    close(lambda t: torch.logcumsumexp(t, 0), torch.tensor(3.0))
    close(lambda t: torch.logcumsumexp(t, 1, out=torch.empty(0, device=t.device)), x)
    close(lambda t: torch.logcumsumexp(t, 1), torch.randn(3, 37), rtol=1e-5)
    same_error(lambda t: torch.logcumsumexp(t, 0), torch.tensor([1, 2]))


# ---------------------------------------------------------------------------
# order statistics
# ---------------------------------------------------------------------------

ORDER_INPUTS = [
    torch.tensor([3.0, NAN, 1.0, 2.0]),
    torch.tensor([1, 2, 2, 3, 3, 1, 2]),
    # (no all-NaN row longer than 3: which NaN nanmedian returns for one is
    # up to CPU's nth_element)
    torch.tensor([[NAN, 1.0, NAN, 2.0], [3.0, NAN, 0.0, -0.0], [NAN, NAN, NAN, 5.0]]),
    torch.tensor([NAN, NAN, NAN]),
    torch.randint(0, 4, (3, 6, 5), generator=torch.Generator().manual_seed(6)),
    torch.tensor(2.5),
]


@pytest.mark.parametrize("x", ORDER_INPUTS, ids=range(len(ORDER_INPUTS)))
def test_median_nanmedian(x):
    # Indices too: CPU orders by (value, index), as a stable sort does.
    same(torch.median, x)
    same(torch.nanmedian, x)
    for dim in range(max(x.dim(), 1)):
        for keepdim in (False, True):
            same(lambda t: torch.median(t, dim, keepdim), x)
            same(lambda t: torch.nanmedian(t, dim, keepdim), x)


@pytest.mark.parametrize("x", ORDER_INPUTS, ids=range(len(ORDER_INPUTS)))
def test_kthvalue_and_mode(x):
    for dim in range(max(x.dim(), 1)):
        n = x.shape[dim] if x.dim() else 1
        for k in sorted({1, (n + 1) // 2, n}):
            # values only: among equal values CPU's quickselect picks any index
            actual = torch.kthvalue(x.to(DEV), k, dim)
            expected = torch.kthvalue(x, k, dim)
            _compare(actual.values, expected.values, rtol=0, atol=0)
            assert torch.equal(x.to(DEV).gather(dim, actual.indices.unsqueeze(dim)).cpu()
                               .squeeze(dim), expected.values) or x.dim() == 0 or x.isnan().any()
        if not (x.is_floating_point() and x.isnan().any()):
            # mode's index is the last occurrence, as CPU's for rows of <= 16
            same(lambda t: torch.mode(t, dim), x)
            same(lambda t: torch.mode(t, dim, True), x)


def test_order_statistic_errors_and_out():
    same(lambda t: torch.median(t, 1, out=(torch.empty(0, device=t.device),
                                            torch.empty(0, dtype=torch.long, device=t.device))),
         torch.randn(3, 4))
    same(lambda t: torch.mode(t, 1, out=(torch.empty(0, dtype=t.dtype, device=t.device),
                                         torch.empty(0, dtype=torch.long, device=t.device))),
         torch.randint(0, 3, (3, 5), generator=torch.Generator().manual_seed(8)))
    same(lambda t: torch.ops.aten.median.out(t, out=torch.empty(0, device=t.device)),
         torch.tensor([3.0, 1.0, 2.0, 5.0]))
    same(torch.median, torch.zeros(0))
    same(lambda t: torch.mode(t, 0), torch.tensor([True, False, True]))
    same_error(torch.median, torch.tensor([True]))
    same_error(lambda t: torch.median(t, 0), torch.zeros(0, 3))
    same_error(lambda t: torch.kthvalue(t, 4), torch.zeros(3))
    same_error(lambda t: torch.mode(t, 0), torch.zeros(0, 3))


# ---------------------------------------------------------------------------
# searchsorted, bucketize
# ---------------------------------------------------------------------------

BOUNDS = torch.tensor([1.0, 3.0, 3.0, 5.0, 7.0])
VALUES = torch.tensor([[0.0, 1.0, 3.0, 4.0], [7.0, 8.0, NAN, -1.0]])


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_bucketize(right):
    for out_int32 in (False, True):
        same(lambda b, v: torch.searchsorted(b, v, right=right, out_int32=out_int32), BOUNDS,
             VALUES)
        same(lambda v, b: torch.bucketize(v, b, right=right, out_int32=out_int32), VALUES, BOUNDS)
    side = "right" if right else "left"
    same(lambda b, v: torch.searchsorted(b, v, side=side), BOUNDS, VALUES)
    perm = torch.tensor([3, 0, 4, 2, 1])
    same(lambda b, v, s: torch.searchsorted(b, v, right=right, sorter=s), BOUNDS[perm], VALUES,
         torch.argsort(BOUNDS[perm]))
    rows = torch.sort(torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(7)), -1)[0]
    same(lambda b, v: torch.searchsorted(b, v, right=right), rows, torch.randn(2, 3, 4))
    same(lambda b, v: torch.searchsorted(b, v, right=right), torch.tensor([1.0, NAN]),
         torch.tensor([NAN, 1.0, 2.0]))
    same(lambda b: torch.searchsorted(b, 3, right=right), BOUNDS)
    same(lambda b: torch.bucketize(3.5, b, right=right), BOUNDS)


def test_searchsorted_edges_and_errors():
    same(lambda b, v: torch.searchsorted(b, v), torch.tensor([1, 3, 5]), torch.tensor([1.5, 3.0]))
    same(lambda b, v: torch.searchsorted(b, v), BOUNDS, torch.tensor(2.0))
    same(lambda b, v: torch.searchsorted(b, v), torch.zeros(0), torch.tensor([1.0]))
    same(lambda b, v: torch.searchsorted(b, v), BOUNDS, torch.zeros(0))
    same(lambda b, v: torch.searchsorted(b, v, out=torch.empty(0, dtype=torch.long,
                                                                device=b.device)), BOUNDS, VALUES)
    for fn, args in [
        (lambda b, v: torch.searchsorted(b, v, out=torch.empty(0, dtype=torch.int32,
                                                                device=b.device)), (BOUNDS, VALUES)),
        (lambda b, v: torch.searchsorted(b, v, side="left", right=True), (BOUNDS, VALUES)),
        (lambda b, v: torch.searchsorted(b, v, side="middle"), (BOUNDS, VALUES)),
        (lambda b, v: torch.searchsorted(b, v, sorter=torch.tensor([0, 1])), (BOUNDS, VALUES)),
        (torch.searchsorted, (torch.tensor([False, True]), torch.tensor([True]))),
        (torch.searchsorted, (torch.zeros(2, 3), torch.zeros(3, 1))),
        (torch.bucketize, (VALUES, torch.zeros(2, 2))),
    ]:
        same_error(fn, *args)


# ---------------------------------------------------------------------------
# linspace, logspace
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64,
                                   torch.int16])
def test_linspace_is_bitwise_cpu(dtype):
    for start, end, steps in [(-2.0, -3, 50), (0, 1, 7), (-3.3, 10.7, 33), (1e-3, 5.5, 1000),
                              (10, -10, 3), (24.2, -16.4, 25), (5, 5, 4), (1, 2, 1), (1, 2, 0)]:
        actual = torch.linspace(start, end, steps, dtype=dtype, device=DEV)
        assert torch.equal(actual.cpu(), torch.linspace(start, end, steps, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_logspace_is_bitwise_cpu(dtype):
    for start, end, steps in [(0, 2, 7), (-3, 1, 50), (2, 0, 12), (1, 2, 1), (1, 2, 0)]:
        for base in (10.0, 2.0, 1.1):
            actual = torch.logspace(start, end, steps, base, dtype=dtype, device=DEV)
            assert torch.equal(actual.cpu(), torch.logspace(start, end, steps, base, dtype=dtype))


def test_linspace_logspace_variants_and_no_recompile_per_value():
    out = torch.empty(3, 5, device=DEV)[:, 1]  # a strided view
    torch.linspace(0, 1, 3, out=out)
    assert torch.equal(out.cpu(), torch.linspace(0, 1, 3))
    same(lambda s, e: torch.linspace(s, e, 9, device=s.device), torch.tensor(-1.0),
         torch.tensor(2.0))
    same(lambda e: torch.logspace(0, e, 9, device=e.device), torch.tensor(2.0))
    same_error(lambda: torch.linspace(0, 1, -1, device=DEV))
    with pytest.raises(NotImplementedError):
        torch.linspace(0, 1, 5, dtype=torch.bool, device=DEV)
    torch.linspace(0.5, 3.0, 64, device=DEV)
    torch.logspace(0.5, 3.0, 64, 3.0, device=DEV)
    before = counters()
    for i in range(6):
        torch.linspace(i * 0.37, i * 1.7 + 3, 64, device=DEV)
        torch.logspace(-i * 0.1, i * 0.2, 64, 2.0 + i, device=DEV)
    assert delta(before, counters(), "compiles") == 0


# ---------------------------------------------------------------------------
# composites added in stop 42: products, index producers and reducers, angle
# ---------------------------------------------------------------------------

def test_nonzero_static_reads_nothing_back_and_matches_cpu():
    x = torch.tensor([[0.0, 1.5, 0.0], [NAN, 0.0, -2.0]])
    for size, fill in ((2, -1), (3, -1), (6, 7), (0, 0)):
        same(lambda t: torch.nonzero_static(t, size=size, fill_value=fill), x)
    same(lambda t: torch.nonzero_static(t, size=2), torch.tensor(3.0))  # 0-d: no coordinates
    same(lambda t: torch.nonzero_static(t, size=2), torch.zeros(0, 3))
    same_error(lambda t: torch.nonzero_static(t, size=-1), x)
    xd = MILLION.to(DEV)
    torch.nonzero_static(xd > 0.5, size=100)  # compile
    before = counters()
    out = torch.nonzero_static(xd > 0.5, size=100)
    assert delta(before, counters(), "host_syncs") == 0  # no count read back
    assert torch.equal(out.cpu(), torch.nonzero_static(MILLION > 0.5, size=100))


def test_triu_tril_indices_on_tpu():
    for row, col, offset in ((4, 5, 1), (5, 3, -1), (0, 3, 0), (3, 3, 5)):
        for fn in (torch.triu_indices, torch.tril_indices):
            got = fn(row, col, offset, device=DEV)
            assert got.device.type == DEV
            assert torch.equal(got.cpu(), fn(row, col, offset))
    assert torch.triu_indices(3, 3, dtype=torch.int32, device=DEV).dtype == torch.int32


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    g = torch.Generator().manual_seed(0)
    s, src = torch.randn(5, 3, generator=g), torch.randn(4, 3, generator=g)
    idx = torch.tensor([0, 2, 0, 4])
    close(lambda a, i, b: a.index_reduce(0, i, b, reduce, include_self=include_self), s, idx, src)
    close(lambda a, i, b: a.clone().index_reduce_(1, i, b, reduce, include_self=include_self),
          torch.randn(3, 6, generator=g), torch.tensor([5, 1]), torch.randn(3, 2, generator=g))
    same(lambda a, i, b: a.index_reduce(0, i, b, reduce, include_self=include_self),
         torch.tensor([4, 6, 8]), torch.tensor([0, 0, 1]), torch.tensor([1, 2, 3]))  # integer mean


def test_index_reduce_bad_input_like_cpu():
    s = torch.ones(3, 2)
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "sum"), s, torch.tensor([0, 1, 0]), s)
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "mean"), s, torch.tensor([0, 1]), s)
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "mean"), s, torch.tensor([[0, 1, 0]]), s)
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "mean"), s, torch.tensor([0, 1, 0.0]), s)
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "mean"), s, torch.tensor([0, 1, 0]), s.double())
    same_error(lambda a, i, b: a.index_reduce(0, i, b, "mean"), s, torch.tensor([0, 1, 0]),
               torch.ones(3, 3))


def test_vdot_cross_addbmm_and_their_errors():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(5, generator=g), torch.randn(5, generator=g)
    close(torch.vdot, a, b)
    close(torch.vdot, torch.randn(4, dtype=torch.cfloat, generator=g),
          torch.randn(4, dtype=torch.cfloat, generator=g))
    same(torch.vdot, torch.arange(4, dtype=torch.int32), torch.arange(4, dtype=torch.int32))
    close(lambda x, y: torch.linalg.vecdot(x, y), torch.randn(3, 4, generator=g), torch.randn(4, generator=g))
    for args in ((torch.ones(3), torch.ones(4)), (torch.ones(3, 1), torch.ones(3)),
                 (torch.ones(3), torch.ones(3, dtype=torch.double)),
                 (torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))):
        same_error(torch.vdot, *args)
    x, y = torch.randn(4, 3, 2, generator=g), torch.randn(1, 3, 2, generator=g)
    close(lambda p, q: torch.linalg.cross(p, q, dim=1), x, y)  # broadcast
    same(lambda p, q: torch.linalg.cross(p, q), torch.randint(-5, 5, (2, 3), generator=g),
         torch.randint(-5, 5, (2, 3), generator=g))
    same_error(lambda p, q: torch.linalg.cross(p, q), torch.ones(2, 4), torch.ones(2, 4))
    same_error(lambda p, q: torch.linalg.cross(p, q), torch.ones(2, 3), torch.ones(3))
    s, b1, b2 = torch.randn(2, 5, generator=g), torch.randn(3, 2, 4, generator=g), torch.randn(3, 4, 5, generator=g)
    close(lambda s, p, q: torch.addbmm(s, p, q, beta=0.5, alpha=2), s, b1, b2)
    close(lambda s, p, q: torch.addbmm(s, p, q, beta=0), torch.full((2, 5), NAN), b1, b2)  # self ignored
    close(lambda s, p, q: s.clone().addbmm_(p, q), s, b1, b2)
    same(lambda s, p, q: torch.addbmm(s, p, q, beta=0.6, alpha=0.2), torch.ones(2, 5, dtype=torch.long),
         torch.ones(3, 2, 4, dtype=torch.long), torch.ones(3, 4, 5, dtype=torch.long))  # CPU truncates
    same_error(torch.addbmm, s, b1, torch.randn(3, 5, 2, generator=g))


def test_angle_real_complex_and_gradients():
    same(torch.angle, torch.tensor([-1.0, 0.0, 2.0, NAN, -0.0, -INF]))
    same(torch.angle, torch.tensor([-1, 0, 2]))
    same(torch.angle, torch.tensor([True, False]))
    close(torch.angle, torch.tensor([1 + 1j, -1j, -2 + 0j, 0j]))
    x = torch.tensor([1 + 1j, -2 + 0.5j], requires_grad=True)
    xt = x.detach().to(DEV).requires_grad_()
    torch.angle(x).sum().backward()
    torch.angle(xt).sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), x.grad)


def test_histogram_counts_and_edges_like_cpu():
    x = torch.tensor([1.0, 2.0, 2.0, 3.0, 10.0])
    w = torch.tensor([1.0, 1.0, 2.0, 1.0, 0.5])
    close(lambda t: tuple(torch.histogram(t, bins=3)), x)
    close(lambda t: tuple(torch.histogram(t, bins=4, range=(0.0, 4.0))), x)
    close(lambda t, e: tuple(torch.histogram(t, bins=e)), x, torch.tensor([0.0, 2.0, 3.0, 10.0]))
    close(lambda t, v: tuple(torch.histogram(t, bins=3, weight=v, density=True)), x, w)
    close(lambda t: tuple(torch.histogram(t, bins=2, range=(0.0, 2.0))), torch.tensor([NAN, 1.0, 2.0]))
    close(lambda t: tuple(torch.histogram(t, bins=2)), torch.tensor([5.0, 5.0]))  # one value: width 1
    close(lambda t: tuple(torch.histogram(t, bins=2)), torch.tensor([]))  # empty: [0, 1]
    g = torch.Generator().manual_seed(0)
    y = torch.randn(10000, generator=g, dtype=torch.float64)
    for bins in (10, 37, 100):  # elements on edges land as CPU puts them
        same(lambda t: tuple(torch.histogram(t, bins=bins)), y)
    for args in ((x, 0), (torch.tensor([INF, 1.0]), 2), (x.long(), 2)):
        same_error(lambda t, b: torch.histogram(t, bins=b), *args)
    same_error(lambda t: torch.histogram(t, bins=2, range=(3.0, 1.0)), x)
    same_error(lambda t, v: torch.histogram(t, bins=2, weight=v), x, torch.ones(3))
    same_error(lambda t, e: torch.histogram(t, bins=e), x.double(), torch.tensor([0.0, 5.0]))


def _dd(r):
    return (r.hist, *r.bin_edges)


def test_histogramdd_counts_and_edges_like_cpu():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 3, generator=g)
    w = torch.rand(200, generator=g)
    close(lambda t: _dd(torch.histogramdd(t, bins=[2, 3, 4])), x)
    close(lambda t: _dd(torch.histogramdd(t, bins=5)), x)
    close(lambda t: _dd(torch.histogramdd(t, bins=[3, 1, 2], range=[-1.0, 1, 0, 2, -3, 0.5])), x)
    close(lambda t, v: _dd(torch.histogramdd(t, bins=[4, 3, 2], weight=v, density=True)), x, w)
    # explicit edges (uneven), points on edges and outside them, NaN
    edges = [torch.tensor([-1.0, 0.0, 0.5, 2.0]), torch.tensor([-2.0, 2.0]),
             torch.tensor([-0.5, 0.0, 0.5])]
    pts = torch.cat([x[:50], torch.tensor([[0.0, 2.0, 0.5], [2.0, -2.0, -0.5], [NAN, 0.0, 0.0],
                                          [3.0, 0.0, 0.0]])])
    close(lambda t, *e: _dd(torch.histogramdd(t, bins=list(e))), pts, *edges)
    close(lambda t, *e: _dd(torch.histogramdd(t, bins=list(e), density=True)), pts, *edges)
    # leading dims flatten into points; weights take those dims
    close(lambda t, v: _dd(torch.histogramdd(t, bins=[3, 2], weight=v)),
          torch.randn(4, 5, 2, generator=g, dtype=torch.float64),
          torch.rand(4, 5, generator=g, dtype=torch.float64))
    close(lambda t: _dd(torch.histogramdd(t, bins=[2, 3])), torch.empty(0, 2))  # empty: [0, 1]
    close(lambda t: _dd(torch.histogramdd(t, bins=[2, 3])), torch.tensor([[1.0, 2.0], [1.0, 3.0]]))
    # 1-d histogram is the D = 1 case: CPU refuses weights of another dtype
    same_error(lambda t, v: torch.histogram(t, bins=2, weight=v), x[:, 0], w.double())
    bad = [
        (lambda t: torch.histogramdd(t, bins=[2, 3]), (x,),
         "The size of bins must be equal to the innermost dimension"),
        (lambda t: torch.histogramdd(t, bins=[2, 0, 4]), (x,), "bins must be > 0, but got 0 for dimension 1"),
        (lambda t: torch.histogramdd(t, bins=[2, 3, 4], range=[0.0, 1, 0, 1]), (x,),
         "for a 3-dimensional histogram range should have 6 elements, but got 4"),
        (lambda t: torch.histogramdd(t, bins=[2, 3, 4], range=[1.0, 0, 0, 1, 0, 1]), (x,),
         "min should not exceed max, but got min 1 max 0 for dimension 0"),
        (lambda t, *e: torch.histogramdd(t, bins=list(e)), (x, *edges[:2]),
         "expected 3 sequences of bin edges for a 3-dimensional histogram but got 2"),
        (lambda t, *e: torch.histogramdd(t, bins=list(e)), (x, edges[0], edges[1].double(), edges[2]),
         "bins for dimension 1 with dtype double"),
        (lambda t, v: torch.histogramdd(t, bins=[2, 3, 4], weight=v), (x, torch.ones(9)),
         "should have the same shape as the input tensor excluding its innermost dimension"),
        (lambda t, v: torch.histogramdd(t, bins=[2, 3, 4], weight=v), (x, w.double()),
         "input tensor and weight tensor should have the same dtype"),
        (lambda t: torch.histogramdd(t, bins=[2]), (torch.randn(10),),
         "input tensor should have at least 2 dimensions"),
        (lambda t: torch.histogramdd(t, bins=[2, 3]), (torch.tensor([[1.0, INF]]),),
         "dimension 1's range \\[inf, inf\\] is not finite"),
        (lambda t: torch.histogramdd(t, bins=[2, 3, 4]), (x.long(),),
         "\"histogramdd\" not implemented for 'Long'"),
    ]
    for fn, args, message in bad:
        with pytest.raises(Exception, match=message) as cpu:
            fn(*args)
        with pytest.raises(type(cpu.value), match=message):
            fn(*_to(args))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_values_gradients_and_errors_like_cpu(reduce):
    """By lengths and by offsets (which may skip positions), along the first
    and an inner axis with per-row segments, empty segments, with and
    without `initial`; gradients with ties (max/min share them) and zeros
    (prod: one zero, two zeros)."""
    g = torch.Generator().manual_seed(0)
    x = torch.tensor([1.0, 2, 3, 4, 5, 6])
    lengths = torch.tensor([2, 0, 3, 1])
    inner = torch.randn(3, 7, 4, generator=g, dtype=torch.float64)
    inner_lengths = torch.tensor([[2, 5], [3, 4], [0, 7]])
    for initial in (None, 7.0):
        close(lambda t, n: torch.segment_reduce(t, reduce, lengths=n, initial=initial), x, lengths)
        close(lambda t, o: torch.segment_reduce(t, reduce, offsets=o, initial=initial), x,
              torch.tensor([1, 2, 2, 5]))
        close(lambda t, n: torch.segment_reduce(t, reduce, lengths=n, axis=1, initial=initial),
              inner, inner_lengths)
        close(lambda t, n: torch.segment_reduce(t, reduce, lengths=n, initial=initial),
              torch.randn(6, 3, generator=g), lengths.int())
        for data, n, axis in ((torch.tensor([1.0, 3, 3, 2, 5, 5]), torch.tensor([3, 3]), 0),
                              (torch.tensor([1.0, 3, 0, 2, 5, 5]), torch.tensor([3, 0, 3]), 0),
                              (torch.tensor([0.0, 3, 0, 2, 5, 0.5]), torch.tensor([3, 3]), 0),
                              (inner, inner_lengths, 1)):
            grads = []
            for device in ("cpu", DEV):
                t = data.to(device).requires_grad_()
                y = torch.segment_reduce(t, reduce, lengths=n.to(device), axis=axis, initial=initial)
                w = (torch.arange(y.numel(), dtype=y.dtype).reshape(y.shape) + 1).to(device)
                grads.append(torch.autograd.grad((y * w).nansum(), t)[0].cpu())
            torch.testing.assert_close(grads[1], grads[0], equal_nan=True)
    for args, kwargs in (((x, reduce), {}), ((x, "median"), {"lengths": lengths}),
                         ((x, reduce), {"lengths": torch.tensor([7, -1])}),
                         ((x, reduce), {"lengths": torch.tensor([2, 2])}),
                         ((x, reduce), {"indices": torch.tensor([0, 0, 1, 1, 2, 2])}),
                         ((x.long(), reduce), {"lengths": torch.tensor([6])}),
                         ((x, reduce), {"lengths": torch.tensor([6.0])}),
                         ((inner, reduce), {"lengths": torch.tensor([1, 6]), "axis": 1})):
        with pytest.raises(Exception) as cpu:
            torch.segment_reduce(*args, **kwargs)
        with pytest.raises(type(cpu.value)) as tpu:
            torch.segment_reduce(*_to(args), **{k: _to(v) for k, v in kwargs.items()})
        if type(cpu.value) is RuntimeError:
            assert str(tpu.value).split("\n")[0] == str(cpu.value).split("\n")[0]


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float32, torch.float64])
def test_hash_tensor_like_cpu(dtype):
    """The xor of the elements' 64 bits (floats widened to double, integers
    to int64): all dims, chosen dims, keepdim, out=, NaN and -0.0."""
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 4, 5, generator=g) * 50).to(dtype)
    if dtype.is_floating_point:
        x[0, 0, 0], x[1, 1, 1] = float("nan"), -0.0
    same(torch.hash_tensor, x)
    same(lambda t: torch.hash_tensor(t, dim=1), x)
    same(lambda t: torch.hash_tensor(t, dim=(0, 2), keepdim=True), x)
    same(lambda t: torch.hash_tensor(t[0, 0, 1]), x)
    same(lambda t: torch.hash_tensor(t, dim=0), x[:, :0])
    out = {}
    for device in ("cpu", DEV):
        o = torch.empty(0, dtype=torch.uint64, device=device)
        torch.hash_tensor(x.to(device), dim=-1, out=o)
        out[device] = o.cpu()
    assert torch.equal(out[DEV], out["cpu"])
    for fn in (lambda t: torch.hash_tensor(t, mode=1), lambda t: torch.hash_tensor(t[:, :0]),
               lambda t: torch.hash_tensor(t[:, :0], dim=1),
               lambda t: torch.hash_tensor(t, out=torch.empty(0, device=t.device)),
               lambda t: torch.hash_tensor(t.to(torch.complex64))):
        with pytest.raises(Exception) as cpu:
            fn(x)
        with pytest.raises(type(cpu.value)) as tpu:
            fn(x.to(DEV))
        assert str(tpu.value).split("\n")[0].replace("xor_sum_cpu", "xor_sum") == \
            str(cpu.value).split("\n")[0].replace("xor_sum_cpu", "xor_sum")


def test_renorm_values_in_place_gradients_and_errors():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 5, generator=g) * 3
    for p, dim, maxnorm in ((2, 0, 5.0), (1, 1, 3.0), (INF, 2, 1.0), (3, -1, 0.5), (2, 0, 100.0)):
        close(lambda t: torch.renorm(t, p, dim, maxnorm), x)
    close(lambda t: t.clone().renorm_(2, 1, 2.0), x)
    xc, xt = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    torch.renorm(xc, 2, 0, 5.0).pow(2).sum().backward()
    torch.renorm(xt, 2, 0, 5.0).pow(2).sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), xc.grad, atol=1e-4, rtol=1e-5)
    for args in ((x, 0, 0, 1.0), (x, 2, 0, -1.0), (x.long(), 2, 0, 1.0), (x, 2, 5, 1.0)):
        same_error(torch.renorm, *args)


def test_data_dependent_results_report_their_own_storage_size():
    # A data-dependent result lives in a power-of-two bucket on the device;
    # its storage says the bytes it uses, as on CPU (a nested buffer takes its
    # size from the storage, and torch.save writes the storage).
    x = torch.arange(20.0)
    mask = x.remainder(3) == 0  # 7 elements: bucket 8
    for fn in (lambda t, m: torch.masked_select(t, m), lambda t, m: torch.nonzero(m),
               lambda t, m: torch.unique(t.floor_divide(4)), lambda t, m: m.long().bincount()):
        expected = fn(x, mask)
        actual = fn(x.to(DEV), mask.to(DEV))
        assert actual.untyped_storage().nbytes() == expected.untyped_storage().nbytes()
        assert torch.equal(actual.cpu(), expected)
        saved, saved_cpu = io.BytesIO(), io.BytesIO()
        torch.save(actual, saved)
        torch.save(expected, saved_cpu)
        assert len(saved.getvalue()) == len(saved_cpu.getvalue())


def test_growing_a_data_dependent_result_keeps_its_values():
    x = torch.arange(20.0, device=DEV)
    selected = torch.masked_select(x, x.remainder(3) == 0)  # 7 of a bucket of 8
    selected.resize_(12)
    selected[7:] = -1.0
    assert selected.cpu().tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0] + [-1.0] * 5


# ---------------------------------------------------------------------------
# softmax gradients' out= forms (nested softmax's backward writes through them)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, out_name", [("_softmax_backward_data", "grad_input"),
                                            ("_log_softmax_backward_data", "out")])
def test_softmax_backward_out_matches_cpu(name, out_name):
    packet = getattr(torch.ops.aten, name).out

    def op(grad, output, dim, dtype, out):
        return packet(grad, output, dim, dtype, **{out_name: out})

    g = torch.Generator().manual_seed(3)
    grad = torch.randn(3, 5, generator=g)
    output = torch.randn(3, 5, generator=g).softmax(0)
    for dim in (0, -1):
        close(lambda gr, y, out: (op(gr, y, dim, torch.float32, out), out),
              grad, output, torch.empty(0))
    same_error(lambda gr, y, out: op(gr, y, 1, torch.float32, out),
               grad, output, torch.empty(0, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double"):
        op(grad.to(DEV), output.to(DEV), 1, torch.float32,
           torch.empty(0, dtype=torch.float64, device=DEV))

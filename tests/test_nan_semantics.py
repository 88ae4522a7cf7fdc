"""NaN, infinity and signed-zero semantics follow PyTorch on CPU.

Every case runs the same call on CPU and on tpu and compares values (NaN
equal to NaN), dtypes and shapes; index outputs must be CPU's own choice
(first max for max/argmax, last for cummax). Inputs put NaN first, in the
middle and last, hold two NaNs or only NaNs, infinities, signed zeros and
ties, in float32, bfloat16, float16 and float64.

Signed zeros: where CPU's answer is fixed (sign(-0.0), relu(-0.0), clamp
keeping x on ties, cummax, sort) the sign of a zero is compared too. Where CPU
itself is not consistent it is not: CPU's maximum/minimum return the first
operand of -0.0 vs 0.0 in their scalar loop and the second in their
vectorized loop (so the answer depends on the tensor's length), and
torch.max(x) and torch.amax(x) keep different ones of two equal zeros.
"""

import pytest
import torch
import torch.nn.functional as F

DEV = "tpu"
NAN, INF = float("nan"), float("inf")
FLOATS = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
FLOAT_IDS = ["f32", "bf16", "f16", "f64"]
INTS = [torch.uint8, torch.int8, torch.int32, torch.int64]
INT_IDS = ["u8", "i8", "i32", "i64"]

# Each row one case; reducing along dim 1 treats them apart, along dim 0 mixes them.
ROWS = {
    "nan_first": [NAN, 1.0, 3.0, -2.0, 3.0],
    "nan_middle": [1.0, 3.0, NAN, -2.0, 3.0],
    "nan_last": [1.0, 3.0, -2.0, 3.0, NAN],
    "two_nans": [1.0, NAN, 3.0, NAN, -2.0],
    "all_nan": [NAN] * 5,
    "inf": [-INF, 1.0, INF, -INF, INF],
    "signed_zeros": [0.0, -0.0, -1.0, -0.0, 0.0],
    "ties": [1.0, 3.0, -2.0, 3.0, -2.0],
}


def matrix(dtype=torch.float32):
    return torch.tensor(list(ROWS.values()), dtype=torch.float64).to(dtype)


def to_dev(v):
    if isinstance(v, torch.Tensor):
        return v.to(DEV)
    if isinstance(v, (list, tuple)):
        return type(v)(to_dev(x) for x in v)
    return v


def to_cpu(v):
    if isinstance(v, torch.Tensor):
        return v.cpu()
    if isinstance(v, (list, tuple)):
        return tuple(to_cpu(x) for x in v)
    return v


def assert_same(expected, actual, signed_zero=True):
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(expected) == len(actual)
        for e, a in zip(expected, actual):
            assert_same(e, a, signed_zero)
        return
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.is_floating_point():
        torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
        if signed_zero:
            both = ~expected.isnan()
            assert torch.equal(actual[both].signbit(), expected[both].signbit()), (actual, expected)
    else:
        assert torch.equal(actual, expected), (actual, expected)


def check(fn, *args, signed_zero=True, **kwargs):
    """fn on CPU and on tpu copies of args (tensors in lists too)."""
    expected = fn(*args, **kwargs)
    actual = to_cpu(fn(*to_dev(args), **to_dev(kwargs)))
    assert_same(expected, actual, signed_zero)
    return expected, actual


# ---------------------------------------------------------------------------
# The reproducers of issue 8 (items 1 and 13, and cummax/cummin), each of
# which gave a wrong answer (or raised) before.
# ---------------------------------------------------------------------------

def _t(*v, dtype=torch.float32):
    return torch.tensor(v, dtype=dtype)


REPRODUCERS = {
    "maximum": (torch.maximum, _t(1.0, NAN, 3.0), _t(2.0, 1.0, NAN)),
    "minimum": (torch.minimum, _t(1.0, NAN, 3.0), _t(2.0, 1.0, NAN)),
    "maximum_second_nan": (torch.maximum, _t(0.0), _t(NAN)),
    "minimum_second_nan": (torch.minimum, _t(0.0), _t(NAN)),
    "max": (torch.max, _t(1.0, NAN, 3.0)),
    "min": (torch.min, _t(1.0, NAN, 3.0)),
    "amax": (torch.amax, _t(1.0, 3.0, NAN)),
    "amin": (torch.amin, _t(NAN, 1.0, 3.0)),
    "max_dim": (lambda x: torch.max(x, 0), _t(1.0, NAN, 3.0)),
    "min_dim": (lambda x: torch.min(x, 0), _t(1.0, NAN, 3.0)),
    "argmax": (torch.argmax, _t(1.0, NAN, 3.0)),
    "argmin": (torch.argmin, _t(1.0, NAN, 3.0)),
    "argmax_all_nan": (torch.argmax, _t(NAN, NAN, NAN)),
    "clamp_min_nan": (lambda x: torch.clamp(x, min=NAN), _t(1.0, -1.0, 3.0)),
    "clamp_max_nan": (lambda x: torch.clamp(x, max=NAN), _t(1.0, -1.0, 3.0)),
    "clamp_tensor_bounds": (torch.clamp, _t(1.0, 2.0, 5.0, 0.5), _t(NAN, 0.0, 0.0, 0.0),
                            _t(3.0, NAN, 1.0, 1.0)),
    "clamp_min_tensor": (torch.clamp_min, _t(1.0, 2.0), _t(NAN, 0.0)),
    "hardtanh_nan_min": (lambda x: F.hardtanh(x, NAN, 1.0), _t(1.0, -2.0, 0.5)),
    "hardtanh_nan_max": (lambda x: F.hardtanh(x, -1.0, NAN), _t(1.0, -2.0, 0.5)),
    "vector_norm_inf": (lambda x: torch.linalg.vector_norm(x, INF), _t(1.0, NAN, 3.0)),
    "vector_norm_neg_inf": (lambda x: torch.linalg.vector_norm(x, -INF), _t(1.0, NAN, 3.0)),
    "scatter_reduce_amax": (lambda s, x: s.scatter_reduce(0, torch.zeros(3, dtype=torch.long,
                                                                         device=s.device),
                                                          x, "amax"), _t(0.0), _t(1.0, NAN, 3.0)),
    "scatter_reduce_amin": (lambda s, x: s.scatter_reduce(0, torch.zeros(3, dtype=torch.long,
                                                                         device=s.device),
                                                          x, "amin"), _t(0.0), _t(1.0, NAN, 3.0)),
    "sign_nan": (torch.sign, _t(NAN, 1.0)),
    "sgn_nan": (torch.sgn, _t(NAN, -1.0)),
    "sign_neg_zero": (torch.sign, _t(-0.0)),
    "sgn_neg_zero": (torch.sgn, _t(-0.0)),
    "cummax": (lambda x: torch.cummax(x, 0), _t(1.0, NAN, 3.0)),
    "cummin": (lambda x: torch.cummin(x, 0), _t(1.0, NAN, 3.0)),
}


@pytest.mark.parametrize("name", list(REPRODUCERS))
def test_issue_reproducer(name):
    fn, *args = REPRODUCERS[name]
    check(fn, *args)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

REDUCTIONS = {
    "max": (lambda x: torch.max(x), False),
    "min": (lambda x: torch.min(x), False),
    "amax_all": (lambda x: torch.amax(x), False),
    "amax_1": (lambda x: torch.amax(x, 1), False),
    "amin_0": (lambda x: torch.amin(x, 0), False),
    "amax_01_keepdim": (lambda x: torch.amax(x, (0, 1), keepdim=True), False),
    "max_dim1": (lambda x: torch.max(x, 1), True),
    "max_dim0_keepdim": (lambda x: torch.max(x, 0, keepdim=True), True),
    "min_dim1": (lambda x: torch.min(x, 1), True),
    "min_dim0": (lambda x: torch.min(x, 0), True),
    "argmax": (lambda x: torch.argmax(x), True),
    "argmax_1": (lambda x: torch.argmax(x, 1), True),
    "argmin_0_keepdim": (lambda x: torch.argmin(x, 0, keepdim=True), True),
    "argmin_1": (lambda x: torch.argmin(x, 1), True),
    "norm_inf_1": (lambda x: torch.linalg.vector_norm(x, INF, dim=1), False),
    "norm_neg_inf_0": (lambda x: torch.linalg.vector_norm(x, -INF, dim=0), False),
    "logsumexp_1": (lambda x: torch.logsumexp(x, 1), False),
    "softmax_1": (lambda x: torch.softmax(x, 1), False),
    "log_softmax_1": (lambda x: torch.log_softmax(x, 1), False),
    "softmax_0": (lambda x: torch.softmax(x, 0), False),
}

# Values reduce in float32 for the narrow types on both sides.
APPROX = {"logsumexp_1", "softmax_1", "log_softmax_1", "softmax_0"}


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction(name, dtype):
    fn, exact_zero = REDUCTIONS[name]
    x = matrix(dtype)
    if name in APPROX:
        expected, actual = fn(x), to_cpu(fn(x.to(DEV)))
        torch.testing.assert_close(actual, expected, equal_nan=True)
        # a NaN in a row makes the whole row NaN, on both
        assert torch.equal(actual.isnan(), expected.isnan())
        return
    # Values of max/min(dim) are the element at the index, so their zeros
    # are exact; amax/max() pick between equal zeros differently on CPU.
    check(fn, x, signed_zero=exact_zero)


@pytest.mark.parametrize("dtype", INTS, ids=INT_IDS)
def test_integer_reductions(dtype):
    x = torch.tensor([[3, 1, 3, 0], [2, 7, 7, 1], [0, 0, 0, 0]], dtype=dtype)
    for fn in (torch.max, torch.min, lambda t: torch.amax(t, 1), lambda t: torch.amin(t, 0),
               lambda t: torch.max(t, 1), lambda t: torch.min(t, 0), torch.argmax,
               lambda t: torch.argmin(t, 1), lambda t: torch.argmax(t, 0)):
        check(fn, x)


def test_reduction_out_variants():
    x = matrix()
    check(lambda t: torch.amax(t, 1, out=torch.empty(0, device=t.device)), x, signed_zero=False)
    check(lambda t: torch.amin(t, 0, out=torch.empty(0, device=t.device)), x, signed_zero=False)
    check(lambda t: torch.argmax(t, 1, out=torch.empty(0, dtype=torch.long, device=t.device)), x)
    check(lambda t: torch.max(t, 1, out=(torch.empty(0, device=t.device),
                                         torch.empty(0, dtype=torch.long, device=t.device))), x)
    check(lambda t: torch.min(t, 0, out=(torch.empty(0, device=t.device),
                                         torch.empty(0, dtype=torch.long, device=t.device))), x)


def test_reductions_of_strided_views():
    x = matrix()
    check(lambda t: torch.max(t.t(), 0), x)
    check(lambda t: torch.argmin(t[::2, 1:], 1), x)
    check(lambda t: torch.amax(t.t()[1:], 1), x, signed_zero=False)


def test_long_reduction_finds_first_nan():
    x = torch.randn(4, 4096)
    x[1, 3000] = NAN
    x[1, 100] = NAN
    x[2, 4095] = NAN
    x[3, 0] = INF
    for fn in (lambda t: torch.max(t, 1), lambda t: torch.argmin(t, 1), torch.argmax,
               lambda t: torch.amax(t, 1), torch.amin):
        check(fn, x)


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------

def pair(dtype):
    x = matrix(dtype)
    return x, x.roll(1, 0).roll(2, 1)


BINARY = {
    "maximum": (torch.maximum, False),
    "minimum": (torch.minimum, False),
    "fmax": (torch.fmax, False),
    "fmin": (torch.fmin, False),
    "max_binary": (torch.max, False),
    "clamp_min_tensor": (torch.clamp_min, True),
    "clamp_max_tensor": (torch.clamp_max, True),
    "clamp_tensor_min": (lambda x, y: torch.clamp(x, min=y), True),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    fn, exact_zero = BINARY[name]
    x, y = pair(dtype)
    check(fn, x, y, signed_zero=exact_zero)
    check(fn, y, x, signed_zero=exact_zero)
    check(fn, x, y[:1], signed_zero=exact_zero)  # broadcast


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
def test_clamp_with_both_tensor_bounds(dtype):
    x, lo = pair(dtype)
    hi = x.flip(1)
    check(torch.clamp, x, lo, hi)
    check(torch.clamp, x, None, hi)
    check(lambda a, b, c: a.clone().clamp_(b, c), x, lo, hi)
    check(lambda a, b, c: torch.clamp(a, b, c, out=torch.empty(0, dtype=a.dtype, device=a.device)),
          x, lo, hi)


def test_binary_out_and_inplace_variants():
    x, y = pair(torch.float32)
    for fn in (torch.maximum, torch.minimum, torch.fmax, torch.fmin, torch.clamp_min):
        check(lambda a, b: fn(a, b, out=torch.empty(0, device=a.device)), x, y, signed_zero=False)
    check(lambda a, b: a.clone().clamp_min_(b), x, y)
    check(lambda a, b: a.clone().clamp_max_(b), x, y)


@pytest.mark.parametrize("dtype", INTS, ids=INT_IDS)
def test_integer_elementwise(dtype):
    x = torch.tensor([[3, 1, 0, 100], [2, 7, 9, 1]], dtype=dtype)
    y = x.flip(1)
    for fn in (torch.maximum, torch.minimum, torch.fmax, torch.fmin, torch.clamp_min):
        check(fn, x, y)
    check(torch.clamp, x, y, y + 1)
    for fn in (torch.sign, torch.sgn, torch.relu, lambda t: t.clamp(1, 5),
               lambda t: t.clamp(min=2)):
        check(fn, x)


def _scalar_clamps():
    return {
        "clamp_0_2": lambda x: torch.clamp(x, 0.0, 2.0),
        "clamp_min_0": lambda x: torch.clamp(x, min=0.0),
        "clamp_min_neg_zero": lambda x: torch.clamp(x, min=-0.0),
        "clamp_max_0": lambda x: torch.clamp(x, max=0.0),
        "clamp_min_nan": lambda x: torch.clamp(x, min=NAN),
        "clamp_max_nan": lambda x: torch.clamp(x, max=NAN),
        "clamp_min_gt_max": lambda x: torch.clamp(x, 2.0, 1.0),
        "clamp_min_fn": lambda x: torch.clamp_min(x, 0.5),
        "clamp_max_fn": lambda x: torch.clamp_max(x, 0.5),
        "clamp_inplace": lambda x: x.clone().clamp_(-1.0, 1.0),
        "clamp_out": lambda x: torch.clamp(x, -1.0, NAN, out=torch.empty(0, dtype=x.dtype,
                                                                           device=x.device)),
        "relu": torch.relu,
        "relu_inplace": lambda x: x.clone().relu_(),
        "relu6": F.relu6,
        "hardtanh": F.hardtanh,
        "hardtanh_nan_min": lambda x: F.hardtanh(x, NAN, 1.0),
        "hardtanh_nan_max": lambda x: F.hardtanh(x, -1.0, NAN),
        "hardtanh_inplace": lambda x: F.hardtanh(x.clone(), -0.5, 0.5, inplace=True),
        "leaky_relu": F.leaky_relu,
        "leaky_relu_inplace": lambda x: F.leaky_relu(x.clone(), 0.1, inplace=True),
        "threshold": lambda x: F.threshold(x, 0.5, -7.0),
        "threshold_nan_value": lambda x: F.threshold(x, 0.0, NAN),
        "threshold_inplace": lambda x: F.threshold(x.clone(), -1.0, 2.0, inplace=True),
        "threshold_out": lambda x: torch.threshold(x, 1.0, 0.0, out=torch.empty(
            0, dtype=x.dtype, device=x.device)),
        "sign": torch.sign,
        "sign_inplace": lambda x: x.clone().sign_(),
        "sign_out": lambda x: torch.sign(x, out=torch.empty(0, dtype=x.dtype, device=x.device)),
        "sgn": torch.sgn,
        "sgn_out": lambda x: torch.sgn(x, out=torch.empty(0, dtype=x.dtype, device=x.device)),
    }


UNARY = _scalar_clamps()


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    check(UNARY[name], matrix(dtype))


def test_unary_through_views():
    x = matrix()
    check(lambda t: torch.relu(t.t()[::2]), x)
    check(lambda t: t.t().clamp(min=NAN), x)
    v = x.clone()
    expected = v.t()[1:].clamp_(0.0, 1.0)
    d = x.to(DEV)
    actual = d.t()[1:].clamp_(0.0, 1.0)
    assert_same(expected, actual.cpu())
    assert_same(v, d.cpu())


def test_relu_backward_with_nan():
    x = matrix().requires_grad_()
    d = matrix().to(DEV).requires_grad_()
    torch.relu(x).sum().backward()
    torch.relu(d).sum().backward()
    assert_same(x.grad, d.grad.cpu())


# ---------------------------------------------------------------------------
# Ordering: sort, argsort, topk (NaN sorts as the largest value)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_stable_sort(dtype, descending):
    x = matrix(dtype)
    check(lambda t: torch.sort(t, dim=1, descending=descending, stable=True), x)
    check(lambda t: torch.sort(t, dim=0, descending=descending, stable=True), x)
    check(lambda t: torch.argsort(t, dim=1, descending=descending, stable=True), x)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk(dtype, largest):
    # The order among equal values (and among NaNs) is unspecified: compare
    # values, and check the indices point at them.
    x = matrix(dtype)
    expected, _ = torch.topk(x, 3, 1, largest=largest)
    values, indices = torch.topk(x.to(DEV), 3, 1, largest=largest)
    assert_same(expected, values.cpu(), signed_zero=False)
    assert_same(values.cpu(), x.gather(1, indices.cpu()))


# ---------------------------------------------------------------------------
# cummax / cummin (CPU: a NaN or an element >= (<=) the running value takes
# over, so ties and NaNs take the latest index)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("op", [torch.cummax, torch.cummin], ids=["cummax", "cummin"])
def test_cummax_cummin_floats(op, dtype):
    x = matrix(dtype)
    check(lambda t: op(t, 1), x)
    check(lambda t: op(t, 0), x)
    check(lambda t: op(t, -1), x)
    check(lambda t: op(t.t(), 1), x)  # a transposed view


@pytest.mark.parametrize("dtype", INTS + [torch.bool], ids=INT_IDS + ["bool"])
@pytest.mark.parametrize("op", [torch.cummax, torch.cummin], ids=["cummax", "cummin"])
def test_cummax_cummin_other_dtypes(op, dtype):
    x = torch.tensor([[3, 1, 3, 0, 5], [2, 7, 7, 1, 0], [0, 0, 1, 0, 1]]).to(dtype)
    check(lambda t: op(t, 1), x)
    check(lambda t: op(t, 0), x)


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin], ids=["cummax", "cummin"])
def test_cummax_cummin_shapes_and_out(op):
    check(lambda t: op(t, 0), torch.tensor(NAN))  # 0-d
    check(lambda t: op(t, 0), torch.tensor(2.5))
    check(lambda t: op(t, 1), torch.empty(3, 0))
    check(lambda t: op(t, 0), torch.empty(0))
    long = torch.randn(3, 1000)
    long[0, 500] = NAN
    long[1, ::7] = 0.0
    check(lambda t: op(t, 1), long)
    check(lambda t: op(t, 0, out=(torch.empty(0, device=t.device),
                                  torch.empty(0, dtype=torch.long, device=t.device))), matrix())
    # out= views of bigger tensors are written through
    check(lambda t: op(t, 1, out=(torch.zeros(8, 10, device=t.device)[:, ::2],
                                  torch.zeros(5, 8, dtype=torch.long, device=t.device).t())),
          matrix())


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin], ids=["cummax", "cummin"])
def test_cummax_cummin_backward(op):
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0, 5.0], [4.0, 1.0, 4.0, 0.5, 0.5]], requires_grad=True)
    d = x.detach().to(DEV).requires_grad_()
    w = torch.arange(10.0).reshape(2, 5)
    (op(x, 1).values * w).sum().backward()
    (op(d, 1).values * w.to(DEV)).sum().backward()
    assert_same(x.grad, d.grad.cpu())


# ---------------------------------------------------------------------------
# Pooling: CPU takes a value greater than the window's best so far, or a NaN
# (so the last NaN of a window wins)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
def test_max_pool_with_nan(dtype):
    x = torch.arange(1.0, 37.0).reshape(1, 1, 6, 6)
    x[0, 0, 0, 0] = NAN  # first tap of a window
    x[0, 0, 1, 3] = NAN  # last tap
    x[0, 0, 2, 2] = NAN  # two NaNs in one window
    x[0, 0, 3, 3] = NAN
    x[0, 0, 4:, 4:] = NAN  # a window of NaNs
    x[0, 0, 5, 0] = INF
    x = x.to(dtype)
    check(lambda t: F.max_pool2d(t, 2, return_indices=True), x)
    check(lambda t: F.max_pool2d(t, 3, 1, 1, return_indices=True), x)
    check(lambda t: F.max_pool1d(t[0], 2, return_indices=True), x)
    # adaptive windows (overlapping for 6 -> 4), and the whole plane at once
    check(lambda t: F.adaptive_max_pool2d(t, 4, return_indices=True), x)
    check(lambda t: F.adaptive_max_pool2d(t, 1, return_indices=True), x)
    check(lambda t: F.adaptive_max_pool3d(t.reshape(1, 1, 4, 3, 3), (2, 2, 3),
                                          return_indices=True), x)
    check(lambda t: F.max_pool3d(t.reshape(1, 1, 4, 3, 3), 2, 1, return_indices=True), x)
    check(lambda t: F.max_pool3d(t.reshape(1, 4, 3, 3), (1, 3, 3), return_indices=True), x)


# ---------------------------------------------------------------------------
# scatter_reduce amax/amin (NaN in self or in src propagates)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False], ids=["with_self", "without_self"])
def test_scatter_reduce_with_nan(reduce, include_self, dtype):
    src = matrix(dtype)
    self_ = torch.tensor([[0.0, NAN, -INF, 5.0, 0.0]] * 3, dtype=dtype)
    index = torch.tensor([[0, 1, 2, 0, 1], [2, 2, 1, 0, 0], [1, 0, 0, 2, 2],
                          [0, 0, 0, 1, 1], [2, 1, 2, 1, 2], [1, 1, 1, 1, 0],
                          [0, 2, 0, 2, 0], [2, 0, 1, 0, 1]])
    check(lambda s, i, x: s.scatter_reduce(0, i, x, reduce, include_self=include_self),
          self_, index, src, signed_zero=False)
    check(lambda s, i, x: s.clone().scatter_reduce_(0, i, x, reduce, include_self=include_self),
          self_, index, src, signed_zero=False)


# ---------------------------------------------------------------------------
# Subnormals (issue 8, item 22). No compile option keeps them on the XLA CPU
# plugin: its runtime sets flush-to-zero and denormals-are-zero around every
# execution (tsl::port::ScopedFlushDenormal in the execute path of
# xla/pjrt/cpu/cpu_client.cc). xla_cpu_ftz=false (which only the newer plugin
# knows) does not change that. README.md ("Using it") documents it.
# ---------------------------------------------------------------------------

SUBNORMAL_FLUSH = ("known limitation: the XLA CPU plugin's runtime flushes subnormals to zero "
                   "in every computation (FTZ/DAZ set around each execution; no compile "
                   "option turns it off); see README.md")


@pytest.mark.xfail(strict=True, reason=SUBNORMAL_FLUSH)
def test_subnormal_float32_survives_arithmetic():
    check(lambda t: t * 1, torch.tensor([1e-40, -1e-45, 1.1754942e-38]))


@pytest.mark.xfail(strict=True, reason=SUBNORMAL_FLUSH)
def test_subnormal_float64_survives_arithmetic():
    check(lambda t: t * 1, torch.tensor([1e-310, -5e-324], dtype=torch.float64))


@pytest.mark.xfail(strict=True, reason=SUBNORMAL_FLUSH)
def test_arithmetic_can_produce_subnormals():
    check(lambda t: t / 1000, torch.tensor([1e-38]))


# ---------------------------------------------------------------------------
# The same semantics on the newer CPU plugin (PJRT API 0.115): the lowering,
# not a plugin default, carries them. (tests/cpp checks the builder's
# max/min/reduce/scatter on both plugins.)
# ---------------------------------------------------------------------------

def test_reproducers_and_reductions_on_newer_plugin():
    import os
    import re
    import subprocess
    import sys

    from conftest import NEWER_CPU_PLUGIN

    assert NEWER_CPU_PLUGIN is not None, "the newer PJRT CPU plugin is not installed"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TORCH_TPU_PJRT_PLUGIN=NEWER_CPU_PLUGIN)
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           os.path.abspath(__file__),
           "-k", "(reproducer or reduction or cummax) and not newer_plugin"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    summary = [ln for ln in r.stdout.splitlines() if re.search(r"\d+ passed", ln)]
    passed = int(re.search(r"(\d+) passed", summary[-1]).group(1)) if summary else 0
    assert passed >= 120, r.stdout[-3000:]

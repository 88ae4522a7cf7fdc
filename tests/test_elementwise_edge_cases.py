"""Elementwise and activation edge cases found by the fuzzers (tests/fuzz):
bool operands of mul/div, Python numbers next to half/bfloat16 tensors,
wider out= dtypes, special values (NaN alpha, overflowing ldexp/hypot/
layer_norm) and the dtypes and arguments the CPU refuses.

Every test runs the same call on "cpu" and on "tpu" and compares the results
bit for bit (NaN where NaN, the sign of zeros, dtype) or the exception class.
"""

import math
import random

import pytest
import torch
import torch.nn.functional as F

DEV = "tpu"


def both(fn):
    """fn(device) on the CPU and on tpu: (cpu result or exception, tpu ...)."""
    out = []
    for device in ("cpu", DEV):
        try:
            out.append(fn(device))
        except Exception as e:  # noqa: BLE001
            out.append(e)
    return out


def assert_exact(cpu, tpu):
    """Same dtype, shape and values bit for bit (NaN where NaN, -0 where -0)."""
    assert isinstance(cpu, torch.Tensor), f"cpu raised {type(cpu).__name__}: {cpu}"
    assert isinstance(tpu, torch.Tensor), f"tpu raised {type(tpu).__name__}: {tpu}"
    assert tpu.device.type == DEV
    got = tpu.cpu()
    assert got.dtype == cpu.dtype and got.shape == cpu.shape, (got, cpu)
    torch.testing.assert_close(got, cpu, rtol=0, atol=0, equal_nan=True)
    if cpu.dtype.is_floating_point:
        keep = ~torch.isnan(cpu)
        assert torch.equal(torch.signbit(got[keep]), torch.signbit(cpu[keep])), (got, cpu)


def check(fn):
    """fn gives the same result on both devices, or raises the same class."""
    cpu, tpu = both(fn)
    if isinstance(cpu, Exception):
        assert isinstance(tpu, Exception), f"cpu raised {type(cpu).__name__}: {cpu}; tpu returned"
        assert type(tpu) is type(cpu), (f"cpu raised {type(cpu).__name__}: {cpu}; "
                                        f"tpu raised {type(tpu).__name__}: {tpu}")
        for raw in ("stablehlo", "PJRT"):
            assert raw not in str(tpu), str(tpu)
        return cpu, tpu
    assert_exact(cpu, tpu)
    return cpu, tpu


def T(device, values, dtype=None):
    return torch.tensor(values, dtype=dtype, device=device)


LOW = (torch.bfloat16, torch.float16)


# ---------------------------------------------------------------------------
# 1. a bool operand of mul/div is a number (0 or 1), not a select


@pytest.mark.parametrize("case", [
    lambda d: T(d, [-4.0, math.nan, math.inf, -math.inf, 2.0]) * T(d, [False] * 5),
    lambda d: T(d, [False] * 5) * T(d, [-4.0, math.nan, math.inf, -math.inf, 2.0]),
    lambda d: float("nan") * T(d, [False, True]),
    lambda d: T(d, [False, True]) * -4.0,
    lambda d: T(d, [math.inf, -1.0, math.nan]) / T(d, [False, False, True]),
    lambda d: T(d, [False, True]) / T(d, [0.0, -0.0]),
    lambda d: torch.div(T(d, [False, True]), -1.25, rounding_mode="trunc"),
    lambda d: torch.div(T(d, [False, True]), -1.25, rounding_mode="floor"),
    lambda d: T(d, [-4.0, math.nan], dtype=torch.bfloat16) * T(d, [False, False]),
    lambda d: T(d, [-4.0, math.inf]).mul_(T(d, [False, False])),
    lambda d: torch.mul(T(d, [-4.0, math.nan]), T(d, [False, False]),
                        out=torch.empty(2, device=d)),
])
def test_bool_operand_is_a_number(case):
    check(case)


# ---------------------------------------------------------------------------
# 2. a Python number / 0-dim / one-element operand of a half or bfloat16 tensor:
# add/sub/remainder/fmod round it to the tensor's dtype first (alpha too);
# mul/div/floor_divide read a one-element `other` in float32 unrounded and
# compute in float32, trunc and floor division included.

SCALAR_OPS = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "div_trunc": lambda a, b, **kw: torch.div(a, b, rounding_mode="trunc", **kw),
    "div_floor": lambda a, b, **kw: torch.div(a, b, rounding_mode="floor", **kw),
    "floor_divide": torch.floor_divide, "remainder": torch.remainder, "fmod": torch.fmod,
}


def _numbers(n, seed):
    rng = random.Random(seed)
    return [rng.choice([rng.uniform(-6, 6), rng.uniform(-300, 300), rng.uniform(-0.05, 0.05)])
            for _ in range(n)]


def _operand(form, value, d):
    """The scalar operand in one of the forms the CPU treats as a scalar."""
    if form == "number":
        return value
    if form == "cpu_0d":
        return torch.tensor(value)
    if form == "tpu_0d_f32":
        return torch.tensor(value, dtype=torch.float32, device=d)
    if form == "tpu_0d_f64":
        return torch.tensor(value, dtype=torch.float64, device=d)
    if form == "one_element":  # same dtype, broadcast: TensorIterator's is_scalar too
        return None
    raise AssertionError(form)


FORMS = ("number", "cpu_0d", "tpu_0d_f32", "tpu_0d_f64", "one_element")


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
def test_low_precision_scalar_other(op, form, dtype):
    f = SCALAR_OPS[op]
    base = torch.randn(257, generator=torch.Generator().manual_seed(3)) * 40
    for value in _numbers(6, hash((op, form)) % 1000):
        def run(d):
            x = base.to(dtype).to(d)
            other = _operand(form, value, d)
            if other is None:
                other = torch.tensor([value], dtype=dtype, device=d)
            return f(x, other)
        check(run)


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("form", ("cpu_0d", "tpu_0d_f32"))
@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
def test_low_precision_scalar_self(op, form, dtype):
    """The scalar as the first operand: rounded to the tensor's dtype (CPU's
    scalar fast path looks at the second operand only)."""
    f = SCALAR_OPS[op]
    base = torch.randn(257, generator=torch.Generator().manual_seed(4)) * 40
    base[base.abs() < 0.5] = 1.0
    for value in _numbers(6, 11):
        check(lambda d: f(_operand(form, value, d), base.to(dtype).to(d)))


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_low_precision_scalar_python_operators(dtype):
    base = torch.randn(129, generator=torch.Generator().manual_seed(5)) * 8
    for value in _numbers(8, 12):
        for expr in (lambda x: value + x, lambda x: x + value, lambda x: value - x,
                     lambda x: x - value, lambda x: value * x, lambda x: x * value,
                     lambda x: x / value, lambda x: value / x, lambda x: x // value,
                     lambda x: value // x, lambda x: x % value, lambda x: value % x):
            check(lambda d: expr(base.to(dtype).to(d)))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_low_precision_alpha(op, dtype):
    # 256 elements: CPU's vectorized loop covers them all (its scalar loop,
    # for a tail, rounds alpha * other to half/bfloat16 before the add)
    f = SCALAR_OPS[op]
    g = torch.Generator().manual_seed(6)
    a, b = torch.randn(256, generator=g) * 20, torch.randn(256, generator=g) * 20
    for alpha in _numbers(6, 13):
        check(lambda d: f(a.to(dtype).to(d), b.to(dtype).to(d), alpha=alpha))
        check(lambda d: f(a.to(dtype).to(d), 0.643, alpha=alpha))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", ["add", "mul", "div", "remainder"])
def test_low_precision_scalar_inplace_and_out(op, dtype):
    base = torch.randn(65, generator=torch.Generator().manual_seed(7)) * 10
    for value in _numbers(4, 14):
        check(lambda d: getattr(base.to(dtype).to(d), op + "_")(value))
        check(lambda d: getattr(torch, op)(base.to(dtype).to(d), value,
                                           out=torch.empty(65, dtype=dtype, device=d)))
        # a wider out=: computed in the tensor's dtype, then cast
        check(lambda d: getattr(torch, op)(base.to(dtype).to(d), value,
                                           out=torch.empty(65, device=d)))


def test_low_precision_scalar_fuzzer_reproducers():
    check(lambda d: torch.add(T(d, [-4.0], dtype=torch.float16), 4.955))
    check(lambda d: 0.643 + T(d, [-0.6015625], dtype=torch.bfloat16))
    check(lambda d: torch.remainder(T(d, [4.0], dtype=torch.float16), T(d, -2.3)))


# ---------------------------------------------------------------------------
# 3. a wider out= dtype: the op computes in its inputs' dtype, then casts

# (rsqrt and xlogy are left out: their half/bfloat16 results differ from
# the CPU's whatever the out= dtype, the CPU rounding intermediate steps.)
UNARY_FLOAT = ("exp log sqrt sin cos tan tanh sigmoid expm1 log1p log2 log10 exp2 asin acos "
               "atan sinh cosh asinh acosh atanh erf erfinv reciprocal").split()
BINARY_FLOAT = ("atan2 hypot pow logaddexp add sub mul div remainder fmod maximum "
                "copysign").split()


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", UNARY_FLOAT)
def test_wider_out_dtype_unary(op, dtype):
    x = torch.rand(200, generator=torch.Generator().manual_seed(8)) * 1.8 - 0.9
    if op in ("log", "sqrt", "log2", "log10", "acosh"):
        x = x.abs() + 1
    check(lambda d: getattr(torch, op)(x.to(dtype).to(d), out=torch.empty(200, device=d)))
    check(lambda d: getattr(torch, op)(x.to(dtype).to(d),
                                       out=torch.empty(200, dtype=torch.float64, device=d)))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", BINARY_FLOAT)
def test_wider_out_dtype_binary(op, dtype):
    g = torch.Generator().manual_seed(9)
    a, b = torch.rand(200, generator=g) * 3 + 0.1, torch.rand(200, generator=g) * 3 - 1.5
    check(lambda d: getattr(torch, op)(a.to(dtype).to(d), b.to(dtype).to(d),
                                       out=torch.empty(200, device=d)))


def test_wider_out_dtype_fuzzer_reproducer():
    check(lambda d: torch.sigmoid(T(d, [-0.5], dtype=torch.float16), out=torch.zeros(1, device=d)))


# ---------------------------------------------------------------------------
# 4. special values


@pytest.mark.parametrize("kw", [dict(alpha=math.nan), dict(alpha=math.inf), dict(alpha=-2.0)])
def test_elu_zero_takes_the_x_branch(kw):
    values = [0.0, -0.0, -1e-30, -1.0, 1.0, math.nan, -math.inf]
    check(lambda d: F.elu(T(d, values), **kw))
    check(lambda d: F.elu(T(d, values), inplace=True, **kw))


# ---------------------------------------------------------------------------
# 5. dtypes and arguments the CPU refuses, with its exception class


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool, torch.uint8])
def test_logsigmoid_refuses_non_float(dtype):
    check(lambda d: F.logsigmoid(torch.ones(3, dtype=dtype, device=d)))


@pytest.mark.parametrize("case", [
    lambda d: torch.lerp(T(d, [1.0]), T(d, [2.0]), T(d, [0.5], dtype=torch.float64)),
    lambda d: torch.lerp(T(d, [1.0]), T(d, [2.0], dtype=torch.float64), 0.5),
    lambda d: torch.lerp(T(d, [1.0]), T(d, [2.0], dtype=torch.float16), T(d, [0.5])),
    lambda d: T(d, [1.0]).lerp_(T(d, [2.0]), T(d, 0.5, dtype=torch.float64)),
    lambda d: torch.lerp(T(d, [1.0]), T(d, [2.0]), T(d, [0.25])),
    lambda d: torch.lerp(T(d, [1.0, 3.0]), T(d, [2.0, -1.0]), T(d, 0.3, dtype=torch.float64)),
    lambda d: torch.lerp(T(d, [1.0]), T(d, 2.0, dtype=torch.float64), T(d, [0.25])),
])
def test_lerp_operand_dtypes(case):
    check(case)


@pytest.mark.parametrize("case", [
    lambda d: torch.matmul(torch.ones(2, 2, dtype=torch.bool, device=d),
                           torch.ones(2, 2, dtype=torch.bool, device=d)),
    lambda d: torch.matmul(torch.ones(2, dtype=torch.bool, device=d),
                           torch.ones(2, dtype=torch.bool, device=d)),
    lambda d: torch.mv(torch.ones(2, 2, dtype=torch.bool, device=d),
                       torch.ones(2, dtype=torch.bool, device=d)),
    lambda d: torch.bmm(torch.ones(1, 2, 2, dtype=torch.bool, device=d),
                        torch.ones(1, 2, 2, dtype=torch.bool, device=d)),
    lambda d: torch.matmul(torch.ones(2, 2, dtype=torch.int32, device=d),
                           torch.ones(2, 2, dtype=torch.int32, device=d)),
])
def test_matmul_bool_refused(case):
    check(case)


@pytest.mark.parametrize("case", [
    lambda d: torch.div(torch.ones(2, device=d), 2, rounding_mode="bad"),
    lambda d: torch.div(torch.ones(2, device=d), torch.ones(2, device=d), rounding_mode="Floor"),
    lambda d: torch.ones(2, device=d).div_(2, rounding_mode=""),
    lambda d: F.gelu(torch.ones(2, device=d), approximate="bad"),
    lambda d: torch.clamp(torch.ones(2, device=d)),
])
def test_invalid_arguments_refused(case):
    check(case)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("exp_dtype", [torch.int64, torch.int32])
def test_ldexp_integer_exponent_is_exact(dtype, exp_dtype):
    # CPU's std::ldexp: no overflow of 2**e before x scales it (0 * 2**256 is 0, not NaN)
    x = torch.tensor([0.0, 1.0, 3.0, -2.5, float("nan"), float("inf"), -0.0, 1e-3], dtype=dtype)
    e = torch.tensor([256, 200, -1200, 3, 1, -5, 40, -3000], dtype=exp_dtype)
    expect = torch.ldexp(x, e)
    got = torch.ldexp(x.to(DEV), e.to(DEV))
    assert got.dtype == expect.dtype
    torch.testing.assert_close(got.cpu(), expect, rtol=0, atol=0, equal_nan=True)
    inplace = x.clone().to(DEV).ldexp_(e.to(DEV))
    torch.testing.assert_close(inplace.cpu(), x.clone().ldexp_(e), rtol=0, atol=0, equal_nan=True)
    # (out= of another dtype trips an internal assert in CPU's kernel)
    out = torch.empty(8, dtype=dtype, device=DEV)
    torch.ldexp(x.to(DEV), e.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), expect, rtol=0, atol=0, equal_nan=True)


def test_ldexp_integer_input_float_exponent_and_grad():
    xi, ei = torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    torch.testing.assert_close(torch.ldexp(xi.to(DEV), ei.to(DEV)).cpu(), torch.ldexp(xi, ei))
    x, ef = torch.tensor([1.0, 2.0]), torch.tensor([0.5, 2.5])
    torch.testing.assert_close(torch.ldexp(x.to(DEV), ef.to(DEV)).cpu(), torch.ldexp(x, ef))
    a = torch.tensor([1.5, 2.0], requires_grad=True)
    b = a.detach().to(DEV).requires_grad_()
    torch.ldexp(a, torch.tensor([3, 1])).sum().backward()
    torch.ldexp(b, torch.tensor([3, 1], device=DEV)).sum().backward()
    torch.testing.assert_close(b.grad.cpu(), a.grad)


def test_special_functions_values_and_edges_like_cpu():
    """zeta (Cephes' algorithm: the direct sum runs past 9 for negative q,
    where XLA's fixed-length zeta is far off), polygamma n >= 2 through it,
    entr, xlog1py, i0e/i1e and spherical_bessel_j0, with their edge values."""
    x = torch.tensor([2.0, 1, 0.5, 3, 3, 2, 4.5, 10, 1.5, 0, 2])
    q = torch.tensor([1.0, 1, 1, -2, -2.5, 0, 3.3, 0.1, 1e9, 0, -30.5])
    cpu, tpu = both(lambda d: torch.special.zeta(x.to(d), q.to(d)))
    torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-5, atol=0, equal_nan=True)
    v = torch.tensor([1.0, -8.5, 0, -2, 30, 0.25, -20.3, 1e-3, float("nan")])
    for n in (2, 3, 5):
        cpu, tpu = both(lambda d: torch.polygamma(n, v.to(d)))
        torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-4, atol=0, equal_nan=True)
    e = torch.tensor([0.0, -1, 2, float("nan"), float("inf"), 1e-30, 0.3])
    cpu, tpu = both(lambda d: torch.special.entr(e.to(d)))
    torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-6, atol=0, equal_nan=True)
    cpu, tpu = both(lambda d: torch.special.xlog1py(torch.tensor([0.0, 0, 2, 1], device=d),
                                                   torch.tensor([float("nan"), -1, 1, -1], device=d)))
    torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-6, atol=0, equal_nan=True)
    s = torch.tensor([0.0, 1e-4, float("inf"), -float("inf"), 3, -7.5, 1e5])
    cpu, tpu = both(lambda d: torch.special.spherical_bessel_j0(s.to(d)))
    torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-6, atol=1e-7, equal_nan=True)
    r = torch.linspace(-800, 800, 161, dtype=torch.float64)  # i0(800) overflows; i0e does not
    for fn in (torch.special.i0e, torch.special.i1e):
        cpu, tpu = both(lambda d: fn(r.to(d)))
        torch.testing.assert_close(tpu.cpu(), cpu, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_frexp_reads_the_bits_like_cpu(dtype):
    """frexp on tpu works on the bits (the CPU plugin flushes subnormal floats
    in arithmetic): subnormals, zeros, infinities and NaN as CPU's."""
    x = torch.tensor([0.0, -0.0, 1, 3, -5, 0.5, float("inf"), -float("inf"), float("nan"), 1e30,
                      7e-3, -123.25, 1e-40, -3e-45, 1e-310, 6e-8, 1e-39]).to(dtype)
    (m_cpu, e_cpu), (m_tpu, e_tpu) = both(lambda d: torch.frexp(x.to(d)))
    torch.testing.assert_close(m_tpu.cpu(), m_cpu, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(e_tpu.cpu(), e_cpu) and e_tpu.dtype == torch.int32
    cpu, tpu = both(lambda d: torch.frexp(torch.tensor([1, 2], device=d)))
    assert type(cpu) is type(tpu) is RuntimeError and "only supports floating-point" in str(tpu)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials_like_cpu(name):
    """Every x and n case CPU's kernels tell apart: negative, fractional,
    NaN and infinite degrees, the interval's ends (0 and 1 for the shifted
    forms), the closed forms past degree 4/6/8 inside it, the recurrence
    outside it (to overflow), Hermite's degree limit; both float types."""
    f = getattr(torch.special, name)
    xs = [-2.0, -1.0, -0.999, -0.7, 0.0, 1e-20, 0.25, 0.5, 0.999, 1.0, 1.5, 3.0,
          math.nan, math.inf, -math.inf]
    ns = [-3.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 9.0, 30.0, 200.0, 600.0,
          math.nan, math.inf]
    for dtype, rtol in ((torch.float32, 2e-4), (torch.float64, 1e-10)):
        x = torch.tensor(xs, dtype=dtype).repeat_interleave(len(ns))
        n = torch.tensor(ns, dtype=dtype).repeat(len(xs))
        expected = f(x, n)
        actual = f(x.to(DEV), n.to(DEV)).cpu()
        # relative to max(|value|, 1): the closed forms at degree 600 lose
        # digits on both devices
        torch.testing.assert_close(actual / expected.abs().clamp(min=1),
                                   expected / expected.abs().clamp(min=1),
                                   rtol=0, atol=rtol, equal_nan=True)
        assert torch.equal(actual.isinf(), expected.isinf())
    # integer arguments compute in float, a Python number is either operand, out=
    ints = (torch.tensor([2, 3, 0]), torch.tensor([2, 3, 4]))
    assert torch.equal(f(*(t.to(DEV) for t in ints)).cpu(), f(*ints))
    t = torch.tensor([0.25, 0.75])
    torch.testing.assert_close(f(t.to(DEV), 3).cpu(), f(t, 3))
    torch.testing.assert_close(f(0.5, t.to(DEV) * 4).cpu(), f(0.5, t * 4))
    out = torch.empty(2, dtype=torch.float64, device=DEV)
    f(t.double().to(DEV), torch.tensor([3.0, 4.0], dtype=torch.float64, device=DEV), out=out)
    torch.testing.assert_close(out.cpu(), f(t.double(), torch.tensor([3.0, 4.0], dtype=torch.float64)))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        f(torch.ones(2, dtype=torch.half, device=DEV), torch.ones(2, dtype=torch.half, device=DEV))


GAUSSIAN_ARGS = {
    "erfcx": [-1e300, -40, -26.8, -26.5, -10, -5.01, -5, -4.99, -1, -0.5, -1e-10, 0, 1e-10, 0.5,
              1, 2, 4.99, 5, 5.01, 10, 26, 27, 40, 1e5, 1e10, 1e150, 1e300, math.inf, -math.inf,
              math.nan],
    "ndtri": [0, 1e-300, 1e-200, 1e-20, 1e-11, 1e-9, 1e-5, 0.01, 0.1, 0.25, 0.4, 0.5, 0.6, 0.9,
              0.99, 1 - 1e-9, 1 - 1e-15, 1, -0.1, 1.1, -math.inf, math.nan],
}
GAUSSIAN_ARGS["log_ndtr"] = GAUSSIAN_ARGS["erfcx"]


@pytest.mark.parametrize("name", sorted(GAUSSIAN_ARGS))
def test_gaussian_tail_functions_like_cpu(name):
    """erfcx, log_ndtr and ndtri deep into both tails (where exp(x^2),
    erfc and 2p - 1 under- or overflow), at their poles and outside their
    domains; integer inputs compute in float32; half types are refused."""
    f = getattr(torch.special, name)
    for dtype, rtol in ((torch.float64, 1e-12), (torch.float32, 2e-6)):
        x = torch.tensor(GAUSSIAN_ARGS[name], dtype=dtype)
        # (the CPU plugin flushes float32 subnormals: 1e-40 would be 0)
        expected, actual = f(x), f(x.to(DEV)).cpu()
        assert actual.dtype == dtype
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=0, equal_nan=True)
    ints = torch.tensor([-3, 0, 1, 2])
    torch.testing.assert_close(f(ints.to(DEV)).cpu(), f(ints), equal_nan=True)
    # PyTorch's derivative formulas over these values
    x = torch.tensor([0.01, 0.3, 0.7, 0.95] if name == "ndtri" else [-6.0, -0.5, 0.5, 3.0],
                     dtype=torch.float64)
    grads = []
    for device in ("cpu", DEV):
        leaf = x.to(device, copy=True).requires_grad_()
        f(leaf).sum().backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-12, atol=0)
    with pytest.raises(NotImplementedError, match="not implemented for 'BFloat16'"):
        f(torch.ones(2, dtype=torch.bfloat16, device=DEV))


@pytest.mark.parametrize("name", ["modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"])
def test_bessel_k_like_cpu(name):
    """K0/K1 plain and scaled across their three regimes (series below 2,
    quadrature to 20, asymptotic above) and the boundaries between them,
    the pole at 0, negative and infinite arguments."""
    f = getattr(torch.special, name)
    xs = [0, -1, math.nan, math.inf, 1e-300, 1e-10, 0.1, 1, 1.9999, 2, 2.0001, 5, 10, 19.999,
          20, 20.001, 30, 100, 700, 1e5, 1e300]
    for dtype, rtol, atol in ((torch.float64, 1e-13, 0), (torch.float32, 2e-6, 1.2e-38)):
        # (float32 atol: the CPU plugin flushes subnormal results, K0(100) = 4e-45)
        x = torch.tensor(xs, dtype=dtype)
        torch.testing.assert_close(f(x.to(DEV)).cpu(), f(x), rtol=rtol, atol=atol, equal_nan=True)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        f(torch.ones(2, dtype=torch.half, device=DEV))


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_jy_like_cpu_and_exact(name):
    """J0/J1/Y0/Y1 across their three regimes (series to 2, Miller's
    recurrence and Neumann's series to 25, Hankel's expansion above), signs
    and parity, the pole of Y at 0, negative and infinite arguments; within
    the error of CPU's own rational approximations (up to 2e-9 in double,
    near x = 7.5), and within 1e-15 of mpmath."""
    mpmath = pytest.importorskip("mpmath")
    f = getattr(torch.special, name)
    xs = [0.0, -0.0, -1.0, -2.5, -30.0, math.nan, math.inf, -math.inf, 1e-300, 1e-5, 0.5, 1.9999,
          2.0, 2.0001, 3.0, 7.5, 12.0, 24.999, 25.0, 25.001, 30.0, 100.0, 1000.0, 12345.6]
    for dtype, atol in ((torch.float64, 5e-9), (torch.float32, 2e-6)):
        x = torch.tensor(xs, dtype=dtype)
        actual, expected = f(x.to(DEV)).cpu(), f(x)
        torch.testing.assert_close(actual, expected, atol=atol, rtol=1e-6, equal_nan=True)
        numbers = ~expected.isnan()
        assert torch.equal(actual.signbit()[numbers], expected.signbit()[numbers])
    kind, order = name[-2], int(name[-1])
    exact = mpmath.besselj if kind == "j" else mpmath.bessely
    points = [0.5, 1.9999, 2.5, 3.0, 7.5, 12.0, 24.999, 25.001, 40.0, 100.0]
    actual = f(torch.tensor(points, dtype=torch.float64, device=DEV)).cpu()
    for p, a in zip(points, actual.tolist()):
        assert abs(a - float(exact(order, p))) < 1e-15, (p, a)

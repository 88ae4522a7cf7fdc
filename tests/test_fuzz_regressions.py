"""Reproducers from the 10,000-program differential and 2,000-call bad-input
fuzzer runs (tests/fuzz), each compared with the CPU: values bit for bit
(NaN where NaN, signed zeros, dtype) or the exception class."""

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401
from cpu_reference import DEV, same

inf = float("inf")
nan = float("nan")

CASES = {
    # integers have no NaN/inf: replacements are never converted
    "nan_to_num_int": lambda d: torch.nan_to_num(
        torch.tensor([0, 5], dtype=torch.int32, device=d), nan=2.75, posinf=0.0, neginf=inf),
    "nan_to_num_uint8_inplace": lambda d: torch.zeros(8, dtype=torch.uint8, device=d)
    .as_strided((), (), 0).nan_to_num_(nan=-1.25, posinf=1e10),
    # alpha is converted to self's dtype even when there is nothing to add
    "index_add_alpha_overflow": lambda d: torch.index_add(
        torch.tensor([0], dtype=torch.uint8, device=d), -1,
        torch.tensor([], dtype=torch.long, device=d),
        torch.tensor([], dtype=torch.uint8, device=d), alpha=-1099511627776),
    # ... while scatter's value is not converted when no index is given
    "scatter_value_overflow_empty_index": lambda d: torch.zeros(1, 1, dtype=torch.half, device=d)
    .scatter_(0, torch.zeros(0, 0, dtype=torch.long, device=d), 1e30),
    "scatter_value_overflow": lambda d: torch.zeros(1, dtype=torch.half, device=d)
    .scatter_(0, torch.zeros(1, dtype=torch.long, device=d), 1e30),
    # an empty contraction adds no alpha * 0 term
    "addmm_empty_k_inf_alpha": lambda d: torch.addmm(
        torch.tensor(0.5, dtype=torch.bfloat16, device=d),
        torch.zeros(1, 0, dtype=torch.bfloat16, device=d),
        torch.zeros(0, 1, dtype=torch.bfloat16, device=d), alpha=-inf),
    # half/bfloat16 scale in float: beta = 1e30 fits
    "addmm_half_large_beta": lambda d: torch.addmm(
        torch.tensor(0.0, dtype=torch.half, device=d), torch.zeros(1, 1, dtype=torch.half, device=d),
        torch.zeros(1, 1, dtype=torch.half, device=d), beta=1e30),
    "argmax_bool": lambda d: torch.tensor([True, False], device=d).argmax(),
    # the cast of an in-place result is refused before the kernel's dtype
    "bitwise_xor_int_self_float_other": lambda d: torch.tensor([1, 2], device=d).bitwise_xor_(
        torch.tensor([1.0, 2.0], device=d)),
    "elu_int_inplace": lambda d: F.elu_(torch.tensor([1, 2], device=d)),
    # an integer self takes CPU's composite x * 2**e: 0 * 2**255 is NaN there
    "ldexp_int_self": lambda d: torch.ldexp(torch.tensor([0, 1], dtype=torch.int32, device=d),
                                            torch.tensor(255, dtype=torch.uint8, device=d)),
    # an integer nan_to_num_ never writes, so an expanded self is fine
    "nan_to_num_int_expanded": lambda d: torch.zeros(2, dtype=torch.long, device=d)
    .as_strided((2, 2, 2), (1, 0, 0), 0).nan_to_num_(nan=-0.5, neginf=inf),
    # a one-element tensor takes CPU's scalar loop: gelu(inf) is inf there
    "gelu_one_element_inf": lambda d: F.gelu(torch.tensor([inf], device=d)),
    "arange_bool": lambda d: torch.arange(0, 3, dtype=torch.bool, device=d),
    # copysign reads the sign bit, a negative NaN's too
    "copysign_negative_nan": lambda d: torch.copysign(
        torch.tensor([5, -3], device=d), torch.tensor([nan, nan], device=d).neg()),
    "copysign_float_negative_nan": lambda d: torch.copysign(
        torch.tensor([5.0, -3.0], device=d), torch.tensor([nan, -0.0], device=d).neg()),
    # value * t1 / t2 and value * t1 * t2 associate as CPU's kernels write them
    "addcdiv_value_times_t1_first": lambda d: torch.addcdiv(
        torch.tensor([0], device=d), torch.tensor([-4.0], dtype=torch.half, device=d),
        torch.tensor([-1.1754943508222875e-38], device=d), value=0.0),
    "addcmul_value_times_t1_first": lambda d: torch.addcmul(
        torch.tensor([0.0], device=d), torch.tensor([3e38], device=d),
        torch.tensor([4.0], device=d), value=0.25),
    # all/any into a uint8 out= test the input cast to uint8 (0.6 is 0, -1.5 is 255)
    "all_uint8_out": lambda d: torch.all(
        torch.tensor([1.0, -0.6], dtype=torch.half, device=d), 0, keepdim=True,
        out=torch.zeros(1, dtype=torch.uint8, device=d)),
    "any_uint8_out": lambda d: torch.stack([torch.any(
        torch.tensor(v, device=d), 0, out=torch.zeros((), dtype=torch.uint8, device=d))
        for v in ([0.6, -0.5], [0.0, -1.5], [256.0, 0.0], [inf, nan])]),
    # in-place: an expanded self is refused before its dtype is
    "bitwise_or_expanded_float_self": lambda d: torch.zeros(1, device=d).as_strided(
        (4,), (0,)).bitwise_or_(torch.zeros(1, dtype=torch.long, device=d)),
    # (0.5 x) first: no overflow near the float max
    "gelu_tanh_near_max": lambda d: F.gelu(
        torch.tensor([3.4028234663852886e38, -3e38, 1.0], device=d).as_strided((2,), (2,)),
        approximate="tanh"),
    # ldexp's result is laid out as CPU's self * 2**other
    "ldexp_transposed_bf16": lambda d: torch.tensor(torch.zeros(
        2, 5, dtype=torch.bfloat16, device=d).t().ldexp(
        torch.zeros(1, 1, dtype=torch.int32, device=d)).stride()),
}

# float to uint8 goes through int64 and wraps (c10's cast), on every device
UINT8_SOURCES = [-0.6, -1.5, 255.7, 256.0, 300.0, -300.0, inf, -inf, nan, 1e20, -1e20, 3e9,
                 70000.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.half, torch.bfloat16],
                         ids=str)
def test_float_to_uint8_wraps_like_cpu(dtype):
    x = torch.tensor(UINT8_SOURCES, dtype=dtype)
    same(lambda d: x.to(d).to(torch.uint8))
    same(lambda d: torch.zeros(len(UINT8_SOURCES), dtype=torch.uint8, device=d).copy_(x.to(d)))


def test_logsigmoid_result_is_contiguous_like_cpu():
    for dev in ("cpu", DEV):
        x = torch.zeros(2, 3, 4, device=dev).permute(2, 0, 1)
        assert F.logsigmoid(x).is_contiguous(), dev
    same(lambda d: F.logsigmoid(torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
                                .to(d).permute(2, 0, 1)), rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_reproducer(name):
    same(CASES[name])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_gelu_special_values_are_the_function(dtype, layout):
    # gelu(x) = x Phi(x): x itself far above 0, inf at +inf, NaN at -inf (as
    # inf * 0), as CPU's scalar and float64 kernels and CUDA give it. CPU's
    # vectorized float kernel (contiguous float, bfloat16) forms x (1 + erf)
    # first and gives inf above max/2 and NaN at +inf: not followed.
    x = torch.tensor([0.0, inf, -inf, 3e38, -3e38, 1.6e38, 2.5, -1.0, 65504.0, -1e4])
    want = F.gelu(x.to(dtype).double()).to(dtype)
    src = x.to(dtype).to(DEV)
    if layout == "strided":
        src = torch.stack([src, src], 1)[:, 0]
    got = F.gelu(src).cpu()
    torch.testing.assert_close(got, want, equal_nan=True)
    # the tanh form is 0.5 x (1 + tanh(...)) with 0.5 x first, on CPU too
    same(lambda d: F.gelu(x.to(dtype).to(d), approximate="tanh"), rtol=1.6e-2, atol=1e-5)


def test_addmm_half_scales_in_float():
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(s, generator=g) for s in ((4, 5), (5, 3), (4, 3)))
    for dtype in (torch.bfloat16, torch.float16):
        same(lambda d: torch.addmm(c.to(dtype).to(d), a.to(dtype).to(d), b.to(dtype).to(d),
                                   beta=0.5, alpha=2), rtol=1.6e-2, atol=1e-3)

"""Ops Hugging Face models reach that tpu lacked (isin for generate, histc
for mixture-of-experts routing, cdist for DETR's matcher, weight norm for
wav2vec2/HuBERT/WavLM, glu for speech_to_text, torch.norm's out= forms),
each against the CPU:
values, dtypes, gradients, and the CPU's exception for bad input."""

import pytest
import torch

import torch_tpu  # noqa: F401
from cpu_reference import same

nan, inf = float("nan"), float("inf")
G = torch.Generator().manual_seed(0)
INTS = torch.randint(0, 10, (4, 5), generator=G)
TESTS = torch.tensor([3, 7, 7, 100])
BIG = torch.randint(0, 5000, (3000,), generator=G)  # past the broadcast compare
BIG_TESTS = torch.randint(0, 5000, (2000,), generator=G)
NORMAL = torch.randn(1000, generator=G)


def t(x, d, **kw):
    return (x if isinstance(x, torch.Tensor) else torch.tensor(x, **kw)).to(d)


ISIN = {
    "ints": lambda d: torch.isin(t(INTS, d), t(TESTS, d)),
    "invert": lambda d: torch.isin(t(INTS, d), t(TESTS, d), invert=True),
    "floats_nan": lambda d: torch.isin(t([1.0, nan, 2.5], d), t([2.5, nan], d)),
    "promoted": lambda d: torch.isin(t(INTS, d), t([3.0, 7.5], d)),
    "sorted_lookup": lambda d: torch.isin(t(BIG, d), t(BIG_TESTS, d)),
    "scalar_test": lambda d: torch.isin(t(INTS, d), 7),
    "scalar_element": lambda d: torch.isin(7, t(TESTS, d)),
    "empty_test": lambda d: torch.isin(t(INTS, d), t([], d, dtype=torch.long), invert=True),
    "zero_dim": lambda d: torch.isin(t(3, d), t(TESTS, d)),
    "out": lambda d: torch.isin(t(INTS, d), t(TESTS, d),
                                out=torch.empty(0, dtype=torch.bool, device=d)),
    "bool_refused": lambda d: torch.isin(t([True], d), t([True], d)),
    "complex_refused": lambda d: torch.isin(t([1 + 1j], d), t([2.0], d)),
    "float_out_refused": lambda d: torch.isin(t(INTS, d), t(TESTS, d),
                                              out=torch.empty(0, device=d)),
}

HISTC = {
    "data_range": lambda d: torch.histc(t(NORMAL, d), bins=10),
    "given_range": lambda d: torch.histc(t(NORMAL, d), bins=7, min=-1, max=1.5),
    "edges": lambda d: torch.histc(t([0.0, 1, 2, 3, 4, 4, 5], d), bins=4, min=0, max=4),
    "moe_routing": lambda d: torch.histc(t([0.0, 3, 3, 1, 7, 7, 7], d), bins=8, min=0, max=7),
    "constant_data": lambda d: torch.histc(t([2.0, 2.0], d), bins=4),
    "equal_bounds_use_data": lambda d: torch.histc(t([1.0, 2, 3], d), bins=2, min=5, max=5),
    "nan_skipped": lambda d: torch.histc(t([2.0, nan, 3], d), bins=4, min=0, max=4),
    "empty": lambda d: torch.histc(t([], d), bins=3),
    "bfloat16_counts": lambda d: torch.histc(t(NORMAL.bfloat16(), d), bins=5, min=-2, max=2),
    "out": lambda d: torch.histc(t(NORMAL, d), bins=3, out=torch.empty(0, device=d)),
    "infinite_range": lambda d: torch.histc(t([2.0, inf], d), bins=4),
    "bool_refused": lambda d: torch.histc(t([True, False], d), bins=4),
    "no_bins": lambda d: torch.histc(t([2.0, 3], d), bins=0),
    "min_above_max": lambda d: torch.histc(t([2.0, 3], d), bins=3, min=3, max=1),
    "out_dtype": lambda d: torch.histc(t([2.0, 3], d), bins=3,
                                       out=torch.empty(0, dtype=torch.float64, device=d)),
}


@pytest.mark.parametrize("case", sorted(ISIN))
def test_isin(case):
    same(ISIN[case], message=True)


@pytest.mark.parametrize("case", sorted(HISTC))
def test_histc(case):
    same(HISTC[case], message=True)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8], ids=str)
def test_histc_counts_integers_like_cuda(dtype):
    # CPU refuses integers; CUDA counts them, and Transformers' MoE routing
    # relies on that off the CPU (expert ids, min=0, max=experts-1)
    ids = torch.randint(0, 8, (50,), generator=torch.Generator().manual_seed(6))
    got = torch.histc(ids.to(dtype).to("tpu"), bins=8, min=0, max=7).cpu()
    assert got.dtype == dtype
    assert torch.equal(got, torch.histc(ids.float(), bins=8, min=0, max=7).to(dtype))
    wide = torch.histc(ids.to(dtype).to("tpu"), bins=3).cpu()  # the data's own range
    assert torch.equal(wide, torch.histc(ids.float(), bins=3).to(dtype))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, inf])
def test_cdist_forward_and_backward(p):
    a = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(1))
    b = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(2))
    b[:, 0] = a[:, 0]  # a zero distance: its gradient is 0, not NaN

    def run(d):
        x1, x2 = a.to(d).detach().requires_grad_(), b.to(d).detach().requires_grad_()
        out = torch.cdist(x1, x2, p=p)
        out.backward(torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape).to(d))
        return out, x1.grad, x2.grad

    same(run, rtol=1e-4, atol=1e-5)


def test_cdist_large_euclidean_and_bad_input():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(40, 3, generator=g), torch.randn(30, 3, generator=g)
    same(lambda d: torch.cdist(a.to(d), b.to(d)), rtol=1e-4, atol=1e-4)
    same(lambda d: torch.cdist(a.to(d), torch.randn(3, 4).to(d)), message=True)
    same(lambda d: torch.cdist(a.to(d), b.to(d), p=-1.0), message=True)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_weight_norm_conv_trains_like_cpu(dim):
    # wav2vec2's positional convolution uses weight_norm over dim 2
    def run(d):
        torch.manual_seed(0)
        conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 6, 3), dim=dim)
        conv.to(d)
        x = torch.randn(2, 4, 7, generator=torch.Generator().manual_seed(5)).to(d)
        out = conv(x)
        out.pow(2).sum().backward()
        w = conv.parametrizations.weight
        return out, w.original0.grad, w.original1.grad

    same(run, rtol=1e-4, atol=1e-5)


def test_weight_norm_interface_bfloat16_keeps_float_norms():
    g = torch.Generator().manual_seed(3)
    v, gain = torch.randn(3, 4, generator=g), torch.rand(3, 1, generator=g)
    same(lambda d: torch._weight_norm_interface(v.bfloat16().to(d), gain.bfloat16().to(d), 0),
         rtol=1.6e-2, atol=1e-2)


@pytest.mark.parametrize("p", [1, 2, 3, inf])
def test_norm_out_forms(p):
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4))
    same(lambda d: torch.norm(x.to(d), p, dim=1, out=torch.empty(0, device=d)), rtol=1e-5,
         atol=1e-6)
    same(lambda d: torch.norm(x.to(d), p, dim=(0, 1), keepdim=True, dtype=torch.float64,
                              out=torch.empty(0, dtype=torch.float64, device=d)), rtol=1e-5,
         atol=1e-6)
    same(lambda d: torch.nn.functional.pairwise_distance(x.to(d), x.flip(0).to(d), p=p),
         rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_forward_backward_and_checks(dim):
    # speech_to_text's convolutional subsampler uses glu
    x = torch.randn(4, 6, 2, generator=torch.Generator().manual_seed(7))

    def run(d):
        xd = x.to(d).detach().requires_grad_()
        out = torch.nn.functional.glu(xd, dim)
        out.backward(torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(d))
        return out, xd.grad

    same(run, rtol=1e-5, atol=1e-6)
    same(lambda d: torch.nn.functional.glu(torch.ones(3, 5, device=d), dim), message=True)
    same(lambda d: torch.nn.functional.glu(torch.tensor(1.0, device=d)), message=True)

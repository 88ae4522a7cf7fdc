"""clone() and contiguous() on tpu (ops/copy_ops.cc registers clone for the
device) against CPU: the result's strides for every memory format, its
conjugate and negative bits, its values, and gradients through it."""

import pytest
import torch

SOURCES = {
    "plain": lambda x, c, img, e: x,
    "slice": lambda x, c, img, e: x[:, 1:5],
    "transposed": lambda x, c, img, e: x.t(),
    "expanded": lambda x, c, img, e: e.expand(4, 5),
    "conj": lambda x, c, img, e: c.conj(),
    "neg": lambda x, c, img, e: c.conj().imag,
    "empty": lambda x, c, img, e: x[:0],
    "channels_last": lambda x, c, img, e: img.contiguous(memory_format=torch.channels_last),
    "permuted": lambda x, c, img, e: img.permute(0, 2, 3, 1),
    "stepped": lambda x, c, img, e: x[::2, ::3],
    "zero_dim": lambda x, c, img, e: x[1, 2],
    "int": lambda x, c, img, e: (x * 10).long()[:, 1:],
    "bool": lambda x, c, img, e: (x > 0)[:, ::2],
}
FORMATS = {
    "default": None,
    "preserve": torch.preserve_format,
    "contiguous": torch.contiguous_format,
    "channels_last": torch.channels_last,
}


def _bases():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 6, generator=g)
    c = torch.randn(3, 5, dtype=torch.cfloat, generator=g)
    img = torch.randn(2, 3, 4, 5, generator=g)
    e = torch.randn(1, 5, generator=g)
    return x, c, img, e


def _values(t):
    return t.resolve_conj().resolve_neg().cpu()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", SOURCES)
def test_clone_matches_cpu(source, fmt):
    cpu_bases = _bases()
    tpu_bases = [b.to("tpu") for b in cpu_bases]
    a, t = SOURCES[source](*cpu_bases), SOURCES[source](*tpu_bases)
    memory_format = FORMATS[fmt]
    if memory_format is torch.channels_last and a.dim() != 4:
        pytest.skip("channels_last needs 4 dims")
    kwargs = {} if memory_format is None else {"memory_format": memory_format}
    expected, got = a.clone(**kwargs), t.clone(**kwargs)
    assert got.device.type == "tpu"
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.stride() == expected.stride()
    assert (got.is_conj(), got.is_neg()) == (expected.is_conj(), expected.is_neg())
    assert torch.equal(_values(got), _values(expected))
    # a clone is a new storage: writing it leaves the source alone
    if got.numel() and got.dtype.is_floating_point:
        before = _values(t)
        got.fill_(7.0)
        assert torch.equal(_values(t), before)


@pytest.mark.parametrize("source", SOURCES)
def test_contiguous_matches_cpu(source):
    cpu_bases = _bases()
    tpu_bases = [b.to("tpu") for b in cpu_bases]
    expected = SOURCES[source](*cpu_bases).contiguous()
    got = SOURCES[source](*tpu_bases).contiguous()
    assert got.stride() == expected.stride()
    assert torch.equal(_values(got), _values(expected))


def test_gradient_flows_through_clone():
    w = torch.randn(3, 4, requires_grad=True)
    wt = w.detach().to("tpu").requires_grad_()
    (w[:, 1:].clone() * torch.arange(3.0).view(3, 1)).sum().backward()
    (wt[:, 1:].clone() * torch.arange(3.0, device="tpu").view(3, 1)).sum().backward()
    assert torch.equal(wt.grad.cpu(), w.grad)

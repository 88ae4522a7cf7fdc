"""Conjugate and negative views of complex tensors (conj(), .imag of a
conjugate) hold the plain values plus a bit that says how to read them. Every
read on tpu must honour the bit, as on CPU: before this, tpu ignored it and
x.conj().cpu(), x.conj() + 0 and resolve_conj() all returned x unconjugated."""

import pytest
import torch

import torch_tpu  # noqa: F401
from cpu_reference import DEV, same

Z = torch.randn(3, 4, dtype=torch.complex64, generator=torch.Generator().manual_seed(0))


def test_reads_of_a_conjugate_view():
    same(lambda dev: Z.to(dev).conj())
    same(lambda dev: Z.to(dev).conj() + 0)
    same(lambda dev: Z.to(dev).conj().resolve_conj())
    same(lambda dev: Z.to(dev).conj()[1:, ::2])
    same(lambda dev: Z.to(dev).t().conj().contiguous())
    same(lambda dev: Z.to(dev).conj() * Z.to(dev), rtol=1e-6, atol=1e-6)
    same(lambda dev: Z.to(dev).conj().sum(0))
    same(lambda dev: Z.to(dev).conj_physical())
    same(lambda dev: Z.to(dev).conj().conj())


def test_negative_view_of_the_imaginary_part():
    same(lambda dev: Z.to(dev).conj().imag)
    same(lambda dev: Z.to(dev).conj().imag * 2)
    same(lambda dev: Z.to(dev).conj().imag.resolve_neg())
    assert Z.to(DEV).conj().imag.is_neg()


def test_writes_into_a_conjugate_view():
    def fn(dev):
        dst = torch.zeros(3, 4, dtype=torch.complex64, device=dev).conj()
        dst.copy_(Z.to(dev))                     # device -> device
        dst2 = torch.zeros(3, 4, dtype=torch.complex64, device=dev).conj()
        dst2.copy_(Z)                            # host -> device
        host = torch.zeros(3, 4, dtype=torch.complex64).conj()
        host.copy_(Z.to(dev).conj())             # device -> host, both conjugate
        return dst.resolve_conj(), dst2.resolve_conj(), host.resolve_conj()
    same(fn)


def test_matmul_and_vdot_with_conjugates():
    same(lambda dev: Z.to(dev).conj() @ Z.to(dev).t(), rtol=1e-6, atol=1e-6)
    same(lambda dev: Z.to(dev).mH, rtol=0, atol=0)
    same(lambda dev: Z.to(dev).mH @ Z.to(dev), rtol=1e-6, atol=1e-6)


def test_complex_and_polar_build_complex_tensors_like_cpu():
    """torch.complex and torch.polar (rotary embeddings built with polar, as
    Llama's reference code does): values, broadcasting, dtype rules,
    gradients through abs and angle."""
    torch.manual_seed(0)
    a, b = torch.randn(3, 1), torch.randn(4)
    for fn in (torch.complex, torch.polar):
        for dtype in (torch.float32, torch.float64):
            expected = fn(a.to(dtype), b.to(dtype))
            actual = fn(a.to(dtype).to(DEV), b.to(dtype).to(DEV))
            assert actual.dtype == expected.dtype
            torch.testing.assert_close(actual.cpu(), expected)
        for device in ("cpu", DEV):
            with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double"):
                fn(torch.ones(1, device=device), torch.ones(1, dtype=torch.float64, device=device))
            with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double"):
                fn(torch.ones(1, dtype=torch.long, device=device), torch.ones(1, dtype=torch.long, device=device))
    edge = (torch.tensor([float("inf"), 1.0, -1.0]), torch.tensor([0.0, float("inf"), 0.5]))
    torch.testing.assert_close(torch.polar(*(t.to(DEV) for t in edge)).cpu(), torch.polar(*edge), equal_nan=True)
    freqs = torch.randn(8, 4)
    xq = torch.randn(2, 8, 4, 2)

    def rope(x, f):
        return torch.view_as_real(torch.view_as_complex(x) * torch.polar(torch.ones_like(f), f)).flatten(-2)

    torch.testing.assert_close(rope(xq.to(DEV), freqs.to(DEV)).cpu(), rope(xq, freqs), atol=1e-6, rtol=1e-6)
    grads = []
    for device in ("cpu", DEV):
        r = torch.tensor([0.5, 1.0, 2.0, 3.0, 0.1], device=device, requires_grad=True)
        theta = torch.tensor([0.1, -1.0, 2.0, 0.0, 3.0], device=device, requires_grad=True)
        torch.view_as_real(torch.polar(r, theta)).pow(2).mul(torch.arange(10.0, device=device).view(5, 2)).sum().backward()
        grads.append((r.grad.cpu(), theta.grad.cpu()))
    for a_, e_ in zip(grads[1], grads[0]):
        torch.testing.assert_close(a_, e_, atol=1e-5, rtol=1e-5)

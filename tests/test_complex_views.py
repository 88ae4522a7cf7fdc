"""Conjugate and negative views of complex tensors (conj(), .imag of a
conjugate) hold the plain values plus a bit that says how to read them. Every
read on tpu must honour the bit, as on CPU: before this, tpu ignored it and
x.conj().cpu(), x.conj() + 0 and resolve_conj() all returned x unconjugated."""

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

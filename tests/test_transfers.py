"""Host<->device transfers as one host copy (issue 10).

Where device memory is host memory (the CPU plugin), `.to("tpu")` makes one
host copy that the device buffer then uses in place, and `.cpu()` reads
the buffer's memory directly. These tests pin down what that must never
break: the device copy is independent of the host tensor it came from, the
host result is independent of the device buffer, the memory of a zero-copy
buffer is given back when the buffer dies, and every layout and dtype lands
as on CPU.
"""

import gc

import pytest
import torch

import torch_tpu  # noqa: F401
from torch_tpu import debug


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.parametrize("size", [7, 1 << 12, 1 << 20])
def test_uploaded_tensor_is_independent_of_its_host_source(size):
    src = torch.randn(size)
    expected = src.clone()
    x = src.to("tpu")
    src.fill_(7)  # at once, no synchronize
    torch.testing.assert_close(x.cpu(), expected, rtol=0, atol=0)
    x.add_(1)  # in place on device: never writes the host copy it came from
    torch.testing.assert_close(src, torch.full((size,), 7.0), rtol=0, atol=0)
    torch.testing.assert_close(x.cpu(), expected + 1, rtol=0, atol=0)


def test_downloaded_tensor_is_independent_of_the_device_buffer():
    x = torch.arange(1 << 16, dtype=torch.float32, device="tpu")
    host = x.cpu()
    x.mul_(2)
    host2 = x.cpu()
    host.add_(1)  # the host copy is the caller's own memory
    torch.testing.assert_close(host2, torch.arange(1 << 16, dtype=torch.float32) * 2)
    torch.testing.assert_close(x.cpu(), host2, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8, torch.bool,
                                   torch.complex64, torch.float64])
def test_layouts_and_conversions_both_ways(dtype):
    base = (torch.randn(6, 10) * 5).to(dtype)
    # non-contiguous and offset sources upload their values
    for src in (base, base.t(), base[2:, 3:8], base[:, ::3]):
        torch.testing.assert_close(src.to("tpu").cpu(), src, rtol=0, atol=0)
    x = base.to("tpu")
    # into non-contiguous, offset and other-dtype host destinations
    out = torch.zeros(10, 6, dtype=dtype).t()
    out.copy_(x)
    torch.testing.assert_close(out, base, rtol=0, atol=0)
    wide = torch.zeros(6, 10, dtype=torch.complex128)
    wide.copy_(x)
    torch.testing.assert_close(wide, base.to(torch.complex128), rtol=0, atol=0)
    part = torch.zeros(6, 10, dtype=dtype)
    part[1:4, ::2].copy_(x[1:4, ::2])
    expected = torch.zeros(6, 10, dtype=dtype)
    expected[1:4, ::2] = base[1:4, ::2]
    torch.testing.assert_close(part, expected, rtol=0, atol=0)
    # device views, read back
    torch.testing.assert_close(x[2:, 1::3].cpu(), base[2:, 1::3], rtol=0, atol=0)


def test_conjugate_views_cross_both_ways():
    z = torch.randn(4, 5, dtype=torch.complex64)
    torch.testing.assert_close(z.conj().to("tpu").cpu(), z.conj(), rtol=0, atol=0)
    d = z.to("tpu")
    host = torch.zeros(4, 5, dtype=torch.complex64)
    host.conj().copy_(d)
    torch.testing.assert_close(host, z.conj(), rtol=0, atol=0)
    torch.testing.assert_close(d.conj().cpu(), z.conj().resolve_conj(), rtol=0, atol=0)


def test_transfers_are_counted():
    debug.reset_metrics()
    x = torch.randn(1000).to("tpu")
    x.cpu()
    m = debug.metrics()
    assert m["h2d_transfers"] == 1 and m["h2d_bytes"] == 4000, m
    assert m["d2h_transfers"] == 1 and m["d2h_bytes"] == 4000, m


def test_memory_of_dead_uploads_is_returned():
    chunk = torch.randn(16 << 20 >> 2)  # 16 MiB
    for _ in range(3):
        chunk.to("tpu").cpu()
    gc.collect()
    start = _rss_bytes()
    for _ in range(40):  # 640 MiB uploaded in all
        x = chunk.to("tpu")
        x.add_(1)
        del x
    torch.tpu.synchronize()
    gc.collect()
    assert _rss_bytes() - start < 256 << 20


def test_a_failed_program_surfaces_at_the_read_back():
    x = torch.randn(8, device="tpu")
    torch_tpu._C._testing_inject_async_failure(0, "injected failure")
    with pytest.raises(RuntimeError, match="injected failure"):
        x.cpu()
    torch.testing.assert_close(x.cpu(), x.cpu())


def test_pinned_host_memory_is_pinned_for_tpu():
    # What CUDA code asks of pinned memory: DataLoader(pin_memory=True),
    # Tensor.pin_memory() and DDP's used-parameter map check is_pinned().
    x = torch.empty(16, pin_memory=True)
    assert x.is_pinned() and x[3:].is_pinned()
    y = torch.arange(6.0).pin_memory()
    assert y.is_pinned() and torch.equal(y, torch.arange(6.0))
    assert not torch.arange(6.0).is_pinned()
    assert torch.equal(y.to("tpu", non_blocking=True).cpu(), torch.arange(6.0))
    data = torch.utils.data.TensorDataset(torch.arange(8.0).reshape(4, 2))
    (batch,) = next(iter(torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)))
    assert batch.is_pinned() and torch.equal(batch, torch.arange(8.0).reshape(4, 2))

"""float4_e2m1fn_x2 on tpu (issue 29): two 4-bit floats per byte, which
PyTorch defines as storage only. What CPU does with it (transfers, views,
printing, copies, joins, comparisons of bytes, where, zero_) tpu does with
the same bytes; what CPU refuses (arithmetic, casts, reductions, sorting,
fills) tpu refuses with CPU's exception class, naming the op (a few
movements CPU lacks for it, index_select and tril, tpu does). Its one
computation, torch._scaled_mm, is in tests/test_scaled_mm.py."""

import pytest
import torch

import torch_tpu

F4 = torch.float4_e2m1fn_x2
DEV = "tpu"


def every_byte(shape=(16, 16)):
    return torch.arange(256, dtype=torch.uint8).view(shape).view(F4)


def raw(t):
    return t.cpu().view(torch.uint8)


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        return e


def test_transfers_and_views_keep_every_byte():
    x = every_byte()
    t = x.to(DEV)
    assert t.dtype == F4 and torch.equal(raw(t), raw(x))
    # strided views, both ways (a transposed float4 view cannot be made
    # contiguous by CPU itself beyond a small size: compared as bytes)
    assert torch.equal(raw(t.t()[3:9:2]), x.view(torch.uint8).t()[3:9:2])
    big = torch.randint(0, 256, (136, 48), dtype=torch.uint8).view(F4)
    assert torch.equal(raw(big.t().to(DEV)), big.view(torch.uint8).t())
    assert torch.equal(raw(big.to(DEV).t()), big.view(torch.uint8).t())
    # reinterpreting the bytes
    assert torch.equal(t.view(torch.uint8).cpu(), x.view(torch.uint8))
    assert torch.equal(t.view(torch.float8_e4m3fn).cpu().view(torch.uint8), x.view(torch.uint8))
    assert torch.equal(raw(x.view(torch.uint8).to(DEV).view(F4)), raw(x))


def test_printing_as_cpu():
    x = every_byte((4, 64))[:, :8]
    # (the same text but for the device, wrapped where the longer line wraps)
    assert repr(x.to(DEV)).split() == repr(x).replace("dtype=", "device='tpu:0', dtype=").split()


MOVES = {
    "clone": lambda x: x.clone(),
    "contiguous": lambda x: x.t().contiguous(),
    "cat": lambda x: torch.cat([x, x[:3]]),
    "stack": lambda x: torch.stack([x, x.roll(1, 0)]),
    "slice": lambda x: x[1:5, ::3].clone(),
    "roll": lambda x: x.roll(2, 0),
    "repeat": lambda x: x[:2].repeat(2, 3),
    "expand": lambda x: x[:1].expand(4, 16).clone(),
    "permute": lambda x: x.permute(1, 0).clone(),
    "eq": lambda x: x == x.roll(1, 0),
    "ne": lambda x: x != x.t(),
    "where": lambda x: torch.where(torch.eye(16, dtype=torch.bool, device=x.device), x, x.t()),
    "zero_": lambda x: x.clone().zero_(),
    "zeros": lambda x: torch.zeros(3, 2, dtype=F4, device=x.device),
    "copy_": lambda x: torch.empty(16, 16, dtype=F4, device=x.device).copy_(x.t()),
    "isnan": lambda x: x.isnan(),
}


@pytest.mark.parametrize("name", list(MOVES))
def test_what_cpu_does_gives_the_same_bytes(name):
    x = every_byte()
    cpu, got = MOVES[name](x), MOVES[name](x.to(DEV))
    assert got.device.type == DEV and got.dtype == cpu.dtype and got.shape == cpu.shape
    if cpu.dtype == F4:
        assert torch.equal(raw(got), raw(cpu))
    else:
        assert torch.equal(got.cpu(), cpu)


REFUSED = {
    "sum": lambda x: x.sum(),
    "max": lambda x: x.max(),
    "argmax": lambda x: x.argmax(),
    "cumsum": lambda x: x.cumsum(0),
    "sort": lambda x: x.sort(),
    "topk": lambda x: x.topk(2),
    "abs": lambda x: x.abs(),
    "neg": lambda x: -x,
    "add": lambda x: x + x,
    "mul": lambda x: x * x,
    "relu": lambda x: x.relu(),
    "clamp": lambda x: x.clamp(0, 1),
    "mm": lambda x: x @ x,
    "to float": lambda x: x.float(),
    "from float": lambda x: torch.ones(3, device=x.device).to(F4),
    "fill_": lambda x: x.clone().fill_(1),
    "full": lambda x: torch.full((2,), 0.0, dtype=F4, device=x.device),
    "masked_fill": lambda x: x.masked_fill(torch.eye(16, dtype=torch.bool, device=x.device), 0),
    "item": lambda x: x[0, 0].item(),
    "equal": lambda x: torch.equal(x, x),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_cpu_refuses_is_refused_with_its_class(name):
    x = every_byte()
    cpu, got = outcome(lambda: REFUSED[name](x)), outcome(lambda: REFUSED[name](x.to(DEV)))
    assert isinstance(cpu, NotImplementedError), (name, cpu)
    assert isinstance(got, NotImplementedError), (name, got)
    assert "Float4_e2m1fn_x2" in str(got)


def moves(x, mask):
    y = torch.cat([x, x.roll(3, 0)])
    return torch.where(mask, y, y.roll(1, 0)), y == y.roll(1, 1)


def test_defer_and_fuse_and_compiled_move_the_same_bytes():
    x = every_byte()
    mask = torch.rand(32, 16) > 0.5
    want = moves(x, mask)
    with torch_tpu.eager_mode("defer_and_fuse"):
        deferred = [t.cpu() for t in moves(x.to(DEV), mask.to(DEV))]
    torch._dynamo.reset()
    compiled = [t.cpu() for t in torch.compile(moves, backend="tpu")(x.to(DEV), mask.to(DEV))]
    for got in (deferred, compiled):
        assert torch.equal(got[0].view(torch.uint8), want[0].view(torch.uint8))
        assert torch.equal(got[1], want[1])

"""Running the same code on the CPU and on tpu and comparing what comes
back: values (NaN where NaN), dtypes and shapes, or the exception class and
message. Shared by the differential tests."""

import torch

DEV = "tpu"


def outcome(fn, dev):
    """fn(dev) with its tensors moved to the CPU, or the exception it raised."""
    try:
        r = fn(dev)
        if isinstance(r, (tuple, list)):
            return tuple(t.detach().cpu() for t in r)
        return r.detach().cpu()
    except Exception as e:  # noqa: BLE001 - every exception is a result here
        return e


def same(fn, rtol=0.0, atol=0.0, message=False):
    """fn gives on tpu what it gives on the CPU: the same exception class (and
    first message line when `message`), or tensors of the same dtype and
    shape whose values agree (bit for bit by default)."""
    cpu, tpu = outcome(fn, "cpu"), outcome(fn, DEV)
    if isinstance(cpu, Exception):
        assert type(tpu) is type(cpu), (cpu, tpu)
        if message:
            first = [str(e).splitlines()[0].lower() for e in (cpu, tpu)]
            assert first[0] == first[1], first
        return
    assert not isinstance(tpu, Exception), (cpu, tpu)
    cpu = cpu if isinstance(cpu, tuple) else (cpu,)
    tpu = tpu if isinstance(tpu, tuple) else (tpu,)
    assert len(cpu) == len(tpu)
    for c, t in zip(cpu, tpu):
        assert c.dtype == t.dtype and c.shape == t.shape, (c.dtype, t.dtype, c.shape, t.shape)
        torch.testing.assert_close(t, c, rtol=rtol, atol=atol, equal_nan=True)

"""What a piece of tpu work ran, read from torch_tpu's metrics."""

import torch

from torch_tpu import debug


def synced_delta(fn):
    """fn()'s result and how much each metric grew while it ran, with the
    device synchronized before and after (so queued work is counted where
    it was issued)."""
    torch.tpu.synchronize()
    before = debug.metrics()
    result = fn()
    torch.tpu.synchronize()
    after = debug.metrics()
    return result, {k: after[k] - before.get(k, 0) for k in after}

"""Tiny stand-in models for tests/test_model_zoo.py: each misbehaves in one way
on tpu only (the CPU reference runs normally), so the zoo's classification
can be checked in seconds. tools/model_zoo.py loads a function from this file
with --hook PATH:FUNCTION; it gets the zoo module and returns a Spec."""

import os
import time

import torch
import torch.nn as nn

MISSING_MESSAGE = ("The operator 'aten::fake_op.default' is not currently implemented for the "
                   "tpu device. Set TORCH_TPU_CPU_FALLBACK=1 to run it on the CPU instead")


class Tiny(nn.Module):
    """A linear layer, then `on_tpu(y)` when running on tpu."""

    def __init__(self, on_tpu=None, on_cpu=None):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.on_tpu, self.on_cpu = on_tpu, on_cpu

    def forward(self, x):
        y = self.linear(x)
        hook = self.on_tpu if x.device.type == "tpu" else self.on_cpu
        return y if hook is None else hook(y)


def _spec(zoo, name, **hooks):
    return zoo.Spec(name, "other", {}, lambda cfg, gen: {"x": torch.randn(4, 3, generator=gen)},
                    build=lambda: (Tiny(**hooks), None))


def _raise_missing(y):
    raise NotImplementedError(MISSING_MESSAGE)


def _abort(y):
    os.abort()


def _sleep(y):
    time.sleep(600)
    return y


def passing(zoo):
    return _spec(zoo, "fake_pass")


def missing_op(zoo):
    return _spec(zoo, "fake_missing_op", on_tpu=_raise_missing)


def aborts(zoo):
    return _spec(zoo, "fake_abort", on_tpu=_abort)


def sleeps(zoo):
    return _spec(zoo, "fake_sleep", on_tpu=_sleep)


def off_by_a_bit(zoo):
    return _spec(zoo, "fake_mismatch", on_tpu=lambda y: y + 1e-2)


def cpu_fails(zoo):
    def fail(y):
        raise ValueError("the reference itself fails")
    return _spec(zoo, "fake_cpu_error", on_cpu=fail)


def wrong_error(zoo):
    def fail(y):
        raise RuntimeError("something else went wrong\nsecond line")
    return _spec(zoo, "fake_error", on_tpu=fail)


def cpu_float32_off(zoo):
    # The CPU's float32 run is the one far from the float64 run; tpu is exact.
    return _spec(zoo, "fake_cpu_off",
                 on_cpu=lambda y: y + 1e-2 if y.dtype == torch.float32 else y)

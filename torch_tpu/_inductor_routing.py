"""`torch.compile(model)` (the default backend, Inductor) on tpu tensors.

Inductor in this PyTorch compiles a graph on a "tpu" device to Pallas TPU
kernels (its `tpu_backend` is "pallas"), which it exports with JAX for a TPU
chip and hands to `torch_tpu._internal.pallas`: that needs JAX's TPU backend
and fails on the CPU and GPU plugins before any kernel runs. torch_tpu's own
backend lowers a graph to one StableHLO program that every PJRT plugin runs,
so a default-backend compile of a graph that involves tpu tensors is handed
to it, and `torch.compile(model)` runs unchanged, as on CUDA. Graphs with no
tpu tensor go to Inductor as before.

This wraps one method, `torch._TorchCompileInductorWrapper.__call__` (what
`torch.compile` calls for backend "inductor"); PyTorch has no registry for
a device's default compile backend. TORCH_TPU_INDUCTOR_ROUTING=0 turns the
routing off (Inductor then sees tpu graphs itself).
"""

from __future__ import annotations

import logging
import os

import torch

_log = logging.getLogger("torch_tpu")


def _on_tpu(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "tpu"


def involves_tpu(gm: torch.fx.GraphModule, example_inputs) -> bool:
    """True when an input, or a value the graph computes, is a tpu tensor
    (a graph can make tpu tensors from none: torch.ones(3, device="tpu"))."""
    if any(_on_tpu(x) for x in example_inputs):
        return True
    for node in gm.graph.nodes:
        for key in ("example_value", "val"):
            value = node.meta.get(key)
            if value is not None and any(
                    _on_tpu(v) for v in torch.utils._pytree.tree_leaves(value)):
                return True
        device = node.kwargs.get("device")
        if device is not None and torch.device(device).type == "tpu":
            return True
    return False


def install() -> None:
    if os.environ.get("TORCH_TPU_INDUCTOR_ROUTING", "1") == "0":
        return
    wrapper = torch._TorchCompileInductorWrapper
    if getattr(wrapper.__call__, "_torch_tpu_routes", False):
        return
    inductor_call = wrapper.__call__

    def __call__(self, model_, inputs_, *args, **kwargs):
        if not involves_tpu(model_, inputs_):
            return inductor_call(self, model_, inputs_, *args, **kwargs)
        from .compiler import tpu_backend

        _log.info("torch.compile: a graph on tpu goes to the tpu backend, not Inductor")
        return tpu_backend(model_, inputs_)

    __call__._torch_tpu_routes = True
    __call__.__wrapped__ = inductor_call
    wrapper.__call__ = __call__

"""`torch.compile(backend="tpu")`: the Dynamo backend.

PyTorch finds it through this package's `torch_dynamo_backends` entry point
(pyproject.toml). `torch.compile(model)` with the default backend hands the
graphs that involve tpu tensors to it too (_inductor_routing.py).

AOTAutograd splits what Dynamo captured into a forward and a backward ATen
graph (functionalized; an inference graph's input mutations stay inside it
as copies into the inputs). Each graph runs through the same tpu kernels as
eager, every op deferred into one DeferAndFuse region that ends where the
graph ends: one StableHLO program per graph, compiled once per region key
and cached like any other program.

The first call of a graph also records that region (exec/captured_graph.h);
later calls whose inputs look the same (device, dtype, sizes, strides,
offsets, which inputs share storage) and whose non-tensor arguments are
equal bind their buffers straight to the recorded executable, with no
per-op dispatch. A graph is run op by op instead, every call, when replay
would not be exact: it draws random numbers (the region would repeat the
same ones), reads a CPU tensor that is not a 0-dim scalar, or did work
outside its region (a host read, an op that needs a value now, a transfer).

A graph that takes CPU tensors is split in two: what it computes on CPU
(an optimizer's step counts when they are not `capturable`: `step += 1`,
`1 - beta ** step`) runs as plain ATen ops every call, and the 0-dim CPU
values the tpu ops read enter the tpu part as scalars uploaded per call, so
the tpu part still replays, with current values instead of frozen ones.

Under PyTorch's precompile and aot_compile flows the graphs are also made
storable, so a warm process skips Dynamo and AOTAutograd (_graph_cache.py).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch._decomp import get_decompositions
from torch._dynamo.backends.common import aot_autograd

from . import _C
from . import _graph_cache
from . import _padding
from ._bucketed_graph import BucketedGraph
from . import shape_buckets as _buckets

# Distinct non-tensor argument sets recorded per graph (dynamic shapes pass
# sizes as ints: each set, a bucket with bucketing, is its own recording).
_MAX_RECORDINGS_PER_GRAPH = 32


class _Graph:
    """One AOTAutograd graph, called with AOTAutograd's boxed convention (a
    list of arguments)."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        # non-tensor arguments -> recorded graph, or None when replay was refused
        self.recordings: Dict[Tuple, Optional[object]] = {}

    @staticmethod
    def _signature(args: Sequence) -> Tuple[Optional[Tuple], List]:
        """(key of the non-tensor arguments, or None when the call cannot be
        replayed; the tensor arguments with None elsewhere). Runs on every
        call, so it only sorts the arguments: where the tensors live is
        checked by replay (C++), which refuses tensors off the recording's
        device, and by the capture, which records nothing then."""
        tensors: List = []
        key = []
        for a in args:
            if isinstance(a, torch.Tensor):
                tensors.append(a)
            elif a is None or type(a) in (bool, int, float):
                key.append((type(a), a))
                tensors.append(None)
            else:
                return None, []
        return tuple(key), tensors

    def __call__(self, args: List):
        key, tensors = self._signature(args)
        recorded = self.recordings.get(key) if key is not None else None
        if recorded is not None:
            outputs = recorded.replay(tensors)
            if outputs is not None:
                args.clear()
                return outputs
        device = next((t.device for t in tensors if t is not None), None)
        if device is None or device.type != "tpu":
            key = None  # nothing on tpu to record
        record = key is not None and key not in self.recordings and (
            len(self.recordings) < _MAX_RECORDINGS_PER_GRAPH)
        # The mode switch on entry runs whatever the caller left pending, and
        # the one on exit ends the graph's region: its bounds are the graph's.
        _C._push_eager_mode("defer_and_fuse")
        try:
            if not record:
                return self.gm(*args)
            rng_before = torch.tpu.get_rng_state(device)
            capture = _C._GraphCapture(device.index, tensors)
            outputs = self.gm(*args)
            outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
            replayable = all(o is None or isinstance(o, torch.Tensor) for o in outs)
            graph = capture.end(tensors, [o if isinstance(o, torch.Tensor) else None for o in outs])
            if not replayable or not torch.equal(rng_before, torch.tpu.get_rng_state(device)):
                graph = None
            self.recordings[key] = graph
            return outputs
        finally:
            _C._pop_eager_mode()


def _tensor_devices(value) -> set:
    """The device types of the tensors in a node's value (nested lists too)."""
    if isinstance(value, torch.Tensor):
        return {value.device.type}
    if isinstance(value, (list, tuple)):
        return set().union(*(_tensor_devices(v) for v in value)) if value else set()
    return set()


def _on_host(node: torch.fx.Node) -> bool:
    return _tensor_devices(node.meta.get("val")) == {"cpu"}


class _DevicePart(torch.nn.Module):
    """The tpu part of a split graph: its CPU scalar inputs are uploaded on
    every call, then it runs (and replays) like any graph."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__()
        self.graph_part = _Graph(gm)
        output = next(n for n in gm.graph.nodes if n.op == "output")
        self.single_output = not isinstance(output.args[0], (tuple, list))

    def forward(self, *args):
        device = next((a.device for a in args
                       if isinstance(a, torch.Tensor) and a.device.type == "tpu"), None)
        args = [a.to(device) if device is not None and isinstance(a, torch.Tensor)
                and a.device.type == "cpu" and a.dim() == 0 else a for a in args]
        outputs = self.graph_part(args)
        if self.single_output and isinstance(outputs, (list, tuple)):
            return outputs[0]
        return outputs


def _split_host_part(gm: torch.fx.GraphModule) -> Optional[torch.fx.GraphModule]:
    """The graph as a CPU part followed by a tpu part, or None when it has no
    CPU computation or its CPU part reads tpu values (a transfer inside the
    graph: then it runs op by op, unsplit)."""
    from torch.fx.passes.split_module import split_module

    host = {n for n in gm.graph.nodes if n.op == "call_function" and _on_host(n)}
    if not host:
        return None
    for n in host:
        for arg in n.all_input_nodes:
            if arg.op != "placeholder" and arg not in host:
                return None
    try:
        split = split_module(gm, None, lambda n: 0 if n in host else 1)
    except Exception:  # noqa: BLE001 - a graph split_module cannot take runs unsplit
        return None
    if not hasattr(split, "submod_1"):
        return None
    split.submod_1 = _DevicePart(split.submod_1)
    return split


def _compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence,
                   buckets: Optional[_buckets.Buckets] = None,
                   dynamic: Optional[bool] = None) -> Callable:
    """`dynamic`: whether the graph has dynamic sizes, when the example
    inputs cannot say (a graph loaded from PyTorch's caches gets concrete
    ones)."""
    run = _runner(gm)
    if dynamic is None:
        dynamic = _has_dynamic_sizes(example_inputs)
    if buckets is not None and dynamic:
        plan = _padding.analyze(gm)
        if isinstance(plan, _padding.Plan):
            run = BucketedGraph(plan, buckets, _runner(plan.gm), run)
        else:
            _buckets.record_refusal(_graph_name(gm), plan)

    def boxed(args: List):
        return run(args)

    boxed._boxed_call = True  # AOTAutograd's mark for "takes one list"
    return boxed


def _runner(gm: torch.fx.GraphModule) -> Callable[[List], object]:
    """gm as a callable on its argument list."""
    if any(n.op == "placeholder" and _on_host(n) for n in gm.graph.nodes):
        # CPU inputs: the CPU part (if any) runs as it is, the rest replays.
        parts = _split_host_part(gm) or _DevicePart(gm)
        return lambda args: parts(*args)
    return _Graph(gm)


def _has_dynamic_sizes(example_inputs: Sequence) -> bool:
    for v in example_inputs:
        if isinstance(v, torch.SymInt):
            return True
        if isinstance(v, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in v.shape):
            return True
    return False


def _graph_name(gm: torch.fx.GraphModule) -> str:
    ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    return f"graph of {len(ops)} ops ({', '.join(ops[:3])}{', ...' if len(ops) > 3 else ''})"


def _decompositions():
    # Functionalization turns some in-place ops into functional variants that
    # have no eager kernel anywhere (they exist only inside graphs); PyTorch's
    # own decompositions spell them in ops the tpu kernels have.
    aten = torch.ops.aten
    return get_decompositions([
        aten._native_batch_norm_legit_functional,
    ])


def _tpu_backend(gm: torch.fx.GraphModule, example_inputs: Sequence,
                 buckets: Optional[_buckets.Buckets], buckets_from_options: bool) -> Callable:
    # Either way only inference graphs bucket: a training graph's padded
    # activations would flow into its backward graph, whose masking is not
    # analysed.
    if not _graph_cache.serializable_graphs_wanted() and _graph_cache.autograd_cache_enabled():
        # As for Inductor, AOTAutograd's cache keeps the graphs it makes, so
        # a warm process loads them instead of tracing again. It stores
        # another backend's graphs only bundled, and stores a training graph
        # once its backward is compiled: here, not lazily at the first
        # backward, outside this setting (the tpu backend's compile of a
        # graph builds its runner only; XLA compiles at the first call).
        with torch._functorch.config.patch(bundled_autograd_cache=True,
                                           force_non_lazy_backward_lowering=True):
            return _tpu_backend(gm, example_inputs, buckets, buckets_from_options)
    if _graph_cache.serializable_graphs_wanted():
        # AOTAutograd's cache, precompile, aot_compile: graphs PyTorch can
        # store and reload.
        gm.torch_tpu_cache_tag = _graph_cache.cache_tag(_decompositions, buckets)
        fw, bw, inference = _graph_cache.compilers(buckets, buckets_from_options)
    else:
        def inference(graph, inputs):
            return _compile_graph(graph, inputs, buckets)

        fw = bw = _compile_graph
    return aot_autograd(fw_compiler=fw, bw_compiler=bw, inference_compiler=inference,
                        keep_inference_input_mutations=True,
                        decompositions=_decompositions)(gm, example_inputs)


_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_UNSET = object()


def tpu_backend(gm: torch.fx.GraphModule, example_inputs: Sequence, *, mode: Optional[str] = None,
                options: Optional[dict] = None) -> Callable:
    """What the entry point names: Dynamo calls it with (graph module,
    example inputs) and torch.compile's `mode` and `options`.

    Every mode means the same here (a graph is always one program, replayed
    without per-op dispatch, which is what "reduce-overhead" asks for).
    Options: `shape_buckets` (see torch_tpu.shape_buckets)."""
    if mode not in _MODES:
        raise ValueError(f"torch.compile(backend='tpu'): unknown mode {mode!r}; expected one of {_MODES[1:]}")
    options = dict(options or {})
    spec = options.pop("shape_buckets", _UNSET)
    if options:
        raise ValueError(f"torch.compile(backend='tpu'): unknown options {sorted(options)}; "
                         "the tpu backend takes 'shape_buckets'")
    buckets = _buckets.get_shape_buckets() if spec is _UNSET else _buckets.parse(spec)
    return _tpu_backend(gm, example_inputs, buckets, spec is not _UNSET)

__all__: List[str] = ["tpu_backend"]

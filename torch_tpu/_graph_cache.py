"""The tpu backend's graphs in PyTorch's own compile caches.

A warm process of a compiled program spends its first call in Python:
Dynamo traces the function's bytecode and AOTAutograd traces the joint
forward/backward graph, every process, although the XLA executables come
from the persistent cache. PyTorch can skip both when a backend's graphs
can be serialized: Dynamo's precompile cache (`torch._dynamo.config.
caching_precompile`, saved by `torch.compiler.save_cache_artifacts()`) and
its explicit form (`torch.compile(...).aot_compile(...)`,
`torch.compiler.load_compiled_function`) store the guards, the transformed
bytecode and AOTAutograd's bundled graphs, and reinstall them without
tracing.

Those flows ask AOTAutograd for a bundled cache entry
(`should_bundle_autograd_cache()` or `force_autograd_cache`), and then the
backend's compilers must return an `OutputCode` PyTorch can pickle, as its
own aot_eager backend does. `TpuGraphCode` is that: the ATen graph, pickled
with torch.fx's GraphPickler, rebuilt into the same runner as a fresh
compile (compiler._compile_graph) when loaded. The XLA executables are not
in it: a loaded graph's first call records its region, whose program the
persistent executable cache holds.

Every other compile goes through AOTAutograd's cache the same way (the
backend asks it to bundle its graphs), as Inductor's compiles do by default:
a warm process still runs Dynamo, but loads AOTAutograd's forward, backward
and inference graphs instead of tracing them again. What that saves grows
with the graph (README, "Warm start of compiled code"): a SmolLM2 decoding
step's 4,700-node graph, several seconds; a small GPT step's small graphs,
less than this machine's noise.
PyTorch's switches turn it off: `TORCHINDUCTOR_AUTOGRAD_CACHE=0`
(`torch._functorch.config.enable_autograd_cache`) or
`torch.compiler.config.force_disable_caches`; the entries live in
`TORCHINDUCTOR_CACHE_DIR`.

Staleness: Dynamo's package checks the source of every function it traced
(a changed model is traced again) and the torch version; AOTAutograd's key
covers the graph, the inputs' metadata and torch's configs but not the
backend, so the graph carries `torch_tpu_cache_tag`, naming what this
backend changes in the graphs AOTAutograd makes (its decompositions and
options): another backend's entry, or one made with other options, is not
loaded as ours. The graphs hold no executable, so another PJRT plugin
replays them correctly (its own programs compile or come from its cache).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import torch
from torch._inductor.output_code import OutputCode

from . import shape_buckets as _buckets

_TAG_VERSION = 1


def serializable_graphs_wanted() -> bool:
    """Whether the compile in progress belongs to a flow that stores graphs
    (precompile, aot_compile, a bundled AOTAutograd cache)."""
    from torch._functorch._aot_autograd.autograd_cache import should_bundle_autograd_cache

    return bool(torch._functorch.config.force_autograd_cache or should_bundle_autograd_cache())


def autograd_cache_enabled() -> bool:
    """Whether AOTAutograd's local cache is on (PyTorch's default)."""
    from torch._functorch._aot_autograd.autograd_cache import should_use_local_autograd_cache

    return bool(should_use_local_autograd_cache())


def cache_tag(decompositions: Callable[[], dict], buckets: Optional[_buckets.Buckets]) -> str:
    names = sorted(str(op) for op in decompositions())
    return (f"torch_tpu graphs v{_TAG_VERSION}: decompositions={names} "
            f"keep_inference_input_mutations=True buckets={buckets!r}")


@dataclasses.dataclass
class TpuGraphCode(OutputCode):
    """One forward, backward or inference graph of the tpu backend, called
    as AOTAutograd calls it (boxed: one list of arguments). Inference graphs
    keep the shape buckets of the compile that made them."""

    gm: Optional[torch.fx.GraphModule] = None
    buckets: Optional[_buckets.Buckets] = None
    # An inference graph compiled with the process-wide buckets (no
    # `options=`) takes the loading process's setting when it is loaded.
    follows_global_buckets: bool = False
    # Whether the graph has dynamic sizes, found when it is first compiled
    # (a loaded graph's example inputs are concrete).
    dynamic: Optional[bool] = None
    _serialized_gm: Optional[bytes] = dataclasses.field(default=None, init=False)
    _run: Optional[Callable] = dataclasses.field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._boxed_call = True

    def build(self, example_inputs: Any) -> "TpuGraphCode":
        from .compiler import _compile_graph, _has_dynamic_sizes

        if self.dynamic is None:
            self.dynamic = _has_dynamic_sizes(example_inputs)
        self._run = _compile_graph(self.gm, example_inputs, self.buckets, self.dynamic)
        return self

    def __call__(self, inputs: Any) -> Any:
        return self._run(inputs)

    def prepare_for_serialization(self) -> None:
        # PyTorch calls this on a shallow copy of the live object: the graph
        # module is shared, so it is pickled through a metadata filter, not
        # edited; only the copy lets go of it.
        from torch.fx._graph_pickler import GraphPickler, Options

        from .compiler import _on_host

        # The runner reads fake values only to find CPU parts and to plan
        # padding; rebuilding them is most of a load (0.26 s of 0.37 s for a
        # small GPT's graphs), so graphs that need neither leave them out.
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        left_out = {"nn_module_stack", "source_fn_stack", "fwd_source_fn_stack", "example_value",
                    "stack_trace"}
        pads = self.dynamic and (self.buckets is not None or self.follows_global_buckets)
        if not pads and not any(_on_host(n) for n in placeholders):
            left_out |= {"val", "tensor_meta"}
        options = Options(ops_filter=None, node_metadata_key_filter=lambda key: key not in left_out)
        self._serialized_gm = GraphPickler.dumps(self.gm, options)
        self.gm = None
        self._run = None

    def post_compile(self, example_inputs: Any, constants: Any, graph_kwargs: Any) -> None:
        if self._run is not None:
            return
        from torch._subclasses import FakeTensorMode
        from torch.fx._graph_pickler import GraphPickler
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        gm = GraphPickler.loads(self._serialized_gm, FakeTensorMode(shape_env=ShapeEnv()))
        gm.recompile()  # a loaded graph module has no generated forward yet
        self.gm = gm
        self._serialized_gm = None
        if self.follows_global_buckets:
            self.buckets = _buckets.get_shape_buckets()
        self.build(example_inputs)

    def set_triton_bundle(self, triton_bundle: Any) -> None:
        pass


def compilers(buckets: Optional[_buckets.Buckets], buckets_from_options: bool):
    """(forward, backward, inference) compilers whose graphs PyTorch can
    store; only the inference one buckets (compiler._tpu_backend says why)."""
    from torch._functorch._aot_autograd.schemas import SerializableAOTDispatchCompiler

    def compiler(graph_buckets, follows_global_buckets=False):
        def compile_graph(gm, example_inputs):
            code = TpuGraphCode(gm=gm, buckets=graph_buckets,
                                follows_global_buckets=follows_global_buckets)
            return code.build(example_inputs)

        return SerializableAOTDispatchCompiler(TpuGraphCode, compile_graph)

    return compiler(None), compiler(None), compiler(buckets, not buckets_from_options)

"""User kernels: JAX, Pallas and StableHLO functions as tpu operators.

    import jax, jax.numpy as jnp
    import torch_tpu.kernels

    @torch_tpu.kernels.jax_kernel
    def rms_norm(x, w, eps):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + eps) * w

    y = rms_norm(x, w, 1e-6)      # x, w: tpu tensors; eps: a static number

A kernel is lowered (`jax.jit(fn).trace(...).lower()`) once per signature
(the tensors' dtypes and shapes, the Python values): its StableHLO becomes a
function that the op's program calls, so Strict runs it as one program,
DeferAndFuse fuses it into the open region, `torch.compile(backend="tpu")`
captures it as one node of its graph (no graph break) and the persistent
cache keeps the programs it ends up in. It reads the arguments' device
buffers through their views (any offset and stride) and writes new tensors:
no host copy.

It is a `torch.library.custom_op` (namespace `torch_tpu_kernels`) with a fake
implementation from JAX's abstract evaluation, and differentiable: its
backward is `jax.vjp` of the same function, lowered the same way, or the
`bwd` you give.

Pallas: `pl.pallas_call` kernels go through the same decorator. On the CPU
and GPU plugins they are lowered in Pallas' interpret mode (plain
StableHLO); on a TPU the Mosaic custom call passes through unchanged.

JAX is imported when a kernel is first lowered, not by `import torch_tpu`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Callable, List, Optional, Sequence

import torch

from torch_tpu import _C

__all__ = ["jax_kernel", "stablehlo_kernel", "Kernel", "KernelError"]

# torch dtype -> the numpy/ml_dtypes name JAX knows it by.
_JAX_DTYPE_NAMES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
    torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8",
    torch.uint16: "uint16", torch.uint32: "uint32", torch.uint64: "uint64",
    torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128",
    torch.float8_e4m3fn: "float8_e4m3fn", torch.float8_e5m2: "float8_e5m2",
    torch.float8_e4m3fnuz: "float8_e4m3fnuz", torch.float8_e5m2fnuz: "float8_e5m2fnuz",
}
_TORCH_DTYPES = {name: dtype for dtype, name in _JAX_DTYPE_NAMES.items()}
_64_BIT = {torch.float64, torch.int64, torch.uint64, torch.complex128}

# StableHLO element type -> torch dtype (a hand-written module's signature).
_MLIR_DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
    "bf16": torch.bfloat16, "i1": torch.bool, "i8": torch.int8, "i16": torch.int16,
    "i32": torch.int32, "i64": torch.int64, "ui8": torch.uint8, "ui16": torch.uint16,
    "ui32": torch.uint32, "ui64": torch.uint64, "complex<f32>": torch.complex64,
    "complex<f64>": torch.complex128, "f8E4M3FN": torch.float8_e4m3fn,
    "f8E5M2": torch.float8_e5m2, "f8E4M3FNUZ": torch.float8_e4m3fnuz,
    "f8E5M2FNUZ": torch.float8_e5m2fnuz, "f8E8M0FNU": torch.float8_e8m0fnu,
}


def _with_arrays_at(fn: Callable, args: Sequence, positions: Sequence[int]) -> Callable:
    """fn as a function of the arrays at `positions` of `args`, the other
    arguments held (what JAX's jit, vmap and vjp transform)."""

    def call(*arrays):
        full = list(args)
        for i, x in zip(positions, arrays):
            full[i] = x
        return fn(*full)

    return call


class KernelError(TypeError):
    """A kernel that cannot be lowered or called (a subclass of TypeError,
    which PyTorch raises for arguments an op cannot take)."""


def _jax():
    try:
        import jax
        from jax._src import xla_bridge
    except ImportError as e:  # pragma: no cover - setup.sh installs jax
        raise ImportError("torch_tpu.kernels needs jax (scripts/setup.sh installs it)") from e
    # Lowering needs no JAX device: unless the user chose JAX's platforms,
    # JAX starts only its CPU client, not a GPU plugin beside torch_tpu's
    # (which would take most of the GPU's memory up front).
    if not xla_bridge._backends and not jax.config.jax_platforms:
        jax.config.update("jax_platforms", "cpu")
    return jax


def _platform() -> str:
    """The platform JAX lowers for: the one torch_tpu's plugin runs."""
    import torch_tpu

    name = torch_tpu._C._device_properties(torch.tpu.current_device())["platform"].lower()
    if name in ("cuda", "gpu", "rocm"):
        return "cuda" if name != "rocm" else "rocm"
    return "tpu" if name == "tpu" else "cpu"


def _private_functions(module, prefix: str):
    """Every function of `module` renamed `<prefix>_<name>`, made private and
    stripped of argument and result attributes (JAX's result names,
    shardings, layouts: they mean nothing inside another program), printed
    in MLIR's generic form. Returns (entry name, text)."""
    from jax._src.lib.mlir import ir

    with module.context:
        functions = list(module.body.operations)
        for op in functions:
            if op.operation.name != "func.func":
                raise KernelError(f"module holds a {op.operation.name} op outside any function")
        for op in functions:
            old = ir.StringAttr(op.attributes["sym_name"]).value
            new = f"{prefix}_{old}"
            ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
            op.attributes["sym_name"] = ir.StringAttr.get(new)
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            for name in ("arg_attrs", "res_attrs"):
                if name in op.attributes:
                    del op.attributes[name]
        text = "".join(op.get_asm(print_generic_op_form=True) + "\n" for op in functions)
    return f"{prefix}_main", text


def _prefix(kernel_name: str, text: str) -> str:
    """A name for the kernel's functions that changes with its text (the
    cache keys of the programs that call it include it)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    return "k_" + re.sub(r"[^A-Za-z0-9_]", "_", kernel_name)[:40] + "_" + digest


class _Lowered:
    """One signature's lowering: its handle in torch_tpu._C, its results,
    the encoded static values the op carries, and the output structure."""

    __slots__ = ("handle", "results", "statics", "structure")

    def __init__(self, handle, results, statics, structure):
        self.handle = handle
        self.results = results  # [(dtype, shape)]
        self.statics = statics  # see _encode_statics
        self.structure = structure  # see _unflatten


def _unflatten(structure, results):
    """The function's output from its flat results: `structure` is a leaf's
    index, None, or a tuple of structures (plain Python, so Dynamo traces
    it)."""
    if structure is None:
        return None
    if isinstance(structure, int):
        return results[structure]
    return tuple(_unflatten(s, results) for s in structure)


_SYMBOLIC = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}


def _signature(kernel: str, args: tuple) -> tuple:
    """What a lowering depends on: each tensor's dtype and shape, each other
    argument's type and value."""
    key = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            key.append(("tensor", a.dtype, tuple(int(d) for d in a.shape)))
            continue
        if type(a) in _SYMBOLIC:
            # A number torch.compile made symbolic (one that changed between
            # calls): a kernel specializes on it (a guarded constant).
            a = _SYMBOLIC[type(a)](a)
        try:
            hash(a)
        except TypeError:
            raise KernelError(
                f"kernel {kernel}: argument {i} is a {type(a).__name__}; a kernel takes "
                "tensors and hashable Python values (a tuple, not a list)") from None
        key.append(("value", type(a).__name__, a))
    return tuple(key)


def _encode_statics(kernel: str, signature: tuple) -> str:
    """The non-tensor arguments as the op's `statics` string."""
    positions = [i for i, e in enumerate(signature) if e[0] == "value"]
    try:
        return json.dumps([len(signature), positions, [signature[i][2] for i in positions]])
    except TypeError:
        raise KernelError(f"kernel {kernel}: a kernel's Python arguments are numbers, strings, "
                          "None and tuples of them") from None


def _tuples(value):
    """A decoded static value: JSON's lists back to the tuples they were."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


_kernels: dict = {}  # by op name
_lock = threading.Lock()


def _traced_call(op_name: str, *args):
    """A kernel's call under torch.compile. Dynamo records it as one opaque
    call (allow_in_graph: it traces neither the lowering nor the JAX code
    in it) and runs it on fake tensors for the output's structure;
    AOTAutograd then traces it down to the kernel's custom op, which
    becomes a node of the graph (and of its one program)."""
    return _kernels[op_name]._call_op(args)


torch.compiler.allow_in_graph(_traced_call)


class Kernel:
    """A user kernel: call it with tpu tensors and Python values."""

    def __init__(self, name: str, differentiable: bool):
        self.__name__ = name
        self._lock = threading.Lock()
        self._by_signature: dict = {}
        self._statics: dict = {}  # encoded statics -> (count, positions, values)
        self._backward: Optional[Kernel] = None
        self._differentiable = differentiable
        with _lock:
            self._number = len(_kernels)
            self._op_name = re.sub(r"[^A-Za-z0-9_]", "_", name) + f"_{self._number}"
            _kernels[self._op_name] = self
        self._op = torch.library.custom_op(
            f"torch_tpu_kernels::{self._op_name}", self._run, mutates_args=(),
            schema="(Tensor[] tensors, str statics) -> Tensor[]")
        self._op.register_fake(self._fake)
        self._op.register_autograd(self._autograd_backward, setup_context=self._setup_context)

    def __repr__(self):
        return f"<torch_tpu kernel {self.__name__}>"

    # -- subclasses --------------------------------------------------------
    def _lower(self, signature: tuple) -> _Lowered:
        raise NotImplementedError

    def _make_backward(self) -> "Kernel":
        raise NotImplementedError

    # -- lowerings ---------------------------------------------------------
    def _lowered(self, signature: tuple) -> _Lowered:
        lowered = self._by_signature.get(signature)
        if lowered is None:
            with self._lock:
                lowered = self._by_signature.get(signature)
                if lowered is None:
                    _encode_statics(self.__name__, signature)  # raises before lowering
                    lowered = self._lower(signature)
                    self._by_signature[signature] = lowered
        return lowered

    def _define(self, callee, functions, signature, results, structure) -> _Lowered:
        params = [(e[1], list(e[2])) for e in signature if e[0] == "tensor"]
        handle = _C._kernel_define(self.__name__, callee, functions, params,
                                     [(d, list(s)) for d, s in results])
        return _Lowered(handle, results, _encode_statics(self.__name__, signature), structure)

    def _merge(self, tensors: Sequence[torch.Tensor], statics: str) -> tuple:
        """The call's arguments from the op's (tensors, statics)."""
        known = self._statics.get(statics)
        if known is None:
            n, positions, values = json.loads(statics)
            values = [_tuples(v) for v in values]
            known = self._statics.setdefault(statics, (n, dict(zip(positions, values))))
        n, values = known
        it = iter(tensors)
        return tuple(values[i] if i in values else next(it) for i in range(n))

    # -- calls -------------------------------------------------------------
    def __call__(self, *args):
        if torch.compiler.is_compiling():
            return _traced_call(self._op_name, *args)
        # A signature seen before, with nothing between the call and the
        # kernel (no autograd, no mode, no subclass): C++ does it all.
        results = _C._kernel_call(self._number, args)
        if results is not None:
            return results
        return self._call_op(args, bind=True)

    def _call_op(self, args: tuple, bind: bool = False):
        """The call through the dispatcher (autograd, modes, tracing).
        `bind`: let _C._kernel_call take later calls of this signature
        (those whose results it can hand back as they are)."""
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if not tensors:
            raise KernelError(f"kernel {self.__name__}: takes at least one tpu tensor")
        lowered = self._lowered(_signature(self.__name__, args))
        if self._differentiable:
            out = _KernelFunction.apply(self, lowered.statics, *tensors)
        else:
            out = self._op(tensors, lowered.statics)
        results = _unflatten(lowered.structure, out)
        flat = lowered.structure == 0 or lowered.structure == tuple(range(len(lowered.results)))
        if bind and flat:
            _C._kernel_bind(self._number, args, lowered.handle, lowered.structure == 0)
        return results

    def _run(self, tensors: List[torch.Tensor], statics: str) -> List[torch.Tensor]:
        for i, t in enumerate(tensors):
            if t.device.type != "tpu":
                # (RuntimeError: what PyTorch raises for a tensor on the
                # wrong device)
                raise RuntimeError(
                    f"kernel {self.__name__}: tensor argument {i} is on {t.device}; kernels "
                    "take tpu tensors (move it with .to('tpu'))")
        signature = _signature(self.__name__, self._merge(tensors, statics))
        return _C._kernel_run(self._lowered(signature).handle, list(tensors))

    def _fake(self, tensors, statics):
        signature = _signature(self.__name__, self._merge(tensors, statics))
        device = tensors[0].device
        return [torch.empty(shape, dtype=dtype, device=device)
                for dtype, shape in self._lowered(signature).results]

    # -- autograd ----------------------------------------------------------
    def _setup_context(self, ctx, inputs, output):
        tensors, statics = inputs
        ctx.save_for_backward(*tensors)
        ctx.statics = statics

    def _autograd_backward(self, ctx, grads):
        if not self._differentiable:
            raise RuntimeError(f"kernel {self.__name__} is not differentiable")
        return list(self._gradients(ctx.saved_tensors, ctx.statics, grads)), None

    def _gradients(self, tensors, statics, grads) -> tuple:
        """One gradient per tensor argument (None for those not
        differentiated) from the outputs' gradients (None for unused)."""
        args = self._merge(tensors, statics)
        lowered = self._lowered(_signature(self.__name__, args))
        cotangents = [g if g is not None else tensors[0].new_zeros(shape, dtype=dtype)
                      for g, (dtype, shape) in zip(grads, lowered.results)]
        if self._backward is None:
            with self._lock:
                if self._backward is None:
                    self._backward = self._make_backward()
        return tuple(self._backward(len(args), *args, *cotangents))


class _KernelFunction(torch.autograd.Function):
    """A differentiable kernel's call where autograd or torch.func may act:
    forward is the kernel's custom op; backward is the backward kernel.
    (Not the op's own register_autograd, which torch.func's transforms
    refuse: its autograd.Function has no setup_context.)"""

    @staticmethod
    def forward(kernel, statics, *tensors):
        return tuple(kernel._op(list(tensors), statics))

    @staticmethod
    def setup_context(ctx, inputs, output):
        kernel, statics, *tensors = inputs
        ctx.kernel, ctx.statics = kernel, statics
        ctx.save_for_backward(*tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.kernel._gradients(ctx.saved_tensors, ctx.statics, grads))

    @staticmethod
    def vmap(info, in_dims, kernel, statics, *tensors):
        results, out_dims = kernel._vmap(in_dims[2:], tensors, statics)
        return tuple(results), tuple(out_dims)


def _jax_dtype(kernel: str, i: int, dtype: torch.dtype):
    name = _JAX_DTYPE_NAMES.get(dtype)
    if name is None:
        raise KernelError(f"kernel {kernel}: tensor argument {i} has dtype {dtype}, which JAX "
                          "has no type for")
    return name


class JaxKernel(Kernel):
    """A JAX (or Pallas) function as a tpu operator (see jax_kernel)."""

    def __init__(self, fn: Callable, name: Optional[str] = None, bwd: Optional[Callable] = None):
        super().__init__(name or getattr(fn, "__name__", "kernel"), differentiable=True)
        self.fn = fn
        self.bwd = bwd
        self.__doc__ = getattr(fn, "__doc__", None)
        self._batched: dict = {}  # in_dims -> the jax.vmap of this kernel
        self._op.register_vmap(
            lambda info, in_dims, tensors, statics: self._vmap(in_dims[0], tensors, statics))

    def _vmap(self, dims, tensors, statics):
        """torch.vmap (torch.func) of the kernel: the kernel of jax.vmap(fn)
        over the same dimensions, its results batched along dim 0 (results,
        out_dims)."""
        dims = tuple(dims)
        batched = self._batched.get(dims)
        if batched is None:
            with self._lock:
                batched = self._batched.setdefault(dims, self._make_batched(dims))
        results = list(_KernelFunction.apply(batched, statics, *tensors))
        return results, [0] * len(results)

    def _make_batched(self, dims) -> Kernel:
        jax = _jax()
        fn = self.fn

        def batched(*args):
            arrays = [i for i, a in enumerate(args) if isinstance(a, jax.Array)]

            return jax.vmap(_with_arrays_at(fn, args, arrays), in_axes=dims)(
                *[args[i] for i in arrays])

        return JaxKernel(batched, name=f"{self.__name__}_vmap")

    def _lower(self, signature: tuple) -> _Lowered:
        jax = _jax()
        import numpy as np

        positions = [i for i, e in enumerate(signature) if e[0] == "tensor"]
        avals = [jax.ShapeDtypeStruct(signature[i][2],
                                      np.dtype(_jax_dtype(self.__name__, k, signature[i][1])))
                 for k, i in enumerate(positions)]
        fn = self.fn

        flat_fn = _with_arrays_at(fn, [e[2] for e in signature], positions)

        platform = _platform()
        wide = any(signature[i][1] in _64_BIT for i in positions)
        from jax._src import config

        # Pallas kernels: interpret mode (plain StableHLO) except on a TPU
        interpret = config.pallas_tpu_interpret_mode_context_manager
        previous = interpret.swap_local(True if platform != "tpu" else None)
        try:
            with jax.enable_x64(wide):
                traced = jax.jit(flat_fn, keep_unused=True).trace(*avals)
                module = traced.lower(lowering_platforms=(platform,)).compiler_ir("stablehlo")
        except KernelError:
            raise
        except Exception as e:
            described = [f"{a.dtype}{list(a.shape)}" for a in avals]
            raise KernelError(f"kernel {self.__name__}: JAX could not lower it for "
                              f"({', '.join(described)}): {type(e).__name__}: {e}") from e
        finally:
            interpret.set_local(previous)
        leaves = []
        structure = self._structure(traced.out_info, leaves)
        results = []
        for leaf in leaves:
            dtype = _TORCH_DTYPES.get(str(leaf.dtype))
            if dtype is None:
                raise KernelError(f"kernel {self.__name__}: returns a {leaf.dtype} array, which "
                                  "torch has no dtype for")
            results.append((dtype, tuple(leaf.shape)))
        text = module.operation.get_asm(print_generic_op_form=True)
        try:
            callee, functions = _private_functions(module, _prefix(self.__name__, text))
        except KernelError as e:
            raise KernelError(f"kernel {self.__name__}: {e}") from None
        return self._define(callee, functions, signature, results, structure)

    def _structure(self, out, leaves):
        """`out` (JAX's output info) as a _unflatten structure, its arrays
        appended to `leaves`."""
        if out is None:
            return None
        if isinstance(out, (tuple, list)):
            return tuple(self._structure(o, leaves) for o in out)
        if hasattr(out, "shape") and hasattr(out, "dtype"):
            leaves.append(out)
            return len(leaves) - 1
        raise KernelError(f"kernel {self.__name__}: returns a {type(out).__name__}; a kernel "
                          "returns arrays, or tuples or lists of them")

    def _make_backward(self) -> Kernel:
        jax = _jax()
        import numpy as np
        fn, bwd = self.fn, self.bwd

        def backward(n, *all_args):
            args, cotangents = all_args[:n], all_args[n:]
            arrays = [i for i, a in enumerate(args) if isinstance(a, jax.Array)]
            if bwd is not None:
                grads = bwd(*args, *cotangents)
                grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
                if len(grads) != len(arrays):
                    raise KernelError(f"bwd returned {len(grads)} gradients for "
                                      f"{len(arrays)} tensor arguments")
                return grads
            diff = [i for i in arrays if jax.numpy.issubdtype(args[i].dtype, jax.numpy.inexact)]

            out, pullback = jax.vjp(_with_arrays_at(fn, args, diff), *[args[i] for i in diff])
            leaves, tree = jax.tree_util.tree_flatten(out)
            # integer outputs take JAX's float0 cotangent, not the zeros given
            cotangents = [c if jax.numpy.issubdtype(o.dtype, jax.numpy.inexact)
                          else np.zeros(o.shape, jax.dtypes.float0)
                          for o, c in zip(leaves, cotangents)]
            grads = dict(zip(diff, pullback(jax.tree_util.tree_unflatten(tree, cotangents))))
            return tuple(grads.get(i) for i in arrays)

        return JaxKernel(backward, name=f"{self.__name__}_backward")


def jax_kernel(fn: Optional[Callable] = None, *, name: Optional[str] = None,
               bwd: Optional[Callable] = None):
    """Makes a JAX function a tpu operator (usable as a decorator, with or
    without arguments).

    The kernel takes tpu tensors (JAX arrays inside) and hashable Python
    values (passed to `fn` as they are, part of the signature: a new value
    lowers again), and returns what `fn` returns with arrays as tpu tensors.
    float64 and int64 tensors lower with JAX's 64-bit mode on.

    `bwd(*args, *cotangents)`, if given, is a JAX function returning one
    gradient per tensor argument (None for none); otherwise the backward is
    `jax.vjp` of `fn`, with respect to the floating-point tensors.
    """
    if fn is None:
        return lambda f: JaxKernel(f, name=name, bwd=bwd)
    return JaxKernel(fn, name=name, bwd=bwd)


class StableHLOKernel(Kernel):
    """A hand-written StableHLO module as a tpu operator (see stablehlo_kernel)."""

    def __init__(self, text: str, out_types: Optional[Sequence] = None, name: str = "stablehlo"):
        super().__init__(name, differentiable=False)
        _jax()  # its MLIR bindings parse the text
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir

        context = mlir.make_ir_context()
        try:
            with context:
                module = ir.Module.parse(text)
        except Exception as e:
            raise KernelError(f"kernel {name}: the module does not parse: {e}") from None
        main = None
        with context:
            for op in module.body.operations:
                if op.operation.name == "func.func" and \
                        ir.StringAttr(op.attributes["sym_name"]).value == "main":
                    main = op
            if main is None:
                raise KernelError(f"kernel {name}: the module has no function @main")
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            self._params = [self._tensor_type(name, t) for t in ftype.inputs]
            self._results = [self._tensor_type(name, t) for t in ftype.results]
        if out_types is not None:
            given = [(d, tuple(s)) for d, s in ((t[1], t[0]) if isinstance(t[0], (tuple, list, torch.Size))
                                               else t for t in out_types)]
            if given != self._results:
                raise KernelError(f"kernel {name}: out_types {given} do not match the module's "
                                  f"results {self._results}")
        self._module_text = module.operation.get_asm(print_generic_op_form=True)
        try:
            self._callee, self._functions = _private_functions(
                module, _prefix(name, self._module_text))
        except KernelError as e:
            raise KernelError(f"kernel {name}: {e}") from None

    @staticmethod
    def _tensor_type(name, t):
        from jax._src.lib.mlir import ir

        try:
            rt = ir.RankedTensorType(t)
        except ValueError:
            raise KernelError(f"kernel {name}: {t} is not a ranked tensor type") from None
        dtype = _MLIR_DTYPES.get(str(rt.element_type))
        if dtype is None:
            raise KernelError(f"kernel {name}: no torch dtype for element type {rt.element_type}")
        return dtype, tuple(rt.shape)

    def _lower(self, signature: tuple) -> _Lowered:
        got = [(e[1], e[2]) if e[0] == "tensor" else e[2] for e in signature]
        if got != self._params:
            raise KernelError(f"kernel {self.__name__}: takes {self._params}, got {got}")
        structure = tuple(range(len(self._results)))
        return self._define(self._callee, self._functions, signature, self._results, structure)


def stablehlo_kernel(text: str, out_types: Optional[Sequence] = None, *,
                     name: str = "stablehlo") -> StableHLOKernel:
    """A StableHLO module (MLIR text, with a function @main) as a tpu
    operator. It takes tensors of exactly @main's argument types and
    returns a tuple of tensors of its result types; `out_types`, a list of
    (dtype, shape), is checked against them when given. Not differentiable."""
    return StableHLOKernel(text, out_types, name)

"""Padding analysis: can an ATen graph with symbolic sizes run at bucket
sizes and still give its real values, and what must be masked for that.

The graph is run with every size symbol s replaced by its bucket b >= s:
inputs are padded at the end of each dynamic dimension, so a dimension of
size e(s) holds its real values at positions < e(real) ("prefix-valid")
and garbage after them. The analysis follows that property through the
graph, op by op, from the symbolic shapes AOTAutograd recorded
(`node.meta["val"]`):

- pointwise ops, layout ops (view, permute, expand, ...), factories,
  embedding and row-wise norms keep the real values where they were: the
  garbage never reaches a real position;
- ops that combine positions along a dynamic dimension get a mask that
  replaces the padding with the op's identity first: sum/any 0, max/
  softmax -inf, min +inf, prod/all 1, and the contracted dimension of a
  matmul 0 on both sides; mean becomes a masked sum over the real count;
  the fused attention op gets -inf in its bias for padded keys;
- a reshape that merges a dynamic dimension with a later one scrambles the
  padding into the middle of the merged dimension: that is fine for row-wise
  work (the M of a matmul), and the split that undoes it restores the
  dimensions; a scrambled dimension may not be reduced, sorted or returned;
- anything the rules do not cover refuses, with the op in the reason, and
  the graph runs at exact sizes: refusing is always safe, guessing is not.
  `x[:, -1]` and `x[:, -k:]` become gathers at the real end. Refused:
  sort/topk/var/std and norms over a dynamic dimension, a slice with a
  step that does not start at 0, writes (index_put, scatter,
  index_copy) whose indices have a dynamic size, a size used as a value
  (`x / x.shape[1]`), data-dependent sizes, mutation of a padded input, and
  any op not listed here.

Outputs are cut back (`narrow`) to their real sizes.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import sympy
import torch
import torch.fx as fx

aten = torch.ops.aten

# A dimension's state: None = static size; "P" = prefix-valid (real values
# first, padding after); ("X", factors) = padding scrambled by a merge, with
# the merged dimensions' (expr, state) when known, so a split can undo it.
State = Any


class Refused(Exception):
    pass


def _exact_division(a, b):
    q = sympy.cancel(a / b)
    return q if sympy.fraction(q)[1] == 1 else None


def _canonical(e: sympy.Expr) -> sympy.Expr:
    """e with floor divisions that divide exactly written as products
    (a reshape's `(s**2)//s` is `s`), so sizes compare as polynomials."""
    from torch.utils._sympy.functions import FloorDiv

    if not e.has(FloorDiv):
        return e
    return e.replace(lambda x: isinstance(x, FloorDiv) and _exact_division(*x.args) is not None,
                     lambda x: _exact_division(*x.args))


def _expr(v) -> sympy.Expr:
    if isinstance(v, torch.SymInt):
        return _canonical(v.node.expr)
    return sympy.Integer(int(v))


def _is_symbolic(e: sympy.Expr) -> bool:
    return bool(e.free_symbols)


@dataclass
class TensorInfo:
    shape: List[sympy.Expr]
    states: List[State]


@dataclass
class Plan:
    gm: fx.GraphModule
    # symbol -> where its real value is read: ("int", arg) or ("dim", arg, dim)
    sources: Dict[sympy.Symbol, Tuple]
    # SymInt placeholders: arg index -> expr (passed at the bucket)
    int_args: Dict[int, sympy.Expr]
    # tensor placeholders with dynamic dims: arg index -> [dim exprs]
    padded_args: Dict[int, List[sympy.Expr]]
    # real lengths the masks need, passed as 0-dim int64 tensors after the args
    lengths: List[sympy.Expr] = field(default_factory=list)
    # per output: None, or [(dim, expr)] to cut back to the real length
    outputs: List[Optional[List[Tuple[int, sympy.Expr]]]] = field(default_factory=list)


def _val(n):
    return n.meta.get("val") if isinstance(n, fx.Node) else n


def _tensor_info(val) -> TensorInfo:
    shape = [_expr(s) for s in val.shape]
    return TensorInfo(shape, [("P" if _is_symbolic(e) else None) for e in shape])


def _merge_states(states: Sequence[State]) -> State:
    """The state of one output dimension fed by several inputs' (broadcast)
    dimensions of the same size."""
    states = [s for s in states if s is not None]
    if not states:
        return "P"  # a symbolic size from a factory or an expand: all real
    if all(s == "P" for s in states):
        return "P"
    first = states[0]
    if all(s == first for s in states):
        return first
    return ("X", None)


def _broadcast(out_shape, infos: Sequence[TensorInfo]) -> List[State]:
    states = []
    rank = len(out_shape)
    for d, e in enumerate(out_shape):
        if not _is_symbolic(e):
            states.append(None)
            continue
        feeding = []
        for info in infos:
            k = d - (rank - len(info.shape))
            if k >= 0 and info.shape[k] == e:
                feeding.append(info.states[k])
        states.append(_merge_states(feeding))
    return states


def _factors(e: sympy.Expr, s: State) -> List[Tuple[sympy.Expr, State]]:
    if isinstance(s, tuple) and s[1] is not None:
        return list(s[1])
    return [(e, s)]


def _merged_state(run: List[Tuple[sympy.Expr, State]]) -> State:
    if len(run) == 1:
        return run[0][1]
    if all(not _is_symbolic(e) for e, _ in run):
        return None
    head, tail = run[0], run[1:]
    if head[1] in (None, "P") and all(not _is_symbolic(e) for e, _ in tail):
        return "P"
    if any(isinstance(s, tuple) for _, s in run):
        return ("X", None)
    return ("X", tuple(run))


def _same(a: sympy.Expr, b: sympy.Expr) -> bool:
    return a == b or sympy.expand(a - b) == 0


def _reshape_states(info: TensorInfo, out_shape: List[sympy.Expr]) -> List[State]:
    """States after a row-major reshape: the input's dimensions, opened into
    the factors they were merged from, regrouped to the output's sizes."""
    factors: List[Tuple[sympy.Expr, State]] = []
    for e, s in zip(info.shape, info.states):
        if e == 1:
            continue
        factors.extend(_factors(e, s))
    states: List[State] = []
    i = 0
    for e in out_shape:
        if e == 1:
            states.append(None)
            continue
        run: List[Tuple[sympy.Expr, State]] = []
        prod = sympy.Integer(1)
        while not _same(prod, e):
            if i >= len(factors):
                raise Refused("a reshape regroups a dynamic dimension")
            f, state = factors[i]
            need = sympy.simplify(e / prod)
            # Split a factor when the output dimension takes only its head:
            # a static factor by a static divisor ([s, 64] -> [4*s, 16]), a
            # prefix-valid one with static trailing sizes ([64*s] -> [2*s, 32]).
            part = None
            if not _is_symbolic(f) and not _is_symbolic(need) and need.is_integer and (
                    1 < int(need) < int(f) and int(f) % int(need) == 0):
                part = (need, None)
            elif state == "P" and _is_symbolic(need):
                rest = sympy.simplify(f / need)
                if not _is_symbolic(rest) and rest.is_integer and int(rest) > 1:
                    part = (need, "P")
            if part is not None:
                run.append(part)
                factors[i] = (sympy.simplify(f / part[0]), None)
                prod = prod * part[0]
                continue
            run.append(factors[i])
            prod = prod * f
            i += 1
        states.append(_merged_state(run))
    return states


_REDUCTIONS = {
    # op: (dim argument index or None for all dims, identity kind)
    aten.sum.dim_IntList: (1, "zero"),
    aten.sum.default: (None, "zero"),
    aten.nansum.default: (1, "zero"),
    aten.mean.dim: (1, "mean"),
    aten.mean.default: (None, "mean"),
    aten.amax.default: (1, "low"),
    aten.amin.default: (1, "high"),
    aten.max.dim: (1, "low"),
    aten.min.dim: (1, "high"),
    aten.argmax.default: (1, "low"),
    aten.argmin.default: (1, "high"),
    aten.any.dim: (1, "zero"),
    aten.any.dims: (1, "zero"),
    aten.any.default: (None, "zero"),
    aten.all.dim: (1, "one"),
    aten.all.default: (None, "one"),
    aten.prod.dim_int: (1, "one"),
    aten.prod.default: (None, "one"),
    aten.logsumexp.default: (1, "low"),
    aten.linalg_vector_norm.default: (2, "zero"),
    aten.count_nonzero.dim_IntList: (1, "zero"),
}
_SOFTMAX = {aten._softmax.default, aten._log_softmax.default, aten._safe_softmax.default}
# op: (lhs arg, lhs contracted dim, rhs arg, rhs contracted dim)
_CONTRACTIONS = {
    aten.mm.default: (0, 1, 1, 0),
    aten.bmm.default: (0, 2, 1, 1),
    aten.addmm.default: (1, 1, 2, 0),
    aten.baddbmm.default: (1, 2, 2, 1),
}
_SAME_STATES = {
    aten.clone.default, aten.alias.default, aten.detach.default, aten._to_copy.default,
    aten.lift_fresh_copy.default, aten.tril.default, aten.triu.default,
    aten.zeros_like.default, aten.ones_like.default, aten.empty_like.default,
    aten.full_like.default, aten.contiguous.default,
}
_RESHAPES = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}
_FACTORIES = {
    aten.zeros.default, aten.ones.default, aten.empty.memory_format, aten.full.default,
    aten.new_zeros.default, aten.new_ones.default, aten.new_empty.default, aten.new_full.default,
    aten.scalar_tensor.default, aten.arange.default, aten.arange.start, aten.arange.start_step,
    aten.empty_strided.default,
}
_IGNORED = {aten._assert_scalar.default, aten.sym_constrain_range_for_size.default,
            aten._assert_tensor_metadata.default}
# Schema types that take sizes, dims and positions (SymInt prints as int).
_SIZE_TYPES = ("int", "List[int]", "Optional[int]", "Optional[List[int]]")


def _sym_value(a, symbols) -> bool:
    """a is a value computed from the bucketed sizes (not from data: a
    float read with .item() is a symbol too, but holds its real value)."""
    v = _val(a)
    if not isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return False
    return bool(getattr(v.node, "expr", sympy.Integer(0)).free_symbols & symbols)


def _check_sym_as_data(n: fx.Node, symbols) -> None:
    """A size used as a value (not as a size or index) would see the bucket."""
    schema = n.target._schema
    for i, arg in enumerate(schema.arguments):
        if i < len(n.args):
            a = n.args[i]
        elif arg.name in n.kwargs:
            a = n.kwargs[arg.name]
        else:
            continue
        type_name = str(arg.type)
        values = a if isinstance(a, (list, tuple)) else [a]
        if not any(isinstance(v, fx.Node) and _sym_value(v, symbols) for v in values):
            continue
        if type_name in _SIZE_TYPES:
            continue
        if n.target in (aten.arange.default, aten.arange.start, aten.arange.start_step) and (
                arg.name == "end"):
            continue
        raise Refused(f"{n.target} takes a dynamic size as a value ({arg.name})")


def _literal_start(v, what: str, op) -> int:
    if v is None:
        return 0
    if isinstance(v, int) and v >= 0:
        return v
    raise Refused(f"{op} {what} from the end or by a dynamic position on a dynamic dimension")


class _Analysis:
    def __init__(self, gm: fx.GraphModule):
        self.gm = gm
        self.graph = gm.graph
        self.info: Dict[fx.Node, Any] = {}
        self.length_nodes: Dict[sympy.Expr, fx.Node] = {}
        self.lengths: List[sympy.Expr] = []
        self.last_placeholder: Optional[fx.Node] = None

    # -- masks ---------------------------------------------------------
    def _length(self, e: sympy.Expr) -> fx.Node:
        if e not in self.length_nodes:
            with self.graph.inserting_after(self.last_placeholder):
                p = self.graph.placeholder(f"real_length_{len(self.lengths)}")
            self.last_placeholder = p
            self.length_nodes[e] = p
            self.lengths.append(e)
        return self.length_nodes[e]

    def _masked(self, before: fx.Node, x: fx.Node, info: TensorInfo, dims: Sequence[int], kind: str,
                dtype: torch.dtype) -> fx.Node:
        """x with its padding along dims replaced by the identity of kind."""
        for d in dims:
            e, s = info.shape[d], info.states[d]
            if s is None:
                continue
            if s != "P":
                raise Refused(f"{before.target} combines values along a scrambled dynamic dimension")
            fill = _identity(kind, dtype)
            g = self.graph
            with g.inserting_before(before):
                length = self._length(e)
                size = g.call_function(aten.sym_size.int, (x, d))
                iota = g.call_function(aten.arange.default, (size,), {
                    "dtype": torch.int64, "device": _val(x).device})
                real = g.call_function(aten.lt.Tensor, (iota, length))
                shape = [1] * len(info.shape)
                shape[d] = size
                real = g.call_function(aten.view.default, (real, shape))
                x = g.call_function(aten.where.ScalarOther, (real, x, fill))
        return x

    def _count(self, before: fx.Node, info: TensorInfo, dims: Sequence[int]) -> Any:
        static = 1
        count = None
        g = self.graph
        for d in dims:
            e = info.shape[d]
            if not _is_symbolic(e):
                static *= int(e)
                continue
            with g.inserting_before(before):
                length = self._length(e)
                count = length if count is None else g.call_function(aten.mul.Tensor, (count, length))
        if count is None:
            return static
        if static != 1:
            with g.inserting_before(before):
                count = g.call_function(aten.mul.Tensor, (count, static))
        return count

    def _from_end(self, before: fx.Node, idx: fx.Node, size: sympy.Expr) -> fx.Node:
        """idx with negative positions counted from the real size."""
        g = self.graph
        with g.inserting_before(before):
            length = self._length(size)
            negative = g.call_function(aten.lt.Scalar, (idx, 0))
            shifted = g.call_function(aten.add.Tensor, (idx, length))
            return g.call_function(aten.where.self, (negative, shifted, idx))

    # -- rules ---------------------------------------------------------
    def run(self) -> Plan:
        sources: Dict[sympy.Symbol, Tuple] = {}
        int_args: Dict[int, sympy.Expr] = {}
        padded: Dict[int, List[sympy.Expr]] = {}
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        self.last_placeholder = placeholders[-1]
        for i, n in enumerate(placeholders):
            v = _val(n)
            if isinstance(v, torch.SymInt) and _is_nested_int(v):
                # (a jagged nested tensor's ragged size: no integer to pad to)
                raise Refused(f"input {n.name} is a nested tensor's ragged size")
            if isinstance(v, torch.SymInt):
                e = v.node.expr
                if _is_symbolic(e):
                    int_args[i] = e
                    if isinstance(e, sympy.Symbol):
                        sources.setdefault(e, ("int", i))
                self.info[n] = None
            elif isinstance(v, torch.Tensor):
                info = _tensor_info(v)
                self.info[n] = info
                if any(s is not None for s in info.states):
                    padded[i] = info.shape
                    for d, e in enumerate(info.shape):
                        if isinstance(e, sympy.Symbol):
                            sources.setdefault(e, ("dim", i, d))
            elif isinstance(v, (int, float, bool)) or v is None:
                self.info[n] = None
            else:
                raise Refused(f"input {n.name} is a {type(v).__name__}")
        symbols = set()
        for e in list(int_args.values()) + [e for shape in padded.values() for e in shape]:
            symbols |= e.free_symbols
        missing = [s for s in symbols if s not in sources]
        if missing:
            raise Refused(f"sizes {missing} are not readable from the inputs")
        if not symbols:
            raise Refused("no dynamic sizes")
        self.symbols = symbols

        for n in list(self.graph.nodes):
            if n.op == "placeholder" or n in self.info:
                continue
            if n.op == "output":
                outputs = self._outputs(n)
                continue
            if n.op != "call_function":
                raise Refused(f"{n.op} node {n.name}")
            try:
                self.info[n] = self._node(n)
            except Refused as e:
                raise Refused(f"{e} (at {n.format_node()})") from None
        self.graph.lint()
        self.gm.recompile()
        return Plan(self.gm, sources, int_args, padded, self.lengths, outputs)

    def _outputs(self, n: fx.Node) -> List:
        outs = n.args[0]
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        plans = []
        for o in outs:
            v = _val(o)
            if isinstance(v, torch.Tensor):
                info = self.info.get(o)
                cuts = []
                for d, (e, s) in enumerate(zip(info.shape, info.states)):
                    if s is None:
                        continue
                    if s != "P":
                        raise Refused("an output has a scrambled dynamic dimension")
                    cuts.append((d, e))
                plans.append(cuts or None)
            elif _sym_value(o, self.symbols):
                raise Refused("the graph returns a dynamic size")
            else:
                plans.append(None)
        return plans

    def _tensor(self, a) -> TensorInfo:
        info = self.info.get(a)
        if not isinstance(info, TensorInfo):
            raise Refused(f"{a} has no tensor shape")
        return info

    def _node(self, n: fx.Node):
        t = n.target
        val = _val(n)
        if t is operator.getitem:
            parent = self.info.get(n.args[0])
            if isinstance(parent, list):
                return parent[n.args[1]]
            if isinstance(val, torch.Tensor):
                raise Refused(f"getitem of {n.args[0]}")
            return None
        if not isinstance(t, torch._ops.OpOverload):
            # size arithmetic on SymInts (operator.mul, sym_size, ...)
            if isinstance(val, torch.Tensor):
                raise Refused(f"{t} on tensors")
            return None
        if t in _IGNORED:
            return None
        if t == aten.sym_size.int or t == aten.sym_numel.default or t == aten.sym_stride.int:
            return None
        _check_sym_as_data(n, self.symbols)
        inputs = [a for a in n.all_input_nodes if isinstance(self.info.get(a), TensorInfo)]
        touches = any(any(s is not None for s in self.info[a].states) for a in inputs)
        if isinstance(val, torch.Tensor):
            out_shape = [_expr(s) for s in val.shape]
            touches = touches or any(_is_symbolic(e) for e in out_shape)
        elif isinstance(val, (list, tuple)):
            out_shape = None
            touches = touches or any(
                isinstance(v, torch.Tensor) and any(_is_symbolic(_expr(s)) for s in v.shape) for v in val)
        else:
            out_shape = None
        if not touches:
            return self._static_result(val)
        rule = _RULES.get(t)
        if rule is not None:
            return rule(self, n, out_shape)
        if t in _REDUCTIONS:
            return self._reduction(n, out_shape)
        if t in _SOFTMAX:
            return self._softmax(n, out_shape)
        if t in _CONTRACTIONS:
            return self._contraction(n, out_shape)
        if t in _SAME_STATES:
            return TensorInfo(out_shape, list(self._tensor(n.args[0]).states))
        if t in _RESHAPES:
            return TensorInfo(out_shape, _reshape_states(self._tensor(n.args[0]), out_shape))
        if t in _FACTORIES:
            return TensorInfo(out_shape, ["P" if _is_symbolic(e) else None for e in out_shape])
        if torch.Tag.pointwise in t.tags and isinstance(val, torch.Tensor):
            return TensorInfo(out_shape, _broadcast(out_shape, [self.info[a] for a in inputs]))
        raise Refused(f"{t} is not known to be exact on padded dynamic dimensions")

    def _static_result(self, val):
        if isinstance(val, torch.Tensor):
            return _tensor_info(val)
        if isinstance(val, (list, tuple)):
            return [(_tensor_info(v) if isinstance(v, torch.Tensor) else None) for v in val]
        return None

    def _dims(self, n, arg_index, rank) -> List[int]:
        if arg_index is None:
            return list(range(rank))
        dims = n.args[arg_index] if arg_index < len(n.args) else n.kwargs.get("dim")
        if dims is None or dims == []:
            return list(range(rank))
        dims = dims if isinstance(dims, (list, tuple)) else [dims]
        return [d % rank if rank else 0 for d in dims]

    def _reduction(self, n, out_shape):
        arg_index, kind = _REDUCTIONS[n.target]
        x = n.args[0]
        info = self._tensor(x)
        rank = len(info.shape)
        dims = self._dims(n, arg_index, rank)
        dynamic = [d for d in dims if info.states[d] is not None]
        if n.target in (aten.argmax.default, aten.argmin.default) and (
                len(n.args) < 2 or n.args[1] is None) and dynamic:
            raise Refused(f"{n.target} over all dimensions of a padded tensor")
        if n.target == aten.linalg_vector_norm.default:
            order = n.args[1] if len(n.args) > 1 else n.kwargs.get("ord", 2)
            if dynamic and not (isinstance(order, (int, float)) and order > 0):
                raise Refused(f"{n.target} of order {order} over a dynamic dimension")
        dtype = _val(x).dtype
        if dynamic:
            masked = self._masked(n, x, info, dynamic, "zero" if kind == "mean" else kind, dtype)
            n.replace_input_with(x, masked)
            if kind == "mean":
                mean = self._mean_to_sum(n, info, dims)
        keep = bool(n.args[2]) if len(n.args) > 2 and isinstance(n.args[2], bool) else bool(
            n.kwargs.get("keepdim", False))
        # kept reduced dimensions are size 1 (static); dropped ones vanish
        states = ([None if d in dims else s for d, s in enumerate(info.states)] if keep
                  else [s for d, s in enumerate(info.states) if d not in dims])
        result = TensorInfo(out_shape, states) if out_shape is not None else None
        if dynamic and kind == "mean":
            self.info[mean] = result
        if isinstance(_val(n), (list, tuple)):  # max.dim / min.dim: (values, indices)
            shape = [_expr(s) for s in _val(n)[0].shape]
            return [TensorInfo(shape, list(states)), TensorInfo(shape, list(states))]
        return result

    def _mean_to_sum(self, n, info, dims):
        g = self.graph
        count = self._count(n, info, dims)
        x = n.args[0]
        if n.target == aten.mean.default:
            dtype = n.args[1] if len(n.args) > 1 else n.kwargs.get("dtype")
            args, kwargs = (x, list(range(len(info.shape))), False), {"dtype": dtype}
        else:
            keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
            dtype = n.args[3] if len(n.args) > 3 else n.kwargs.get("dtype")
            args, kwargs = (x, n.args[1], keep), {"dtype": dtype}
        with g.inserting_before(n):
            total = g.call_function(aten.sum.dim_IntList, args, kwargs)
        with g.inserting_after(n):
            mean = g.call_function(aten.div.Tensor if isinstance(count, fx.Node) else aten.div.Scalar,
                                   (total, count))
        n.replace_all_uses_with(mean)
        mean.meta["val"] = _val(n)
        g.erase_node(n)
        return mean

    def _softmax(self, n, out_shape):
        x = n.args[0]
        info = self._tensor(x)
        d = n.args[1] % len(info.shape)
        if info.states[d] is not None:
            masked = self._masked(n, x, info, [d], "low", _val(x).dtype)
            n.replace_input_with(x, masked)
        return TensorInfo(out_shape, list(info.states))

    def _contraction(self, n, out_shape):
        li, ld, ri, rd = _CONTRACTIONS[n.target]
        lhs, rhs = n.args[li], n.args[ri]
        linfo, rinfo = self._tensor(lhs), self._tensor(rhs)
        if linfo.states[ld] is not None or rinfo.states[rd] is not None:
            if linfo.states[ld] is not None:
                n.replace_input_with(lhs, self._masked(n, lhs, linfo, [ld], "zero", _val(lhs).dtype))
            if rinfo.states[rd] is not None:
                masked = self._masked(n, rhs, rinfo, [rd], "zero", _val(rhs).dtype)
                args = list(n.args)
                args[ri] = masked
                n.args = tuple(args)
        rank = len(out_shape)
        states = [None] * rank
        # batch dims (bmm), M from lhs, N from rhs
        for d in range(rank - 2):
            states[d] = _merge_states([linfo.states[d], rinfo.states[d]]) if _is_symbolic(out_shape[d]) else None
        states[rank - 2] = linfo.states[len(linfo.shape) - 2]
        states[rank - 1] = rinfo.states[len(rinfo.shape) - 1]
        if n.target in (aten.addmm.default, aten.baddbmm.default):
            bias = self.info.get(n.args[0])
            if isinstance(bias, TensorInfo):
                for d in range(rank):
                    k = d - (rank - len(bias.shape))
                    if k >= 0 and bias.states[k] is not None and bias.shape[k] == out_shape[d]:
                        states[d] = _merge_states([states[d], bias.states[k]])
        return TensorInfo(out_shape, states)


def _identity(kind: str, dtype: torch.dtype):
    if kind == "zero":
        return False if dtype == torch.bool else 0
    if kind == "one":
        return True if dtype == torch.bool else 1
    if dtype.is_floating_point:
        return -math.inf if kind == "low" else math.inf
    if dtype == torch.bool:
        return kind != "low"
    info = torch.iinfo(dtype)
    return info.min if kind == "low" else info.max


# -- per-op rules for layout and indexing ops -----------------------------


def _permute(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    if n.target == aten.permute.default:
        order = [d % len(info.shape) for d in n.args[1]]
    elif n.target == aten.t.default:
        order = list(range(len(info.shape)))[::-1]
    else:
        order = list(range(len(info.shape)))
        i, j = n.args[1] % len(order), n.args[2] % len(order)
        order[i], order[j] = order[j], order[i]
    return TensorInfo(out_shape, [info.states[d] for d in order])


def _expand(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    return TensorInfo(out_shape, _broadcast(out_shape, [info]))


def _unsqueeze(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    d = n.args[1] % (len(info.shape) + 1)
    return TensorInfo(out_shape, info.states[:d] + [None] + info.states[d:])


def _squeeze(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    rank = len(info.shape)
    if n.target == aten.squeeze.default:
        named = set(range(rank))
    else:
        dims = n.args[1] if isinstance(n.args[1], (list, tuple)) else [n.args[1]]
        named = {d % rank for d in dims} if rank else set()
    return TensorInfo(out_shape, [s for d, (e, s) in enumerate(zip(info.shape, info.states))
                                  if not (d in named and e == 1)])


def _from_real_end(a: _Analysis, n, x: fx.Node, d: int, size: sympy.Expr, start: int, count):
    """Rewrite n (a select or slice that starts `start` < 0 from the end of
    dynamic dimension d) into a gather at real_size + start: `x[:, -1]`
    reads the last real position, not the bucket's."""
    g = a.graph
    with g.inserting_before(n):
        position = g.call_function(aten.add.Tensor, (a._length(size), start))
        if count is not None:
            iota = g.call_function(aten.arange.default, (count,), {
                "dtype": torch.int64, "device": _val(x).device})
            position = g.call_function(aten.add.Tensor, (iota, position))
    n.target = aten.index.Tensor
    n.args = (x, [None] * d + [position])
    n.kwargs = {}


def _select(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    d = n.args[1] % len(info.shape)
    if info.states[d] is not None:
        index = n.args[2]
        if info.states[d] != "P":
            raise Refused(f"{n.target} on a scrambled dynamic dimension")
        if isinstance(index, int) and index < 0:
            _from_real_end(a, n, n.args[0], d, info.shape[d], index, None)
        else:
            _literal_start(index, "selects", n.target)
    return TensorInfo(out_shape, info.states[:d] + info.states[d + 1:])


def _slice(a: _Analysis, n, out_shape):
    info = a._tensor(n.args[0])
    d = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % len(info.shape)
    states = list(info.states)
    if info.states[d] is not None:
        if n.target == aten.narrow.default:
            start, step = n.args[2], 1
        else:
            start = n.args[2] if len(n.args) > 2 else n.kwargs.get("start")
            step = n.args[4] if len(n.args) > 4 else n.kwargs.get("step", 1)
        if isinstance(start, int) and start < 0 and n.target == aten.slice.Tensor and step == 1 and (
                info.states[d] == "P" and not _is_symbolic(out_shape[d])):
            _from_real_end(a, n, n.args[0], d, info.shape[d], start, int(out_shape[d]))
            states[d] = None
            return TensorInfo(out_shape, states)
        start = _literal_start(start, "slices", n.target)
        if step != 1 and start != 0:
            raise Refused(f"{n.target} with a step on a dynamic dimension")
        if info.states[d] != "P" and not (start == 0 and _same(out_shape[d], info.shape[d])):
            raise Refused(f"{n.target} of a scrambled dynamic dimension")
        states[d] = info.states[d] if _is_symbolic(out_shape[d]) else None
    return TensorInfo(out_shape, states)


def _cat(a: _Analysis, n, out_shape):
    tensors = [t for t in n.args[0] if isinstance(a.info.get(t), TensorInfo)]
    infos = [a._tensor(t) for t in tensors if len(a._tensor(t).shape) == len(out_shape)]
    d = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % len(out_shape)
    states = []
    for k, e in enumerate(out_shape):
        if k != d:
            states.append(_merge_states([i.states[k] for i in infos if _same(i.shape[k], e)])
                          if _is_symbolic(e) else None)
            continue
        along = [i.states[d] for i in infos]
        if all(s is None for s in along):
            states.append(None)
        elif all(s is None for s in along[:-1]) and along[-1] == "P":
            states.append("P")  # static pieces, then one prefix-valid piece
        else:
            states.append(("X", None))
    return TensorInfo(out_shape, states)


def _stack(a: _Analysis, n, out_shape):
    infos = [a._tensor(t) for t in n.args[0]]
    d = (n.args[1] if len(n.args) > 1 else 0) % len(out_shape)
    rest = out_shape[:d] + out_shape[d + 1:]
    states = _broadcast(rest, infos)
    return TensorInfo(out_shape, states[:d] + [None] + states[d:])


def _attention(a: _Analysis, n, out_shape):
    """scaled_dot_product_attention's fused op: padded keys get -inf in the
    bias (a bool bias: False), so no real query attends to them; padded
    queries are rows of their own."""
    q, k, v = (a._tensor(t) for t in n.args[:3])
    for info in (q, k, v):
        if info.states[1] is not None or info.states[3] is not None:
            raise Refused("attention with a dynamic head count or head size")
    if k.states[2] != v.states[2] or k.states[2] not in (None, "P"):
        raise Refused("attention whose keys and values are padded differently")
    bias_node = n.args[3] if len(n.args) > 3 else n.kwargs.get("attn_bias")
    if bias_node is not None:
        bias_info = a._tensor(bias_node)
        expected = [q.shape[0], q.shape[1], q.shape[2], k.shape[2]][4 - len(bias_info.shape):]
        for e, want in zip(bias_info.shape, expected):
            if e != 1 and not _same(e, want):
                raise Refused("an attention mask whose sizes do not follow the query and key sizes")
    if k.states[2] is not None:
        g = a.graph
        args = list(n.args) + [None] * (4 - len(n.args))
        bias = args[3] if args[3] is not None else n.kwargs.get("attn_bias")
        with g.inserting_before(n):
            length = a._length(k.shape[2])
            size = g.call_function(aten.sym_size.int, (n.args[1], 2))
            iota = g.call_function(aten.arange.default, (size,), {
                "dtype": torch.int64, "device": _val(n.args[1]).device})
            valid = g.call_function(aten.lt.Tensor, (iota, length))
            valid = g.call_function(aten.view.default, (valid, [1, 1, 1, size]))
            if bias is not None and _val(bias).dtype == torch.bool:
                bias = g.call_function(aten.logical_and.default, (bias, valid))
            else:
                dtype = _val(n.args[0]).dtype
                additive = g.call_function(aten.log.default, (
                    g.call_function(aten._to_copy.default, (valid,), {"dtype": dtype}),))
                bias = additive if bias is None else g.call_function(aten.add.Tensor, (bias, additive))
        args[3] = bias
        n.args = tuple(args)
        n.kwargs = {key: value for key, value in n.kwargs.items() if key != "attn_bias"}
    vals = _val(n)
    out_shape = [_expr(e) for e in vals[0].shape]
    batch = _merge_states([q.states[0], k.states[0], v.states[0]]) if _is_symbolic(out_shape[0]) else None
    infos = [TensorInfo(out_shape, [batch, None, q.states[2], None])]
    lse_shape = [_expr(e) for e in vals[1].shape] if isinstance(vals[1], torch.Tensor) else None
    infos.append(TensorInfo(lse_shape, [batch, None, q.states[2]][:len(lse_shape)]) if lse_shape else None)
    infos.extend(_tensor_info(v) if isinstance(v, torch.Tensor) and v.dim() == 0 else None for v in vals[2:])
    return infos


def _split(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    if n.target == aten.unbind.int:
        d = (n.args[1] if len(n.args) > 1 else 0) % len(x.shape)
    else:
        d = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(x.shape)
    if x.states[d] is not None:
        raise Refused(f"{n.target} along a dynamic dimension")
    outs = []
    for v in _val(n):
        shape = [_expr(e) for e in v.shape]
        states = x.states[:d] + x.states[d + 1:] if n.target == aten.unbind.int else list(x.states)
        outs.append(TensorInfo(shape, states))
    return outs


def _embedding(a: _Analysis, n, out_shape):
    idx = a._tensor(n.args[1])
    weight = a._tensor(n.args[0])
    if any(s is not None for s in weight.states):
        raise Refused("embedding with a dynamic table size")
    return TensorInfo(out_shape, list(idx.states) + [None])


def _index_select(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    d = n.args[1] % len(x.shape)
    idx = a._tensor(n.args[2])
    states = list(x.states)
    states[d] = idx.states[0] if _is_symbolic(out_shape[d]) else None
    return TensorInfo(out_shape, states)


def _gather(a: _Analysis, n, out_shape):
    return TensorInfo(out_shape, list(a._tensor(n.args[2]).states))


def _index(a: _Analysis, n, out_shape):
    """x[i0, i1, ...] with index tensors: a gather. The values at real
    positions of the indices are the unpadded program's positions, so they
    read real values; a negative one counts from the real end, which the
    rewrite makes explicit (the padded dimension's end is the bucket's)."""
    x = a._tensor(n.args[0])
    indices = list(n.args[1])
    positions = [k for k, i in enumerate(indices) if i is not None]
    infos = []
    for k in positions:
        idx = indices[k]
        info = a._tensor(idx)
        if _val(idx).dtype in (torch.bool, torch.uint8):
            if any(s is not None for s in info.states) or x.states[k] is not None:
                raise Refused("boolean-mask indexing over a dynamic dimension")
        elif x.states[k] is not None:
            if x.states[k] != "P":
                raise Refused("indexing into a scrambled dynamic dimension")
            indices[k] = a._from_end(n, idx, x.shape[k])
        infos.append(info)
    if indices != list(n.args[1]):
        n.args = (n.args[0], indices) + tuple(n.args[2:])
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    first = positions[0] if adjacent else 0
    rest = [k for k in range(len(x.shape)) if k not in positions]
    width = len(out_shape) - len(rest)
    index_states = _broadcast(out_shape[first:first + width], infos)
    before = [x.states[k] for k in rest if k < first] if adjacent else []
    after = [x.states[k] for k in rest if not adjacent or k > positions[-1]]
    return TensorInfo(out_shape, before + index_states + after)


def _write(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    for arg in n.all_input_nodes[1:]:
        info = a.info.get(arg)
        if isinstance(info, TensorInfo) and any(s is not None for s in info.states):
            raise Refused(f"{n.target} writes through indices or values of a dynamic size")
    return TensorInfo(out_shape, list(x.states))


def _layer_norm(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    k = len(n.args[1])
    if any(s is not None for s in x.states[len(x.shape) - k:]):
        raise Refused("layer norm over a dynamic dimension")
    lead = x.states[:len(x.shape) - k]
    shapes = [[_expr(s) for s in v.shape] for v in _val(n)]
    return [TensorInfo(shapes[0], list(x.states)),
            TensorInfo(shapes[1], lead + [None] * k),
            TensorInfo(shapes[2], lead + [None] * k)]


def _batch_norm_eval(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    if x.states[1] is not None if len(x.states) > 1 else False:
        raise Refused("batch norm with a dynamic channel count")
    shapes = [[_expr(s) for s in v.shape] for v in _val(n)]
    return [TensorInfo(shapes[0], list(x.states))] + [
        TensorInfo(s, [None] * len(s)) for s in shapes[1:]]


def _cumulative(a: _Analysis, n, out_shape):
    x = a._tensor(n.args[0])
    d = n.args[1] % len(x.shape)
    if x.states[d] not in (None, "P"):
        raise Refused(f"{n.target} along a scrambled dynamic dimension")
    return TensorInfo(out_shape, list(x.states))


def _pointwise_copy(a: _Analysis, n, out_shape):
    infos = [a._tensor(t) for t in n.args[:2]]
    return TensorInfo(out_shape, _broadcast(out_shape, infos))


def _mutation(a: _Analysis, n, out_shape):
    target = n.args[0]
    if target.op == "placeholder" and any(s is not None for s in a._tensor(target).states):
        raise Refused("the graph writes into a padded input")
    return TensorInfo(out_shape, _broadcast(out_shape, [a._tensor(t) for t in n.args[:2]]))


_RULES = {
    aten.permute.default: _permute,
    aten.transpose.int: _permute,
    aten.t.default: _permute,
    aten.expand.default: _expand,
    aten.unsqueeze.default: _unsqueeze,
    aten.squeeze.dim: _squeeze,
    aten.squeeze.dims: _squeeze,
    aten.squeeze.default: _squeeze,
    aten.select.int: _select,
    aten.slice.Tensor: _slice,
    aten.narrow.default: _slice,
    aten.cat.default: _cat,
    aten.stack.default: _stack,
    aten._scaled_dot_product_fused_attention_overrideable.default: _attention,
    aten.split.Tensor: _split,
    aten.split_with_sizes.default: _split,
    aten.unbind.int: _split,
    aten.embedding.default: _embedding,
    aten.index_select.default: _index_select,
    aten.gather.default: _gather,
    aten.index.Tensor: _index,
    aten.index_put.default: _write,
    aten.index_copy.default: _write,
    aten.scatter.src: _write,
    aten.scatter.value: _write,
    aten.native_layer_norm.default: _layer_norm,
    aten._native_batch_norm_legit_no_training.default: _batch_norm_eval,
    aten.cumsum.default: _cumulative,
    aten.cumprod.default: _cumulative,
    aten.copy.default: _pointwise_copy,
    aten.copy_.default: _mutation,
}


def _is_nested_int(v: torch.SymInt) -> bool:
    is_nested = getattr(v.node, "is_nested_int", None)
    return bool(is_nested and is_nested())


def analyze(gm: fx.GraphModule):
    """A Plan for running gm (an AOTAutograd inference graph) at bucket sizes,
    or the reason (str) it cannot: the graph module is rewritten only when
    the whole analysis succeeds (it works on a copy)."""
    copy = fx.GraphModule(gm, copy_graph(gm.graph))
    try:
        return _Analysis(copy).run()
    except Refused as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - a gap in the analysis must not fail the compile
        return f"the padding analysis failed ({type(e).__name__}: {e}); exact sizes are safe"


def copy_graph(graph: fx.Graph) -> fx.Graph:
    new = fx.Graph()
    env: Dict[fx.Node, fx.Node] = {}
    out = new.graph_copy(graph, env)
    new.output(out)
    for old, n in env.items():
        n.meta = dict(old.meta)
    return new

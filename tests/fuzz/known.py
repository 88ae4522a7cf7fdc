"""Bug classes the fuzzers find on today's code, each matched by op and condition.

A failure the fuzzers report is "known" when an entry here matches it: the
kind of mismatch, the op (the differential fuzzer's op table key, or the
bad-input fuzzer's call family) and a condition on the failing step's inputs
(rec["info"]: dtypes, nan, inf, neg_zero, large_int, noncontig, empty,
zero_dim, int_min, nan_literal, inf_literal, large_literal; rec["form"]: func,
method, inplace, out, operator, rscalar...). The pytest entries fail on any
failure no entry matches. An entry names a bug, not an op or a dtype: when the
bug is fixed, delete the entry (the tests then check that it stays fixed).
"""

import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Known:
    id: str
    reason: str
    kinds: tuple
    ops: tuple  # None: any op, the condition says which
    when: Callable = None

    def matches(self, rec):
        if rec.get("kind") not in self.kinds:
            return False
        if self.ops is not None and rec.get("op") not in self.ops:
            return False
        return self.when is None or bool(self.when(rec))


def _info(*flags):
    return lambda r: any(r.get("info", {}).get(f) for f in flags)


def _msg(pattern, which="tpu_msg"):
    rx = re.compile(pattern)
    return lambda r: bool(rx.search(r.get(which) or ""))


def _all(*conds):
    return lambda r: all(c(r) for c in conds)


def _dtypes(pred):
    return lambda r: pred(set(r.get("info", {}).get("dtypes", [])))


INTS = {"int64", "int32", "uint8", "int16", "int8"}
FLOATS = {"float32", "bfloat16", "float16", "float64"}
ELEMENTWISE_KINDS = ("value", "signed_zero")
# What the CPU says when it refuses a dtype (or an out= dtype).
DTYPE_REFUSAL = (r"not implemented for|not supported|only supports boolean|expected .*dtype|"
                 r"[Ee]xpected out tensor to have dtype|boolean tensor|Integer division with addcdiv|"
                 r"does not support bool|can't be cast to the desired output|Found dtype|"
                 r"expected a floating point")
INDEX_FAMILIES = ("index_select", "gather", "scatter", "scatter_add", "index_add", "index_copy",
                  "index_fill", "embedding", "take", "put_", "getitem", "setitem", "index_put_",
                  "nll_loss", "one_hot", "take_along_dim", "scatter_reduce", "embedding_bag",
                  "cross_entropy")


def _families(suffix, names=INDEX_FAMILIES):
    return tuple(f"index.{n}.{suffix}" for n in names)


KNOWN = [
    # ---- known to the lead, fixes in progress -------------------------------------------
    Known("nan_extremum", "NaN does not propagate through max/min/clamp/sort-like lowerings "
          "(XLA max/min drop NaN; sort orders it differently)", ("value", "tie"),
          ("max", "min", "amax", "amin", "maximum", "minimum", "clamp", "sort", "argsort", "topk",
           "msort", "argmax", "argmin", "cummax", "hardtanh", "relu", "kthvalue", "vector_norm"),
          _info("nan", "nan_literal")),
    Known("sign_nan_negzero", "sign/sgn of NaN and of -0.0", ELEMENTWISE_KINDS, ("sign", "sgn"),
          _info("nan", "neg_zero")),
    Known("floor_division", "floor division rounds differently from the CPU (x // y, "
          "div(rounding_mode='floor'): infinities, tiny quotients, the sign of zero)",
          ELEMENTWISE_KINDS, ("floor_divide", "div"),
          lambda r: r["op"] == "floor_divide" or "floor" in r.get("code", "") or
          r.get("form") == "operator"),
    Known("integer_pow", "integer pow (negative or large exponents, overflow) differs from the "
          "CPU's integer power", ("value", "missing_error", "exc_class"), ("pow", "dtype"),
          lambda r: r["op"] == "pow" and bool(set(r.get("info", {}).get("dtypes", [])) & INTS)
          and not set(r.get("info", {}).get("dtypes", [])) & FLOATS
          or "torch.pow(" in r.get("case", "")),
    Known("scalar_wrap", "a Python scalar out of the tensor dtype's range is refused ('value "
          "cannot be converted ... without overflow') where the CPU wraps it or rounds it to inf, "
          "and accepted where the CPU refuses it (index_add's alpha)",
          ("tpu_error", "value", "missing_error"), ("add", "sub", "mul", "div", "view_write",
                                                    "index_put", "index_add", "scatter",
                                   "nan_to_num", "masked_fill", "clamp", "fill_", "where", "eq", "ne",
                                   "lt", "le", "gt", "ge", "remainder", "fmod", "floor_divide",
                                   "bitwise_and", "bitwise_or", "bitwise_xor", "pow", "addcmul",
                                   "addcdiv", "lerp", "maximum", "minimum"),
          lambda r: "without overflow" in r.get("tpu_msg", "") + r.get("cpu_msg", "") or
          (r.get("info", {}).get("large_literal") and r["kind"] == "value")),
    Known("gelu_extreme", "gelu at infinite or very large inputs", ("value",), ("gelu",),
          _info("inf", "huge_float")),
    Known("elementwise_layout", "elementwise results on transposed/strided inputs get a "
          "contiguous layout instead of the strides TensorIterator picks", ("stride",),
          tuple(sorted({"view_write", "to", "where", "clamp", "masked_fill", "nan_to_num", "lerp",
                        "addcmul", "addcdiv", "relu", "gelu", "silu", "softplus", "elu",
                        "leaky_relu", "hardtanh", "mish", "logsigmoid", "hardsigmoid", "hardswish",
                        "softsign"} | set(
              "exp log sqrt rsqrt sin cos tan tanh sigmoid expm1 log1p log2 log10 exp2 asin acos "
              "atan sinh cosh asinh acosh atanh erf erfinv reciprocal abs neg ceil floor trunc "
              "frac sign sgn square positive logical_not bitwise_not isnan isinf isfinite isposinf "
              "isneginf deg2rad rad2deg round add sub mul div floor_divide remainder fmod pow atan2 "
              "hypot copysign maximum minimum fmax fmin eq ne lt le gt ge logical_and logical_or "
              "logical_xor bitwise_and bitwise_or bitwise_xor xlogy float_power ldexp".split()))),
          _info("noncontig")),
    Known("dtype_compile_error", "a dtype the CPU refuses reaches the compiler, which fails with "
          "an error (RuntimeError instead of the CPU's NotImplementedError / TypeError)",
          ("exc_class",), None, _all(_msg("PJRT_Client_Compile"),
                                    lambda r: bool(r.get("cpu_exc")))),
    Known("dtype_refusal", "a dtype (or out= dtype) the CPU refuses is accepted, or refused with "
          "another exception class (RuntimeError for the CPU's NotImplementedError)",
          ("missing_error", "exc_class"), None, _msg(DTYPE_REFUSAL, "cpu_msg")),
    Known("strict_oob_index", "strict mode does not check indices: an out-of-range index is "
          "clamped or dropped instead of raising at the next sync", ("missing_error",),
          _families("oob_strict")),
    Known("subnormal_flush", "the XLA CPU plugin flushes subnormal floats to zero",
          ("value", "signed_zero", "tie"), None, _info("subnormal")),
    # ---- found by these fuzzers -------------------------------------------------------------
    Known("cat_0d_crash", "torch.cat of 0-d tensors segfaults (CPU: RuntimeError "
          "'zero-dimensional tensor cannot be concatenated')", ("crash",), ("shape.join",),
          lambda r: r.get("case", "").startswith("torch.cat([T(..), T(..)])")),
    Known("expanded_writes", "index_put_ (and index_fill_) into an expanded view: tpu "
          "writes other values (or refuses) where the CPU writes through every element",
          ("tpu_error", "value"), ("inplace_expanded",),
          lambda r: bool(re.search(r"index_put_|index_fill_",
                                   r.get("case", "") + r.get("code", "")))),
    Known("index_error_class", "out-of-range (debug mode) and wrong-dtype indices raise "
          "IndexError where the CPU raises RuntimeError (gather/scatter family, index_select, "
          "embedding, one_hot)", ("exc_class",), _families("oob_debug") + ("dtype", "shape.nn"),
          lambda r: r.get("tpu_exc") == "IndexError" and r.get("cpu_exc") == "RuntimeError"),
    Known("loss_target_unchecked", "nll_loss / cross_entropy do not check the target range even "
          "in debug mode", ("missing_error",), _families("oob_debug", ("nll_loss", "cross_entropy"))),
    Known("int_div_by_zero", "integer division by zero (//, %, fmod, div trunc/floor) returns a "
          "value where the CPU raises RuntimeError('ZeroDivisionError')", ("missing_error",),
          None, _msg("ZeroDivisionError", "cpu_msg")),
    Known("argument_checks", "invalid string/scalar arguments are not refused (div rounding_mode, "
          "gelu approximate, clamp without bounds, multinomial of an invalid distribution)",
          ("missing_error",), ("invalid_args",),
          _msg("rounding_mode|approximate argument|At least one of 'min' or 'max'|probability "
               "tensor", "cpu_msg")),
    Known("unsigned_compile_error", "abs/sign/sgn/frac of uint8 (and ops built on them: softsign, "
          "lerp) fail to compile: stablehlo.abs/sign/floor reject unsigned integers",
          ("tpu_error", "exc_class"), None,
          _all(_msg("PJRT_Client_Compile"), _msg(r":ui8:|:i1:"))),
    Known("out_dtype_compute", "an op with a wider out= dtype computes in the out dtype; the "
          "CPU computes in the input's dtype, then casts", ("value",),
          tuple("exp log sqrt rsqrt sin cos tan tanh sigmoid expm1 log1p log2 log10 exp2 asin acos "
                "atan sinh cosh asinh acosh atanh erf erfinv reciprocal atan2 hypot pow xlogy "
                "float_power logaddexp nextafter".split()),
          lambda r: r.get("form") == "out" and "dtype=torch.float32" in r.get("code", "") and bool(
              set(r.get("info", {}).get("dtypes", [])) & {"float16", "bfloat16"})),
    Known("bool_operand_select", "mul/div with a bool operand act as a select: nan * False "
          "and inf * False give 0 (CPU: NaN), -4.0 * False gives +0.0 (CPU: -0.0)",
          ("value", "signed_zero"), ("mul", "div"), _dtypes(lambda d: "bool" in d)),
    Known("low_precision_scalar", "a Python scalar (or 0-d tensor) operand of a bf16/f16 "
          "tensor is not rounded to bf16/f16 first: 0.643 + x computes with 0.643, the CPU with "
          "bf16(0.643) = 0.6445", ("value",), ("add", "sub", "mul", "div", "remainder", "fmod"),
          _all(_dtypes(lambda d: bool(d & {"bfloat16", "float16"})),
               lambda r: r.get("form") in ("rscalar", "operator") or r["info"].get("zero_dim") or
               bool(re.search(r"[(,] ?-?\d+\.\d+\)", r.get("code", ""))))),
    Known("elu_nan_alpha", "elu(0, alpha=nan) is NaN (CPU: 0)", ("value",), ("elu",),
          _info("nan_literal")),
    Known("ldexp_overflow", "ldexp(x, e) multiplies by 2**e, which overflows: ldexp(0.0, 256) is "
          "NaN (CPU: 0.0)", ("value",), ("ldexp",)),
    Known("hypot_overflow", "hypot(x, y) overflows to inf for |x| near the float max (computed as "
          "sqrt(x*x + y*y))", ("value",), ("hypot",), _info("huge_float")),
    Known("layer_norm_overflow", "layer_norm of values near the float max gives 0 where the CPU "
          "gives NaN", ("value",), ("layer_norm",), _info("huge_float")),
]


def classify(rec):
    """The id of the first known entry matching rec, or None."""
    for k in KNOWN:
        if k.matches(rec):
            return k.id
    return None

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
    Known("dtype_refusal", "a dtype (or out= dtype) the CPU refuses is accepted, or refused with "
          "another exception class (RuntimeError for the CPU's NotImplementedError)",
          ("missing_error", "exc_class"), None, _msg(DTYPE_REFUSAL, "cpu_msg")),
    Known("subnormal_flush", "the XLA CPU plugin flushes subnormal floats to zero",
          ("value", "signed_zero", "tie"), None, _info("subnormal")),
    # ---- found by these fuzzers -------------------------------------------------------------
    Known("expanded_writes", "index_put_ into an expanded view: tpu writes other values where "
          "the CPU writes through every element in order (the last write to a location wins)",
          ("tpu_error", "value"), ("inplace_expanded",),
          lambda r: bool(re.search(r"index_put_",
                                   r.get("case", "") + r.get("code", "")))),
]


def classify(rec):
    """The id of the first known entry matching rec, or None."""
    for k in KNOWN:
        if k.matches(rec):
            return k.id
    return None

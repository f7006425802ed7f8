"""Shape and data-movement ops; the batch axis (0) is never touched.

Transpose takes Keras ``Permute`` dims: a permutation of ``1..rank-1``. Axes given to
Concat and the reductions (ReduceMean/Max/Sum/Min) are positive and non-batch (``1..rank-1``).
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.ops.base import ANY_DTYPE, FLOATS_AND_INTS, Attr, OpKind, need, need_rank
from dlfuzz.ir.types import TensorType


def _flatten(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(ins[0].rank >= 2, f"Flatten needs rank >= 2, got {ins[0]}")
    return (ins[0].shape[0], ins[0].size // ins[0].shape[0])


def _reshape(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    target = a["target_shape"]
    need(len(target) >= 1 and all(d >= 1 for d in target),
         f"target_shape {target} must be positive dims")
    n = 1
    for d in target:
        n *= d
    need(n * ins[0].shape[0] == ins[0].size, f"cannot reshape {ins[0]} to (N, *{target})")
    return (ins[0].shape[0], *target)


def _transpose(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    dims = a["dims"]
    need(sorted(dims) == list(range(1, ins[0].rank)),
         f"dims {dims} must be a permutation of 1..{ins[0].rank - 1}")
    return (ins[0].shape[0], *[ins[0].shape[d] for d in dims])


def _concat(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    axis, first = a["axis"], ins[0]
    axis = axis if axis >= 0 else first.rank + axis
    need(1 <= axis < first.rank, f"axis {a['axis']} is not a non-batch axis of {first}")
    for t in ins[1:]:
        need(t.rank == first.rank and all(t.shape[i] == first.shape[i]
                                          for i in range(first.rank) if i != axis),
             f"cannot concatenate {[x.shape for x in ins]} on axis {axis}")
    return tuple(sum(t.shape[axis] for t in ins) if i == axis else d
                 for i, d in enumerate(first.shape))


def padding(n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need_rank(ins[0], n + 2)
        p = a["padding"]
        need(len(p) == n and all(x >= 0 for pair in p for x in pair),
             f"padding {p} must be {n} (before, after) pairs >= 0")
        return (ins[0].shape[0], *[ins[0].shape[1 + i] + sum(p[i]) for i in range(n)],
                ins[0].shape[-1])
    return OpKind(f"ZeroPadding{n}D", "shape", (1, 1),
                  (Attr("padding", "pairs", ((1, 1),) * n),), infer, spatial=n,
                  dtypes=ANY_DTYPE)


def cropping(n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need_rank(ins[0], n + 2)
        c = a["cropping"]
        need(len(c) == n and all(x >= 0 for pair in c for x in pair),
             f"cropping {c} must be {n} (before, after) pairs >= 0")
        return (ins[0].shape[0], *[ins[0].shape[1 + i] - sum(c[i]) for i in range(n)],
                ins[0].shape[-1])
    return OpKind(f"Cropping{n}D", "shape", (1, 1),
                  (Attr("cropping", "pairs", ((1, 1),) * n),), infer, spatial=n,
                  dtypes=ANY_DTYPE)


def upsampling(n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need_rank(ins[0], n + 2)
        s = a["size"]
        need(len(s) == n and all(x >= 1 for x in s), f"size {s} must be {n} integers >= 1")
        return (ins[0].shape[0], *[ins[0].shape[1 + i] * s[i] for i in range(n)],
                ins[0].shape[-1])
    return OpKind(f"UpSampling{n}D", "shape", (1, 1), (Attr("size", "ints", (2,) * n),),
                  infer, spatial=n, doc="nearest neighbour: each element repeated size times",
                  dtypes=ANY_DTYPE)


def _repeat(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need_rank(ins[0], 2)
    need(a["n"] >= 1, "n must be >= 1")
    return (ins[0].shape[0], a["n"], ins[0].shape[1])


def _reduce(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    axes, x = a["axes"], ins[0]
    need(len(axes) >= 1 and len(set(axes)) == len(axes)
         and all(1 <= ax < x.rank for ax in axes),
         f"axes {axes} must be distinct non-batch axes of {x}")
    if a["keepdims"]:
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _identity(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    return ins[0].shape


def _dropout(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(0.0 <= a["rate"] < 1.0, f"rate {a['rate']} must be in [0, 1)")
    return ins[0].shape


OPS = [
    OpKind("Flatten", "shape", (1, 1), (), _flatten, dtypes=ANY_DTYPE),
    OpKind("Reshape", "shape", (1, 1), (Attr("target_shape", "ints", (-1,)),), _reshape,
           dtypes=ANY_DTYPE),
    OpKind("Transpose", "shape", (1, 1), (Attr("dims", "ints", (1,)),), _transpose,
           dtypes=ANY_DTYPE),
    OpKind("Concat", "merge", (1, -1), (Attr("axis", "int", -1),), _concat,
           dtypes=ANY_DTYPE),
    *[padding(n) for n in (1, 2, 3)],
    *[cropping(n) for n in (1, 2, 3)],
    *[upsampling(n) for n in (1, 2, 3)],
    OpKind("RepeatVector", "shape", (1, 1), (Attr("n", "int", 2),), _repeat,
           dtypes=ANY_DTYPE),
    OpKind("ReduceMean", "reduce", (1, 1),
           (Attr("axes", "ints", (1,)), Attr("keepdims", "bool", False)), _reduce),
    OpKind("ReduceMax", "reduce", (1, 1),
           (Attr("axes", "ints", (1,)), Attr("keepdims", "bool", False)), _reduce,
           dtypes=FLOATS_AND_INTS),
    OpKind("ReduceSum", "reduce", (1, 1),
           (Attr("axes", "ints", (1,)), Attr("keepdims", "bool", False)), _reduce,
           dtypes=FLOATS_AND_INTS),
    OpKind("ReduceMin", "reduce", (1, 1),
           (Attr("axes", "ints", (1,)), Attr("keepdims", "bool", False)), _reduce,
           dtypes=FLOATS_AND_INTS),
    OpKind("Identity", "misc", (1, 1), (), _identity, dtypes=ANY_DTYPE),
    OpKind("Dropout", "misc", (1, 1), (Attr("rate", "float", 0.5),), _dropout,
           doc="inference: the identity"),
]

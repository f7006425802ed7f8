"""Comparisons, logical ops and selection: the boolean paths of a model.

A graph computes in one dtype (``Graph.dtype``), and these kinds keep it at their edges:
a comparison's truth value comes out as 1 or 0 in the graph's dtype, a logical op reads
its operands as truth values (``x != 0``, NaN true as in C) and returns 1 or 0, and
``Where`` selects between two values by the truth of a third. Inside, every lowering
computes a real boolean tensor (``torch.gt`` then a cast, ONNX ``Greater`` then
``Cast``, ``jnp.where`` on a bool), so the comparison kernels, the bool-to-number casts
and the select kernels of each library run, fused or not, in every graph dtype:
comparisons of NaN (false, but true for ``not_equal``), of int64 beyond int32, of
float16 and bfloat16.

A comparison is a step function: where its operands are within rounding of each other,
two correct libraries may decide differently. The judge knows (``localize.within_threshold``);
these kinds add no rounding of their own (``rounding.EXACT``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dlfuzz.ir.ops.base import ANY_DTYPE, Attr, OpKind, need
from dlfuzz.ir.types import TensorType

COMPARISONS = ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
BOOL_COMPARISONS = ("equal", "not_equal")
LOGICAL = ("and", "or", "xor")


def _same_shapes(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(all(t.shape == ins[0].shape for t in ins),
         f"inputs must have one shape, got {[t.shape for t in ins]}")
    return ins[0].shape


def _same(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    return ins[0].shape


def _compare(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    """Bools are compared for equality only: TensorFlow and ONNX have no ordering of
    them (no bool Greater kernel)."""
    need(ins[0].dtype != "bool" or a["mode"] in BOOL_COMPARISONS,
         f"bools compare with {' or '.join(BOOL_COMPARISONS)}, not {a['mode']}")
    return _same_shapes(ins, a)


def decide(op: str, attrs: dict[str, Any], operands: list[np.ndarray]) -> np.ndarray:
    """What a kind of this module gives on ``operands``, in exact arithmetic (numpy): 1
    or 0 as float64, or for Where the operand it selects."""
    if op == "Where":
        return np.where(operands[0] != 0, operands[1], operands[2])
    if op == "LogicalNot":
        return (operands[0] == 0).astype(np.float64)
    if op == "Compare":
        return getattr(np, attrs["mode"])(operands[0], operands[1]).astype(np.float64)
    truth = [o != 0 for o in operands]
    return getattr(np, f"logical_{attrs['mode']}")(*truth).astype(np.float64)


OPS = [
    OpKind("Compare", "merge", (2, 2), (Attr("mode", "str", "greater", COMPARISONS),),
           _compare, doc="1 where a (mode) b holds, else 0, in the graph dtype",
           dtypes=ANY_DTYPE),
    OpKind("Logical", "merge", (2, 2), (Attr("mode", "str", "and", LOGICAL),), _same_shapes,
           doc="1 where (a != 0) (mode) (b != 0) holds, else 0", dtypes=ANY_DTYPE),
    OpKind("LogicalNot", "activation", (1, 1), (), _same, doc="1 where x == 0, else 0",
           dtypes=ANY_DTYPE),
    OpKind("Where", "merge", (3, 3), (), _same_shapes,
           doc="a where c != 0, else b; operands (c, a, b)", dtypes=ANY_DTYPE),
]

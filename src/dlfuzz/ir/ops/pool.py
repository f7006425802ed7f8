"""Pooling: windowed max/average (1D-3D) and global max/average (1D-3D).

'same' padding is TensorFlow's: max ignores the padded positions, average divides by
the number of real elements in each window (Keras semantics).
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.ops.base import Attr, OpKind, need, need_rank, window_out
from dlfuzz.ir.types import TensorType


def pool(kind: str, n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        x = ins[0]
        need_rank(x, n + 2)
        strides = a["strides"] or a["pool_size"]
        need(len(a["pool_size"]) == n and len(strides) == n,
             f"pool_size {a['pool_size']} and strides {strides} must have {n} entries")
        return (x.shape[0], *[window_out(x.shape[1 + i], a["pool_size"][i], strides[i], 1,
                                         a["padding"]) for i in range(n)], x.shape[-1])

    attrs = (Attr("pool_size", "ints", (2,) * n), Attr("strides", "ints", ()),
             Attr("padding", "str", "valid", ("valid", "same")))
    return OpKind(f"{kind}Pool{n}D", "pool", (1, 1), attrs, infer, spatial=n,
                  doc="strides () means strides = pool_size")


def global_pool(kind: str, n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need_rank(ins[0], n + 2)
        return (ins[0].shape[0], ins[0].shape[-1])

    return OpKind(f"Global{kind}Pool{n}D", "global_pool", (1, 1), (), infer, spatial=n)


OPS = ([pool(k, n) for k in ("Max", "Avg") for n in (1, 2, 3)]
       + [global_pool(k, n) for k in ("Max", "Avg") for n in (1, 2, 3)])

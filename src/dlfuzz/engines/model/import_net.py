"""What the Keras and ONNX importers share: the net they build and how they refuse a layer.

An importer adds IR ops one by one to an ``ImportNet`` (a GraphBuilder that types every
value as it goes, so a handler can read the shape it is about to transform, and that
collects the trained weights under the IR's weight names). A handler that meets
something the IR cannot express *exactly* raises ``Unsupported``; the importer turns it
into a UsageError naming the layer, its class and the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import GraphBuilder, TensorType
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import get_op

DEFAULT_BATCH = 2


class Unsupported(Exception):
    """A layer (node) the IR cannot express; the caller adds the layer and file names."""


class ImportNet:
    """A GraphBuilder that also types every value as it goes and collects the weights."""

    def __init__(self, inputs: Sequence[TensorType]) -> None:
        self.dtype = inputs[0].dtype
        self.b = GraphBuilder(*[t.shape for t in inputs], dtype=self.dtype)
        self.types: dict[str, TensorType] = {f"x{i}": t for i, t in enumerate(inputs)}
        self.weights: dict[str, np.ndarray] = {}

    def add(self, op: str, *ins: str, weights: dict[str, Any] | None = None, **attrs: Any
            ) -> str:
        nid = self.b.add(op, *ins, **attrs)
        node = self.b.nodes[-1]
        self.types[nid] = get_op(op).infer_node([self.types[v] for v in ins], node.a)
        for name, value in (weights or {}).items():
            self.weights[f"{nid}.{name}"] = np.asarray(value).astype(DTYPES[self.dtype])
        return nid

    def shape(self, value: str) -> tuple[int, ...]:
        return self.types[value].shape

    def model(self, outputs: Sequence[str]) -> Model:
        return Model(self.b.build(*outputs), self.weights).check()


def require(cond: bool, why: str) -> None:
    if not cond:
        raise Unsupported(why)


def ir_axis(axis: int, rank: int) -> int:
    """A non-batch axis as the IR wants it (positive, or -1 for the last)."""
    axis = axis + rank if axis < 0 else axis
    require(1 <= axis < rank, f"axis {axis} is the batch axis or out of range for rank {rank}")
    return -1 if axis == rank - 1 else axis

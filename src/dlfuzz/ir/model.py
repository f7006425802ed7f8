"""A model: a checked graph plus its weights (numpy arrays keyed ``"<node>.<name>"``).

Weights live beside the graph, not in it, so graphs stay small hashable values while
inner-layer mutations (LEMON's GF, WS, NAI, NEB, NS) rewrite arrays. Every weight of
every node is present with the shape its op declares; ``check()`` verifies it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import Graph, InvalidGraph, Node
from dlfuzz.ir.ops import get_op


def weight_shapes(graph: Graph, node: Node) -> dict[str, tuple[int, ...]]:
    types = graph.types()
    return get_op(node.op).weight_shapes([types[v] for v in node.inputs], node.a)


@dataclass(frozen=True, eq=False)
class Model:
    graph: Graph
    weights: Mapping[str, np.ndarray]

    def check(self) -> Model:
        g = self.graph.check()
        want: dict[str, tuple[int, ...]] = {}
        for n in g.nodes:
            for name, shape in weight_shapes(g, n).items():
                want[f"{n.id}.{name}"] = shape
        have = {k: tuple(v.shape) for k, v in self.weights.items()}
        if set(have) != set(want):
            raise InvalidGraph(f"weights {sorted(set(have) ^ set(want))} missing or extra")
        for k, shape in want.items():
            if have[k] != shape:
                raise InvalidGraph(f"weight {k} has shape {have[k]}, its op needs {shape}")
        return self

    def node_weights(self, node_id: str) -> dict[str, np.ndarray]:
        prefix = node_id + "."
        return {k[len(prefix):]: v for k, v in self.weights.items() if k.startswith(prefix)}

    def digest(self) -> str:
        h = hashlib.blake2b(self.graph.digest().encode(), digest_size=8)
        for k in sorted(self.weights):
            h.update(k.encode())
            h.update(np.ascontiguousarray(self.weights[k]).tobytes())
        return h.hexdigest()

    def astype(self, dtype: str) -> Model:
        """The same model computing in ``dtype`` (weights converted)."""
        g = self.graph.with_dtype(dtype)
        return Model(g, {k: v.astype(DTYPES[dtype]) for k, v in self.weights.items()})

    def with_graph(self, graph: Graph, new: Mapping[str, np.ndarray] | None = None) -> Model:
        """``graph`` with the weights of its surviving nodes plus ``new``; checked."""
        ids = {n.id for n in graph.nodes}
        kept = {k: v for k, v in self.weights.items() if k.split(".", 1)[0] in ids}
        kept.update(new or {})
        return Model(graph, kept).check()

"""Rounding nudges inside a model: every rounded value moved by up to one epsilon on each
edge that reads it.

The reference judge estimates how far a correct implementation may land from the float64
result (the sensitivity) by re-running the model with its inputs nudged by one rounding
of their dtype. Inside a model that misses what compilers are allowed to do: XLA fuses a
producer into each consumer and may keep ``x * x`` unrounded in one of them (a fused
multiply-add) and rounded in the other. Where the model then compares two copies of one
value (a softmax over ``concat(relu(x * x), x * x)``, whose two halves are equal in exact
arithmetic), one ulp of 4.5e7 moves a probability from 0.5 to 0.44, and the input nudges,
which move both copies alike, say the output cannot move at all: a false wrong result.

So a nudged copy of a graph case also multiplies each value a rounding op computed by
``1 + eps * u`` (``u`` uniform in [-1, 1], drawn per edge: per reader and operand
position), ``eps`` the model dtype's machine epsilon. Each use of a
value may then have been rounded differently, as a fused program may round it, and the
reference's sensitivity covers exactly that freedom. Values of exact ops (copies, moves,
comparisons, ``EXACT``) are left alone: they add no rounding of their own, and nudging them
would only widen what the judge accepts. Graph inputs are nudged by the input nudges, and
an output's own rounding is the dtype tolerance the judge applies to it.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import Graph, Node, freeze_attrs

# Kinds whose every output element is one of their input elements (or zero): no rounding.
EXACT = frozenset({
    "Identity", "Dropout", "Reshape", "Flatten", "Transpose", "Concat", "RepeatVector",
    "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D",
    "Cropping1D", "Cropping2D", "Cropping3D",
    "UpSampling1D", "UpSampling2D", "UpSampling3D",
    "MaxPool1D", "MaxPool2D", "MaxPool3D",
    "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
    "ReduceMax", "ReduceMin", "Maximum", "Minimum",
    "ReLU", "ThresholdedReLU", "Abs", "Clip",
    "Compare", "Logical", "LogicalNot", "Where",  # 0, 1, or one of their inputs
})


def nudge_edges(graph: Graph, weights: dict[str, np.ndarray], eps: float,
                rng: np.random.Generator) -> tuple[Graph, dict[str, np.ndarray]]:
    """``graph`` with a ``MulConst`` by ``1 + eps * u`` on every edge out of a rounding
    node, and the weights with those factors added (in the graph's dtype). Unchanged when
    ``eps`` is 0 (an integer graph) or no node rounds."""
    rounding = {n.id for n in graph.nodes if n.op not in EXACT}
    if eps <= 0 or not rounding:
        return graph, weights
    dtype = DTYPES[graph.dtype]
    out_weights = dict(weights)
    nodes: list[Node] = []

    def nudged(value: str, label: str) -> str:
        if value not in rounding:
            return value
        name = f"{value}_r{label}"
        nodes.append(Node(name, "MulConst", (value,), freeze_attrs({})))
        out_weights[f"{name}.value"] = np.asarray(1.0 + eps * rng.uniform(-1.0, 1.0),
                                                  dtype=dtype)
        return name

    for node in graph.nodes:
        operands = tuple(nudged(v, f"{node.id}_{i}") for i, v in enumerate(node.inputs))
        nodes.append(Node(node.id, node.op, operands, node.attrs))
    return Graph(graph.inputs, tuple(nodes), graph.outputs), out_weights

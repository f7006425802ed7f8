"""Seeded weight initializers: Glorot-uniform kernels, non-zero biases and statistics.

Seeds are random models, not trained ones, so biases and BatchNorm statistics are drawn
too (a zero bias would hide a bias bug). Orthogonal-free, cheap, deterministic per rng.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import BOOL_GRAPH_DTYPES, INT_GRAPH_DTYPES, Graph, Node
from dlfuzz.ir.model import Model, weight_shapes


def _glorot(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if len(shape) >= 2:
        receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    else:
        fan_in = fan_out = shape[0]
    limit = np.sqrt(6.0 / max(fan_in + fan_out, 1))
    return rng.uniform(-limit, limit, size=shape)


def init_weight(op: str, name: str, shape: tuple[int, ...], rng: np.random.Generator
                ) -> np.ndarray:
    if name in ("bias",):
        return rng.uniform(-0.1, 0.1, size=shape)
    if name == "gamma":
        return rng.uniform(0.5, 1.5, size=shape)
    if name == "beta":
        return rng.uniform(-0.5, 0.5, size=shape)
    if name == "moving_mean":
        return rng.normal(0.0, 0.5, size=shape)
    if name == "moving_variance":
        return rng.uniform(0.5, 1.5, size=shape)
    if name == "value":  # the zero-dimensional constant of AddConst/MulConst
        return np.asarray(rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0]))
    if name == "alpha":  # PReLU slopes
        return rng.uniform(0.0, 0.3, size=shape)
    return _glorot(shape, rng)


# An integer graph's weights (AddConst/MulConst's ``value``, the only weights of the
# kinds that allow integers): small and non-zero, so a MulConst neither erases its input
# nor, over a graph's few multiplications, runs it out of its dtype's range.
INT_WEIGHT_VALUES = (-3, -2, -1, 1, 2, 3)


def init_int_weight(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return rng.choice(INT_WEIGHT_VALUES, size=shape)


def init_node(graph: Graph, node: Node, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh weights for one node of ``graph``, in the graph's dtype."""
    dt = DTYPES[graph.dtype]
    integer = graph.dtype in INT_GRAPH_DTYPES
    return {f"{node.id}.{name}": (init_int_weight(shape, rng) if integer
                                  else init_weight(node.op, name, shape, rng)).astype(dt)
            for name, shape in weight_shapes(graph, node).items()}


def init_model(graph: Graph, rng: np.random.Generator) -> Model:
    weights: dict[str, np.ndarray] = {}
    for n in graph.check().nodes:
        weights.update(init_node(graph, n, rng))
    return Model(graph, weights).check()


def random_inputs(graph: Graph, rng: np.random.Generator, scale: float = 1.0
                  ) -> list[np.ndarray]:
    """Standard normal inputs (times ``scale``); an integer graph's are whole numbers in
    -10..10 (times ``scale``), exact in float64 through the lowering tests' references;
    a bool graph's are true or false with probability 1/2."""
    dt = DTYPES[graph.dtype]
    if graph.dtype in BOOL_GRAPH_DTYPES:
        return [rng.random(t.shape) < 0.5 for t in graph.inputs]
    if graph.dtype in INT_GRAPH_DTYPES:
        return [(rng.integers(-10, 11, size=t.shape) * int(scale)).astype(dt)
                for t in graph.inputs]
    return [(rng.standard_normal(t.shape) * scale).astype(dt) for t in graph.inputs]

"""Seeded weight initializers: Glorot-uniform kernels, non-zero biases and statistics.

Seeds are random models, not trained ones, so biases and BatchNorm statistics are drawn
too (a zero bias would hide a bias bug). Orthogonal-free, cheap, deterministic per rng.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import Graph, Node
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


def init_node(graph: Graph, node: Node, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh weights for one node of ``graph``, in the graph's dtype."""
    dt = DTYPES[graph.dtype]
    return {f"{node.id}.{name}": init_weight(node.op, name, shape, rng).astype(dt)
            for name, shape in weight_shapes(graph, node).items()}


def init_model(graph: Graph, rng: np.random.Generator) -> Model:
    weights: dict[str, np.ndarray] = {}
    for n in graph.check().nodes:
        weights.update(init_node(graph, n, rng))
    return Model(graph, weights).check()


def random_inputs(graph: Graph, rng: np.random.Generator, scale: float = 1.0
                  ) -> list[np.ndarray]:
    dt = DTYPES[graph.dtype]
    return [(rng.standard_normal(t.shape) * scale).astype(dt) for t in graph.inputs]

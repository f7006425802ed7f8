"""Graphs: values, nodes, inference. Every graph that exists has been type-checked.

A node has exactly one output value, named by the node's id, so the IR is SSA by
construction; graph inputs are ``x0``, ``x1``... Attributes are stored as sorted tuples so
nodes and graphs are hashable and compare by value. ``Graph.check()`` runs every op's
shape rule in order and raises ``InvalidGraph`` naming the node and the rule it broke;
mutations build candidates and call it, so an invalid model never reaches a library.
``TensorType`` and ``InvalidGraph`` live in ``ir.types`` (the op catalog needs them too)
and are re-exported here, where most callers look for them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dlfuzz.ir.ops import get_op
from dlfuzz.ir.ops.base import BOOLS, FLOATS, INTS
from dlfuzz.ir.types import InvalidGraph, TensorType

# The float dtypes (what the importers and seeds build in), and every dtype a graph may
# compute in: the integer and bool ones only with kinds that allow them (``OpKind.dtypes``).
FLOAT_GRAPH_DTYPES = FLOATS
INT_GRAPH_DTYPES = INTS
BOOL_GRAPH_DTYPES = BOOLS
GRAPH_DTYPES = FLOATS + INTS + BOOLS


def freeze_attrs(attrs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    def norm(v: Any) -> Any:
        if isinstance(v, list | tuple):
            return tuple(norm(x) for x in v)
        return v
    return tuple(sorted((k, norm(v)) for k, v in attrs.items()))


@dataclass(frozen=True)
class Node:
    id: str
    op: str
    inputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...] = ()

    @property
    def a(self) -> dict[str, Any]:
        return dict(self.attrs)

    def attr(self, name: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    def with_attrs(self, **changes: Any) -> Node:
        merged = self.a
        merged.update(changes)
        return replace(self, attrs=freeze_attrs(merged))


@dataclass(frozen=True)
class Graph:
    """Inputs (``x0``...), nodes in topological order, output value names, compute dtype."""

    inputs: tuple[TensorType, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    _types: dict[str, TensorType] = field(default_factory=dict, compare=False, hash=False,
                                          repr=False)

    # ---- structure ----------------------------------------------------------------------
    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(f"x{i}" for i in range(len(self.inputs)))

    @property
    def dtype(self) -> str:
        return self.inputs[0].dtype

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def index(self, node_id: str) -> int:
        for i, n in enumerate(self.nodes):
            if n.id == node_id:
                return i
        raise KeyError(node_id)

    def consumers(self, value: str) -> list[Node]:
        return [n for n in self.nodes if value in n.inputs]

    def uses(self, value: str) -> int:
        return sum(n.inputs.count(value) for n in self.nodes) + self.outputs.count(value)

    def fresh_id(self, prefix: str = "n") -> str:
        return self.fresh_ids(1, prefix)[0]

    def fresh_ids(self, count: int, prefix: str = "n") -> list[str]:
        """``count`` node ids used by no node or input of the graph."""
        taken = {n.id for n in self.nodes} | set(self.input_names)
        out: list[str] = []
        i = len(self.nodes)
        while len(out) < count:
            if f"{prefix}{i}" not in taken:
                out.append(f"{prefix}{i}")
            i += 1
        return out

    def ops(self) -> list[str]:
        return [n.op for n in self.nodes]

    # ---- types --------------------------------------------------------------------------
    def types(self) -> dict[str, TensorType]:
        """Type of every value; computed (and the graph checked) once, then cached."""
        if not self._types:
            self._types.update(infer_types(self))
        return self._types

    def type_of(self, value: str) -> TensorType:
        return self.types()[value]

    def check(self) -> Graph:
        self.types()
        return self

    # ---- identity -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"inputs": [{"shape": list(t.shape), "dtype": t.dtype} for t in self.inputs],
                "nodes": [{"id": n.id, "op": n.op, "inputs": list(n.inputs),
                           "attrs": {k: _jsonable(v) for k, v in n.attrs}}
                          for n in self.nodes],
                "outputs": list(self.outputs)}

    def digest(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def with_nodes(self, nodes: Iterable[Node], outputs: Iterable[str] | None = None,
                   inputs: Iterable[TensorType] | None = None) -> Graph:
        """A new, checked graph (raises InvalidGraph); dead nodes are dropped."""
        g = Graph(tuple(inputs) if inputs is not None else self.inputs, tuple(nodes),
                  tuple(outputs) if outputs is not None else self.outputs)
        return prune(g).check()

    def with_dtype(self, dtype: str) -> Graph:
        return self.with_nodes(self.nodes, inputs=[TensorType(t.shape, dtype)
                                                   for t in self.inputs])


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v


def infer_types(g: Graph) -> dict[str, TensorType]:
    if not g.inputs:
        raise InvalidGraph("a graph needs at least one input")
    dtype = g.inputs[0].dtype
    if dtype not in GRAPH_DTYPES:
        raise InvalidGraph(f"graph dtype {dtype} is not one of {GRAPH_DTYPES}")
    types: dict[str, TensorType] = {}
    for name, t in zip(g.input_names, g.inputs, strict=True):
        if t.dtype != dtype:
            raise InvalidGraph(f"input {name} is {t.dtype}, the graph computes in {dtype}")
        if t.rank < 1 or any(d <= 0 for d in t.shape):
            raise InvalidGraph(f"input {name} has shape {t.shape}: every dim must be >= 1")
        types[name] = t
    for n in g.nodes:
        if n.id in types:
            raise InvalidGraph(f"value {n.id} is defined twice")
        missing = [v for v in n.inputs if v not in types]
        if missing:
            raise InvalidGraph(f"node {n.id} ({n.op}) reads {missing} before they exist")
        op = get_op(n.op)
        if dtype not in op.dtypes:
            raise InvalidGraph(f"node {n.id} ({n.op}) does not compute in {dtype}: "
                               f"{n.op} allows {', '.join(op.dtypes)}")
        ins = [types[v] for v in n.inputs]
        try:
            out = op.infer_node(ins, n.a)
        except InvalidGraph as exc:
            raise InvalidGraph(f"node {n.id} ({n.op}): {exc}") from None
        if any(d <= 0 for d in out.shape):
            raise InvalidGraph(f"node {n.id} ({n.op}) would output shape {out.shape}")
        if out.size > MAX_VALUE_ELEMENTS:
            raise InvalidGraph(f"node {n.id} ({n.op}) output {out.shape} is too large")
        types[n.id] = out
    if not g.outputs:
        raise InvalidGraph("a graph needs at least one output")
    for v in g.outputs:
        if v not in types:
            raise InvalidGraph(f"output {v} is not a value of the graph")
    return types


# A single intermediate larger than this is refused: fuzzing wants many small models.
MAX_VALUE_ELEMENTS = 1 << 22


def prune(g: Graph) -> Graph:
    """Drop nodes no output depends on."""
    live: set[str] = set(g.outputs)
    for n in reversed(g.nodes):
        if n.id in live:
            live.update(n.inputs)
    nodes = tuple(n for n in g.nodes if n.id in live)
    if len(nodes) == len(g.nodes):
        return g
    return Graph(g.inputs, nodes, g.outputs)


def rename_value(nodes: Iterable[Node], old: str, new: str) -> list[Node]:
    """Every read of ``old`` now reads ``new``."""
    out = []
    for n in nodes:
        if old in n.inputs:
            n = replace(n, inputs=tuple(new if v == old else v for v in n.inputs))
        out.append(n)
    return out


class GraphBuilder:
    """Imperative construction for seeds and tests: ``b.add("Conv2D", x, filters=6, ...)``."""

    def __init__(self, *inputs: tuple[int, ...], dtype: str = "float32") -> None:
        self.inputs = [TensorType(tuple(s), dtype) for s in inputs]
        self.nodes: list[Node] = []

    @property
    def xs(self) -> list[str]:
        return [f"x{i}" for i in range(len(self.inputs))]

    def add(self, op: str, *inputs: str, **attrs: Any) -> str:
        kind = get_op(op)
        node = Node(f"n{len(self.nodes)}", op, tuple(inputs),
                    freeze_attrs(kind.complete(attrs)))
        self.nodes.append(node)
        return node.id

    def build(self, *outputs: str) -> Graph:
        outs = outputs or (self.nodes[-1].id,)
        return Graph(tuple(self.inputs), tuple(self.nodes), tuple(outs)).check()

"""What the per-node lowerings share: naming, the node context, the node loop, generic emitters.

The JAX and PyTorch lowerings work the same way: every graph value gets a Python name,
each node's emitter returns the lines of ``model`` for that node and may add lines to
``build`` (``setup``: weight conversion, re-layouts, helpers computed once). Only a
little differs between them: how a weight is converted (``jnp.asarray`` vs ``_w``) and
what its build-time variable is called, which are the two small overrides a library's
``NodeCtx`` subclass makes. The TensorFlow, ONNX and Keras lowerings emit per graph (node
ids as names, one shared builder), so they keep their own contexts.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dlfuzz.ir.graph import INT_GRAPH_DTYPES, Graph, Node
from dlfuzz.ir.model import weight_shapes
from dlfuzz.ir.types import TensorType


class Names:
    """Python identifiers for graph values and weights: the value's own name when usable."""

    def __init__(self, reserved: Iterable[str]) -> None:
        self.taken: set[str] = set(reserved)

    def get(self, wanted: str) -> str:
        name = re.sub(r"\W", "_", wanted)
        if not name or name[0].isdigit() or keyword.iskeyword(name):
            name = f"v_{name}"
        base, i = name, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name


@dataclass
class NodeCtx:
    """What an emitter sees: the node, its operand/result names and types, the build lines.

    A library subclass says how a weight is converted (``convert``) and names its
    variable (``weight_var``); ``weight`` is the same for every library.
    """

    node: Node
    ins: list[str]
    out: str
    in_types: list[TensorType]
    out_type: TensorType
    weight_shapes: dict[str, tuple[int, ...]]
    names: Callable[[str], str]
    setup: list[str] = field(default_factory=list)

    @property
    def a(self) -> dict[str, Any]:
        return self.node.a

    @property
    def x(self) -> str:
        return self.ins[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.in_types[0].shape

    @property
    def dtype(self) -> str:
        return self.out_type.dtype

    def local(self, what: str) -> str:
        """A fresh name for a helper value of this node (``n3_count``)."""
        return self.names(f"{self.out}_{what}")

    def weight(self, name: str, transform: str = "", label: str | None = None) -> str:
        """Weight ``name`` converted once in build(); ``transform`` re-lays it out (a suffix
        such as ``.reshape(...)``); ``label`` names the variable when one weight is
        converted twice."""
        var = self.weight_var(label or name)
        self.setup.append(f"{var} = {self.convert(f'{self.node.id}.{name}')}{transform}")
        return var

    def weight_var(self, label: str) -> str:
        """The build-time variable of one of this node's weights."""
        raise NotImplementedError

    def convert(self, key: str) -> str:
        """The expression turning ``W[key]`` into the library's tensor in the graph dtype."""
        raise NotImplementedError


NodeEmitter = Callable[[NodeCtx], list[str]]
C = TypeVar("C", bound=NodeCtx)


@dataclass
class LoweredNodes:
    """The node loop's result: names of the inputs, build lines, model lines, results."""

    params: list[str]
    setup: list[str]
    body: list[str]
    results: list[str]


def lower_nodes(graph: Graph, probe: bool, ctx_type: type[C],
                emitters: Mapping[str, Callable[[C], list[str]]],
                reserved: Iterable[str]) -> LoweredNodes:
    """Run every node's emitter in order; each line is tagged ``# <id> <Op>``.

    ``results`` are the graph outputs, or with ``probe`` every node's value in node order.
    """
    types = graph.types()
    names = Names(reserved)
    var = {v: names.get(v) for v in graph.input_names}
    setup: list[str] = []
    body: list[str] = []
    for node in graph.nodes:
        var[node.id] = names.get(node.id)
        ctx = ctx_type(node=node, ins=[var[v] for v in node.inputs], out=var[node.id],
                       in_types=[types[v] for v in node.inputs], out_type=types[node.id],
                       weight_shapes=weight_shapes(graph, node), names=names.get)
        lines = emitters[node.op](ctx)
        tag = f"  # {node.id} {node.op}"
        setup += [line + tag for line in ctx.setup]
        body += [line + tag for line in lines]
    results = [var[n.id] for n in graph.nodes] if probe else [var[v] for v in graph.outputs]
    return LoweredNodes([var[x] for x in graph.input_names], setup, body, results)


def num(value: float) -> str:
    """A float attribute as source: exact (repr round-trips), non-finite values spelled out."""
    value = float(value)
    return repr(value) if math.isfinite(value) else f"float({str(value)!r})"


def bound(dtype: str, value: float) -> str:
    """A clip bound (Clip, ReLU's cap) as a literal of the graph's kind: an integer graph's
    whole-number bound as an int, since a float bound promotes an int tensor to float
    (torch.clamp, jnp.minimum) or is refused (TensorFlow's int32 constant of 2.0)."""
    return str(int(value)) if dtype in INT_GRAPH_DTYPES else num(value)


# ---- emitters that read the same in every Python library --------------------------------
def call(template: str) -> NodeEmitter:
    """A one-line op: ``template`` reads the input as {x}, all inputs as {ins} and the
    attributes by name (floats as exact literals)."""
    def emit(ctx: NodeCtx) -> list[str]:
        attrs = {k: num(v) if isinstance(v, float) else v for k, v in ctx.a.items()}
        return [f"{ctx.out} = " + template.format(x=ctx.x, ins=ctx.ins, **attrs)]
    return emit


def infix(symbol: str) -> NodeEmitter:
    """``a (symbol) b (symbol) ...`` over every input."""
    def emit(ctx: NodeCtx) -> list[str]:
        return [f"{ctx.out} = " + f" {symbol} ".join(ctx.ins)]
    return emit


def fold(fn: str) -> NodeEmitter:
    """A binary function folded over any number of operands, left to right."""
    def emit(ctx: NodeCtx) -> list[str]:
        expr = ctx.ins[0]
        for other in ctx.ins[1:]:
            expr = f"{fn}({expr}, {other})"
        return [f"{ctx.out} = {expr}"]
    return emit


def with_const(symbol: str) -> NodeEmitter:
    """x (symbol) value: the 0-d weight converted to the graph's dtype, so nothing is
    promoted."""
    def emit(ctx: NodeCtx) -> list[str]:
        return [f"{ctx.out} = {ctx.x} {symbol} {ctx.weight('value')}"]
    return emit


def identity(ctx: NodeCtx) -> list[str]:
    return [f"{ctx.out} = {ctx.x}"]

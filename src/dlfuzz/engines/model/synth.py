"""Graphs synthesized operator by operator from the IR's op specs (``--method synth``).

LEMON and DLJSFuzzer mutate seed models, so what they run looks like their seeds:
DLJSFuzzer's graphs are mostly the Identity and Dropout of its seed chain, LEMON's the
few CNNs it starts from. A synthesized graph grows from fresh inputs instead, one node
at a time:

* the next op kind is drawn from the whole catalog (Identity and Dropout rarely);
* its operands are values already in the graph; a merge takes operands whose shapes its
  rule accepts (the same shape for Add, all but the axis for Concat, inner dimensions for
  MatMul), found among those values;
* its attributes are drawn for the operand's type (a kernel no larger than the input, a
  permutation of its axes, a factorization of its size for Reshape);
* the op's own shape rule (``OpKind.infer_node``) accepts or rejects the candidate, and a
  rejected one is drawn again. Every graph is valid by construction, and the catalog's
  rules are the only constraint store: no solver is needed for the agreements they check.

A graph computes in one dtype, drawn per graph (float32 most often, float64, float16,
bfloat16; int32 and int64 with only the kinds that allow integers; bool with the shape
and logic kinds), with values of at most ``MAX_ELEMENTS`` elements. Its outputs are the
values no node reads. Its input sets come in three profiles (normal, wide,
special; ``inputs.py``), and the engine rescales a set whose outputs overflow. Each graph
is a fresh draw, so the method never runs dry; ``propose`` keeps per-op counts for the
report (``op_counts``) and ``learn`` the dtypes the backends ran (``_dtype``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dlfuzz.engines.model.engine import ModelResult, Proposal
from dlfuzz.engines.model.inputs import draw_input_set
from dlfuzz.ir.graph import INT_GRAPH_DTYPES, Graph, Node, freeze_attrs
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import CATALOG, Attr, OpKind
from dlfuzz.ir.types import InvalidGraph, TensorType
from dlfuzz.ir.weights import init_model

# The compute dtype of a graph, with its probability: float32 is what models run in;
# float64 is the reference's dtype; float16 and bfloat16 are where kernels differ most;
# int32 and int64 graphs (only the kinds that allow them, ``OpKind.dtypes``: 33 of 76)
# are exact, so any difference at all is a bug; so are bool graphs (the 19 kinds that
# move, copy or decide: shape ops and logic).
DTYPES = (("float32", 0.40), ("float64", 0.12), ("float16", 0.12), ("bfloat16", 0.12),
          ("int32", 0.09), ("int64", 0.09), ("bool", 0.06))
DTYPE_FLOOR = 0.2  # the least a dtype's share is scaled by for backends refusing it
NODES = (6, 14)  # nodes per graph, drawn uniformly (NNSmith's default is 10)
MAX_ELEMENTS = 1 << 16  # per value: enough for real kernels, small enough to run fast
INPUT_ELEMENTS = 1 << 12  # a graph input's size at most
# Relative weights of op kinds (1 for every kind not listed). Identity and Dropout (an
# identity at inference) compute nothing: a graph should hold real operators.
OP_WEIGHTS = {"Identity": 0.05, "Dropout": 0.05}
# Candidates drawn for one op kind before another kind is drawn, and kinds drawn for one
# node before the graph ends with what it has. Half the catalog needs a rank of 3-5 (the
# 1D-3D families), so a rank-2 value fits about one kind in two.
ATTEMPTS = 6
STEPS = 24
# Window extents and strides by how often real models use them: 3x3 kernels and stride 1
# most (a uniform 1-5 draw made one Conv2D in 38 a 3x3 at stride 1, and a planted bug
# there went unfound for 150 s); every axis the same size most of the time.
WINDOWS = (1, 2, 3, 4, 5, 7)
WINDOW_P = (0.2, 0.1, 0.4, 0.05, 0.15, 0.1)
STRIDES = (1, 2, 3)
STRIDE_P = (0.7, 0.25, 0.05)
SQUARE = 0.8


class SynthMethod:
    """The model engine's method protocol: ``propose`` a model, ``learn`` from its run."""

    def __init__(self, seeds: Sequence[tuple[str, Model]], rng: np.random.Generator,
                 inputs_per_model: int) -> None:
        # Seeds are not used: every graph is synthesized from nothing. The argument is the
        # model methods' common constructor.
        self.rng = rng
        self.inputs_per_model = inputs_per_model
        self.kinds = sorted(CATALOG)
        weights = np.array([OP_WEIGHTS.get(k, 1.0) for k in self.kinds])
        # Per graph dtype, the kinds' probabilities: zero for a kind that does not allow
        # the dtype, so an integer graph draws only integer-capable kinds.
        self.op_p = {dtype: _p(weights * [dtype in CATALOG[k].dtypes for k in self.kinds])
                     for dtype, _ in DTYPES}
        self.graphs = 0
        self.rejected = 0  # candidate nodes the op rules refused
        self.op_counts: Counter[str] = Counter()
        self.dtype_runs: Counter[str] = Counter()  # models learned from, per dtype
        self.dtype_ran: Counter[str] = Counter()  # of those, run by every backend

    # ---- the method protocol ------------------------------------------------------------
    def propose(self) -> Proposal:
        graph = self.graph()
        model = init_model(graph, self.rng)
        sets = tuple(draw_input_set(graph, self.rng) for _ in range(self.inputs_per_model))
        self.graphs += 1
        self.op_counts.update(graph.ops())
        origin = (("method", "synth"), ("nodes", str(len(graph.nodes))),
                  ("dtype", graph.dtype))
        return Proposal(model, [(model, list(s.arrays)) for s in sets], "model:synth",
                        origin, sets=sets)

    def learn(self, result: ModelResult) -> None:
        """Count, per dtype, the models every backend ran on every input: a dtype the
        campaign's backends refuse (ONNX Runtime has almost no bfloat16 CPU kernels) is
        drawn less (``_dtype``), since a model one backend cannot run compares nothing."""
        dtype = result.proposal.model.graph.dtype
        self.dtype_runs[dtype] += 1
        if all(o.ok for per_input in result.outcomes for o in per_input.values()):
            self.dtype_ran[dtype] += 1

    # ---- synthesis ----------------------------------------------------------------------
    def graph(self) -> Graph:
        """One valid graph of ``NODES`` nodes (fewer if no op fits any more)."""
        while True:
            graph = self._try_graph()
            if graph is not None:
                return graph

    def _try_graph(self) -> Graph | None:
        """A graph grown from a drawn input; None when no op fitted that input."""
        dtype = self._dtype()
        inputs = [self._input_type(dtype)]
        if self.rng.random() < 0.3:  # a second input, sometimes of the same shape
            inputs.append(inputs[0] if self.rng.random() < 0.5 else self._input_type(dtype))
        types: dict[str, TensorType] = {f"x{i}": t for i, t in enumerate(inputs)}
        nodes: list[Node] = []
        target = int(self.rng.integers(NODES[0], NODES[1] + 1))
        while len(nodes) < target:
            drawn = self._next_node(types, f"n{len(nodes)}")
            if drawn is None:
                break
            node, types[node.id] = drawn
            nodes.append(node)
        if not nodes:
            return None
        read = {v for n in nodes for v in n.inputs}
        outputs = [n.id for n in nodes if n.id not in read]
        return Graph(tuple(inputs), tuple(nodes), tuple(outputs)).check()

    def _dtype(self) -> str:
        """A dtype by its share in ``DTYPES``, times the share of its models that every
        backend ran (Laplace-smoothed, at least ``DTYPE_FLOOR``: a refused dtype still
        comes up now and then, and a backend that gains it is noticed)."""
        p = np.array([share * max(DTYPE_FLOOR, (self.dtype_ran[name] + 1)
                                  / (self.dtype_runs[name] + 2)) for name, share in DTYPES])
        return DTYPES[int(self.rng.choice(len(DTYPES), p=p / p.sum()))][0]

    def _input_type(self, dtype: str) -> TensorType:
        """Batch, then 1-3 spatial dims or none, then channels; at most INPUT_ELEMENTS."""
        rank = int(self.rng.choice([2, 3, 4, 5], p=[0.15, 0.3, 0.4, 0.15]))
        while True:
            shape = (int(self.rng.integers(1, 4)),
                     *[int(self.rng.integers(1, 13)) for _ in range(rank - 2)],
                     int(self.rng.integers(1, 9)))
            if int(np.prod(shape)) <= INPUT_ELEMENTS:
                return TensorType(shape, dtype)

    def _next_node(self, types: dict[str, TensorType], node_id: str
                   ) -> tuple[Node, TensorType] | None:
        for _ in range(STEPS):
            op_p = self.op_p[next(iter(types.values())).dtype]
            op = CATALOG[self.kinds[int(self.rng.choice(len(self.kinds), p=op_p))]]
            for _ in range(ATTEMPTS):
                candidate = self._candidate(op, types, node_id)
                if candidate is not None:
                    return candidate
                self.rejected += 1
        return None

    def _candidate(self, op: OpKind, types: dict[str, TensorType], node_id: str
                   ) -> tuple[Node, TensorType] | None:
        """One draw of operands and attributes for ``op``, with the type its rule gives
        the output; None if the rule refuses it."""
        names = list(types)
        # Later values are likelier operands: the graph grows deep, not only wide.
        p = np.arange(1, len(names) + 1, dtype=float)
        first = names[int(self.rng.choice(len(names), p=p / p.sum()))]
        x = types[first]
        try:
            attrs = {a.name: self._attr(op, a, x) for a in op.attrs}
            operands = [first] + self._partners(op, first, attrs, types)
            out = op.infer_node([types[v] for v in operands], attrs)
        except InvalidGraph:
            return None
        if out.size > MAX_ELEMENTS or any(d <= 0 for d in out.shape):
            return None
        return Node(node_id, op.name, tuple(operands), freeze_attrs(op.complete(attrs))), out

    def _partners(self, op: OpKind, first: str, attrs: dict[str, Any],
                  types: dict[str, TensorType]) -> list[str]:
        """A merge's other operands (one, or two for Where): values whose shapes its
        rule accepts."""
        if op.family != "merge":
            return []
        x = types[first]
        fits: Callable[[TensorType], bool]
        if op.name == "MatMul":
            fits = lambda t: (t.rank == 3 and x.rank == 3  # noqa: E731
                              and t.shape[0] == x.shape[0] and t.shape[1] == x.shape[2])
        elif op.name == "Concat":
            axis = attrs["axis"]
            fits = lambda t: t.rank == x.rank and all(  # noqa: E731
                t.shape[i] == x.shape[i] for i in range(x.rank) if i != axis)
        else:
            fits = lambda t: t.shape == x.shape  # noqa: E731
        pool = [v for v, t in types.items() if fits(t)]
        others = [v for v in pool if v != first] or pool
        if not others:
            raise InvalidGraph(f"no operand fits {op.name} beside {x}")
        count = max(op.arity[0] - 1, 1)
        return [others[int(self.rng.integers(len(others)))] for _ in range(count)]

    def _attr(self, op: OpKind, attr: Attr, x: TensorType) -> Any:
        """A value of ``attr`` drawn for an operand of type ``x``."""
        rng, n = self.rng, op.spatial
        name, kind, choices = attr.name, attr.kind, attr.choices
        spatial = x.shape[1:-1] if x.rank >= 3 else ()
        if choices:
            return choices[int(rng.integers(len(choices)))]
        if name in ("filters", "units"):
            return int(rng.integers(1, 17))
        if name == "depth_multiplier":
            return int(rng.integers(1, 4))
        if name in ("kernel_size", "pool_size"):
            sizes = spatial if len(spatial) == n else (3,) * n
            return _square_or_not([_window(s, rng) for s in sizes], rng)
        if name == "strides":
            if kind == "ints" and op.family == "pool" and rng.random() < 0.5:
                return ()  # the pool's own default: its pool size
            return _square_or_not([int(rng.choice(STRIDES, p=_p(STRIDE_P)))
                                   for _ in range(n)], rng)
        if name == "dilation_rate":
            return tuple(int(rng.integers(1, 4)) if rng.random() < 0.3 else 1
                         for _ in range(n))
        if name == "size":  # UpSampling
            return tuple(int(rng.integers(1, 4)) for _ in range(n))
        if name == "padding" and kind == "pairs":
            return tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(n))
        if name == "cropping":
            sizes = spatial if len(spatial) == n else (2,) * n
            return tuple(_split(int(rng.integers(0, max(s - 1, 0) + 1)), rng) for s in sizes)
        if name == "target_shape":
            return _factorization(x.size // x.shape[0], int(rng.integers(1, 5)), rng)
        if name == "dims":  # Transpose: a permutation of the non-batch axes
            return tuple(int(d) for d in rng.permutation(np.arange(1, x.rank)))
        if name == "axis":  # Concat, Softmax: a non-batch axis
            return int(rng.integers(1, x.rank)) if x.rank > 1 else -1
        if name == "axes":  # ReduceMean/ReduceMax: a non-empty set of non-batch axes
            if x.rank < 2:
                return (1,)
            count = int(rng.integers(1, x.rank))
            return tuple(sorted(int(a) for a in rng.choice(np.arange(1, x.rank), count,
                                                           replace=False)))
        if name == "n":  # RepeatVector
            return int(rng.integers(1, 5))
        integer = x.dtype in INT_GRAPH_DTYPES  # bounds are whole numbers there
        if op.name == "Clip" and name in ("min_value", "max_value"):
            # Overlapping ranges: mostly ordered, and the rule refuses min > max. An
            # integer graph's values are wider (inputs up to 10 and beyond), so are its.
            if integer:
                low_i, high_i = (-8, 2) if name == "min_value" else (-2, 8)
                return float(rng.integers(low_i, high_i + 1))
            low, high = (-3.0, 0.5) if name == "min_value" else (-0.5, 3.0)
            return float(np.round(rng.uniform(low, high), 2))
        if name == "max_value":
            if rng.random() < 0.5:
                return None
            if integer:
                return float(rng.integers(1, 9))
            return float(np.round(rng.uniform(0.1, 6.0), 2))
        if name in ("alpha", "theta"):
            return float(np.round(rng.uniform(0.01, 1.0), 3))
        if name == "epsilon":
            return float(10.0 ** rng.uniform(-5, -1))
        if name == "rate":
            return float(np.round(rng.uniform(0.0, 0.5), 2))
        if kind == "bool":
            return bool(rng.random() < 0.5)
        return attr.default


def _p(weights: tuple[float, ...] | np.ndarray) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return p / p.sum()


def _window(size: int, rng: np.random.Generator) -> int:
    """A kernel or pool extent for a spatial axis of ``size``: the sizes real models use
    most (``WINDOWS``), no larger than the axis (a larger one fits only 'same' padding,
    and the rule would refuse it under 'valid')."""
    fitting = [(k, w) for k, w in zip(WINDOWS, WINDOW_P, strict=True) if k <= max(size, 1)]
    ks, ws = zip(*fitting, strict=True)
    return int(rng.choice(ks, p=_p(ws)))


def _square_or_not(values: list[int], rng: np.random.Generator) -> tuple[int, ...]:
    """Per-axis values, made equal on every axis (3x3, stride 2x2) ``SQUARE`` of the
    time when the first fits the others, as in most real layers."""
    if len(values) > 1 and rng.random() < SQUARE and all(values[0] <= v for v in values):
        return (values[0],) * len(values)
    return tuple(values)


def _split(total: int, rng: np.random.Generator) -> tuple[int, int]:
    """``total`` as a (before, after) pair."""
    before = int(rng.integers(0, total + 1))
    return before, total - before


def _factorization(size: int, parts: int, rng: np.random.Generator) -> tuple[int, ...]:
    """``size`` as a product of ``parts`` positive factors, in random order."""
    factors: list[int] = []
    d, rest = 2, size
    while d * d <= rest:
        while rest % d == 0:
            factors.append(d)
            rest //= d
        d += 1
    if rest > 1:
        factors.append(rest)
    dims = [1] * parts
    for f in factors:
        dims[int(rng.integers(parts))] *= f
    return tuple(dims)

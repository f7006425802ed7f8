"""LEMON's twelve mutation rules as functions ``rule(model, rng, *, settings) -> Model``.

Seven intact-layer rules change the graph (LR, LS, LC, LA, MLA, AFRm, AFRp); five
inner-layer rules change weights only (GF, WS, NEB, NAI, NS, in ``lemon_inner``). Each rule
returns a new checked model whose input and output types equal the parent's, or raises
``Rejected`` (``NotApplicable`` when the model has nothing the rule can act on). LEMON's
one constraint on intact-layer rules is that shapes must line up where layers are
joined; here every candidate is built and type-checked before it is returned.

A node "keeps its type" when it has one input and its output type equals that input's
type; LR, LS and LC act on such nodes only. Nodes producing a graph output are never
removed (LR, AFRm), as LEMON never removes a model's last layer. Inserted layers use
standard attribute values every library supports: kernel 3, strides 1, 'same' padding,
as many filters/units as the input has channels, default alphas and epsilons.
Higher-order mutation is the engine's business: it chains these rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from dlfuzz.engines.model.lemon_inner import (
    DEFAULT_SETTINGS,
    INNER_RULES,
    LemonRuleSettings,
    NotApplicable,
)
from dlfuzz.errors import Rejected, UsageError
from dlfuzz.ir.graph import Graph, Node, TensorType, freeze_attrs, rename_value
from dlfuzz.ir.model import Model, weight_shapes
from dlfuzz.ir.ops import get_op
from dlfuzz.ir.weights import init_node

T = TypeVar("T")
Step = tuple[str, dict[str, Any]]  # (op, attributes) of one node of an inserted chain

# ---- graph helpers ------------------------------------------------------------------------


def _make_node(node_id: str, op: str, inputs: Sequence[str], attrs: dict[str, Any]) -> Node:
    return Node(node_id, op, tuple(inputs), freeze_attrs(get_op(op).complete(attrs)))


def _keeps_type(graph: Graph) -> list[Node]:
    """Single-input nodes whose output type equals their input type."""
    types = graph.types()
    return [n for n in graph.nodes if len(n.inputs) == 1 and types[n.inputs[0]] == types[n.id]]


def _values(graph: Graph) -> list[str]:
    """Every value a layer could be inserted after: graph inputs, then node outputs."""
    return [*graph.input_names, *(n.id for n in graph.nodes)]


def _pick(items: Sequence[T], rng: np.random.Generator, why: str) -> T:
    if not items:
        raise NotApplicable(why)
    return items[int(rng.integers(len(items)))]


def _fair_order(options: Sequence[tuple[str, T]], rng: np.random.Generator) -> Iterator[T]:
    """Options in random order, drawing a kind uniformly first, then one of its options.

    Kinds with many applicable positions (activations fit everywhere) then do not crowd out
    the rare ones; callers take the first option that builds.
    """
    groups: dict[str, list[T]] = {}
    for kind, item in options:
        groups.setdefault(kind, []).append(item)
    while groups:
        kind = sorted(groups)[int(rng.integers(len(groups)))]
        items = groups[kind]
        yield items.pop(int(rng.integers(len(items))))
        if not items:
            del groups[kind]


def _remove(model: Model, node: Node) -> Model:
    """``node`` dropped, its readers rewired to its (single) input."""
    g = model.graph
    nodes = rename_value([n for n in g.nodes if n.id != node.id], node.id, node.inputs[0])
    return model.with_graph(g.with_nodes(nodes))


def _insert_chain(graph: Graph, value: str, steps: Sequence[Step]) -> tuple[Graph, list[Node]]:
    """``steps`` as a chain reading ``value``; every former reader of ``value`` reads its end.

    The chain goes right after the producer of ``value`` so the nodes stay in topological
    order. Raises InvalidGraph when a step does not fit.
    """
    ids = graph.fresh_ids(len(steps))
    chain: list[Node] = []
    prev = value
    for node_id, (op, attrs) in zip(ids, steps, strict=True):
        chain.append(_make_node(node_id, op, [prev], attrs))
        prev = node_id
    nodes = rename_value(graph.nodes, value, prev)
    outputs = [prev if v == value else v for v in graph.outputs]
    at = 0 if value in graph.input_names else graph.index(value) + 1
    nodes[at:at] = chain
    return graph.with_nodes(nodes, outputs), chain


def _insert_fresh(model: Model, value: str, steps: Sequence[Step], rng: np.random.Generator,
                  settings: LemonRuleSettings) -> Model:
    """``_insert_chain`` plus fresh weights for the new nodes (at most ``max_new_weights``)."""
    graph, chain = _insert_chain(model.graph, value, steps)
    added = sum(int(np.prod(s)) for n in chain for s in weight_shapes(graph, n).values())
    if added > settings.max_new_weights:
        raise Rejected(f"inserting {[op for op, _ in steps]} after {value} adds {added} "
                       f"weights (limit {settings.max_new_weights})")
    new: dict[str, np.ndarray] = {}
    for node in chain:
        new.update(init_node(graph, node, rng))
    return model.with_graph(graph, new)


def _first_that_builds(model: Model, options: Sequence[tuple[str, tuple[str, list[Step]]]],
                       rng: np.random.Generator, settings: LemonRuleSettings, rule: str
                       ) -> Model:
    if not options:
        raise NotApplicable(f"{rule}: no value of a type any of its layers keeps")
    reasons: list[str] = []
    for value, steps in _fair_order(options, rng):
        try:
            return _insert_fresh(model, value, steps, rng, settings)
        except Rejected as exc:
            reasons.append(str(exc))
    raise Rejected(f"{rule}: none of {len(options)} insertions fits; first: {reasons[0]}")


# ---- LA: the layers it may add, each configured to keep its input's type -----------------

LayerMaker = Callable[[TensorType, LemonRuleSettings], Step | None]


def _la_window(op: str, n: int, extra: Callable[[TensorType], dict[str, Any]]) -> LayerMaker:
    def make(t: TensorType, s: LemonRuleSettings) -> Step | None:
        if t.rank != n + 2:
            return None
        key = "pool_size" if "Pool" in op else "kernel_size"
        size = s.la_pool_size if key == "pool_size" else s.la_kernel
        return op, {key: (size,) * n, "strides": (1,) * n, "padding": "same", **extra(t)}
    return make


def _la_any(op: str, attrs: Callable[[LemonRuleSettings], dict[str, Any]]) -> LayerMaker:
    def make(t: TensorType, s: LemonRuleSettings) -> Step | None:
        return (op, attrs(s)) if t.rank >= 2 else None
    return make


def _filters(t: TensorType) -> dict[str, Any]:
    return {"filters": t.shape[-1]}


def _multiplier(t: TensorType) -> dict[str, Any]:
    return {"depth_multiplier": 1}


def _nothing(t: TensorType) -> dict[str, Any]:
    return {}


LA_LAYERS: dict[str, LayerMaker] = {
    "Dense": lambda t, s: ("Dense", {"units": t.shape[-1]}) if t.rank >= 2 else None,
    **{f"Conv{n}D": _la_window(f"Conv{n}D", n, _filters) for n in (1, 2, 3)},
    **{f"SeparableConv{n}D": _la_window(f"SeparableConv{n}D", n,
                                        lambda t: {**_filters(t), "depth_multiplier": 1})
       for n in (1, 2)},
    "DepthwiseConv2D": _la_window("DepthwiseConv2D", 2, _multiplier),
    **{f"Conv{n}DTranspose": _la_window(f"Conv{n}DTranspose", n, _filters) for n in (2, 3)},
    **{f"{k}Pool{n}D": _la_window(f"{k}Pool{n}D", n, _nothing)
       for k in ("Max", "Avg") for n in (1, 2, 3)},
    "BatchNorm": _la_any("BatchNorm", lambda s: {}),
    "LeakyReLU": _la_any("LeakyReLU", lambda s: {}),
    "PReLU": _la_any("PReLU", lambda s: {}),
    "ELU": _la_any("ELU", lambda s: {}),
    "ThresholdedReLU": _la_any("ThresholdedReLU", lambda s: {}),
    "Softmax": _la_any("Softmax", lambda s: {"axis": -1}),
    "ReLU": _la_any("ReLU", lambda s: {"max_value": s.la_relu_max_value}),
}

# ---- MLA: bundles whose last layer restores the first one's input type --------------------

BundleMaker = Callable[[TensorType, LemonRuleSettings], list[list[Step]]]


def _dense_back(t: TensorType, flatten: bool) -> list[Step]:
    """Back to ``t`` from any value: (Flatten), Dense(size of one sample), Reshape."""
    steps: list[Step] = [("Flatten", {})] if flatten else []
    steps.append(("Dense", {"units": t.size // t.shape[0]}))
    if t.rank > 2:
        steps.append(("Reshape", {"target_shape": t.shape[1:]}))
    return steps


def _spatial(t: TensorType) -> int:
    """1, 2 or 3 for a (N, *spatial, C) value with that many spatial axes, else 0."""
    return t.rank - 2 if 3 <= t.rank <= 5 else 0


def _mla_flatten(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    return [_dense_back(t, flatten=True)] if t.rank >= 2 else []


def _mla_repeat(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    if t.rank != 2:
        return []
    repeat: Step = ("RepeatVector", {"n": s.mla_repeat})
    return [[repeat, *_dense_back(t, flatten=True)],
            [repeat, ("GlobalAvgPool1D", {})], [repeat, ("GlobalMaxPool1D", {})]]


def _mla_cropping(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    n, b = _spatial(t), s.mla_border
    if not n or min(t.shape[1:-1]) <= 2 * b:
        return []
    crop: Step = (f"Cropping{n}D", {"cropping": ((b, b),) * n})
    return [[crop, (f"ZeroPadding{n}D", {"padding": ((b, b),) * n})],
            [crop, *_dense_back(t, flatten=True)]]


def _mla_padding(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    n, b = _spatial(t), s.mla_border
    if not n:
        return []
    pad: Step = (f"ZeroPadding{n}D", {"padding": ((b, b),) * n})
    window = {"strides": (1,) * n, "padding": "valid"}
    return [[pad, (f"Cropping{n}D", {"cropping": ((b, b),) * n})],
            [pad, (f"Conv{n}D", {"filters": t.shape[-1], "kernel_size": (2 * b + 1,) * n,
                                 **window})],
            *[[pad, (f"{k}Pool{n}D", {"pool_size": (2 * b + 1,) * n, **window})]
              for k in ("Max", "Avg")]]


def _mla_upsampling(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    n, f = _spatial(t), s.mla_upsample
    if not n:
        return []
    up: Step = (f"UpSampling{n}D", {"size": (f,) * n})
    return [[up, (f"{k}Pool{n}D", {"pool_size": (f,) * n, "padding": "valid"})]
            for k in ("Max", "Avg")]


def _mla_global_pool(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    n = _spatial(t)
    if not n:
        return []
    return [[(f"Global{k}Pool{n}D", {}), *_dense_back(t, flatten=False)]
            for k in ("Max", "Avg")]


def _mla_recurrent(t: TensorType, s: LemonRuleSettings) -> list[list[Step]]:
    if t.rank != 3:
        return []
    return [[(op, {"units": t.shape[-1], "return_sequences": True})]
            for op in ("SimpleRNN", "GRU", "LSTM")]


MLA_BUNDLES: dict[str, BundleMaker] = {
    "flatten": _mla_flatten,
    "repeat_vector": _mla_repeat,
    "cropping": _mla_cropping,
    "zero_padding": _mla_padding,
    "upsampling": _mla_upsampling,
    "global_pool": _mla_global_pool,
    "recurrent": _mla_recurrent,
}

# ---- the intact-layer rules ---------------------------------------------------------------


def lr(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Layer removal: drop a type-keeping node (not a graph output), readers take its input."""
    g = model.graph
    node = _pick([n for n in _keeps_type(g) if n.id not in g.outputs], rng,
                 "LR: no type-keeping node outside the outputs")
    return _remove(model, node)


def ls(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Layer switch: two type-keeping nodes on the same type exchange op, attributes, weights.

    The nodes keep their places (and ids); only what they compute moves, so the graph
    stays valid. Pairs that compute the same thing (two plain ReLUs) are not candidates.
    """
    g = model.graph
    types = g.types()
    nodes = _keeps_type(g)

    def same(a: Node, b: Node) -> bool:
        wa, wb = model.node_weights(a.id), model.node_weights(b.id)
        return (a.op, a.attrs) == (b.op, b.attrs) and all(
            np.array_equal(wa[k], wb[k]) for k in wa)

    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]
             if types[a.id] == types[b.id] and not same(a, b)]
    a, b = _pick(pairs, rng, "LS: no two different type-keeping nodes on one type")
    swapped = {a.id: b, b.id: a}
    new_nodes = [replace(n, op=swapped[n.id].op, attrs=swapped[n.id].attrs)
                 if n.id in swapped else n for n in g.nodes]
    weights = {k: v for k, v in model.weights.items() if k.split(".", 1)[0] not in swapped}
    for node_id, source in swapped.items():
        weights.update({f"{node_id}.{k}": v for k, v in model.node_weights(source.id).items()})
    return Model(g.with_nodes(new_nodes), weights).check()


def lc(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Layer copy: a type-keeping node duplicated (weights copied) right after itself."""
    node = _pick(_keeps_type(model.graph), rng, "LC: no type-keeping node")
    graph, (copy,) = _insert_chain(model.graph, node.id, [(node.op, node.a)])
    new = {f"{copy.id}.{k}": v.copy() for k, v in model.node_weights(node.id).items()}
    return model.with_graph(graph, new)


def la(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Layer addition: one layer of ``LA_LAYERS`` after a value whose type it keeps.

    The layer kind is drawn uniformly among those that fit somewhere, then the position.
    """
    g = model.graph
    options: list[tuple[str, tuple[str, list[Step]]]] = []
    for value in _values(g):
        t = g.type_of(value)
        for name, make in LA_LAYERS.items():
            step = make(t, settings)
            if step is not None:
                options.append((name, (value, [step])))
    return _first_that_builds(model, options, rng, settings, "LA")


def mla(model: Model, rng: np.random.Generator, *,
        settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Multi-layers addition: a bundle of ``MLA_BUNDLES`` that restores its input's type.

    The bundle kind is drawn uniformly among those that fit somewhere, then one of its
    variants (closing layer) and position; variants over the weight limit are skipped.
    """
    g = model.graph
    options: list[tuple[str, tuple[str, list[Step]]]] = []
    for value in _values(g):
        t = g.type_of(value)
        for name, make in MLA_BUNDLES.items():
            options.extend((name, (value, steps)) for steps in make(t, settings))
    return _first_that_builds(model, options, rng, settings, "MLA")


def _activations(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if get_op(n.op).family == "activation"]


def afrm(model: Model, rng: np.random.Generator, *,
         settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Activation function removal: drop an activation node that is not a graph output."""
    g = model.graph
    node = _pick([n for n in _activations(g) if n.id not in g.outputs], rng,
                 "AFRm: no activation node outside the outputs")
    return _remove(model, node)


def afrp(model: Model, rng: np.random.Generator, *,
         settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Activation function replacement: an activation node becomes another activation kind.

    The replacement is drawn from ``settings.afrp_activations`` among the kinds other than
    the node's own. Softmax is neither replaced nor a replacement: it normalizes over the
    channels (usually a classifier's output probabilities), while the others act element
    by element, so swapping it changes what the output means rather than how it is
    computed. The node keeps its id; its old weights (PReLU slopes) go, new ones are drawn.
    """
    g = model.graph
    node = _pick([n for n in _activations(g) if n.op != "Softmax"], rng,
                 "AFRp: no element-wise activation node")
    op, attrs = _pick([(op, attrs) for op, attrs in settings.afrp_activations if op != node.op],
                      rng, f"AFRp: no replacement for {node.op}")
    new = _make_node(node.id, op, node.inputs, dict(attrs))
    graph = g.with_nodes([new if n.id == node.id else n for n in g.nodes])
    weights = {k: v for k, v in model.weights.items() if k.split(".", 1)[0] != node.id}
    weights.update(init_node(graph, new, rng))
    return Model(graph, weights).check()


# ---- registries ---------------------------------------------------------------------------

Rule = Callable[..., Model]

INTACT_RULES: dict[str, Rule] = {
    "LR": lr, "LS": ls, "LC": lc, "LA": la, "MLA": mla, "AFRm": afrm, "AFRp": afrp,
}
LEMON_RULES: dict[str, Rule] = {**INTACT_RULES, **INNER_RULES}


def apply_rule(name: str, model: Model, rng: np.random.Generator, attempts: int = 10, *,
               settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """``LEMON_RULES[name]`` on ``model``, retrying its random choices up to ``attempts`` times.

    Stops at once on ``NotApplicable`` (nothing to act on); raises ``Rejected`` with the
    last reason when no attempt produced a valid mutant.
    """
    try:
        rule = LEMON_RULES[name]
    except KeyError:
        raise UsageError(f"unknown LEMON rule {name!r}; known: {', '.join(LEMON_RULES)}"
                         ) from None
    last: Rejected | None = None
    for _ in range(max(attempts, 1)):
        try:
            return rule(model, rng, settings=settings)
        except NotApplicable:
            raise
        except Rejected as exc:
            last = exc
    raise Rejected(f"{name} gave no valid mutant in {attempts} attempts: {last}")


__all__ = ["DEFAULT_SETTINGS", "INNER_RULES", "INTACT_RULES", "LA_LAYERS", "LEMON_RULES",
           "MLA_BUNDLES", "LemonRuleSettings", "NotApplicable", "apply_rule"]

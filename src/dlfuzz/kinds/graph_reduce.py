"""Reduction passes for model cases: fewer nodes, smaller shapes, simpler numbers.

Each pass proposes smaller GraphCases; the triage keeps the first that still shows the
bug's signature (same symptom, backend and localized layer kind). Structure first
(cut the graph after a node, isolate one node with its recorded inputs, bypass
shape-preserving nodes), then shapes (batch 1, shorter axes, channels included), then
widths (fewer filters, units, depth multiplier), then values (weights and inputs as zeros,
ones, small integers). When a shape or width shrinks, every weight whose declared shape
shrank with it keeps its leading slice, so the rest of the model computes what it did.
Invalid candidates never leave here: every graph is re-checked by the IR.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from dlfuzz.cases import GraphCase, Tensor
from dlfuzz.errors import Rejected
from dlfuzz.ir.graph import Graph, TensorType, rename_value
from dlfuzz.ir.model import Model, weight_shapes
from dlfuzz.kinds.finite_first import finite_variants
from dlfuzz.oracles.localize import isolated, prefix_case

Values = Callable[[GraphCase], dict[str, np.ndarray] | None]
# Attributes that set a layer's width; shrinking them shrinks the weights that follow.
WIDTH_ATTRS = ("filters", "units", "depth_multiplier")


def _weights_dict(case: GraphCase) -> dict[str, np.ndarray]:
    return {k: t.to_numpy() for k, t in case.weights}


def _with_model(case: GraphCase, graph: Graph, weights: dict[str, np.ndarray],
                inputs: list[np.ndarray] | None = None) -> GraphCase | None:
    """A checked candidate, or None if the IR refuses it."""
    try:
        model = Model(graph, {}).with_graph(graph, {k: v for k, v in weights.items()
                                                   if k.split(".", 1)[0] in
                                                   {n.id for n in graph.nodes}})
    except Rejected:
        return None
    tensors = case.tensors if inputs is None else tuple(Tensor.from_numpy(x) for x in inputs)
    if len(tensors) != len(graph.inputs) or any(
            t.shape != ty.shape for t, ty in zip(tensors, graph.inputs, strict=True)):
        return None
    return replace(case, graph=graph, tensors=tensors, probe=False,
                   weights=tuple((k, Tensor.from_numpy(model.weights[k]))
                                 for k in sorted(model.weights)))


def fit_weights(graph: Graph, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """The weights cut to the shapes ``graph``'s ops declare now: the leading slice of each
    axis that shrank. None when one would have to grow (nothing to take it from)."""
    fitted: dict[str, np.ndarray] = {}
    for n in graph.nodes:
        for name, shape in weight_shapes(graph, n).items():
            w = weights.get(f"{n.id}.{name}")
            if w is None or w.ndim != len(shape) or any(
                    want > have for want, have in zip(shape, w.shape, strict=True)):
                return None
            fitted[f"{n.id}.{name}"] = w[tuple(slice(0, d) for d in shape)]
    return fitted


def cut_after(case: GraphCase) -> Iterator[GraphCase]:
    """Make one node the only output (everything after it goes): shortest first."""
    for i, n in enumerate(case.graph.nodes):
        if (n.id,) != case.graph.outputs:
            candidate = prefix_case(case, i)
            if candidate is not None:
                yield candidate


def isolate(values: Values) -> Callable[[GraphCase], Iterator[GraphCase]]:
    """One node alone, fed the values its inputs had in the full model (from a probe run
    on a sound backend), so the layer sees exactly the data that exposed the bug."""
    def run(case: GraphCase) -> Iterator[GraphCase]:
        if len(case.graph.nodes) <= 1:
            return
        probe = values(case)
        if probe is None:
            return
        for _, candidate in isolated(case, probe):  # the output end first
            yield candidate
    return run


def suffix_from(graph: Graph, value: str) -> tuple[Graph, list[str]] | None:
    """The part of ``graph`` after ``value``: ``value`` becomes a graph input and every node
    only it needed goes. Returns the checked graph and, per new input, the old value name
    it stands for (original inputs still read keep their place, ``value`` comes last)."""
    live: set[str] = set(graph.outputs)
    kept = []
    for n in reversed(graph.nodes):
        if n.id in live and n.id != value:
            live.update(n.inputs)
            kept.append(n)
    kept.reverse()
    sources = [x for x in graph.input_names if x in live] + [value]
    if not kept or value not in live:
        return None
    nodes = kept
    for i, old in enumerate(sources):
        nodes = rename_value(nodes, old, f"@{i}")  # two steps: x1 -> x0 must not collide
    for i in range(len(sources)):
        nodes = rename_value(nodes, f"@{i}", f"x{i}")
    types = [graph.type_of(v) for v in sources]
    try:
        return Graph(tuple(types), tuple(nodes), graph.outputs).check(), sources
    except Rejected:
        return None


def drop_prefix(values: Values) -> Callable[[GraphCase], Iterator[GraphCase]]:
    """Everything before a node gone, the node's value fed as recorded in the full model
    (probe run on a sound backend): the shortest suffix first. Unlike ``isolate`` this keeps
    a pattern of several nodes that only fails together, as a fusion does."""
    def run(case: GraphCase) -> Iterator[GraphCase]:
        g = case.graph
        if len(g.nodes) <= 1:
            return
        probe = None
        for n in reversed(g.nodes[:-1]):
            cut = suffix_from(g, n.id)
            if cut is None or not 1 < len(cut[0].nodes) < len(g.nodes):
                continue  # one node alone is what ``isolate`` tries
            if probe is None:
                probe = values(case)
                if probe is None:
                    return
            smaller, sources = cut
            if not all(v in probe for v in sources):
                continue
            candidate = _with_model(case, smaller, _weights_dict(case),
                                    [probe[v] for v in sources])
            if candidate is not None:
                yield candidate
    return run


def bypass(case: GraphCase) -> Iterator[GraphCase]:
    """Remove a node whose output type equals its first input's (readers read the input)."""
    g = case.graph
    for n in g.nodes:
        if not n.inputs or g.type_of(n.inputs[0]) != g.type_of(n.id):
            continue
        nodes = rename_value([m for m in g.nodes if m.id != n.id], n.id, n.inputs[0])
        outputs = tuple(n.inputs[0] if v == n.id else v for v in g.outputs)
        if any(v in g.input_names for v in outputs):
            continue
        try:
            smaller = g.with_nodes(nodes, outputs=outputs)
        except Rejected:
            continue
        candidate = _with_model(case, smaller, _weights_dict(case))
        if candidate is not None:
            yield candidate


def _reshaped(case: GraphCase, arrays: list[np.ndarray]) -> GraphCase | None:
    g = case.graph
    types = [TensorType(tuple(a.shape), t.dtype) for a, t in zip(arrays, g.inputs, strict=True)]
    try:
        smaller = g.with_nodes(g.nodes, inputs=types)
    except Rejected:
        return None
    weights = fit_weights(smaller, _weights_dict(case))
    return None if weights is None else _with_model(case, smaller, weights, arrays)


def shrink_shapes(case: GraphCase) -> Iterator[GraphCase]:
    """Batch 1, then each non-batch axis of each input halved, then shortened by one."""
    arrays = [t.to_numpy() for t in case.tensors]
    if all(a.shape[0] > 1 for a in arrays):
        c = _reshaped(case, [a[:1] for a in arrays])
        if c is not None:
            yield c
    for i, a in enumerate(arrays):
        for axis in range(1, a.ndim):
            for size in (a.shape[axis] // 2, a.shape[axis] - 1):
                if size < 1 or size >= a.shape[axis]:
                    continue
                cut = list(arrays)
                cut[i] = np.take(a, range(size), axis=axis)
                c = _reshaped(case, cut)
                if c is not None:
                    yield c


def shrink_widths(case: GraphCase) -> Iterator[GraphCase]:
    """Each layer's filters, units or depth multiplier down to 1, else halved; the layers
    after it keep the leading slices of their weights."""
    g = case.graph
    weights = _weights_dict(case)
    for i, n in enumerate(g.nodes):
        for attr in WIDTH_ATTRS:
            width = n.attr(attr)
            if not isinstance(width, int) or isinstance(width, bool) or width <= 1:
                continue
            for size in dict.fromkeys((1, width // 2)):
                nodes = list(g.nodes)
                nodes[i] = n.with_attrs(**{attr: size})
                try:
                    smaller = g.with_nodes(nodes)
                except Rejected:
                    continue
                fitted = fit_weights(smaller, weights)
                candidate = None if fitted is None else _with_model(case, smaller, fitted)
                if candidate is not None:
                    yield candidate


def _simpler(a: np.ndarray) -> list[np.ndarray]:
    wide = a.astype(np.float64)
    with np.errstate(invalid="ignore"):
        options = [np.zeros_like(wide), np.ones_like(wide), np.clip(np.round(wide), -3, 3),
                   np.round(wide * 4) / 4]
    return [o.astype(a.dtype) for o in options if not np.array_equal(o, wide)]


def simplify_values(case: GraphCase) -> Iterator[GraphCase]:
    """Each weight, then each input, as zeros, ones, small integers, quarters."""
    weights = _weights_dict(case)
    for k in sorted(weights, key=lambda k: -weights[k].size):
        for option in _simpler(weights[k]):
            c = _with_model(case, case.graph, {**weights, k: option})
            if c is not None:
                yield c
    arrays = [t.to_numpy() for t in case.tensors]
    for i, a in enumerate(arrays):
        for option in _simpler(a):
            yield replace(case, tensors=tuple(Tensor.from_numpy(x) for x in
                                              arrays[:i] + [option] + arrays[i + 1:]))


def finite_first(case: GraphCase) -> Iterator[GraphCase]:
    """Inputs, then weights, with NaN/inf elements made finite (``kinds.finite_first``):
    a wrong result on ordinary numbers is the better report."""
    inputs = [t.to_numpy() for t in case.tensors]
    for variant in finite_variants(inputs):
        yield replace(case, tensors=tuple(Tensor.from_numpy(a) for a in variant))
    weights = _weights_dict(case)
    names = sorted(weights)
    for variant in finite_variants([weights[k] for k in names]):
        c = _with_model(case, case.graph, dict(zip(names, variant, strict=True)))
        if c is not None:
            yield c


def model_weight(case: GraphCase) -> tuple[Any, ...]:
    """Smaller is simpler: nodes, elements, non-finite values, non-integer values,
    non-zero values, magnitude."""
    arrays = [t.to_numpy() for _, t in case.weights] + [t.to_numpy() for t in case.tensors]
    elements = sum(a.size for a in arrays)
    fractional = nonzero = nonfinite = 0
    magnitude = 0.0
    for a in arrays:
        wide = a.astype(np.float64)
        finite = wide[np.isfinite(wide)]
        nonfinite += int(wide.size - finite.size)
        fractional += int(np.count_nonzero(finite != np.round(finite)))
        nonzero += int(np.count_nonzero(wide))
        magnitude += float(np.sum(np.minimum(np.abs(finite), 1e6)))
    return (len(case.graph.nodes), elements, nonfinite, fractional, nonzero,
            round(magnitude, 6))


def model_passes(values: Values) -> dict[str, Callable[[GraphCase], Iterator[GraphCase]]]:
    return {"finite_first": finite_first, "cut_after": cut_after, "isolate": isolate(values),
            "drop_prefix": drop_prefix(values), "bypass": bypass,
            "shrink_shapes": shrink_shapes, "shrink_widths": shrink_widths,
            "simplify_values": simplify_values}

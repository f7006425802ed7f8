"""DLJSFuzzer's model mutations (Table 2), its identity-chain seed and its guidance.

DLJSFuzzer (Sections 3.3 and 3.5) starts from a chain of Identity ops and grows models by
inserting constructs that JavaScript frameworks' inference accelerators rewrite (node
optimization, operator reordering, operator fusion), plus Random Operator Replace for
variety. Every construct here is inserted after a random value ``v`` of the right rank
and computes a value of ``v``'s exact type, which then replaces ``v`` for all its readers:
so the mutant is valid and keeps the model's input and output types. A rule that finds
no place raises ``Rejected``.

Guidance (Section 3.5): ``fitness`` scores a round, ``tournament`` picks the next seed,
``RuleContributions`` turns accumulated fitness gains into rule probabilities, and
``edit_distance`` is the diversity measure of the evaluation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dlfuzz.errors import InternalError, Rejected, UsageError
from dlfuzz.ir.graph import Graph, GraphBuilder, Node, TensorType, freeze_attrs, rename_value
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import get_op
from dlfuzz.ir.weights import init_model, init_node

from .dljs_ror import detours, fits, insertable_ops


@dataclass(frozen=True)
class DljsSettings:
    """DLJSFuzzer's constants. The paper gives none of these numbers: they are our defaults.

    kernel: kernel size of the convolutions ESC and ECB insert ('same' padding).
    esc_multipliers: depth multipliers ESC draws for its depthwise step.
    mor_pool_sizes: MaxPool window sizes MOR draws (stride 1, 'same': shape kept).
    mor_activation_first: MOR inserts (activation, MaxPool), the slower order the paper
        says it inserts so that the framework reorders it to (MaxPool, activation).
    initial_contribution: every rule's contribution c before any feedback (uniform start).
    uniform_share: share of probability spread evenly over all rules, so no rule's
        probability falls below uniform_share / n however badly it scored.
    tournament_size: entries drawn per tournament.
    fitness_cap: fitness given to an infinite inconsistency (keeps contributions finite).
    """

    kernel: int = 3
    esc_multipliers: tuple[int, ...] = (1, 2)
    mor_pool_sizes: tuple[int, ...] = (2, 3)
    mor_activation_first: bool = True
    initial_contribution: float = 1.0
    uniform_share: float = 0.05
    tournament_size: int = 3
    fitness_cap: float = 1e6


SETTINGS = DljsSettings()


# ---- seed -------------------------------------------------------------------------------

def identity_chain(length: int, shape: tuple[int, ...] = (1, 8, 8, 3),
                   dtype: str = "float32") -> Model:
    """The initial seed: input -> Identity x ``length`` -> output (channels-last NHWC)."""
    if length < 1:
        raise UsageError(f"identity chain length {length} must be >= 1")
    b = GraphBuilder(tuple(shape), dtype=dtype)
    x = "x0"
    for _ in range(length):
        x = b.add("Identity", x)
    return init_model(b.build(), np.random.default_rng(0))  # Identity has no weights


# ---- splicing ---------------------------------------------------------------------------

def mk(node_id: str, op: str, inputs: Sequence[str], **attrs: Any) -> Node:
    return Node(node_id, op, tuple(inputs), freeze_attrs(get_op(op).complete(attrs)))


def values(graph: Graph) -> list[str]:
    return [*graph.input_names, *(n.id for n in graph.nodes)]


def position_after(graph: Graph, value: str) -> int:
    """Index in ``graph.nodes`` right after the producer of ``value`` (0 for an input)."""
    return 0 if value in graph.input_names else graph.index(value) + 1


def _rebuild(model: Model, nodes: list[Node], outputs: Iterable[str], new: list[Node],
             rng: np.random.Generator) -> Model:
    """Check the candidate, give the ``new`` nodes fresh weights, keep the I/O types."""
    old = model.graph
    graph = old.with_nodes(nodes, outputs=outputs)
    if [graph.type_of(o) for o in graph.outputs] != [old.type_of(o) for o in old.outputs]:
        raise Rejected("the mutation would change the model's output types")
    live = {n.id for n in graph.nodes}
    weights: dict[str, np.ndarray] = {}
    for n in new:
        if n.id in live:
            weights.update(init_node(graph, n, rng))
    return model.with_graph(graph, weights)


def splice(model: Model, value: str, construct: list[Node], rng: np.random.Generator
           ) -> Model:
    """Insert ``construct`` (reading ``value``) after ``value``'s producer; every reader of
    ``value`` (and the outputs) then reads the construct's last node instead."""
    g = model.graph
    want = g.type_of(value)
    out = construct[-1].id
    pos = position_after(g, value)
    nodes = [*g.nodes[:pos], *construct, *rename_value(g.nodes[pos:], value, out)]
    outputs = [out if o == value else o for o in g.outputs]
    mutant = _rebuild(model, nodes, outputs, construct, rng)
    if mutant.graph.type_of(out) != want:
        raise InternalError(f"construct {[n.op for n in construct]} changed {want}")
    return mutant


def pick_value(graph: Graph, rng: np.random.Generator, ok: Callable[[TensorType], bool],
               what: str) -> str:
    """A random value of ``graph`` whose type satisfies ``ok``."""
    cands = [v for v in values(graph) if ok(graph.type_of(v))]
    if not cands:
        raise Rejected(f"no value of the graph is {what}")
    return cands[int(rng.integers(len(cands)))]


# ---- the seven construct rules ------------------------------------------------------------

def zdt(model: Model, rng: np.random.Generator) -> Model:
    """ZDT: x -> AddConst|MulConst with a zero-dimensional weight ``value``."""
    g = model.graph
    v = pick_value(g, rng, lambda t: True, "any")
    op = "AddConst" if rng.random() < 0.5 else "MulConst"
    return splice(model, v, [mk(g.fresh_ids(1)[0], op, [v])], rng)


def _data_free_perms(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Non-identity permutations of the non-batch axes that keep the non-unit axes in
    order: transposes that move no element in memory (a Reshape could replace them)."""
    axes = list(range(1, len(shape)))
    out = []
    for p in itertools.permutations(axes):
        big = [a for a in p if shape[a] != 1]
        if list(p) != axes and big == sorted(big):
            out.append(p)
    return out


MAX_IPT_RANK = 7  # permutations of up to 6 non-batch axes are enumerated


def ipt(model: Model, rng: np.random.Generator) -> Model:
    """IPT: a Transpose that moves no data; without a unit axis, Reshape adds a trailing one
    first; a Reshape back restores the shape when the Transpose changed it."""
    g = model.graph
    v = pick_value(g, rng, lambda t: 2 <= t.rank < MAX_IPT_RANK, "of rank 2 to 6")
    t = g.type_of(v)
    ids = iter(g.fresh_ids(3))
    nodes: list[Node] = []
    src, shape = v, t.shape
    if not _data_free_perms(shape):
        shape = (*t.shape, 1)
        nodes.append(mk(next(ids), "Reshape", [src], target_shape=shape[1:]))
        src = nodes[-1].id
    perms = _data_free_perms(shape)
    perm = perms[int(rng.integers(len(perms)))]
    nodes.append(mk(next(ids), "Transpose", [src], dims=perm))
    if tuple(shape[a] for a in perm) != t.shape[1:]:
        nodes.append(mk(next(ids), "Reshape", [nodes[-1].id], target_shape=t.shape[1:]))
    return splice(model, v, nodes, rng)


def hwr(model: Model, rng: np.random.Generator) -> Model:
    """HWR: x + UpSampling2D(ReduceMean(x, axes=(1, 2), keepdims), size=(H, W)) on NHWC."""
    g = model.graph
    v = pick_value(g, rng, lambda t: t.rank == 4, "of rank 4")
    _, h, w, _ = g.type_of(v).shape
    a, b, c = g.fresh_ids(3)
    return splice(model, v, [mk(a, "ReduceMean", [v], axes=(1, 2), keepdims=True),
                             mk(b, "UpSampling2D", [a], size=(h, w)),
                             mk(c, "Add", [v, b])], rng)


def _square_factor(size: int, rng: np.random.Generator) -> int:
    """A random divisor d of ``size`` with d*d <= size (>= 2 when one exists)."""
    divs = [d for d in range(1, math.isqrt(size) + 1) if size % d == 0]
    big = [d for d in divs if d >= 2]
    pool = big or divs
    return pool[int(rng.integers(len(pool)))]


def tor(model: Model, rng: np.random.Generator) -> Model:
    """TOR: MatMul(Transpose(A), Transpose(B)) = (B x A)^T on rank-3 views of x.

    A square (N, a, a) value is used as is, with B an earlier value of the same type (x
    itself counts). Otherwise x is viewed as A = (N, a, b) and B = (N, b, a) by Reshape
    (a * b = x's size per sample, b * b <= a * b); the product (N, b, b) goes through
    Dense(units=a) when a != b, then a Reshape restores x's shape.
    """
    g = model.graph
    v = pick_value(g, rng, lambda t: t.rank >= 2, "of rank >= 2")
    t = g.type_of(v)
    ids = iter(g.fresh_ids(7))
    nodes: list[Node] = []
    square = t.rank == 3 and t.shape[1] == t.shape[2]
    if square:
        earlier = [u for u in values(g)[:len(g.inputs) + position_after(g, v)]
                   if g.type_of(u) == t]
        a_val, b_val = v, earlier[int(rng.integers(len(earlier)))]
    else:
        size = t.size // t.shape[0]
        b = _square_factor(size, rng)
        a = size // b
        nodes.append(mk(next(ids), "Reshape", [v], target_shape=(a, b)))
        a_val = b_val = nodes[-1].id
        if a != b:
            nodes.append(mk(next(ids), "Reshape", [v], target_shape=(b, a)))
            b_val = nodes[-1].id
    ta = mk(next(ids), "Transpose", [a_val], dims=(2, 1))
    tb = mk(next(ids), "Transpose", [b_val], dims=(2, 1))
    nodes += [ta, tb, mk(next(ids), "MatMul", [ta.id, tb.id])]
    if not square:
        if a != b:
            nodes.append(mk(next(ids), "Dense", [nodes[-1].id], units=a))
        nodes.append(mk(next(ids), "Reshape", [nodes[-1].id], target_shape=t.shape[1:]))
    return splice(model, v, nodes, rng)


def mor(model: Model, rng: np.random.Generator, settings: DljsSettings = SETTINGS) -> Model:
    """MOR: (Sigmoid|Softmax, MaxPool{1,2,3}D pool 2|3 stride 1 'same') on a rank 3-5 value
    (order per ``settings.mor_activation_first``)."""
    g = model.graph
    v = pick_value(g, rng, lambda t: 3 <= t.rank <= 5, "of rank 3 to 5")
    n = g.type_of(v).rank - 2
    k = settings.mor_pool_sizes[int(rng.integers(len(settings.mor_pool_sizes)))]
    a, b = g.fresh_ids(2)
    act_op = "Sigmoid" if rng.random() < 0.5 else "Softmax"
    act_attrs = {"axis": -1} if act_op == "Softmax" else {}
    pool = {"pool_size": (k,) * n, "strides": (1,) * n, "padding": "same"}
    if settings.mor_activation_first:
        nodes = [mk(a, act_op, [v], **act_attrs), mk(b, f"MaxPool{n}D", [a], **pool)]
    else:
        nodes = [mk(a, f"MaxPool{n}D", [v], **pool), mk(b, act_op, [a], **act_attrs)]
    return splice(model, v, nodes, rng)


def esc(model: Model, rng: np.random.Generator, settings: DljsSettings = SETTINGS) -> Model:
    """ESC: DepthwiseConv2D (k x k, 'same', multiplier m) then a 1x1 Conv2D back to C
    channels: a SeparableConv2D written as its two steps, for the fuser to merge."""
    g = model.graph
    v = pick_value(g, rng, lambda t: t.rank == 4, "of rank 4")
    c = g.type_of(v).shape[-1]
    m = settings.esc_multipliers[int(rng.integers(len(settings.esc_multipliers)))]
    k = settings.kernel
    a, b = g.fresh_ids(2)
    return splice(model, v, [
        mk(a, "DepthwiseConv2D", [v], kernel_size=(k, k), padding="same", depth_multiplier=m),
        mk(b, "Conv2D", [a], filters=c, kernel_size=(1, 1), padding="same")], rng)


def ecb(model: Model, rng: np.random.Generator, settings: DljsSettings = SETTINGS) -> Model:
    """ECB: Conv{1,2,3}D (k, 'same', filters = C) -> BatchNorm -> ReLU on a rank 3-5 value."""
    g = model.graph
    v = pick_value(g, rng, lambda t: 3 <= t.rank <= 5, "of rank 3 to 5")
    t = g.type_of(v)
    n = t.rank - 2
    a, b, c = g.fresh_ids(3)
    return splice(model, v, [
        mk(a, f"Conv{n}D", [v], filters=t.shape[-1], kernel_size=(settings.kernel,) * n,
           padding="same"),
        mk(b, "BatchNorm", [a]),
        mk(c, "ReLU", [b])], rng)


# ---- ROR ----------------------------------------------------------------------------------

def ror_targets() -> list[str]:
    """Op kinds ROR can put into a model, plus "None" (deleting a node)."""
    return [*insertable_ops(), "None"]


def _replace(model: Model, old: str, new: Node, rng: np.random.Generator) -> Model:
    g = model.graph
    i = g.index(old)
    nodes = [*g.nodes[:i], new, *rename_value(g.nodes[i + 1:], old, new.id)]
    outputs = [new.id if o == old else o for o in g.outputs]
    return _rebuild(model, nodes, outputs, [new], rng)


def _delete(model: Model, rng: np.random.Generator) -> Model:
    """ROR with target None: drop a node whose first input has the node's type."""
    g = model.graph
    cands = [n for n in g.nodes if g.type_of(n.inputs[0]) == g.type_of(n.id)]
    for i in rng.permutation(len(cands)):
        n = cands[i]
        nodes = rename_value([m for m in g.nodes if m.id != n.id], n.id, n.inputs[0])
        outputs = [n.inputs[0] if o == n.id else o for o in g.outputs]
        if len(set(outputs)) != len(outputs):
            continue
        mutant = _rebuild(model, nodes, outputs, [], rng)
        if mutant.graph.nodes:  # a model of no op at all tests nothing
            return mutant
    raise Rejected("ROR(None): no node can be deleted without changing a type")


def ror(model: Model, rng: np.random.Generator, target: str) -> Model:
    """ROR with a given target op kind: replace a node by ``target`` (same output type, from
    the node's first input) or insert ``target`` after a value (same type); "None" deletes.

    Slots (nodes, and values to insert after) are tried in random order; the first one
    where ``target`` fits gets it, with random attributes among those that fit. An op that
    always changes the type (Flatten, global pooling, padding, ...) is inserted as a
    detour with the ops that restore the type (``dljs_ror.detours``).
    """
    if target == "None":
        return _delete(model, rng)
    if target not in insertable_ops():
        raise UsageError(f"ROR target {target!r} is not one of {', '.join(ror_targets())}")
    g = model.graph
    slots = [(n.id, True) for n in g.nodes if n.op != target] + [(v, False) for v in values(g)]
    for i in rng.permutation(len(slots)):
        name, replacing = slots[i]
        if replacing:
            x, pos = g.node(name).inputs[0], g.index(name)
        else:
            x, pos = name, position_after(g, name)
        t = g.type_of(x)
        partners = [(u, g.type_of(u)) for u in values(g)[:len(g.inputs) + pos]]
        chains = [[(target, extra, attrs)]
                  for extra, attrs in fits(target, x, t, g.type_of(name), partners, rng)]
        if not replacing:
            chains += detours(target, x, t, partners, rng)
        if not chains:
            continue
        chain = chains[int(rng.integers(len(chains)))]
        nodes, src = [], x
        for node_id, (op, extra, attrs) in zip(g.fresh_ids(len(chain)), chain, strict=True):
            nodes.append(mk(node_id, op, [src, *extra], **attrs))
            src = node_id
        try:
            if replacing:
                return _replace(model, name, nodes[0], rng)
            return splice(model, x, nodes, rng)
        except Rejected:  # e.g. a value over the size limit: try another slot
            continue
    raise Rejected(f"ROR: {target} fits no node and no value of the graph")


def ror_random(model: Model, rng: np.random.Generator) -> Model:
    targets = ror_targets()
    return ror(model, rng, targets[int(rng.integers(len(targets)))])


ModelRule = Callable[[Model, np.random.Generator], Model]

MODEL_RULES: dict[str, ModelRule] = {
    "ZDT": zdt, "IPT": ipt, "HWR": hwr, "TOR": tor, "MOR": mor, "ESC": esc, "ECB": ecb,
    "ROR": ror_random,
}


def contribution_rules() -> list[str]:
    """The rules DLJSFuzzer's probabilities range over: the seven constructs and one
    "ROR:<target>" per ROR target (Section 3.5.3 counts each replacement as a rule)."""
    return [*(r for r in MODEL_RULES if r != "ROR"), *(f"ROR:{t}" for t in ror_targets())]


def apply_rule(key: str, model: Model, rng: np.random.Generator) -> Model:
    """Apply a rule named as in ``contribution_rules()``."""
    if key.startswith("ROR:"):
        return ror(model, rng, key[len("ROR:"):])
    if key not in MODEL_RULES:
        raise UsageError(f"unknown DLJSFuzzer rule {key!r}")
    return MODEL_RULES[key](model, rng)


# ---- guidance (Section 3.5) ---------------------------------------------------------------

@dataclass(frozen=True)
class RoundSummary:
    """What one round showed: crash or NaN bug, and the largest |difference| between the
    libraries' outputs (DLJSFuzzer's inconsistency); ``input_mean`` is m_d."""

    crash: bool = False
    nan_bug: bool = False
    inconsistency: float = 0.0
    input_mean: float = 0.0


def input_mean(inputs: Sequence[np.ndarray]) -> float:
    """m_d: the mean value of the test input tensor(s), over all their elements."""
    total = sum(float(np.asarray(x, dtype=np.float64).sum()) for x in inputs)
    count = sum(int(np.asarray(x).size) for x in inputs)
    return total / count if count else 0.0


def fitness(summary: RoundSummary, settings: DljsSettings = SETTINGS) -> float:
    """m_d when a crash or NaN bug occurred, else the inconsistency (Section 3.5.1).

    An infinite inconsistency scores ``fitness_cap``, a NaN one 0, so the contributions
    that accumulate fitness stay finite.
    """
    if summary.crash or summary.nan_bug:
        value = float(summary.input_mean)
    else:
        value = float(summary.inconsistency)
    if math.isnan(value):
        return 0.0
    return max(-settings.fitness_cap, min(settings.fitness_cap, value))


T = TypeVar("T")


def tournament(pool: Sequence[tuple[T, float]], rng: np.random.Generator,
               k: int = SETTINGS.tournament_size) -> T:
    """Draw ``min(k, len(pool))`` distinct entries uniformly; return the fittest (NaN counts
    as the worst; ties go to the first drawn)."""
    if not pool:
        raise InternalError("tournament over an empty pool")
    drawn = rng.choice(len(pool), size=min(k, len(pool)), replace=False)

    def score(i: int) -> float:
        f = float(pool[i][1])
        return -math.inf if math.isnan(f) else f

    return pool[int(max(drawn, key=score))][0]


class RuleContributions:
    """DLJSFuzzer's rule probabilities: c_rule += delta fitness after each use, p = c / sum c.

    Every rule starts at ``initial_contribution`` (uniform). Negative contributions count
    as 0, and ``uniform_share`` of the probability is spread evenly, so every rule keeps
    p >= uniform_share / n and a rule that scored badly early can still come back.
    """

    def __init__(self, rules: Iterable[str], settings: DljsSettings = SETTINGS) -> None:
        self.settings = settings
        self.c: dict[str, float] = {r: settings.initial_contribution for r in rules}
        if not self.c:
            raise InternalError("RuleContributions needs at least one rule")

    def update(self, rule: str, delta_fitness: float) -> None:
        if rule not in self.c:
            raise InternalError(f"unknown rule {rule!r}")
        if math.isfinite(delta_fitness):
            self.c[rule] += delta_fitness

    def probabilities(self) -> dict[str, float]:
        n = len(self.c)
        pos = {r: max(c, 0.0) for r, c in self.c.items()}
        total = sum(pos.values())
        if total <= 0.0:
            return {r: 1.0 / n for r in pos}
        share = self.settings.uniform_share
        return {r: (1.0 - share) * c / total + share / n for r, c in pos.items()}

    def choose(self, rng: np.random.Generator) -> str:
        p = self.probabilities()
        names = list(p)
        weights = np.array([p[r] for r in names])
        return names[int(rng.choice(len(names), p=weights / weights.sum()))]


def _token(n: Node) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return n.op, n.attrs


def edit_distance(g1: Graph, g2: Graph) -> int:
    """The paper's model edit distance, as Levenshtein distance between the graphs' node
    sequences in topological order: inserting or deleting a node costs 1, and so does
    substituting one, where two nodes are equal only if both op kind and attributes are.
    Edges (which value a node reads) are not compared: the op sequence is the model."""
    a = [_token(n) for n in g1.nodes]
    b = [_token(n) for n in g2.nodes]
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


__all__ = ["MODEL_RULES", "DljsSettings", "RoundSummary", "RuleContributions", "apply_rule",
           "contribution_rules", "edit_distance", "fitness", "identity_chain", "input_mean",
           "ror", "ror_targets", "tournament"]

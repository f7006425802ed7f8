"""Which layer is wrong: LEMON's R_a over a probe run, else the first wrong model prefix.

A model-level finding first only says "backend B's output is off". The model is re-run
with ``probe=True`` (every node's value is an output) on B and on a backend that agrees
with the reference; among the nodes whose values differ beyond rounding noise, the one
whose own contribution to the difference is largest (``R_a``) is the suspect, and the
finding is about that layer kind.

A probe run can hide the bug: making every value an output stops a graph optimizer from
fusing nodes (ONNX Runtime folds a Pad into the MaxPool after it only when the Pad's
value is used nowhere else), so a fusion bug leaves no trace in it. When no node of the
probe run differs beyond noise, the model is cut after a node (that node's value the only
output, so the optimizer sees the same pattern the model had) and a binary search over
the topological order finds the first prefix whose output is wrong; its last node is the
suspect. All localizations of a batch share each round trip to the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from dlfuzz.cases import GraphCase, Outcome
from dlfuzz.errors import Rejected
from dlfuzz.oracles.tolerances import tolerance_for

Runner = Callable[[Sequence[GraphCase], Sequence[str]], list[dict[str, Outcome]]]
# A node is "off" when some element differs by more than this many times the dtype's
# assert_close tolerance: two sound libraries that sum in another order stay far below it
# (about 0.1x on LeNet-sized float32 models), a wrong kernel lands far above it.
NOISE_FACTOR = 10.0


@dataclass(frozen=True)
class Suspect:
    node: str  # "" when the runs failed or showed no difference
    op: str
    ratio: float
    against: str  # the sound backend compared with
    method: str = "R_a"  # or "prefix": the first model prefix whose output is wrong


def excess(a: np.ndarray, b: np.ndarray, dtype: str) -> float:
    """The largest element difference in units of the noise allowance (inf on a shape or
    NaN/Inf mismatch); 0 when the values agree."""
    if a.shape != b.shape:
        return float("inf")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if not a64.size:
        return 0.0
    if not np.array_equal(np.isfinite(a64), np.isfinite(b64)):
        return float("inf")
    fin = np.isfinite(a64)
    if not np.array_equal(a64[~fin], b64[~fin]):
        return float("inf")
    tol = tolerance_for(dtype)
    allowed = NOISE_FACTOR * (tol.atol + tol.rtol * np.abs(b64[fin]))
    if not allowed.size:
        return 0.0
    return float(np.max(np.abs(a64[fin] - b64[fin]) / np.maximum(allowed, 1e-300)))


def localize(values_a: Sequence[np.ndarray], values_b: Sequence[np.ndarray],
             inputs_of: Sequence[Sequence[int]], eps: float = 1e-7,
             dtype: str | None = None) -> tuple[int, list[float]]:
    """LEMON's R_a over a probe run of two libraries: the node whose own contribution to
    the difference is largest. ``inputs_of[i]`` lists the probe indices node ``i`` reads
    (graph inputs are absent: they are identical on both sides). With ``dtype``, nodes
    whose difference is rounding noise are no candidates (R_a = -inf), so a 1e-6 wobble
    after an exact node cannot outrank the real fault; index -1 when no node is off.
    Returns (index, R)."""
    deltas = []
    for a, b in zip(values_a, values_b, strict=True):
        if a.shape != b.shape:
            deltas.append(float("inf"))
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        d = np.where(np.isnan(a) & np.isnan(b), 0.0, d)
        value = float(np.mean(d)) if d.size else 0.0
        deltas.append(value if np.isfinite(value) else float("inf"))
    ratios = []
    for i, cur in enumerate(deltas):
        pre = max((deltas[j] for j in inputs_of[i]), default=0.0)
        if dtype is not None and excess(values_a[i], values_b[i], dtype) <= 1.0:
            ratios.append(float("-inf"))
        elif np.isinf(cur):
            ratios.append(float("inf") if not np.isinf(pre) else 0.0)
        else:
            ratios.append((cur - pre) / (pre + eps))
    if not ratios or max(ratios) == float("-inf"):
        return -1, ratios
    return int(np.argmax(ratios)), ratios


def inputs_of(case: GraphCase) -> list[list[int]]:
    """For each node, the probe indices (node positions) of the node values it reads."""
    position = {n.id: i for i, n in enumerate(case.graph.nodes)}
    return [[position[v] for v in n.inputs if v in position] for n in case.graph.nodes]


def localize_many(runner: Runner, requests: Sequence[tuple[GraphCase, str, str]]
                  ) -> list[Suspect]:
    """``requests`` are (case, guilty backend, sound backend); one Suspect each."""
    if not requests:
        return []
    probes = [case.with_probe(True) for case, _, _ in requests]
    wanted = sorted({b for _, g, s in requests for b in (g, s)})
    runs = runner(probes, wanted)
    out: list[Suspect] = []
    hidden: list[int] = []
    for k, ((case, guilty, sound), run) in enumerate(zip(requests, runs, strict=True)):
        a, b = run.get(guilty), run.get(sound)
        nodes = case.graph.nodes
        if (a is None or b is None or not a.ok or not b.ok or len(a.outputs) != len(nodes)
                or len(b.outputs) != len(nodes)):
            out.append(Suspect("", "", 0.0, sound))
            hidden.append(k)  # a probe that fails says nothing: try the prefixes
            continue
        values_a = [t.to_numpy() for t in a.outputs]
        values_b = [t.to_numpy() for t in b.outputs]
        index, ratios = localize(values_a, values_b, inputs_of(case), dtype=case.graph.dtype)
        if index < 0:
            out.append(Suspect("", "", 0.0, sound))
            hidden.append(k)
            continue
        node = nodes[index]
        out.append(Suspect(node.id, node.op, float(min(ratios[index], 1e300)), sound))
    if hidden:
        for k, suspect in zip(hidden, first_wrong_prefix(runner, [requests[k] for k in hidden]),
                              strict=True):
            if suspect.node:
                out[k] = suspect
    return out


def prefix_case(case: GraphCase, index: int) -> GraphCase | None:
    """The model cut after node ``index`` (its value the only output, dead nodes gone)."""
    g = case.graph
    try:
        cut = g.with_nodes(g.nodes, outputs=(g.nodes[index].id,))
    except Rejected:
        return None
    kept = {n.id for n in cut.nodes}
    weights = tuple((k, t) for k, t in case.weights if k.split(".", 1)[0] in kept)
    return replace(case, graph=cut, weights=weights, probe=False)


def first_wrong_prefix(runner: Runner, requests: Sequence[tuple[GraphCase, str, str]],
                       failures_only: bool = False) -> list[Suspect]:
    """Binary search, for each request at once, for the first node whose prefix model's
    output is off on the guilty backend (the whole model is: the finding says so). With
    ``failures_only`` a prefix is wrong only when the guilty backend raises or crashes on
    it while the sound one computes it (status and crash findings)."""
    lo = [0] * len(requests)
    hi = [len(case.graph.nodes) - 1 for case, _, _ in requests]
    found: dict[int, float] = {}
    wanted = sorted({b for _, g, s in requests for b in (g, s)})
    while True:
        batch, where = [], []
        for k, (case, _, _) in enumerate(requests):
            while lo[k] < hi[k]:
                mid = (lo[k] + hi[k]) // 2
                cut = prefix_case(case, mid)
                if cut is not None:
                    batch.append(cut)
                    where.append((k, mid))
                    break
                lo[k] = mid + 1  # an unusable cut: search after it
        if not batch:
            break
        for (k, mid), run in zip(where, runner(batch, wanted), strict=True):
            off = _off(requests[k], run, failures_only)
            if off > 1.0:
                hi[k] = mid
                found[k] = off
            else:
                lo[k] = mid + 1
    unmeasured = [k for k in range(len(requests)) if k not in found]
    cuts = [prefix_case(requests[k][0], hi[k]) for k in unmeasured]
    pairs = [(k, c) for k, c in zip(unmeasured, cuts, strict=True) if c is not None]
    if pairs:  # the search ended on the last node without running it: measure it too
        for (k, _), run in zip(pairs, runner([c for _, c in pairs], wanted), strict=True):
            found[k] = _off(requests[k], run, failures_only)
    out = []
    for k, (case, _, sound) in enumerate(requests):
        node = case.graph.nodes[hi[k]]
        out.append(Suspect(node.id, node.op, float(min(found.get(k, 0.0), 1e300)), sound,
                           "prefix"))
    return out


def _off(request: tuple[GraphCase, str, str], run: dict[str, Outcome],
         failures_only: bool = False) -> float:
    """How far the guilty backend's output is from the sound one's, in noise allowances
    (inf when only the guilty one fails; 0 when both fail, which says nothing)."""
    case, guilty, sound = request
    a, b = run.get(guilty), run.get(sound)
    if a is not None and not a.ok and b is not None and b.ok:
        return float("inf")
    if (failures_only or a is None or b is None or not a.ok or not b.ok or not a.outputs
            or not b.outputs):
        return 0.0
    return excess(a.outputs[0].to_numpy(), b.outputs[0].to_numpy(), case.graph.dtype)

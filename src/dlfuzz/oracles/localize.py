"""Which layer is wrong: LEMON's R_a over a probe run of the guilty and a sound backend.

A model-level finding first only says "backend B's output is off". The model is re-run
with ``probe=True`` (every node's value is an output) on B and on a backend that agrees
with the reference; the node whose own contribution to the difference is largest
(``R_a``) is the suspect, and the finding is about that layer kind. All localizations
of a batch share one round trip to the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dlfuzz.cases import GraphCase, Outcome

Runner = Callable[[Sequence[GraphCase], Sequence[str]], list[dict[str, Outcome]]]


@dataclass(frozen=True)
class Suspect:
    node: str  # "" when the probe runs failed
    op: str
    ratio: float
    against: str  # the sound backend compared with


def localize(values_a: Sequence[np.ndarray], values_b: Sequence[np.ndarray],
             inputs_of: Sequence[Sequence[int]], eps: float = 1e-7) -> tuple[int, list[float]]:
    """LEMON's R_a over a probe run of two libraries: the node whose own contribution to
    the difference is largest. ``inputs_of[i]`` lists the probe indices node ``i`` reads
    (graph inputs are absent: they are identical on both sides). Returns (index, R)."""
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
        if np.isinf(cur):
            ratios.append(float("inf") if not np.isinf(pre) else 0.0)
        else:
            ratios.append((cur - pre) / (pre + eps))
    best = int(np.argmax(ratios)) if ratios else -1
    return best, ratios


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
    out = []
    for (case, guilty, sound), run in zip(requests, runs, strict=True):
        a, b = run.get(guilty), run.get(sound)
        nodes = case.graph.nodes
        if (a is None or b is None or not a.ok or not b.ok or len(a.outputs) != len(nodes)
                or len(b.outputs) != len(nodes)):
            out.append(Suspect("", "", 0.0, sound))
            continue
        values_a = [t.to_numpy() for t in a.outputs]
        values_b = [t.to_numpy() for t in b.outputs]
        index, ratios = localize(values_a, values_b, inputs_of(case))
        node = nodes[index]
        out.append(Suspect(node.id, node.op, float(min(ratios[index], 1e300)), sound))
    return out

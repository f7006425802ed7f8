"""Reduction: the smallest case that still shows the same bug (same signature).

Named passes, as in Hypothesis' shrinker, each proposing simpler candidates; a candidate
is kept when ``holds`` says the bug's signature still reproduces. Passes repeat until a
full round changes nothing or the run budget is spent. Statistics per pass (tried,
accepted) go into the bug's metadata.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Tensor

Pass = Callable[[ApiCase], Iterator[ApiCase]]


@dataclass
class ReduceResult:
    case: ApiCase
    runs: int
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    cut: bool = False  # stopped by the deadline with candidates left


def _replace_tensor(case: ApiCase, index: int, array: np.ndarray) -> ApiCase:
    tensors = list(case.tensors)
    tensors[index] = Tensor.from_numpy(array.astype(tensors[index].to_numpy().dtype))
    return case.with_tensors(tuple(tensors))


def shrink_axes(case: ApiCase) -> Iterator[ApiCase]:
    """Fewer elements: cut every tensor sharing an axis length together, then one by one."""
    arrays = [t.to_numpy() for t in case.tensors]
    sizes = sorted({d for a in arrays for d in a.shape if d > 1}, reverse=True)
    for size in sizes:  # joint cut: keeps broadcasting and matching dims valid
        for new in (1, size // 2, size - 1):
            if new < 1 or new >= size:
                continue
            cut = []
            for a in arrays:
                for ax, d in enumerate(a.shape):
                    if d == size:
                        a = np.take(a, range(new), axis=ax)
                cut.append(a)
            yield case.with_tensors(tuple(Tensor.from_numpy(a) for a in cut))
    for i, a in enumerate(arrays):
        for ax, d in enumerate(a.shape):
            for new in (1, d // 2, d - 1):
                if 1 <= new < d:
                    yield _replace_tensor(case, i, np.take(a, range(new), axis=ax))


def drop_unit_axes(case: ApiCase) -> Iterator[ApiCase]:
    """Lower ranks: squeeze one size-1 axis of one tensor."""
    for i, t in enumerate(case.tensors):
        a = t.to_numpy()
        for ax, d in enumerate(a.shape):
            if d == 1:
                yield _replace_tensor(case, i, np.squeeze(a, axis=ax))


def simplify_values(case: ApiCase) -> Iterator[ApiCase]:
    """Simpler numbers: zeros, ones, small integers, finite values, halves zeroed."""
    for i, t in enumerate(case.tensors):
        a = t.to_numpy()
        if a.size == 0:
            continue
        kind = a.dtype.kind
        yield _replace_tensor(case, i, np.zeros_like(a))
        yield _replace_tensor(case, i, np.ones_like(a))
        if kind in "fcV" or a.dtype.name == "bfloat16":
            wide = a.astype(np.complex128 if kind == "c" else np.float64)
            finite = np.where(np.isfinite(wide), wide, 0)
            yield _replace_tensor(case, i, finite)
            yield _replace_tensor(case, i, np.clip(np.round(finite), -4, 4))
            yield _replace_tensor(case, i, np.round(finite))
        elif kind in "iu":
            yield _replace_tensor(case, i, np.clip(a, -4, 4) if kind == "i" else np.clip(a, 0, 4))
        flat = a.reshape(-1)
        if flat.size > 1:
            half = flat.size // 2
            for lo, hi in ((0, half), (half, flat.size)):
                b = flat.copy()
                b[lo:hi] = 0
                yield _replace_tensor(case, i, b.reshape(a.shape))


def drop_params(rebuild: Callable[..., ApiCase] | None) -> Pass:
    """Optional arguments back to their defaults (needs the engine's ``rebuild``)."""
    def run(case: ApiCase) -> Iterator[ApiCase]:
        if rebuild is None:
            return
        params = dict(case.params)
        for name in list(params):
            rest = {k: v for k, v in params.items() if k != name}
            try:
                smaller = rebuild(case.api, case.tensors, rest, like=case)
                # a violate-mode input stays one: its finding is about that expectation
                yield replace(smaller, expect=case.expect) if smaller.expect != case.expect \
                    else smaller
            except Exception:  # noqa: BLE001 - the engine refuses: not a candidate
                continue
    return run


# Candidates in a pass's first round trip: two, so a backend on two worker processes
# (``--replicas``) keeps both busy; then 4, 8, ... up to the pass's ``chunk``.
FIRST_CHUNK = 2


def reduce_case(case: ApiCase, holds: Callable[[list[ApiCase]], list[bool]],
                passes: dict[str, Pass], max_runs: int = 200, chunk: int = 12,
                weight: Callable[[Any], tuple[Any, ...]] | None = None,
                deadline: float | None = None, first_chunk: int = FIRST_CHUNK
                ) -> ReduceResult:
    """Greedy reduction: accept the first candidate of a pass that still holds.

    Each round gives every pass up to ``chunk`` candidates, checked in round trips to the
    workers of ``first_chunk`` candidates, then twice as many while none holds: the first
    that holds is taken, exactly as a one-by-one greedy search would. Small round trips
    first because a candidate that holds is most often among a pass's first (batch 1,
    the shortest prefix that keeps the bug), and every candidate after it in its round
    trip is run for nothing: on a model with compiled backends each is a compilation
    (fixed trips of 12 in a 10-minute synth campaign: 1,254 runs, 123 accepted, 200 s of
    the 600). Past ``deadline`` (``time.monotonic()``) the smallest case that held so far
    is the result: every accepted step kept the bug.
    """
    stats = {name: {"tried": 0, "accepted": 0} for name in passes}
    _weight = weight or api_weight
    runs = 0
    seen: set[str] = {case.id}
    progress = True
    cut = False
    while progress and runs < max_runs and not cut:
        progress = False
        for name, make in passes.items():
            if deadline is not None and time.monotonic() >= deadline:
                cut = True
                break
            candidates = (c for c in make(case)
                          if c.id not in seen and _weight(c) < _weight(case))
            size, tried, accepted = max(1, first_chunk), 0, False
            while tried < chunk and runs < max_runs and not accepted:
                if tried and deadline is not None and time.monotonic() >= deadline:
                    cut = True  # each round trip may cost worker starts: not one more
                    break
                pending: list[ApiCase] = []
                for candidate in candidates:
                    seen.add(candidate.id)
                    pending.append(candidate)
                    if len(pending) >= min(size, chunk - tried, max_runs - runs):
                        break
                if not pending:
                    break
                verdicts = holds(pending)
                runs += len(pending)
                tried += len(pending)
                stats[name]["tried"] += len(pending)
                for candidate, ok in zip(pending, verdicts, strict=True):
                    if ok:
                        stats[name]["accepted"] += 1
                        case = candidate  # the next pass starts from it
                        accepted = progress = True
                        break
                size *= 2
            if runs >= max_runs or cut:
                break
    return ReduceResult(case, runs, stats, cut)


def api_weight(case: ApiCase) -> tuple[int, int, int, int, float]:
    """Smaller is simpler: elements, rank, parameters, non-zero values, magnitude.

    Candidates must weigh strictly less than the current case, so reduction terminates.
    """
    elements = sum(t.size for t in case.tensors)
    rank = sum(len(t.shape) for t in case.tensors)
    nonzero, magnitude = 0, 0.0
    for t in case.tensors:
        a = t.to_numpy()
        wide = a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)
        nonzero += int(np.count_nonzero(wide))
        finite = np.abs(wide[np.isfinite(wide)])
        # A NaN/inf weighs more than any finite value (the finite-first pass's large
        # stand-in included), so making an input finite is always a simplification.
        magnitude += float(np.sum(np.minimum(finite, 1e6))) + 2e6 * int(wide.size - finite.size)
    return (elements, rank, len(case.params), nonzero, round(magnitude, 6))


DEFAULT_PASSES: dict[str, Pass] = {
    "shrink_axes": shrink_axes,
    "drop_unit_axes": drop_unit_axes,
    "simplify_values": simplify_values,
}

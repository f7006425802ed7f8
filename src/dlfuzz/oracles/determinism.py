"""Uninitialized-memory garbage: the same input run twice gives different bits.

A deterministic operation must give bit-identical outputs for bit-identical inputs in
one process. TensorFlow.js reuses texture and heap memory between kernels, and a kernel
that reads an element it never wrote returns whatever the previous op left there
(TensorJSFuzz reports several such bugs): the output then changes from run to run. The
differential oracle cannot always see it (the garbage may be small, or every backend of
the library shares the kernel), so this oracle runs each case a second time on the
backends that ask for it (``Backend.rerun_check``), after other cases have dirtied the
memory, and compares the bits (NaNs equal to NaNs).

Only cases known to be deterministic are re-run: model cases (inference, no randomness)
and API cases whose engine says so (``OracleContext.deterministic``; random APIs such as
dropout are not). Confirmation re-runs the case, and this check with it, so garbage that
shows only now and then ends as ``flaky``, never as a confirmed report.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from dlfuzz import registry
from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.errors import UsageError
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding


@cache
def _wants_rerun(backend: str) -> bool:
    try:
        return bool(getattr(registry.load("backend", backend), "rerun_check", False))
    except UsageError:
        return False


def same_bits(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Equal shapes, dtypes and values, NaN equal to NaN (whatever its payload)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            nan = np.isnan(x) & np.isnan(y)
            if not np.array_equal(np.where(nan, 0, x), np.where(nan, 0, y)):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def _outputs(outcome: Outcome) -> list[np.ndarray]:
    return [t.to_numpy() for t in outcome.outputs]


class DeterminismOracle(Oracle):
    name = "determinism"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        return self.check_many([(case, outcomes)], ctx)[0]

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        found: list[list[Finding]] = [[] for _ in items]
        todo: dict[str, list[int]] = {}
        for i, (case, outcomes) in enumerate(items):
            if not self._deterministic(case, ctx):
                continue
            for backend, o in outcomes.items():
                if o.ok and o.outputs and _wants_rerun(backend):
                    todo.setdefault(backend, []).append(i)
        for backend, indexes in todo.items():
            again = ctx.judge.runner([items[i][0] for i in indexes], [backend])
            for i, rerun in zip(indexes, again, strict=True):
                second = rerun.get(backend)
                ctx.stats["reruns"] += 1
                if second is None or not second.ok:
                    continue  # a crash or error on the re-run is the other oracles' job
                first = items[i][1][backend]
                a, b = _outputs(first), _outputs(second)
                if same_bits(a, b):
                    continue
                case = items[i][0]
                diff = _max_difference(a, b)
                found[i].append(finding(
                    self.name, "nondeterministic", case, backend, "call",
                    "the same input gave different outputs on two runs (uninitialized "
                    f"memory?); largest difference {diff}",
                    signature_message="different outputs on two runs", max_difference=diff))
        return found

    @staticmethod
    def _deterministic(case: ApiCase, ctx: OracleContext) -> bool:
        kind = getattr(case, "kind", "api")
        if kind == "graph":
            return True
        if kind != "api" or getattr(case, "invalid", False):
            return False
        check = ctx.deterministic
        return bool(check(case)) if check is not None else False


def _max_difference(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> str:
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} outputs"
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape:
            return f"shape {x.shape} vs {y.shape}"
        if not x.size:
            continue
        # ravel: a 0-d output (a reduction to a scalar) gives an array, not a numpy scalar
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(np.ravel(x).astype(np.complex128) - np.ravel(y).astype(np.complex128))
        d = np.where(np.isnan(d), np.inf, d)
        worst = max(worst, float(np.max(d)))
    return f"{worst:.6g}"

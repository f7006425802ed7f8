"""Shared by the judge, oracle and triage unit tests: real workers and plain case values.

The tests judge what real libraries compute, so cases run in the real executor (one pool
per test module; a numpy worker starts in about a second, torch in a few). Outcomes the
tests build themselves from numpy arrays are data, used where only the outcome matters.
Bugs are planted inside the real library of a worker by ``preload`` (tests/planted).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dlfuzz.cases import ApiCase, Call, Outcome, Ref, Tensor
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.reference import Judge, JudgeSettings

PLANTED = Path(__file__).resolve().parents[1] / "planted"

# Backend -> library of every backend the tests name (only numpy and torch ever run).
LIBRARY_OF = {"numpy": "numpy", "torch": "torch", "torch-compile": "torch", "jax": "jax",
              "jax-jit": "jax", "tf": "tf", "tf-xla": "tf", "ort": "ort"}
COMPILED = {"torch-compile": True, "jax-jit": True, "tf-xla": True}


@contextmanager
def started_pool(preload: dict[str, tuple[str, ...]] | None = None,
                 extra_path: Sequence[Path] = ()) -> Iterator[Pool]:
    """A started numpy + torch pool; tests/planted (and ``extra_path``) on the workers'
    PYTHONPATH so ``preload`` can plant bugs in their libraries."""
    preload = preload or {}
    path = os.pathsep.join(str(p) for p in (PLANTED, *extra_path))
    with pytest.MonkeyPatch.context() as mp:
        old = os.environ.get("PYTHONPATH", "")
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (path, old) if p))
        pool = Pool([WorkerConfig(b, case_timeout_s=20.0, start_timeout_s=120.0,
                                  preload=preload.get(b, ()))
                     for b in ("numpy", "torch")])
        try:
            versions = pool.start()
            assert set(versions) == {"numpy", "torch"}, pool.unavailable
            yield pool
        finally:
            pool.close()


class CountingRunner:
    """The pool's own ``run``, counting round trips (what the judge is handed)."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.calls = 0
        self.cases = 0

    def __call__(self, cases: Sequence[Any], only: Sequence[str]) -> list[dict[str, Outcome]]:
        self.calls += 1
        self.cases += len(cases)
        return self.pool.run(cases, only=only)


def make_judge(pool: Pool, eager: Sequence[str] = ("numpy", "torch"),
               settings: JudgeSettings | None = None) -> tuple[Judge, CountingRunner]:
    runner = CountingRunner(pool)
    return Judge(runner, list(eager), LIBRARY_OF, settings, seed=0), runner


def unary_case(api: str, x: np.ndarray, numpy_target: str | None = None,
               torch_target: str | None = None, expect: str = "valid") -> ApiCase:
    """``numpy.<api>(x)`` / ``torch.<api>(x)``, or other targets per library (None: the
    library has no call)."""
    calls = []
    for lib, target in (("numpy", numpy_target or f"numpy.{api}"),
                        ("torch", torch_target or f"torch.{api}")):
        if target != "-":
            calls.append((lib, Call(target, (Ref(0),))))
    return ApiCase(api, (Tensor.from_numpy(x),), tuple(calls), expect=expect)


def cumsum_case(x: np.ndarray, expect: str = "valid") -> ApiCase:
    """Cumulative sum along the last axis in numpy and torch."""
    calls = (("numpy", Call("numpy.cumsum", (Ref(0),), (("axis", -1),))),
             ("torch", Call("torch.cumsum", (Ref(0),), (("dim", -1),))))
    return ApiCase("cumsum", (Tensor.from_numpy(x),), calls, expect=expect)


def outcome(backend: str, *arrays: np.ndarray, stage: str = "call") -> Outcome:
    """An ``ok`` outcome with these outputs (data, as a worker would return them)."""
    return Outcome(backend, "ok", tuple(Tensor.from_numpy(np.asarray(a)) for a in arrays),
                   stage=stage)


def failed(backend: str, message: str = "boom") -> Outcome:
    return Outcome(backend, "exception", exc_type="RuntimeError", message=message)


def outputs_of(o: Outcome) -> list[np.ndarray]:
    return [t.to_numpy() for t in o.outputs]

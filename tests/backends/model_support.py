"""Helpers for model tests: GraphCases from IR models and a pool of every model backend."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.cases import GraphCase, Tensor
from dlfuzz.engines.model.engine import weights_key
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import random_inputs

PLANTED = Path(__file__).resolve().parents[1] / "planted"

MODEL_BACKENDS = ("torch", "jax", "tf", "ort", "ort-noopt", "keras-tf", "keras-jax",
                  "keras-torch")
COMPILED_BACKENDS = ("torch-compile", "jax-jit", "tf-xla")
LIBRARIES = ("torch", "jax", "tf", "onnxruntime", "keras-tf", "keras-jax", "keras-torch")


def case_of(model: Model, rng: np.random.Generator, label: str = "test",
            inputs: Sequence[np.ndarray] | None = None, probe: bool = False) -> GraphCase:
    xs = list(inputs) if inputs is not None else random_inputs(model.graph, rng)
    return GraphCase(label, model.graph, weights_key(model),
                     tuple(Tensor.from_numpy(x) for x in xs), LIBRARIES, probe=probe)


def model_pool(backends: Sequence[str] = MODEL_BACKENDS, timeout_s: float = 60.0,
               preload: dict[str, tuple[str, ...]] | None = None) -> Pool:
    preload = preload or {}
    pool = Pool([WorkerConfig(b, case_timeout_s=timeout_s, preload=preload.get(b, ()))
                 for b in backends])
    pool.start()
    assert not pool.unavailable, pool.unavailable
    return pool


@contextmanager
def planted_torch_pool(backends: Sequence[str], preload: tuple[str, ...] = (),
                       timeout_s: float = 120.0) -> Iterator[Pool]:
    """A started pool of ``backends`` whose torch workers (eager and compiled) import the
    ``preload`` plants from ``tests/planted``; every backend must start."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(
            p for p in (str(PLANTED), os.environ.get("PYTHONPATH", "")) if p))
        pool = Pool([WorkerConfig(b, case_timeout_s=timeout_s, start_timeout_s=180.0,
                                  preload=preload if b.startswith("torch") else ())
                     for b in backends])
        try:
            versions = pool.start()
            assert set(versions) == set(backends), pool.unavailable
            yield pool
        finally:
            pool.close()


def max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(float(np.max(np.abs(b64))) if b64.size else 0.0, 1.0)
    return float(np.max(np.abs(a64 - b64))) / scale if a64.size else 0.0


LOGIC_OPS = ("Compare", "Logical", "LogicalNot", "Where")


def logic_reference(op: str, attrs: dict, xs: Sequence[np.ndarray]) -> np.ndarray:
    """The comparison, logical and selection kinds (``ir/ops/logic.py``) in numpy, in the
    operands' dtype: a truth value is ``x != 0``, a result 1 or 0."""
    if op == "Where":
        return np.where(xs[0] != 0, xs[1], xs[2])
    if op == "LogicalNot":
        return (xs[0] == 0).astype(xs[0].dtype)
    fn = attrs["mode"] if op == "Compare" else f"logical_{attrs['mode']}"
    return getattr(np, fn)(xs[0], xs[1]).astype(xs[0].dtype)

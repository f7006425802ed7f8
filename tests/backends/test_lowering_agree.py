"""The lowering self-test: every sample of every op, on every model backend, agrees.

A lowering mistake is a dlfuzz bug and must never be reported as a library bug, so each
op kind's samples (samples.py) run through the real workers: float64 on torch, jax, tf
and the three Keras backends (which must agree to ~1e-9), float32 on ONNX Runtime with
and without optimizations (its CPU kernels are float32), and int32 and int64 (the samples
of every integer-capable kind) on all of them, exactly and in the graph's dtype; int64
also on data beyond int32. Compiled modes run in test_model_backends.py.
"""

from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator

import numpy as np
import pytest
from model_support import case_of, max_rel_diff, model_pool

from dlfuzz.executor.pool import Pool
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

F64_BACKENDS = ("torch", "jax", "tf", "keras-tf", "keras-jax", "keras-torch")
# Keras 3 does not keep float64 end to end (its op-level type promotion computes some
# float64 layers in float32), so its float64 results are only float32-accurate.
# TF stores float op attributes (LeakyReLU's alpha) and GELU's constants as float32.
F64_TOLERANCE = {"keras-tf": 1e-6, "keras-jax": 1e-6, "keras-torch": 1e-6, "tf": 1e-8}
# Differences that are the libraries', checked by hand (dlfuzz reports them as findings):
# TF has no float64 3-D pooling kernels; Keras' torch backend counts padded positions in
# 'same' average pooling; Keras' jax backend SimpleRNN fails on float64 (scan carry dtype).
KNOWN_LIBRARY_ISSUES = {
    ("MaxPool3D", "keras-tf"), ("AvgPool3D", "keras-tf"),
    ("AvgPool2D", "keras-torch", "same"), ("AvgPool3D", "keras-torch", "same"),
    ("AvgPool1D", "keras-torch", "same"), ("SimpleRNN", "keras-jax"),
}


def _known(op: str, backend: str, attrs: dict) -> bool:
    return ((op, backend) in KNOWN_LIBRARY_ISSUES
            or (op, backend, attrs.get("padding")) in KNOWN_LIBRARY_ISSUES)
F32_BACKENDS = ("ort", "ort-noopt", "torch")
INT_BACKENDS = F64_BACKENDS + ("ort", "ort-noopt")
# Integer results that are the libraries' bugs (dlfuzz reports them), as (op, backend,
# dtype, inputs): the test checks they still differ from torch, so it fails once the
# library is fixed. Keras' torch backend computes keras.ops.maximum/minimum of int64 in
# int32 (keras.backend.result_type maps int64 to int32): an int32 result, wrapped beyond
# int32 (tests/backends/test_lower_keras.py). ONNX Runtime 1.31.1's int64 Max (also ReLU's
# spelling), Min, Clip and ReduceMax go wrong beyond int32: a bare onnx Max of int64
# [3000000000, -5] and [9, -3000000000] gives [9, -3000000000].
KNOWN_INT_ISSUES = {
    *{(op, "keras-torch", "int64", data) for op in ("Maximum", "Minimum")
      for data in ("random", "wide")},
    *{(op, b, "int64", "wide") for op in ("ReLU", "Clip", "Maximum", "Minimum", "ReduceMax")
      for b in ("ort", "ort-noopt")},
}
WIDE = 3_000_000_000  # int64 inputs beyond int32: x0 holds +WIDE, x1 -WIDE


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    p = model_pool(F64_BACKENDS + ("ort", "ort-noopt"))
    yield p
    p.close()


def _cases(dtype: str) -> list[tuple[str, object]]:
    out = []
    for i, (op, g) in enumerate(all_samples(dtype)):
        model = init_model(g, np.random.default_rng(i))
        out.append((op, case_of(model, np.random.default_rng(1000 + i))))
    return out


def test_every_op_agrees_in_float64(pool: Pool) -> None:
    cases = _cases("float64")
    results = pool.run([c for _, c in cases], only=F64_BACKENDS)
    problems = []
    for (op, case), outcomes in zip(cases, results, strict=True):
        ref = outcomes["torch"]
        for b in F64_BACKENDS:
            o = outcomes[b]
            if _known(op, b, case.graph.nodes[0].a):
                continue
            if not o.ok:
                problems.append(f"{op} {case.graph.nodes[0].a}: {b} {o.exc_type}: "
                                f"{o.message[:200]}")
                continue
            if not ref.ok:
                continue
            want = [t.to_numpy() for t in ref.outputs]
            got = [t.to_numpy() for t in o.outputs]
            if [x.shape for x in got] != [x.shape for x in want]:
                problems.append(f"{op}: {b} shapes {[x.shape for x in got]}")
                continue
            worst = max((max_rel_diff(x, y) for x, y in zip(got, want, strict=True)),
                        default=0.0)
            if worst > F64_TOLERANCE.get(b, 1e-9):
                problems.append(f"{op} {case.graph.nodes[0].a}: {b} off torch by {worst:.3g}")
    assert not problems, "\n".join(problems)


def test_every_op_runs_on_onnxruntime_in_float32(pool: Pool) -> None:
    cases = _cases("float32")
    results = pool.run([c for _, c in cases], only=F32_BACKENDS)
    problems = []
    for (op, case), outcomes in zip(cases, results, strict=True):
        ref = outcomes["torch"]
        for b in ("ort", "ort-noopt"):
            o = outcomes[b]
            if not o.ok:
                problems.append(f"{op}: {b} {o.exc_type}: {o.message[:200]}")
                continue
            worst = max((max_rel_diff(x.to_numpy(), y.to_numpy())
                         for x, y in zip(o.outputs, ref.outputs, strict=True)), default=0.0)
            if worst > 1e-4:
                problems.append(f"{op} {case.graph.nodes[0].a}: {b} off torch by {worst:.3g}")
    assert not problems, "\n".join(problems)


def _int_cases(dtype: str) -> list[tuple[str, str, object]]:
    """Every integer sample on its random inputs (-10..10); int64 also with +WIDE in x0 and
    -WIDE in x1 (at different positions: Maximum keeps one, Minimum the other)."""
    out = []
    seen: Counter[str] = Counter()
    for op, g in all_samples(dtype):
        # Seeded by the op and the sample's place among its own: a new kind in the
        # catalog must not change the data of the others (KNOWN_INT_ISSUES hold on it).
        i = zlib.crc32(op.encode()) % 100_000 + seen[op]
        seen[op] += 1
        model = init_model(g, np.random.default_rng(i))
        xs = random_inputs(g, np.random.default_rng(1000 + i))
        out.append((op, "random", case_of(model, np.random.default_rng(0), inputs=xs)))
        if dtype == "int64":
            wide = [x.copy() for x in xs]
            for x, (position, value) in zip(wide, ((0, WIDE), (1, -WIDE)), strict=False):
                x.flat[position] = value
            out.append((op, "wide", case_of(model, np.random.default_rng(0), inputs=wide)))
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_every_integer_op_agrees_exactly(pool: Pool, dtype: str) -> None:
    """torch, jax, tf, the Keras backends and ORT (both modes) give torch's values bit
    for bit, in the graph's dtype (integer or bool); KNOWN_INT_ISSUES must still differ."""
    cases = _int_cases(dtype)
    results = pool.run([c for _, _, c in cases], only=INT_BACKENDS)
    problems = []
    differs: dict[tuple[str, str, str, str], bool] = defaultdict(bool)
    for (op, data, case), outcomes in zip(cases, results, strict=True):
        where = f"{op} {case.graph.nodes[-1].a} ({data} inputs)"
        ref = outcomes["torch"]
        if not ref.ok:
            problems.append(f"{where}: torch {ref.exc_type}: {ref.message[:200]}")
            continue
        want = [t.to_numpy() for t in ref.outputs]
        assert all(w.dtype == np.dtype(dtype) for w in want), (where, want)
        for b in INT_BACKENDS:
            o = outcomes[b]
            if not o.ok:
                problems.append(f"{where}: {b} {o.exc_type}: {o.message[:200]}")
                continue
            got = [t.to_numpy() for t in o.outputs]
            same = len(got) == len(want) and all(
                x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
                for x, y in zip(got, want, strict=True))
            if (op, b, dtype, data) in KNOWN_INT_ISSUES:
                differs[(op, b, dtype, data)] |= not same
            elif not same:
                problems.append(f"{where}: {b} {[(x.dtype.name, x.ravel()[:4]) for x in got]}"
                                f" != torch {[x.ravel()[:4] for x in want]}")
    # A known issue must still show on some sample of its op (ORT's int64 ReduceMax is
    # right on some rows holding a value beyond int32 and wrong on others).
    problems += [f"{op} ({data} inputs): {b} known issue no longer reproduces"
                 for (op, b, dt, data), shown in differs.items() if not shown]
    assert not problems, "\n".join(problems)


def test_probe_returns_every_node(pool: Pool) -> None:
    from dlfuzz.engines.model.seeds import SEEDS

    model = SEEDS["lenet5"](np.random.default_rng(0), dtype="float64")
    case = case_of(model, np.random.default_rng(1), probe=True)
    outcomes = pool.run([case], only=("torch", "jax", "tf", "keras-jax", "ort-noopt"))[0]
    types = case.graph.types()
    for b, o in outcomes.items():
        if b.startswith("ort"):
            continue  # float32 only
        assert o.ok, (b, o.message)
        assert [t.shape for t in o.outputs] == [types[n.id].shape for n in case.graph.nodes], b

"""Model input sets: the three profiles, and the rescaling search that keeps them finite."""

from __future__ import annotations

import math
from collections import Counter

import ml_dtypes
import numpy as np

from dlfuzz.cases import Outcome, Tensor
from dlfuzz.engines.model.engine import ModelEngine
from dlfuzz.engines.model.inputs import (
    INT32_EDGE_STEP,
    INT_NORMAL,
    INT_SPECIALS,
    INT_WIDE_DECADES,
    MAX_RESCALES,
    PROFILES,
    RESCALE,
    WIDE_DECADES,
    WIDE_HEADROOM,
    all_finite,
    draw_input_set,
    special_values,
)
from dlfuzz.ir.graph import GraphBuilder


def _graph(dtype: str):
    b = GraphBuilder((2, 5, 3), dtype=dtype)
    b.add("Tanh", "x0")
    return b.build()


def test_profiles_come_in_their_shares_and_keep_their_promises() -> None:
    rng = np.random.default_rng(0)
    graph = _graph("float16")
    sets = [draw_input_set(graph, rng) for _ in range(2000)]
    shares = Counter(s.profile for s in sets)
    for profile, share in PROFILES:
        assert abs(shares[profile] / len(sets) - share) < 0.04, (profile, shares)
    largest = float(ml_dtypes.finfo(np.float16).max)
    for s in sets:
        (x,) = s.arrays
        assert x.dtype == np.float16 and x.shape == (2, 5, 3)
        if s.profile == "special":
            specials = ~np.isfinite(x) | (x == 0) | (
                (x != 0) & (np.abs(x) < ml_dtypes.finfo(np.float16).tiny))
            assert 1 <= int(specials.sum()) <= 3
            continue
        assert all_finite(s.arrays)
        if s.profile == "wide":
            assert 10 ** WIDE_DECADES[0] <= s.scale <= 10 ** WIDE_DECADES[1]
            assert float(np.abs(x.astype(np.float64)).max()) <= WIDE_HEADROOM * largest
            assert s.label.startswith("wide x")
        else:
            assert s.scale == 1.0 and s.label == "normal"
    # The wide profile spans decades: some sets far below 1, some far above.
    scales = [s.scale for s in sets if s.profile == "wide"]
    assert min(scales) < 0.01 and max(scales) > 100


def test_special_values_are_the_dtypes_own() -> None:
    bf16 = special_values("bfloat16")
    assert float(ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal) in bf16
    assert any(np.isnan(v) for v in bf16) and float("-inf") in bf16
    # Not the largest finite value: through layers it overflows one library's sums only.
    assert float(ml_dtypes.finfo(ml_dtypes.bfloat16).max) not in bf16
    assert float(np.finfo(np.float64).smallest_subnormal) in special_values("float64")


def test_integer_graphs_take_whole_numbers_in_every_profile() -> None:
    """int32/int64 sets: normal in -10..10, wide up to about ±1,000 (scale 1..100),
    special with 0/-1/1 put in; always "finite", so never rescaled; no dtype extremes."""
    b = GraphBuilder((2, 5, 3), dtype="int32")
    b.add("Square", "x0")
    for dtype in ("int32", "int64"):
        graph = b.build().with_dtype(dtype)
        rng = np.random.default_rng(1)
        sets = [draw_input_set(graph, rng) for _ in range(1000)]
        assert set(Counter(s.profile for s in sets)) == {"normal", "wide", "special"}
        for s in sets:
            (x,) = s.arrays
            assert x.dtype == np.dtype(dtype) and x.shape == (2, 5, 3)
            assert all_finite(s.arrays)
            if s.profile == "wide" and s.scale == INT32_EDGE_STEP:  # int64 only
                assert dtype == "int64"
                # Around int32's edge, and under sqrt(int64 max): a square still fits.
                assert int(np.abs(x).max()) < math.isqrt(int(np.iinfo(np.int64).max))
                continue
            limit = INT_NORMAL[1] * (10 ** INT_WIDE_DECADES[1] if s.profile == "wide" else 1)
            assert int(np.abs(x).max()) <= limit
            if s.profile == "wide":
                assert 10 ** INT_WIDE_DECADES[0] <= s.scale <= 10 ** INT_WIDE_DECADES[1]
        wide = np.concatenate([s.arrays[0].ravel() for s in sets if s.profile == "wide"
                               and s.scale != INT32_EDGE_STEP])
        assert int(np.abs(wide).max()) > 500  # wide reaches the hundreds
        edge = [s for s in sets if s.profile == "wide" and s.scale == INT32_EDGE_STEP]
        if dtype == "int64":  # about half the wide sets hold values int32 cannot
            beyond = [s for s in edge if int(np.abs(s.arrays[0]).max()) > 2**31 - 1]
            assert 0.3 < len(edge) / sum(s.profile == "wide" for s in sets) < 0.7
            assert len(beyond) > 0.5 * len(edge)
        else:
            assert not edge
        normal = np.concatenate([s.arrays[0].ravel() for s in sets if s.profile == "normal"])
        assert set(np.unique(normal)) == set(range(INT_NORMAL[0], INT_NORMAL[1] + 1))
    assert special_values("int64") == tuple(float(v) for v in INT_SPECIALS)
    assert float(np.iinfo(np.int32).min) not in special_values("int32")


def _outcome(value: float, shape: tuple[int, ...] = (2, 5, 3)) -> Outcome:
    return Outcome("torch", "ok", (Tensor.from_numpy(np.full(shape, value, np.float32)),))


def test_a_set_whose_outputs_overflow_is_rescaled_until_finite_or_given_up() -> None:
    engine = ModelEngine(seed=5, libraries=("torch",), method="synth", inputs_per_model=4)
    cases = engine.propose(32)
    labels = Counter(dict(c.origin)["inputs"].split()[0] for c in cases)
    assert set(labels) <= {"normal", "wide", "special"} and sum(labels.values()) == len(cases)
    target = next(c for c in cases if dict(c.origin)["inputs"] == "normal")
    special = [c for c in cases if dict(c.origin)["inputs"] == "special"]
    for case in cases:
        engine.feedback(case, {"torch": _outcome(np.inf if case is target else 0.5)}, [])
    # Special sets are not searched: their NaN/Inf outputs are the point.
    for case in special:
        assert engine._searched.get(case.id) is None
    previous = target.tensors[0].to_numpy()
    case = target
    for step in range(1, MAX_RESCALES + 1):
        (case, *rest) = engine.propose(32)
        assert rest, "new models follow the rescaled case in the same batch"
        assert case.graph == target.graph and case.weights == target.weights
        assert dict(case.origin)["inputs"] == f"normal x{RESCALE ** -step:.3g}"
        got = case.tensors[0].to_numpy()
        # One division per step, rounded to the graph's dtype (exact but in subnormals).
        want = (previous.astype(np.float64) / RESCALE).astype(previous.dtype)
        np.testing.assert_array_equal(got, want)
        previous = got
        engine.feedback(case, {"torch": _outcome(np.nan)}, [])
        for other in rest:
            engine.feedback(other, {"torch": _outcome(0.5)}, [])
    counts = engine.counters()
    assert counts["model_inputs_non_finite_outputs"] == MAX_RESCALES + 1
    assert counts["model_inputs_rescaled_non_finite"] == MAX_RESCALES
    assert counts["model_inputs_rescale_gave_up"] == 1
    # Given up: the next batch starts with a new model, not the same graph again.
    assert engine.propose(32)[0].graph != target.graph


def test_a_rescaled_set_that_comes_back_finite_ends_the_search() -> None:
    engine = ModelEngine(seed=6, libraries=("torch",), method="synth", inputs_per_model=2)
    cases = engine.propose(8)
    target = next(c for c in cases if dict(c.origin)["inputs"] != "special")
    for case in cases:
        engine.feedback(case, {"torch": _outcome(np.inf if case is target else 0.5)}, [])
    (retry, *rest) = engine.propose(8)
    assert retry.graph == target.graph
    engine.feedback(retry, {"torch": _outcome(0.5)}, [])
    assert engine.counters()["model_inputs_rescaled_finite"] == 1
    assert engine.propose(8)[0].graph != target.graph


def test_a_demoted_low_precision_finding_queues_the_models_float32_sibling() -> None:
    from dlfuzz.oracles.base import finding

    engine = ModelEngine(seed=8, libraries=("torch",), method="synth", inputs_per_model=2)
    cases = []
    while not any(c.graph.dtype == "float16" for c in cases):
        cases = engine.propose(16)
    half = next(c for c in cases if c.graph.dtype == "float16")
    demoted = finding("differential", "numeric", half, "torch", "call", "torch off",
                      demoted="a float16 model: ...", low_precision_model="float16")
    plain = finding("differential", "numeric", half, "torch", "call", "torch off")
    for case in cases:
        engine.feedback(case, {"torch": _outcome(0.5)}, [plain])  # no sibling for these
    assert engine.counters().get("model_float32_siblings", 0) == 0
    engine.feedback(half, {"torch": _outcome(0.5)}, [demoted])
    engine.feedback(half, {"torch": _outcome(0.5)}, [demoted])  # one sibling per model
    (sibling, *rest) = engine.propose(16)
    assert engine.counters()["model_float32_siblings"] == 1
    assert sibling.graph.dtype == "float32" and rest[0].graph != sibling.graph
    assert [n.op for n in sibling.graph.nodes] == [n.op for n in half.graph.nodes]
    for wide, narrow in zip(sibling.tensors, half.tensors, strict=True):
        assert wide.dtype == "float32"
        np.testing.assert_array_equal(wide.to_numpy(), narrow.to_numpy().astype(np.float32))
    assert [k for k, _ in sibling.weights] == [k for k, _ in half.weights]
    assert all(w.dtype == "float32" for _, w in sibling.weights)
    assert "float32 of a float16 model" in dict(sibling.origin)["sibling"]

"""``--method synth``: graphs built operator by operator from the op catalog."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dlfuzz.engines.model.engine import ModelEngine
from dlfuzz.engines.model.settings import ModelEngineSettings
from dlfuzz.engines.model.synth import MAX_ELEMENTS, NODES, SynthMethod, _factorization
from dlfuzz.ir.graph import GRAPH_DTYPES, INT_GRAPH_DTYPES, GraphBuilder, InvalidGraph
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import CATALOG


@pytest.fixture(scope="module")
def models() -> list[Model]:
    method = SynthMethod([], np.random.default_rng(3), inputs_per_model=2)
    return [method.propose().model for _ in range(300)]


def test_every_graph_is_valid_and_of_the_drawn_size(models: list[Model]) -> None:
    for model in models:
        model.check()  # graph and weights agree with every op's rules
        g = model.graph
        assert 1 <= len(g.nodes) <= NODES[1]
        assert max(t.size for t in g.types().values()) <= MAX_ELEMENTS
        read = {v for n in g.nodes for v in n.inputs}
        assert set(g.outputs) == {n.id for n in g.nodes} - read  # the leaves
    assert np.median([len(m.graph.nodes) for m in models]) >= NODES[0]


def test_graphs_hold_real_operators_of_every_kind_and_dtype(models: list[Model]) -> None:
    ops = Counter(op for m in models for op in m.graph.ops())
    assert set(CATALOG) - set(ops) <= {"Identity", "Dropout"}  # drawn 1 in 20 as often
    assert (ops["Identity"] + ops["Dropout"]) / sum(ops.values()) < 0.02
    dtypes = Counter(m.graph.dtype for m in models)
    assert set(dtypes) == set(GRAPH_DTYPES)
    assert dtypes["float32"] > dtypes["float64"]
    # Merges join values of the graph: some graphs are DAGs, not chains.
    assert sum(any(len(n.inputs) > 1 for n in m.graph.nodes) for m in models) > 100


def test_integer_graphs_hold_only_kinds_that_allow_integers(models: list[Model]) -> None:
    """int32/int64 graphs come up (about a fifth), each valid, with integer weights and
    whole-number bounds, and none holds a float-only kind."""
    ints = [m for m in models if m.graph.dtype in INT_GRAPH_DTYPES]
    assert {m.graph.dtype for m in ints} == set(INT_GRAPH_DTYPES)
    assert 0.1 < len(ints) / len(models) < 0.35
    allowed = {k for k, kind in CATALOG.items() if "int32" in kind.dtypes}
    assert {"Square", "Mul", "ReduceSum", "Clip", "UpSampling2D"} <= allowed
    assert not {"Conv2D", "ReduceMean", "MaxPool2D", "Sigmoid", "Dense"} & allowed
    for m in ints:
        m.check()
        assert set(m.graph.ops()) <= allowed, m.graph.ops()
        for w in m.weights.values():
            assert w.dtype.name == m.graph.dtype and 1 <= abs(int(w)) <= 3
        for n in m.graph.nodes:
            for bound in (n.attr("min_value"), n.attr("max_value")):
                assert bound is None or float(bound).is_integer()
    kinds = Counter(op for m in ints for op in m.graph.ops())
    assert len(kinds) >= 20  # the integer kinds are all drawn, not a few


def test_an_integer_graph_with_a_float_only_kind_is_refused() -> None:
    b = GraphBuilder((2, 6, 3), dtype="int32")
    b.add("Sigmoid", b.add("Abs", "x0"))
    with pytest.raises(InvalidGraph, match=r"n1 \(Sigmoid\) does not compute in int32"):
        b.build()
    b = GraphBuilder((2, 6, 3), dtype="int64")
    b.add("Clip", "x0", min_value=-1.5, max_value=2.0)
    with pytest.raises(InvalidGraph, match="not a whole number"):
        b.build()
    b = GraphBuilder((2, 6, 3), dtype="float32")
    b.add("Sigmoid", b.add("Abs", "x0"))
    assert b.build().with_dtype("float64").dtype == "float64"
    with pytest.raises(InvalidGraph, match="does not compute in int64"):
        b.build().with_dtype("int64")


def test_the_same_seed_draws_the_same_graphs() -> None:
    def digests(seed: int) -> list[str]:
        method = SynthMethod([], np.random.default_rng(seed), inputs_per_model=1)
        return [method.propose().model.digest() for _ in range(5)]

    assert digests(7) == digests(7) != digests(8)


def test_factorization_keeps_the_size() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 7, 12, 360, 4096):
        for parts in (1, 2, 4):
            dims = _factorization(size, parts, rng)
            assert len(dims) == parts and int(np.prod(dims)) == size


def test_the_model_engine_never_runs_dry_with_synth() -> None:
    settings = ModelEngineSettings(method="synth", inputs_per_model=3)
    engine = ModelEngine.from_settings(1, ("torch", "jax"), None, settings)
    for batch in range(20):
        engine.reseed(batch)
        cases = engine.propose(24)
        assert len(cases) == 24  # 8 models of 3 inputs, every batch
        assert {dict(c.origin)["method"] for c in cases} == {"synth"}


def test_a_seed_model_with_synth_is_an_error_naming_the_fix() -> None:
    from dlfuzz.errors import UsageError

    with pytest.raises(UsageError, match="--seed-model .*takes no seed model"):
        ModelEngineSettings(method="synth", seed_models=("lenet5",))


def test_a_method_giving_up_on_a_parent_does_not_shorten_the_batch() -> None:
    """A mutation method returns None when every rule refused its parent; the engine draws
    again instead of ending the batch (DLJSFuzzer campaigns had half their batches empty)."""
    engine = ModelEngine(seed=1, libraries=("torch",), method="synth", inputs_per_model=2)
    real = engine.method.propose
    calls = {"n": 0}

    def gives_up_every_other_time():  # type: ignore[no-untyped-def]
        calls["n"] += 1
        return None if calls["n"] % 2 else real()

    engine.method.propose = gives_up_every_other_time  # type: ignore[method-assign]
    assert len(engine.propose(16)) == 16 and engine.dry_draws == 8


def test_clip_bounds_are_drawn_and_ordered(models: list[Model]) -> None:
    bounds = [(n.a["min_value"], n.a["max_value"]) for m in models for n in m.graph.nodes
              if n.op == "Clip"]
    assert len(bounds) >= 10
    assert all(lo <= hi for lo, hi in bounds)
    assert len(set(bounds)) > len(bounds) // 2  # drawn, not the defaults


def test_a_dtype_the_backends_refuse_is_drawn_less() -> None:
    from dlfuzz.cases import Outcome
    from dlfuzz.engines.model.engine import ModelResult, Proposal
    from dlfuzz.engines.model.synth import DTYPE_FLOOR, DTYPES
    from dlfuzz.ir.graph import GraphBuilder

    method = SynthMethod([], np.random.default_rng(4), inputs_per_model=1)
    before = Counter(method._dtype() for _ in range(4000))
    for _ in range(50):  # every bfloat16 model refused by one backend, the rest all ran
        for dtype, _share in DTYPES:
            b = GraphBuilder((1, 3), dtype=dtype)
            b.add("Identity", "x0")  # a kind of every dtype, integers and bool included
            proposal = Proposal(Model(b.build(), {}), [], "model:synth", ())
            status = "exception" if dtype == "bfloat16" else "ok"
            method.learn(ModelResult(proposal, [{"torch": Outcome("torch", "ok"),
                                                 "ort": Outcome("ort", status)}]))
    after = Counter(method._dtype() for _ in range(4000))
    share = dict(DTYPES)["bfloat16"]
    assert abs(before["bfloat16"] / 4000 - share) < 0.03
    # 0.12 * 0.2 against 0.88 of the others, run every time: about 2.7 %
    expected = share * DTYPE_FLOOR / (share * DTYPE_FLOOR + (1 - share) * 51 / 52)
    assert abs(after["bfloat16"] / 4000 - expected) < 0.015


def test_each_method_has_its_own_inputs_per_model_by_default() -> None:
    assert ModelEngine(method="synth").inputs_per_model == 1
    assert ModelEngine(method="lemon").inputs_per_model == 4
    assert ModelEngine(method="synth", inputs_per_model=3).inputs_per_model == 3
    assert ModelEngineSettings(method="synth").inputs_per_model == 0  # the method's own


def test_a_compiling_backend_gets_many_input_sets_per_synthesized_graph() -> None:
    from dlfuzz.engines.model.settings import COMPILED_INPUTS

    engine = ModelEngine(method="synth", libraries=("torch", "jax"))
    engine.use_backends({"torch": False, "jax-jit": True})
    assert engine.inputs_per_model == COMPILED_INPUTS["synth"] > 1
    cases = engine.propose(64)
    assert len({c.model_key for c in cases}) * COMPILED_INPUTS["synth"] == len(cases)
    eager = ModelEngine(method="synth", libraries=("torch",))
    eager.use_backends({"torch": False, "ort": False})
    assert eager.inputs_per_model == 1
    given = ModelEngine(method="synth", libraries=("torch",), inputs_per_model=2)
    given.use_backends({"jax-jit": True})
    assert given.inputs_per_model == 2  # the user's value stays

"""A compiled program may round one value differently for each of its consumers; the
judge's sensitivity must allow it (``ir/rounding.py``).

Found by a 10-minute synth campaign on torch, ort, jax-jit and tf-xla and filed there as
two wrong results (jax-jit and tf-xla Softmax): ``softmax(concat(relu(x*x), x*x))`` for
x = 6687.5. In exact arithmetic both halves hold 44722656.25 and the two largest
probabilities are 0.5; float32 rounds x*x to 44722656 (ulp 4). XLA keeps the product
unrounded in one fused consumer (a multiply-add) and rounded in the other, so the two
copies differ by 0.25 and the probabilities are 0.438 and 0.562. Every consumer seeing a
correctly rounded product is what a fused program is allowed not to do; the input nudges
move both copies alike and saw no sensitivity at all.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_support import case_of, model_pool

from dlfuzz import registry
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import CATALOG
from dlfuzz.ir.rounding import EXACT, nudge_edges
from dlfuzz.oracles.reference import Judge

BACKENDS = ("torch", "jax-jit", "tf", "jax")
X = np.array([[6687.5, -613.5, 5009.5, -4358.75, 5987.75, -366.75, 6286.75, -2301.25,
               2510.75, -3298.5]], np.float32)


@pytest.fixture(scope="module")
def pool():
    with model_pool(BACKENDS) as p:
        yield p


def two_copies() -> Model:
    b = GraphBuilder((1, 10))
    square = b.add("Square", "x0")
    relu = b.add("ReLU", square)
    both = b.add("Concat", relu, square, axis=1)
    b.add("Softmax", both, axis=1)
    return Model(b.build(), {}).check()


def judged(pool, nudges: int = 2):
    """The outcomes of torch and jax-jit, the float64 reference of the eager libraries,
    and jax-jit's verdict."""
    from dlfuzz.oracles.reference import JudgeSettings

    classes = {name: registry.load("backend", name) for name in BACKENDS}
    library_of = {name: c.library for name, c in classes.items()}
    judge = Judge(lambda cs, only: pool.run(cs, only=only), ["torch", "tf", "jax"],
                  library_of, settings=JudgeSettings(nudges=nudges), seed=0)
    case = case_of(two_copies(), np.random.default_rng(0), inputs=[X])
    outcomes = pool.run([case], only=["torch", "jax-jit"])[0]
    ref = judge.reference(case, outcomes)
    assert ref is not None and ref.method == "float64"
    (verdict,) = [v for v in judge.verdicts(outcomes, ref, case) if v.backend == "jax-jit"]
    return outcomes, verdict


def test_the_compiled_program_rounds_the_two_copies_apart(pool) -> None:
    """The premise: if XLA ever rounds both copies alike, this test says so."""
    outcomes, _ = judged(pool)
    jit = outcomes["jax-jit"].outputs[0].to_numpy()
    eager = outcomes["torch"].outputs[0].to_numpy()
    assert eager[0, 0] == eager[0, 10] == 0.5
    assert abs(float(jit[0, 0]) - 0.5) > 0.05, "XLA rounds both copies alike now"


def test_a_consumer_rounded_apart_is_within_the_sensitivity(pool) -> None:
    _, verdict = judged(pool)
    assert not verdict.guilty, verdict


def test_without_the_rounding_nudges_it_would_be_blamed(pool) -> None:
    """The nudges are what clears it: with no nudged runs the same outputs are guilty."""
    _, verdict = judged(pool, nudges=0)
    assert verdict.guilty


def test_every_exact_kind_is_a_kind_and_rounding_kinds_get_a_nudge_per_edge() -> None:
    assert EXACT <= set(CATALOG)
    model = two_copies()
    graph, weights = nudge_edges(model.graph.with_dtype("float64"), {}, 2.0 ** -23,
                                 np.random.default_rng(0))
    square = model.graph.nodes[0].id
    readers = [n for n in graph.nodes if n.op == "MulConst"]
    # Square is read twice (ReLU, Concat): two nudges; ReLU and Concat are exact: none.
    assert [n.inputs for n in readers] == [(square,), (square,)]
    factors = [float(weights[f"{n.id}.value"]) for n in readers]
    assert factors[0] != factors[1] and all(abs(f - 1) <= 2.0 ** -23 for f in factors)
    assert graph.outputs == model.graph.outputs
    # eps 0 (an integer graph's): nothing to nudge.
    plain = model.graph.with_dtype("float64")
    assert nudge_edges(plain, {}, 0.0, np.random.default_rng(0)) == (plain, {})

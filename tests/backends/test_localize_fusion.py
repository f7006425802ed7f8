"""Localizing a bug that a probe run hides: ONNX Runtime's pad fusion.

ONNX Runtime 1.31 (the version pyproject pins) folds a zero Pad into the MaxPool after it
as pooling pads, and pooling pads count as -inf, not 0: a window that only sees padding
and negative values returns the negative maximum instead of 0. dlfuzz found this in a
LEMON campaign from LeNet-5. The fusion happens only when the Pad's value is used
nowhere else, so a probe run (every value an output) is correct on ort and R_a has
nothing to go on; the prefix search must still blame the MaxPool. If ONNX Runtime fixes
the fusion, the first assertion says so and this test needs a planted fusion instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_support import case_of, model_pool

from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.oracles.localize import localize_many


@pytest.fixture(scope="module")
def pool():
    with model_pool(("ort", "ort-noopt", "torch")) as p:
        yield p


def fused_pattern() -> Model:
    b = GraphBuilder((1, 4, 4, 2))
    x = b.add("DepthwiseConv2D", "x0", kernel_size=(3, 3), padding="same")
    x = b.add("Cropping2D", x, cropping=((1, 1), (1, 1)))
    x = b.add("ZeroPadding2D", x, padding=((1, 1), (1, 1)))
    b.add("MaxPool2D", x, pool_size=(2, 2))
    g = b.build()
    weights = {"n0.kernel": -np.ones((3, 3, 2, 1), np.float32),  # every value negative
               "n0.bias": np.full((2,), -0.5, np.float32)}
    return Model(g, weights).check()


def test_prefix_search_blames_the_fused_maxpool(pool) -> None:
    rng = np.random.default_rng(0)
    case = case_of(fused_pattern(), rng, inputs=[np.ones((1, 4, 4, 2), np.float32)])
    run = pool.run([case])[0]
    fused, plain = run["ort"].outputs[0].to_numpy(), run["ort-noopt"].outputs[0].to_numpy()
    np.testing.assert_array_equal(plain, np.zeros_like(plain))  # windows see a zero pad
    assert (fused < 0).all(), "ONNX Runtime no longer mis-fuses Pad into MaxPool"
    probe = pool.run([case.with_probe(True)])[0]
    np.testing.assert_array_equal(probe["ort"].outputs[-1].to_numpy(), plain)  # hidden

    calls: list[int] = []

    def runner(cases, only):
        calls.append(len(cases))
        return pool.run(cases, only=only)

    (suspect,) = localize_many(runner, [(case, "ort", "ort-noopt")])
    assert (suspect.op, suspect.method, suspect.against) == ("MaxPool2D", "prefix", "ort-noopt")
    assert suspect.node == case.graph.nodes[-1].id and suspect.ratio > 1
    assert len(calls) <= 1 + 2 + 1  # the probe, a binary search over 4 nodes, the last


def test_status_finding_is_about_the_layer_whose_prefix_fails(pool) -> None:
    """The same fusion with a pad as wide as the pooling window makes ONNX Runtime refuse
    its own fused MaxPool at session start; the status finding names the MaxPool, not the
    seed model, so every model that contains the pattern is one bug."""
    from dlfuzz import registry
    from dlfuzz.ir.weights import init_model
    from dlfuzz.oracles.base import OracleContext
    from dlfuzz.oracles.reference import Judge
    from dlfuzz.oracles.status import StatusOracle

    rng = np.random.default_rng(1)
    b = GraphBuilder((1, 6, 6, 2))
    x = b.add("DepthwiseConv2D", "x0", kernel_size=(3, 3), padding="same")
    x = b.add("ZeroPadding2D", x, padding=((2, 2), (2, 2)))
    x = b.add("MaxPool2D", x, pool_size=(2, 2))
    x = b.add("Flatten", x)
    b.add("Dense", x, units=3)
    case = case_of(init_model(b.build(), rng), rng, label="model:test")
    backends = ("ort", "ort-noopt", "torch")
    classes = {name: registry.load("backend", name) for name in backends}
    library_of = {name: c.library for name, c in classes.items()}
    compiled = {name: c.compiled for name, c in classes.items()}
    judge = Judge(lambda cs, only: pool.run(cs, only=only),
                  [n for n in backends if not compiled[n]], library_of)
    ctx = OracleContext(judge, library_of, compiled)
    outcomes = pool.run([case])[0]
    assert not outcomes["ort"].ok and outcomes["ort-noopt"].ok
    (found,) = StatusOracle().check_many([(case, outcomes)], ctx)
    assert len(found) == 1, found
    f = found[0]
    assert (f.guilty_backend, f.api, f.detail("localized_by")) == ("ort", "MaxPool2D", "prefix")
    assert f.detail("suspect_node") == case.graph.nodes[2].id
    assert "|MaxPool2D|" in f.signature and "Pad should be smaller than kernel" in f.message


def test_a_wrong_value_that_goes_around_the_cut_is_found_by_the_prefix_frontier(pool) -> None:
    """ONNX Runtime 1.31.1's int64 ReduceMin after a Transpose compares values beyond
    int32 as int32 (docs/models.md); with every value an output (the probe) it is right,
    so R_a sees nothing and the prefix search decides. A prefix used to return only its
    last node's value: the binary search's first cut, at the AddConst (which reads the
    input, not the ReduceMin), looked right, and it blamed the Transpose after the
    ReduceMin (a 10-minute synth campaign filed that as an ORT Transpose bug).
    Each prefix now returns every value the rest of the model reads or returns."""
    b = GraphBuilder((2, 3, 4), (2, 1, 1), dtype="int64")
    t = b.add("Transpose", "x0", dims=(2, 1))
    low = b.add("ReduceMin", t, axes=(2,), keepdims=False)
    add = b.add("AddConst", "x0")
    out = b.add("Transpose", low, dims=(1,))
    total = b.add("ReduceSum", "x1", axes=(1, 2), keepdims=True)
    model = Model(b.build(low, add, out, total),
                  {f"{add}.value": np.asarray(2, np.int64)}).check()
    x0 = np.array([[[1715417549, 1245367730, 1852117398, 1268888318],
                    [-398282557, -708914251, 657556461, -2258816496],
                    [-2079203087, 253126812, 846529753, -286313764]],
                   [[-715212091, 2739906004, -1085637138, 1068711833],
                    [262133101, -1055555740, 2417030919, -2256146148],
                    [-1655448174, 2006541894, 1697557534, -106933474]]], np.int64)
    case = case_of(model, np.random.default_rng(0), inputs=[x0, np.zeros((2, 1, 1), np.int64)])
    run = pool.run([case])[0]
    wrong = run["ort"].outputs[0].to_numpy()
    assert not np.array_equal(wrong, x0.min(axis=1)), "ORT's int64 ReduceMin is right now"
    probe = pool.run([case.with_probe(True)])[0]
    assert all(np.array_equal(a.to_numpy(), c.to_numpy())
               for a, c in zip(probe["ort"].outputs, probe["torch"].outputs, strict=True))

    (suspect,) = localize_many(lambda cs, only: pool.run(cs, only=only),
                               [(case, "ort", "torch")])
    assert (suspect.op, suspect.method, suspect.node) == ("ReduceMin", "prefix", low)

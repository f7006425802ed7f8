"""The finite-first reduction pass: what it offers, and that the reducer may take it.

Pure data (no workers): the candidates themselves. Whether a wrong result survives the
pass inside a real library is tests/unit/test_ieee_judging.py's.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, GraphCase, Ref, Tensor
from dlfuzz.kinds.api import finite_first
from dlfuzz.kinds.finite_first import finite_variants
from dlfuzz.kinds.graph_reduce import finite_first as graph_finite_first
from dlfuzz.kinds.graph_reduce import model_weight
from dlfuzz.triage.reduce import api_weight

INF, NAN = np.inf, np.nan


def test_variants_replace_non_finite_elements_boldest_first():
    a = np.array([1.5, INF, -INF, NAN], np.float32)
    b = np.array([2, 3], np.int64)
    variants = list(finite_variants([a, b]))
    first = variants[0]
    assert np.array_equal(first[0], np.array([1.5, 0, 0, 0], np.float32))
    assert first[1] is b  # integers are never touched
    large = variants[2][0]
    assert np.isfinite(large).all() and large[1] > 1e18 and large[2] < -1e18
    assert large[3] > 0  # NaN becomes a positive large value
    # Then one element at a time: each candidate changes exactly one element.
    singles = variants[3:]
    assert singles and all(np.count_nonzero(~np.isfinite(v[0])) == 2 for v in singles)
    assert list(finite_variants([np.ones(3, np.float32)])) == []


def test_the_large_stand_in_squares_without_overflow_in_its_own_dtype():
    for dtype in (np.float16, np.float32):
        v = list(finite_variants([np.array([INF, -INF], dtype)]))[2][0]
        assert v.dtype == dtype and v[0] > 100 and v[1] < -100
        with np.errstate(over="raise"):
            assert np.isfinite(v * v + v * v).all()


def test_every_api_candidate_weighs_less_so_the_reducer_may_take_it():
    x = np.array([[1.0, INF], [NAN, -2.0]], np.float32)
    case = ApiCase("exp", (Tensor.from_numpy(x),), (("numpy", Call("numpy.exp", (Ref(0),))),))
    candidates = list(finite_first(case))
    assert len(candidates) >= 6
    assert all(api_weight(c) < api_weight(case) for c in candidates)
    assert any(np.isfinite(c.tensors[0].to_numpy()).all() for c in candidates)


def test_model_inputs_and_weights_are_made_finite():
    from dlfuzz.ir.graph import GraphBuilder

    b = GraphBuilder((2, 4))
    b.add("Dense", "x0", units=3)
    graph = b.build()
    kernel = np.ones((4, 3), np.float32)
    kernel[0, 0] = INF
    x0 = np.ones((2, 4), np.float32)
    x0[1, 1] = NAN
    case = GraphCase("seed:dense", graph, (("n0.bias", Tensor.from_numpy(np.zeros(3, np.float32))),
                                           ("n0.kernel", Tensor.from_numpy(kernel))),
                     (Tensor.from_numpy(x0),), ("torch",))
    candidates = list(graph_finite_first(case))
    assert all(model_weight(c) < model_weight(case) for c in candidates)
    assert any(np.isfinite(c.tensors[0].to_numpy()).all() for c in candidates)
    assert any(np.isfinite(dict(c.weights)["n0.kernel"].to_numpy()).all() for c in candidates)

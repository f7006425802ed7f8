"""A model finding is judged under the layer it is filed as.

``semantics.json`` names model layers (torch's ThresholdedReLU propagating NaN on
purpose, pytorch/pytorch#10277); the differential oracle used to judge the finding on
the unlocalized case (``api`` "model:..."), so no layer row ever matched and a synth
campaign on torch and ORT filed torch's by-design NaN as a special-value bug. Here the
whole oracle runs on real workers: torch keeps the NaN, ORT and the float64 references
of TF and JAX give 0, torch is blamed, the layer is localized, and the finding is
demoted with the upstream link.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_support import case_of, model_pool

from dlfuzz import registry
from dlfuzz.campaign import MODEL_REFERENCE_ORDER
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.differential import DifferentialOracle
from dlfuzz.oracles.reference import Judge

BACKENDS = ("torch", "ort", "tf", "jax", "jax-jit")


@pytest.fixture(scope="module")
def pool():
    with model_pool(BACKENDS) as p:
        yield p


def _context(pool) -> OracleContext:
    """The campaign's judge for models: float64 references of torch, TF and JAX."""
    classes = {name: registry.load("backend", name) for name in BACKENDS}
    library_of = {name: c.library for name, c in classes.items()}
    compiled = {name: c.compiled for name, c in classes.items()}
    judge = Judge(lambda cs, only: pool.run(cs, only=only), ["torch", "tf", "jax"],
                  library_of, preference=MODEL_REFERENCE_ORDER, first=2)
    return OracleContext(judge, library_of, compiled)


def test_torch_threshold_nan_is_filed_under_its_layer_and_demoted(pool) -> None:
    b = GraphBuilder((1, 4))
    x = b.add("Softsign", "x0")
    b.add("ThresholdedReLU", x, theta=0.25)
    model = Model(b.build(), {}).check()
    case = case_of(model, np.random.default_rng(0), label="model:synth",
                   inputs=[np.array([[np.nan, 2.0, -1.0, 0.5]], np.float32)])
    ctx = _context(pool)
    outcomes = pool.run([case], only=["torch", "ort"])[0]
    assert np.isnan(outcomes["torch"].outputs[0].to_numpy()[0, 0])
    assert outcomes["ort"].outputs[0].to_numpy()[0, 0] == 0
    (found,) = DifferentialOracle().check_many([(case, outcomes)], ctx)
    (f,) = [f for f in found if f.guilty_backend == "torch"]
    assert f.api == "ThresholdedReLU"
    assert "pytorch/pull/10277" in str(f.detail("demoted")), dict(f.details)


def test_xla_mask_multiply_dropping_nan_is_filed_under_mul_and_demoted(pool) -> None:
    """x * LogicalNot(x) with a NaN in x: the mask is 0 there, so IEEE gives NaN; XLA
    rewrites the product of x and a converted bool as a select and gives 0 under jit
    (jax-ml/jax#12233, open). A 10-minute synth campaign filed it on jax-jit and tf-xla."""
    b = GraphBuilder((1, 4))
    b.add("Mul", "x0", b.add("LogicalNot", "x0"))
    model = Model(b.build(), {}).check()
    case = case_of(model, np.random.default_rng(0), label="model:synth",
                   inputs=[np.array([[np.nan, 2.0, 0.0, -1.0]], np.float32)])
    ctx = _context(pool)
    outcomes = pool.run([case], only=["torch", "jax-jit"])[0]
    assert np.isnan(outcomes["torch"].outputs[0].to_numpy()[0, 0])
    assert outcomes["jax-jit"].outputs[0].to_numpy()[0, 0] == 0, "XLA keeps the NaN now"
    (found,) = DifferentialOracle().check_many([(case, outcomes)], ctx)
    (f,) = [f for f in found if f.guilty_backend == "jax-jit"]
    assert f.api == "Mul"
    assert "jax/issues/12233" in str(f.detail("demoted")), dict(f.details)

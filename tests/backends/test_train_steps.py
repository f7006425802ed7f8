"""Training steps of models on the real libraries: every autodiff mode, the oracle's
judgement, the backward walk that localizes a wrong layer, and the reproducer.

One pool runs torch, torch-compile, jax, jax-jit, tf, tf-xla and ort (ONNX Runtime must
not be handed a training step). A second pool loads the planted wrong ``tanh`` backward
(``planted_torch_tanh_backward``: forward right, derivative wrong where the output is
negative) into the torch workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_support import PLANTED, planted_torch_pool

from dlfuzz.backends.base import load_backend_class
from dlfuzz.cases import Expectation, GraphCase, Outcome, Tensor, TrainCase
from dlfuzz.cases.train import trainable
from dlfuzz.engines.model.engine import weights_key
from dlfuzz.executor.pool import Pool
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import init_model
from dlfuzz.kinds.graph_repro import model_npz
from dlfuzz.kinds.train import TrainKind, reproducer
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.gradient import GradientOracle, checks_of, smoothness
from dlfuzz.oracles.reference import Judge
from dlfuzz.registry import BACKENDS as BACKEND_CLASSES

PLANT = "planted_torch_tanh_backward"
BACKENDS = ("torch", "torch-compile", "jax", "jax-jit", "tf", "tf-xla", "ort")
LIBRARY_OF = {"torch": "torch", "torch-compile": "torch", "jax": "jax", "jax-jit": "jax",
              "tf": "tf", "tf-xla": "tf", "ort": "onnx"}
COMPILED = {"torch-compile": True, "jax-jit": True, "tf-xla": True}
STEPPING = set(BACKENDS) - {"ort"}


def _pool(preload: tuple[str, ...] = ()) -> Any:
    return planted_torch_pool(BACKENDS, preload, timeout_s=180.0)


def _model(activation: str = "Tanh") -> Model:
    """Dense -> activation -> Dense -> activation -> Dense: smooth everywhere, every layer
    trained (inputs, weights and biases drawn so the activations reach both signs)."""
    b = GraphBuilder((3, 5))
    x = b.add("Dense", "x0", units=6)
    x = b.add(activation, x)
    x = b.add("Dense", x, units=4)
    x = b.add(activation, x)
    b.add("Dense", x, units=2)
    return init_model(b.build(), np.random.default_rng(4))


def _step(model: Model, seed: int = 21) -> TrainCase:
    x = np.random.default_rng(5).standard_normal((3, 5)).astype(np.float32)
    base = GraphCase("model:test", model.graph, weights_key(model), (Tensor.from_numpy(x),),
                     ("torch", "jax", "tf", "onnx"))
    assert trainable(base)
    return TrainCase(base, seed)


def _judge(pool: Pool, case: TrainCase) -> tuple[list, OracleContext, dict[str, Outcome]]:
    judge = Judge(lambda cases, only: pool.run(cases, only=only), ["torch", "jax", "tf"],
                  LIBRARY_OF, seed=0)
    ctx = OracleContext(judge, LIBRARY_OF, COMPILED)
    outcomes = pool.run([case])[0]
    return GradientOracle().check_many([(case, outcomes)], ctx)[0], ctx, outcomes


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with _pool() as p:
        yield p


def test_every_autodiff_mode_computes_the_same_training_step(pool: Pool) -> None:
    case = _step(_model())
    findings, ctx, outcomes = _judge(pool, case)
    assert set(outcomes) == STEPPING, "ONNX Runtime has no autodiff: no training step"
    shapes = case.gradient_shapes()
    # 3 Dense layers: kernel and bias each, then the input.
    assert [label for label, _ in shapes] == [*case.trained, "x0"] and len(case.trained) == 6
    reference = outcomes["torch"].outputs
    # gradients, the loss, the stepped weights, the checks
    assert len(reference) == len(shapes) + 1 + len(case.trained) + 1
    for backend, o in outcomes.items():
        assert o.ok, (backend, o.message)
        for (label, shape), got, want in zip(shapes, o.outputs, reference, strict=False):
            assert got.shape == shape, (backend, label)
            np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=2e-4,
                                       atol=2e-5, err_msg=f"{backend} {label}")
        # the SGD step: w - lr * g, in the weights' dtype
        weights = dict(case.weights)
        for k, (name, stepped) in enumerate(zip(case.trained, o.outputs[len(shapes) + 1:],
                                                strict=False)):
            np.testing.assert_allclose(
                stepped.to_numpy(), weights[name].to_numpy() - 0.0625 * o.outputs[k].to_numpy(),
                rtol=1e-6, atol=1e-7)
        checks = checks_of(o)
        assert checks is not None and smoothness(checks) == "smooth", (backend, checks)
        assert abs(checks["reverse"] - checks["fd"]) < 1e-6 * checks["scale"], (backend, checks)
        if not COMPILED.get(backend):
            assert abs(checks["forward"] - checks["reverse"]) < 1e-9 * checks["scale"]
    assert findings == [], [f.message for f in findings]
    assert ctx.stats["gradient_judged"] == 1


def test_a_relu_model_at_a_kink_is_not_judged(pool: Pool) -> None:
    # An input of zeros through a Dense layer with zero bias puts every ReLU at 0: the
    # libraries' subgradients there are conventions, not bugs.
    model = _model("ReLU")
    weights = {k: (np.zeros_like(v) if k.endswith(".bias") else v)
               for k, v in model.weights.items()}
    zero = Model(model.graph, weights)
    base = GraphCase("model:test", zero.graph, weights_key(zero),
                     (Tensor.from_numpy(np.zeros((3, 5), np.float32)),), ("torch", "jax", "tf"))
    findings, ctx, outcomes = _judge(pool, TrainCase(base, 3))
    assert {smoothness(checks_of(o)) for o in outcomes.values()} & {"kink", "flat"}
    assert findings == [] and ctx.stats["gradient_judged"] == 0


@pytest.fixture(scope="module")
def planted_pool(pool: Pool) -> Iterator[Pool]:
    pool.close()  # one set of workers at a time on a small machine
    with _pool(preload=(PLANT,)) as p:
        yield p


def test_a_planted_wrong_layer_backward_is_blamed_and_localized(planted_pool: Pool,
                                                                  tmp_path: Path) -> None:
    case = _step(_model())
    findings, ctx, outcomes = _judge(planted_pool, case)
    # The plant changes no forward value: every backend's loss agrees.
    n = len(case.gradient_shapes())
    losses = {b: float(o.outputs[n].to_numpy()) for b, o in outcomes.items()}
    assert max(losses.values()) - min(losses.values()) < 1e-5 * max(map(abs, losses.values()))
    blamed = {(f.guilty_backend, f.detail("mode")) for f in findings}
    assert blamed == {("torch", "reverse")}, [f.message for f in findings]
    # torch-compile runs the same planted function: judged once, for the eager mode.
    assert ctx.stats["gradient_shared_with_eager"] >= 1
    f = findings[0]
    # The backward walk: the second Tanh (n3) is the first wrong layer from the output
    # back (the Dense layers after it are right alone); the finding is filed under Tanh.
    assert f.api == "Tanh" and f.detail("suspect_node") == "n3", f.message
    assert f.detail("localized_by") == "backward walk"
    assert f.signature.split("|")[3] == "Tanh"
    assert ctx.stats["gradient_localized"] == 1
    # The reproducer: torch's reverse mode against finite differences of the model,
    # exit 1 with the plant, 0 without.
    kind = TrainKind()
    expectation = Expectation("gradient", note=f"reverse: {f.message}")
    torch = load_backend_class(BACKEND_CLASSES["torch"])()
    (tmp_path / "model.npz").write_bytes(model_npz(case.base))
    script = tmp_path / "repro_torch.py"
    script.write_text(reproducer(torch, case, expectation, kind.title(f, case)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLANTED),
                                                        os.environ.get("PYTHONPATH", "")])}
    fixed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=300, env=env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    planted = subprocess.run(
        [sys.executable, "-c", f"import {PLANT}, runpy; runpy.run_path({str(script)!r}, "
         "run_name='__main__')"], capture_output=True, text=True, timeout=300, env=env)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert planted.stdout.strip().splitlines()[-1].startswith("BUG present")

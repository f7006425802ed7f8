"""Gradients on TF.js (``tf.grads`` through ``grad.js``), on real Node and real Chromium.

* The cotangents TF.js draws in JavaScript are ``cases.grad.grid_draw``'s, bit for bit.
* tfjs-cpu, tfjs-wasm and tfjs-webgl compute the gradient of API calls and a model's
  training step (gradients, loss, stepped weights) as TensorFlow and PyTorch do; an input
  the outputs do not depend on gets a zero gradient; a call tfjs has no gradient for (or
  wasm no backward kernel for) is a deliberate rejection; the self-check is NaN (float32
  only: no float64 pass).
* With a planted wrong tanh backward in tfjs-cpu (forward right), the gradient oracle
  blames tfjs-cpu alone, by the float64 reference of the other libraries, or, where
  TensorFlow alone has the call, by TensorFlow's float64 gradient backed by its finite
  differences; a case only TF.js ran is not judged (nothing checked the point is smooth).
* The node script and the HTML page reproducers of a gradient case and of a training
  step exit 1 with the plant and 0 without.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from model_support import PLANTED

from dlfuzz.backends.tfjs.backend import TfjsCpuBackend
from dlfuzz.backends.tfjs.paths import GRAD_JS
from dlfuzz.backends.tfjs.webgl import TfjsWebglBackend
from dlfuzz.cases import ApiCase, Call, Expectation, GradCase, GraphCase, Ref, Tensor, TrainCase
from dlfuzz.cases.grad import checks_of, cotangent, grid_draw, has_self_check
from dlfuzz.cases.train import LEARNING_RATE
from dlfuzz.engines.model.engine import weights_key
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.weights import init_model
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.gradient import GradientOracle
from dlfuzz.oracles.reference import Judge
from dlfuzz.oracles.status import is_deliberate_rejection

PLANT = "planted_tfjs_tanh_backward"
TFJS = ("tfjs-cpu", "tfjs-wasm", "tfjs-webgl")
LIBRARY_OF = {"tfjs-cpu": "tfjs", "tfjs-wasm": "tfjs", "tfjs-webgl": "tfjs", "tf": "tf",
              "torch": "torch"}


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    """Every tfjs backend, TF and PyTorch; tfjs-cpu carries the planted tanh backward."""
    old = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(PLANTED), old) if p)
    try:
        configs = [WorkerConfig(b, case_timeout_s=60, preload=(PLANT,) if b == "tfjs-cpu"
                                else ()) for b in (*TFJS, "tf", "torch")]
        with Pool(configs) as p:
            p.start()
            assert not p.unavailable, p.unavailable
            yield p
    finally:
        os.environ["PYTHONPATH"] = old


def _grad(calls: dict[str, Call], *arrays: np.ndarray, seed: int = 11,
          still: tuple[int, ...] = ()) -> GradCase:
    base = ApiCase("test", tuple(Tensor.from_numpy(a) for a in arrays), tuple(calls.items()))
    return GradCase(base, seed, still)


def _x(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_javascript_draws_the_cotangents_python_draws() -> None:
    keys = [(11, 1, 0, (3, 4)), (2**32 + 5, 2, 3, (2, 3, 5)), (0, 1, 7, ()),
            (123456789, 1, 1, (1000,)), (2**31 + 7, 2, 0, (0, 3))]
    script = (f"const G = require({json.dumps(str(GRAD_JS))}); "
              f"const keys = {json.dumps([[s & 0xFFFFFFFF, a, i, list(sh)] for s, a, i, sh in keys])}; "
              "console.log(JSON.stringify(keys.map(([s, a, i, sh]) => "
              "Array.from(G.grid(s, a, i, sh)))));")
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    for key, drawn in zip(keys, json.loads(out.stdout), strict=True):
        assert np.array_equal(grid_draw(*key).ravel(), np.array(drawn, dtype=np.float64)), key
    # the standalone Python reproducers draw them too, with their own copy of the hash
    from dlfuzz.kinds.grad import COMMON

    for seed, salt, index, shape in keys:
        space = {"np": np, "SEED": seed}
        exec(COMMON, space)  # noqa: S102 - the reproducers' helper source
        assert np.array_equal(space["_grid"](salt, index, shape),
                              grid_draw(seed, salt, index, shape)), (seed, shape)
    # every value of the grid is drawn, about equally often
    _, counts = np.unique(grid_draw(1, 1, 0, (12000,)), return_counts=True)
    assert len(counts) == 12 and counts.min() > 850, counts


def test_api_gradients_match_tensorflow_on_every_tfjs_backend(pool: Pool) -> None:
    x, y = _x((3, 4)), _x((4, 2), 1)
    r0, r1 = Ref(0), Ref(1)
    cases = [
        _grad({"tfjs": Call("tf.matMul", (r0, r1)),
               "tf": Call("tensorflow.linalg.matmul", (r0, r1))}, x, y),
        # y is not used: a zero gradient, as TensorFlow's (tf.grads alone would throw)
        _grad({"tfjs": Call("tf.sigmoid", (r0,)), "tf": Call("tensorflow.math.sigmoid", (r0,))},
              x, y, seed=3),
    ]
    results = pool.run(cases, only=[*TFJS, "tf"])
    for case, outcomes in zip(cases, results, strict=True):
        want = outcomes["tf"]
        assert want.ok, want.message
        for backend in TFJS:
            o = outcomes[backend]
            assert o.ok, (backend, o.message)
            assert len(o.outputs) == len(case.wrt) + 1
            for got, ref in zip(o.outputs[:-1], want.outputs[:-1], strict=True):
                np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=1e-5,
                                           atol=1e-6, err_msg=backend)
            checks = checks_of(o)
            assert checks is not None and not has_self_check(checks), checks
        assert has_self_check(checks_of(want))
    unused = results[1]["tfjs-wasm"].outputs[1].to_numpy()
    assert unused.shape == (4, 2) and not unused.any()


def test_a_call_without_a_gradient_is_a_deliberate_rejection(pool: Pool) -> None:
    case = _grad({"tfjs": Call("tf.topk", (Ref(0), 2))}, _x((3, 4)), still=(1,))
    for backend, o in pool.run([case], only=list(TFJS))[0].items():
        assert o.status == "exception" and o.stage == "backward", (backend, o.message)
        assert "gradient function not found for TopK" in o.message
        assert is_deliberate_rejection(o)
    # tfjs-wasm registers no kernel for a conv2d's filter gradient: a documented gap
    conv = _grad({"tfjs": Call("tf.conv2d", (Ref(0), Ref(1), 1, "same"))},
                 _x((1, 5, 5, 2)), _x((3, 3, 2, 4), 1))
    o = pool.run([conv], only=["tfjs-wasm"])[0]["tfjs-wasm"]
    assert o.status == "exception" and o.stage == "backward", o.message
    assert "not registered for backend 'wasm'" in o.message and is_deliberate_rejection(o)


def _model() -> GraphCase:
    b = GraphBuilder((3, 5))
    x = b.add("Dense", "x0", units=6)
    x = b.add("Tanh", x)
    x = b.add("Dense", x, units=4)
    x = b.add("Sigmoid", x)
    b.add("Dense", x, units=2)
    model = init_model(b.build(), np.random.default_rng(4))
    return GraphCase("model:test", model.graph, weights_key(model),
                     (Tensor.from_numpy(_x((3, 5), 5)),), ("torch", "tfjs"))


def test_training_steps_match_pytorch_on_every_tfjs_backend(pool: Pool) -> None:
    case = TrainCase(_model(), 21)
    outcomes = pool.run([case], only=["tfjs-wasm", "tfjs-webgl", "torch"])[0]
    want = outcomes["torch"].outputs
    n = len(case.gradient_shapes())
    for backend in ("tfjs-wasm", "tfjs-webgl"):
        o = outcomes[backend]
        assert o.ok, (backend, o.message)
        # gradients, the loss, the stepped weights, the (NaN) checks
        assert len(o.outputs) == len(want) == n + 1 + len(case.trained) + 1
        for got, ref in zip(o.outputs[:-1], want[:-1], strict=True):
            assert got.shape == ref.shape
            np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=backend)
        weights = dict(case.weights)
        for k, name in enumerate(case.trained):  # the step is w - rate * g
            stepped = o.outputs[n + 1 + k].to_numpy()
            np.testing.assert_allclose(stepped, weights[name].to_numpy() - LEARNING_RATE
                                       * o.outputs[k].to_numpy(), rtol=1e-6, atol=1e-7)
        assert not has_self_check(checks_of(o))


def _ctx(pool: Pool) -> OracleContext:
    judge = Judge(lambda cases, only: pool.run(cases, only=only), ["torch", "tf"], LIBRARY_OF,
                  seed=0)
    return OracleContext(judge, LIBRARY_OF, {})


def _tanh_case() -> GradCase:
    r0 = Ref(0)
    return _grad({"tfjs": Call("tf.tanh", (r0,)), "tf": Call("tensorflow.math.tanh", (r0,)),
                  "torch": Call("torch.tanh", (r0,))}, _x((3, 4)))


def test_a_planted_wrong_backward_is_blamed_on_tfjs_cpu_alone(pool: Pool) -> None:
    case = _tanh_case()
    outcomes = pool.run([case], only=[*TFJS, "tf", "torch"])[0]
    ctx = _ctx(pool)
    found = GradientOracle().check_many([(case, outcomes)], ctx)[0]
    assert [(f.guilty_backend, f.symptom) for f in found] == [("tfjs-cpu", "gradient")], \
        [(f.guilty_backend, f.message) for f in found]
    assert found[0].detail("judged_by") == "float64 reference"
    # TF.js calls have counterparts in TensorFlow alone: no consensus of two reference
    # libraries and, with one tfjs backend, no majority either, so TensorFlow's float64
    # gradient, backed by its finite differences at this point, is the reference.
    alone = _grad({lib: call for lib, call in case.base.calls if lib != "torch"},
                  case.tensors[0].to_numpy())
    ctx = _ctx(pool)
    outcomes = pool.run([alone], only=["tfjs-cpu", "tf"])[0]
    found = GradientOracle().check_many([(alone, outcomes)], ctx)[0]
    assert [(f.guilty_backend, f.detail("checked_reference")) for f in found] == [
        ("tfjs-cpu", "tf")], [f.message for f in found]
    assert "float64 (finite-difference-checked) reference of tf" in found[0].message
    assert ctx.stats["gradient_checked_reference"] == 1
    # Only TF.js ran it: no backend checked the point is smooth, nothing is judged.
    only_tfjs = {b: o for b, o in outcomes.items() if b in TFJS}
    ctx = _ctx(pool)
    assert GradientOracle().check_many([(case, only_tfjs)], ctx)[0] == []
    assert ctx.stats["gradient_no_self_check"] == 1


def test_a_planted_wrong_backward_in_a_training_step_is_localized_to_its_layer(
        pool: Pool) -> None:
    """Dense -> Tanh -> Dense -> Sigmoid -> Dense on tfjs-cpu (planted), PyTorch and
    TensorFlow: the step's finding is blamed on tfjs-cpu and filed under Tanh, the first
    layer from the output back whose own backward is wrong there."""
    base = _model()
    case = TrainCase(replace(base, libraries=("torch", "tf", "tfjs")), 21)
    outcomes = pool.run([case], only=["tfjs-cpu", "torch", "tf"])[0]
    ctx = _ctx(pool)
    found = GradientOracle().check_many([(case, outcomes)], ctx)[0]
    assert [(f.guilty_backend, f.api) for f in found] == [("tfjs-cpu", "Tanh")], \
        [(f.guilty_backend, f.api, f.message) for f in found]
    assert found[0].detail("localized_by") == "backward walk"
    assert ctx.stats["gradient_localized"] == 1


def _run(backend: object, script: Path, planted: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PLANTED)}
    command = backend.repro_command(script, [PLANT] if planted else [])  # type: ignore[attr-defined]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)


@pytest.mark.parametrize("kind", ["grad", "train"])
def test_reproducers_exit_1_with_the_plant_and_0_without(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The float64 reference gradient (NumPy's for tanh, PyTorch's for the model) against
    the reproducer's ``tf.grads``: the node script (tfjs-cpu) and the page (tfjs-webgl)
    load the plant as ``dlfuzz reproduce`` does."""
    monkeypatch.syspath_prepend(str(PLANTED))  # repro_command imports the preload module
    if kind == "grad":
        case: GradCase | TrainCase = _tanh_case()
        x = case.tensors[0].to_numpy().astype(np.float64)
        expected: tuple[np.ndarray, ...] = (
            (1 - np.tanh(x) ** 2) * cotangent(case.seed, 0, x.shape),)
    else:
        case = TrainCase(_model(), 21)
        with Pool([WorkerConfig("torch")]) as p:
            p.start()
            ref = p.run([case])[0]["torch"].outputs
        expected = tuple(t.to_numpy() for t in ref[:len(case.gradient_shapes())])
    expectation = Expectation("values", expected=expected,
                              allowed=tuple(1e-5 + 1e-4 * np.abs(e) for e in expected))
    for backend, name in ((TfjsCpuBackend(), "repro.js"), (TfjsWebglBackend(), "repro.html")):
        text = backend.repro_script(case, expectation, "wrong gradient", "tfjs 4.22.0")
        assert text is not None and "dlfuzzGrad.gradients" in text
        script = tmp_path / name
        script.write_text(text)
        fixed, bug = _run(backend, script, False), _run(backend, script, True)
        assert fixed.returncode == 0, (backend.name, fixed.stdout[-2000:], fixed.stderr[-2000:])
        assert fixed.stdout.strip().splitlines()[-1].startswith("OK"), fixed.stdout
        assert bug.returncode == 1 and "BUG present" in bug.stdout, (backend.name, bug.stdout)
    # A finite-difference check needs a float64 pass: no TF.js reproducer for it.
    assert TfjsCpuBackend().repro_script(case, Expectation("gradient"), "t", "") is None

"""Which models get a training step (``engines/model/training.py``, ``cases/train.py``)
and what the training form of the lowerings promises, without workers: the outcomes are
made by hand, the rules are the queue's."""

from __future__ import annotations

import numpy as np
import pytest

from dlfuzz.cases import Finding, GraphCase, Outcome, Tensor, TrainCase
from dlfuzz.cases.train import trainable
from dlfuzz.engines.model.engine import ModelEngine, weights_key
from dlfuzz.engines.model.training import SHARE, TrainQueue
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.lower import emit
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import init_model


def _model(op: str = "Dense", dtype: str = "float32", seed: int = 0, **attrs: object
           ) -> Model:
    b = GraphBuilder((2, 3, 4), dtype=dtype)
    x = b.add(op, "x0", **attrs)
    if op == "Dense":
        b.add("BatchNorm", x)
    return init_model(b.build(), np.random.default_rng(seed))


def _case(model: Model, k: int = 0) -> GraphCase:
    x = np.random.default_rng(k).standard_normal((2, 3, 4)).astype(model.graph.dtype)
    return GraphCase(f"model:{k}", model.graph, weights_key(model), (Tensor.from_numpy(x),),
                     ("torch", "jax", "onnx"))


def _ok(case: GraphCase, backend: str = "torch", value: float = 1.0) -> dict[str, Outcome]:
    out = np.full((2, 3, 5), value, np.float32)
    return {backend: Outcome(backend, "ok", (Tensor.from_numpy(out),))}


def test_a_step_trains_the_parameters_not_the_statistics_and_keeps_its_layout() -> None:
    step = TrainCase(_case(_model(units=5)), 7)
    names = [k for k, _ in step.weights]
    assert "n1.moving_mean" in names and "n1.moving_variance" in names
    assert set(step.trained) == {"n0.kernel", "n0.bias", "n1.gamma", "n1.beta"}
    assert [label for label, _ in step.gradient_shapes()] == [*step.trained, "x0"]
    assert step.libraries == ("torch", "jax")  # ONNX Runtime has no autodiff
    assert step.call_for("onnx") is None and step.call_for("torch") is not None
    assert step.id != TrainCase(step.base, 8).id != step.base.id
    # A float64 reference of the step upcasts the model with the inputs.
    wide = step.with_tensors(tuple(Tensor.from_numpy(t.to_numpy().astype(np.float64))
                                   for t in step.tensors))
    assert isinstance(wide, TrainCase) and wide.graph.dtype == "float64" and wide.seed == 7
    assert TrainCase(step.base, 7).relabelled("Dense").api == "Dense"


def test_only_float_models_without_recurrent_layers_are_trainable() -> None:
    assert trainable(_case(_model(units=5)))
    assert not trainable(_case(_model(units=5, dtype="float16")))
    assert not trainable(_case(_model("LSTM", units=2)))


def test_the_training_form_records_gradients_and_refuses_recurrent_torch_layers() -> None:
    graph = _model(units=5).graph
    assert "torch.no_grad()" in emit("torch", graph)
    trained = emit("torch", graph, train=True)
    assert "torch.enable_grad()" in trained and "torch.no_grad()" not in trained
    with pytest.raises(ValueError, match="recurrent"):
        emit("torch", _model("LSTM", units=2).graph, train=True)
    # TensorFlow passes tensors through its weight conversion (a tape watches them).
    assert "isinstance(a, (tf.Tensor, tf.Variable))" in emit("tf", graph, train=True)


def test_the_queue_steps_a_share_of_the_models_once_each() -> None:
    queue = TrainQueue()
    models = [_model(units=5, seed=k) for k in range(200)]
    for k, model in enumerate(models):
        case = _case(model, k)
        queue.offer(case, _ok(case), [])
        queue.offer(_case(model, k + 1000), _ok(case), [])  # a second input set: not again
    queued = len(queue.waiting)
    assert 0.5 * SHARE * 200 <= queued <= 1.5 * SHARE * 200
    assert len({c.base.model_key for c in queue.waiting}) == queued
    taken = queue.take(16)
    assert len(taken) == 4 and all(isinstance(c, TrainCase) for c in taken)


def test_models_whose_step_says_nothing_are_not_queued() -> None:
    def offered(case: GraphCase, outcomes: dict[str, Outcome], findings: list) -> int:
        queue = TrainQueue()
        for k in range(100):  # enough models that a share of them would be queued
            c = _case(_model(units=5, dtype=case.graph.dtype, seed=k), k)
            queue.offer(c, outcomes, findings)
        return len(queue.waiting)

    case = _case(_model(units=5))
    assert offered(case, _ok(case), []) > 0  # the premise: these models qualify
    assert offered(case, _ok(case, value=np.inf), []) == 0  # no finite run
    assert offered(case, _ok(case, backend="ort"), []) == 0  # no autodiff library ran it
    finding = Finding("differential", "numeric", "model:0", "torch", "call", "m", "s", "id")
    assert offered(case, _ok(case), [finding]) == 0  # the forward pass is already wrong
    half = _case(_model(units=5, dtype="float16"))
    assert offered(half, _ok(half), []) == 0


def test_no_gradients_runs_no_training_step() -> None:
    engine = ModelEngine(seed=1, libraries=("torch", "jax"), method="lemon", gradients=False)
    assert engine.training is None
    for case in engine.propose(16):
        engine.feedback(case, _ok(case), [])
    assert not any(isinstance(c, TrainCase) for c in engine.propose(16))
    on = ModelEngine(seed=1, libraries=("torch", "jax"), method="lemon")
    ran = {"torch": Outcome("torch", "ok", (Tensor.from_numpy(np.ones((1, 10), np.float32)),))}
    steps = []
    for _ in range(12):  # 96 models: a tenth of them stepped
        for case in on.propose(32):
            if isinstance(case, TrainCase):
                steps.append(case)
            on.feedback(case, ran, [])
    assert steps and on.counters()["train_steps_queued"] >= len(steps)

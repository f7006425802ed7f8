"""A training-step case: one step of training a model, in every library with autodiff.

Every backend of a model case runs its forward pass; a ``TrainCase`` asks each backend of
an autodiff library (PyTorch, JAX, TensorFlow, eager and compiled) for one training step
of the same model at the same input: the loss (the graph outputs weighted by a cotangent
drawn from ``seed``, what ``cases.grad`` draws for API calls), the gradient of that loss
with respect to every trainable weight and every floating input, and the weights after
one step of plain SGD (``w - LEARNING_RATE * g``, in the library's own arithmetic). Beside
them, each backend reports the float64 self-check of ``cases.grad.CHECKS``: its reverse
mode and forward mode along a random direction through all weights and inputs, against
central finite differences of its own forward pass.

The model is lowered in training form (``ir.lower``, ``train=True``) and built inside the
differentiated function, so the library differentiates its own layers; a compile mode
compiles the backward too (``torch.compile``'s AOTAutograd, ``jax.jit`` of the pullback,
``tf.function(jit_compile=True)`` of the tape).

A graph's moving statistics (BatchNorm's ``moving_mean``/``moving_variance``) are not
trained (Keras marks them non-trainable; PyTorch keeps them as buffers without a
gradient), so they stay constants here. Graphs with recurrent layers get no training
step: the PyTorch lowering copies their weights into ``torch.nn`` modules.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from dlfuzz.cases.core import Call, Tensor
from dlfuzz.cases.grad import GRAD_DTYPES, has_autodiff
from dlfuzz.cases.graph import GraphCase

# One SGD step's learning rate: a power of two, so the update rounds only once.
LEARNING_RATE = 0.0625
# Weights a training step keeps constant: statistics, not parameters.
FROZEN_WEIGHTS = ("moving_mean", "moving_variance")
# Layers a training step is not lowered for (``ir/lower/torch_lower.py``).
UNTRAINED_OPS = frozenset({"SimpleRNN", "LSTM", "GRU"})


@dataclass(frozen=True)
class TrainCase:
    """One SGD step of ``base`` (a model case), the loss's cotangents drawn from ``seed``.

    The outputs every backend returns, in order: the gradient per differentiated value
    (``trained`` weights by name, then the floating graph inputs), the loss, the trained
    weights after the step, and the float64 self-check (``cases.grad.CHECKS``).
    """

    base: GraphCase
    seed: int
    kind: str = field(default="train", init=False)
    # A step runs the model about ten times (forward and backward in two dtypes, forward
    # mode, finite differences), and JAX eager compiles each new shape of each: its time
    # limit is this many times a model run's (``executor/host.py``).
    timeout_factor: float = field(default=10.0, init=False)

    # ---- the model case's face (oracles, triage and the executor read these) -----------
    @property
    def api(self) -> str:
        return self.base.api

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return self.base.tensors

    @property
    def graph(self) -> Any:
        return self.base.graph

    @property
    def weights(self) -> tuple[tuple[str, Tensor], ...]:
        return self.base.weights

    @property
    def params(self) -> tuple[tuple[str, Any], ...]:
        return self.base.params

    @property
    def origin(self) -> tuple[tuple[str, Any], ...]:
        return self.base.origin

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(lib for lib in self.base.libraries if has_autodiff(lib))

    def call_for(self, library: str) -> Call | None:
        """The model's stand-in call, for libraries with autodiff only."""
        return self.base.call_for(library) if has_autodiff(library) else None

    @property
    def trained(self) -> tuple[str, ...]:
        """The weights a step trains, in the case's weight order."""
        return tuple(k for k, t in self.base.weights
                     if t.dtype in GRAD_DTYPES and k.rpartition(".")[2] not in FROZEN_WEIGHTS)

    @property
    def wrt(self) -> tuple[int, ...]:
        """The graph inputs differentiated (floating ones), by index."""
        return tuple(i for i, t in enumerate(self.base.tensors) if t.dtype in GRAD_DTYPES)

    def gradient_shapes(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """(label, shape) of each gradient output, in order: trained weights, then inputs."""
        weights = dict(self.base.weights)
        return (tuple((k, weights[k].shape) for k in self.trained)
                + tuple((f"x{i}", self.base.tensors[i].shape) for i in self.wrt))

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(f"train:{self.seed}:{self.base.id}".encode())
        return h.hexdigest()

    def with_tensors(self, tensors: tuple[Tensor, ...]) -> TrainCase:
        return self.with_base(self.base.with_tensors(tensors))

    def with_base(self, base: GraphCase) -> TrainCase:
        return TrainCase(base, self.seed)

    def relabelled(self, label: str) -> TrainCase:
        return self.with_base(replace(self.base, api=label))


def trainable(case: GraphCase) -> bool:
    """Whether a model gets training steps: a float32/float64 graph of finite weights and
    inputs, something to train, and no layer the training form is not lowered for."""
    if case.graph.dtype not in GRAD_DTYPES or UNTRAINED_OPS & set(case.graph.ops()):
        return False
    step = TrainCase(case, 0)
    return bool(step.trained or step.wrt)

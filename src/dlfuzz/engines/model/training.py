"""Which models get a training step checked, and when (``--no-gradients`` turns it off).

A model qualifies once its forward pass ran: a float32/float64 graph with something to
train and no recurrent layer (``cases.train.trainable``), finite inputs and weights, a
finite floating output on some autodiff library that checks itself (not TF.js alone:
without a float64 self-check the oracle cannot tell a smooth point), and no finding of its own (a model whose
forward pass is already wrong would only repeat that finding in its gradients). The first
qualifying input set of a model is the one stepped, for ``SHARE`` of the models, chosen
by hashing the case id: turning gradients on or off leaves the models a method proposes
for a given feedback unchanged, and a seed gives the same campaign on any machine.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence

import numpy as np

from dlfuzz.cases import Finding, GraphCase, Outcome, TrainCase
from dlfuzz.cases.grad import checks_itself
from dlfuzz.cases.train import trainable
from dlfuzz.libraries import of_backend

# Models that get a training step. A step of a LeNet-5 mutant takes about 30 ms on
# torch, 100 ms on tf and 560 ms on jax eager (whose op-by-op dispatch compiles every
# new shape, forward, backward and float64 alike), several forward runs' worth: a
# torch+jax+tf LEMON campaign ran 0.38 of its models with a quarter of them stepped,
# 0.51 with a tenth, 0.81 with a twentieth (about what the API engine's gradient cases
# cost); on torch and ONNX Runtime a quarter cost nothing measurable
# (docs/performance.md).
SHARE = 0.05
QUEUE = 64  # training steps waiting; the oldest are dropped past it
MAX_ELEMENTS = 1 << 18  # weights and inputs of a stepped model (finite differences: 5 forwards)
BATCH_SHARE = 0.25  # a batch holds at most this share of training steps (at least one)


class TrainQueue:
    """Training steps derived from the feedback of model cases, waiting to be proposed."""

    def __init__(self) -> None:
        self.waiting: deque[TrainCase] = deque(maxlen=QUEUE)
        self.seen: set[str] = set()  # models (model_key) already considered
        self.counts: Counter[str] = Counter()

    def offer(self, case: GraphCase, outcomes: Mapping[str, Outcome],
              findings: Sequence[Finding]) -> None:
        """Queue a training step of ``case``'s model if it qualifies (see the module doc)."""
        if case.model_key in self.seen or findings or case.probe:
            return
        if not trainable(case):
            self.seen.add(case.model_key)
            return
        arrays = [t.to_numpy() for _, t in case.weights] + [t.to_numpy() for t in case.tensors]
        if sum(a.size for a in arrays) > MAX_ELEMENTS:
            self.seen.add(case.model_key)
            return
        if not all(np.all(np.isfinite(a)) for a in arrays if a.dtype.kind == "f"):
            return  # another input set of the model may do
        if not any(_finite_run(b, o) for b, o in outcomes.items()):
            return
        self.seen.add(case.model_key)
        token = int(case.id[:8], 16)
        if (token % 10_000) / 10_000 >= SHARE:
            return
        self.counts["train_steps_queued"] += 1
        self.waiting.append(TrainCase(case, token))

    def take(self, n: int) -> list[TrainCase]:
        """Up to ``BATCH_SHARE`` of a batch of ``n`` cases (at least one), oldest first."""
        k = min(len(self.waiting), max(1, int(BATCH_SHARE * n)))
        return [self.waiting.popleft() for _ in range(k)]

    def ran(self, findings: Sequence[Finding]) -> None:
        self.counts["train_steps_run"] += 1
        self.counts["train_step_findings"] += len(findings)


def _finite_run(backend: str, outcome: Outcome) -> bool:
    """A run on an autodiff library that checks itself (the oracle judges no step without
    one) whose outputs are all finite floating point."""
    record = of_backend(backend)
    if record is None or not checks_itself(record.name) or not outcome.ok or not outcome.outputs:
        return False
    arrays = [t.to_numpy() for t in outcome.outputs]
    return all(a.dtype.kind == "f" and np.all(np.isfinite(a)) for a in arrays)

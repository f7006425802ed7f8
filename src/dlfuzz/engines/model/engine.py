"""The model engine: LEMON or DLJSFuzzer proposing models, each run on several inputs.

A generated model becomes ``inputs_per_model`` GraphCases sharing one graph and weights,
so each backend builds (and compiles) it once and runs every input on the cached model.
Feedback is gathered per model; when all its inputs are back the method learns from it
(ACC for LEMON's Metropolis-Hastings and seed pool, fitness for DLJSFuzzer's
contributions and tournament). Re-seeded per batch for resumable campaigns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlfuzz.cases import Finding, GraphCase, Outcome, Tensor
from dlfuzz.engines.base import Engine
from dlfuzz.engines.model.settings import METHODS, ModelEngineSettings
from dlfuzz.errors import Rejected, UsageError
from dlfuzz.ir.model import Model
from dlfuzz.libraries import resolve

# A mutation method gives up on a parent whose every drawn rule refused it; the engine
# then asks again (the method draws another parent), up to this many draws per model of
# the batch, so a batch comes back empty only if every parent is stuck.
DRAWS_PER_MODEL = 8
# synth takes no seed: it builds every graph from the op catalog.
DEFAULT_SEEDS: dict[str, tuple[str, ...]] = {"lemon": ("lenet5",), "dljsfuzzer": ("identity",),
                                             "synth": ()}


@dataclass
class Proposal:
    """A model to run: its input sets, and what the method needs to learn from it."""

    model: Model
    inputs: list[tuple[Model, list[np.ndarray]]]  # (model as run, inputs) per case
    label: str
    origin: tuple[tuple[str, Any], ...]
    token: Any = None  # the method's own bookkeeping


@dataclass
class ModelResult:
    """What came back for every input of one proposal."""

    proposal: Proposal
    outcomes: list[Mapping[str, Outcome]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def outputs(self) -> list[dict[str, np.ndarray]]:
        """Per input, backend -> first output (ok outcomes only)."""
        out = []
        for o in self.outcomes:
            out.append({b: x.outputs[0].to_numpy() for b, x in o.items()
                        if x.ok and x.outputs})
        return out


def load_method(name: str) -> type:
    if name not in METHODS:
        raise UsageError(f"--method {name!r}: unknown; choose one of {', '.join(METHODS)}")
    method: type = resolve(METHODS[name])
    return method


def weights_key(model: Model) -> tuple[tuple[str, Tensor], ...]:
    return tuple((k, Tensor.from_numpy(model.weights[k])) for k in sorted(model.weights))


class ModelEngine(Engine):
    name = "model"
    case_kind = "graph"
    settings_class = ModelEngineSettings

    def __init__(self, seed: int = 0, libraries: Sequence[str] = ("torch", "jax"),
                 apis: Sequence[str] | None = None, method: str = "lemon",
                 seed_models: Sequence[str] = (), inputs_per_model: int = 4,
                 models_per_batch: int = 8) -> None:
        self.seed = seed
        self.libraries = tuple(libraries)
        if len(self.libraries) < 1:
            raise UsageError("the model engine needs at least one library with a lowering")
        if inputs_per_model < 1:
            raise UsageError(f"inputs_per_model = {inputs_per_model}: must be >= 1")
        self.inputs_per_model = inputs_per_model
        self.models_per_batch = models_per_batch
        self.rng = np.random.default_rng(seed)
        from dlfuzz.engines.model.seeds import load_seed

        names = tuple(seed_models) or DEFAULT_SEEDS.get(method, ("lenet5",))
        seeds = [(name, load_seed(name, np.random.default_rng(seed))) for name in names]
        self.method = load_method(method)(seeds, self.rng, inputs_per_model)
        self.method_name = method
        self._open: dict[str, ModelResult] = {}
        self._case_model: dict[str, str] = {}
        self.models_proposed = 0
        self.models_learned = 0
        self.dry_draws = 0  # proposals a method gave up on (a new parent is drawn)

    def reseed(self, batch: int | None) -> None:
        self.rng = np.random.default_rng([self.seed, batch or 0])
        self.method.rng = self.rng

    def propose(self, n: int) -> list[GraphCase]:
        cases: list[GraphCase] = []
        budget = max(1, min(self.models_per_batch, n // self.inputs_per_model or 1))
        models = draws = 0
        while models < budget and draws < budget * DRAWS_PER_MODEL:
            draws += 1
            proposal = self.method.propose()
            if proposal is None:  # every rule refused this parent: draw another
                self.dry_draws += 1
                continue
            models += 1
            self.models_proposed += 1
            key = f"m{self.models_proposed}"
            self._open[key] = ModelResult(proposal)
            for model, inputs in proposal.inputs:
                case = GraphCase(proposal.label, model.graph, weights_key(model),
                                 tuple(Tensor.from_numpy(x) for x in inputs), self.libraries,
                                 origin=proposal.origin)
                self._case_model[case.id] = key
                cases.append(case)
        return cases

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        key = self._case_model.pop(getattr(case, "id", ""), None)
        if key is None:
            return
        result = self._open[key]
        result.outcomes.append(outcomes)
        result.findings.extend(findings)
        if len(result.outcomes) == len(result.proposal.inputs):
            del self._open[key]
            self.models_learned += 1
            self.method.learn(result)

    def unsupported_backends(self, case: Any) -> frozenset[str]:
        return frozenset()


def mutate_with_retries(rules: Mapping[str, Any], choose: Any, model: Model,
                        rng: np.random.Generator, attempts: int = 12) -> tuple[Model, str]:
    """Apply chosen rules until one applies (rules refuse with Rejected)."""
    last = "no rule"
    for _ in range(attempts):
        name = choose()
        try:
            return rules[name](model, rng), name
        except Rejected as exc:
            last = f"{name}: {exc}"
    raise Rejected(f"no mutation applied after {attempts} attempts (last: {last})")

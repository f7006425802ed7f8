"""The model engine: LEMON or DLJSFuzzer proposing models, each run on several inputs.

A generated model becomes ``inputs_per_model`` GraphCases sharing one graph and weights,
so each backend builds (and compiles) it once and runs every input on the cached model.
Feedback is gathered per model; when all its inputs are back the method learns from it
(ACC for LEMON's Metropolis-Hastings and seed pool, fitness for DLJSFuzzer's
contributions and tournament). Re-seeded per batch for resumable campaigns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlfuzz.cases import Finding, GraphCase, Outcome, Tensor, TrainCase
from dlfuzz.engines.base import Engine
from dlfuzz.engines.model.inputs import MAX_RESCALES, InputSet, all_finite, rescaled
from dlfuzz.engines.model.settings import (
    COMPILED_INPUTS,
    DEFAULT_INPUTS,
    METHODS,
    ModelEngineSettings,
)
from dlfuzz.engines.model.training import TrainQueue
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
    # How each input set was drawn (``inputs.py``), where the method draws profiles:
    # the engine labels the cases with it and rescales a set that overflows.
    sets: tuple[InputSet, ...] = ()


@dataclass(frozen=True)
class _Searched:
    """A case of the rescaling search: its model as run, the set, its rescales so far."""

    model: Model
    label: str
    origin: tuple[tuple[str, Any], ...]
    inputs: InputSet
    rescales: int


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
                 seed_models: Sequence[str] = (), inputs_per_model: int = 0,
                 models_per_batch: int = 8, gradients: bool = True) -> None:
        self.seed = seed
        self.libraries = tuple(libraries)
        if len(self.libraries) < 1:
            raise UsageError("the model engine needs at least one library with a lowering")
        self._inputs_given = inputs_per_model > 0  # else the method's default
        inputs_per_model = inputs_per_model or DEFAULT_INPUTS.get(method, 4)
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
        # The rescaling search (``inputs.py``): cases whose set may be rescaled, and the
        # rescaled cases waiting to run (they go before new models).
        self._searched: dict[str, _Searched] = {}
        self._rescaled: list[_Searched] = []
        self.input_counts: Counter[str] = Counter()
        # float32 siblings of float16/bfloat16 models whose finding was demoted, waiting
        # to run (``_judge_in_float32``), and the models that already have one.
        self._siblings: list[GraphCase] = []
        self._siblinged: set[str] = set()
        # Training steps of models that ran (engines/model/training.py); None:
        # --no-gradients.
        self.training = TrainQueue() if gradients else None

    def use_backends(self, compiled: Mapping[str, bool]) -> None:
        """With a backend that compiles every new model (``compiled``: name -> its
        ``compiles_per_signature``), the method's default inputs per model become
        ``COMPILED_INPUTS`` (a value given by the user stays)."""
        if self._inputs_given or not any(compiled.values()):
            return
        self.inputs_per_model = COMPILED_INPUTS.get(self.method_name, self.inputs_per_model)
        self.method.inputs_per_model = self.inputs_per_model

    def reseed(self, batch: int | None) -> None:
        self.rng = np.random.default_rng([self.seed, batch or 0])
        self.method.rng = self.rng

    def propose(self, n: int) -> list[Any]:
        cases: list[Any] = self.training.take(n) if self.training is not None else []
        while self._siblings and len(cases) < n:
            cases.append(self._siblings.pop(0))
            self.input_counts["model_float32_siblings"] += 1  # counted as run
        while self._rescaled and len(cases) < n:
            cases.append(self._case(self._rescaled.pop(0)))
        if len(cases) >= n:
            return cases
        n -= len(cases)
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
            for i, (model, inputs) in enumerate(proposal.inputs):
                if i < len(proposal.sets):
                    case = self._case(_Searched(model, proposal.label, proposal.origin,
                                                proposal.sets[i], 0))
                else:
                    case = GraphCase(proposal.label, model.graph, weights_key(model),
                                     tuple(Tensor.from_numpy(x) for x in inputs),
                                     self.libraries, origin=proposal.origin)
                self._case_model[case.id] = key
                cases.append(case)
        return cases

    def _case(self, item: _Searched) -> GraphCase:
        """The case of one input set, labelled with its profile; a set the search may
        rescale is remembered until its feedback comes."""
        case = GraphCase(item.label, item.model.graph, weights_key(item.model),
                         tuple(Tensor.from_numpy(x) for x in item.inputs.arrays),
                         self.libraries,
                         origin=item.origin + (("inputs", item.inputs.label),))
        self.input_counts[f"model_inputs_{item.inputs.profile}"] += 1
        if item.inputs.profile != "special":
            self._searched[case.id] = item
        return case

    def _search(self, case: Any, outcomes: Mapping[str, Outcome]) -> None:
        """Queue the set again, divided by ``RESCALE``, when finite inputs gave an output
        holding NaN or Inf on some backend (the case itself was judged as it came)."""
        item = self._searched.pop(getattr(case, "id", ""), None)
        if item is None:
            return
        finite = all(all_finite(tuple(t.to_numpy() for t in o.outputs))
                     for o in outcomes.values() if o.ok)
        if item.rescales:
            self.input_counts["model_inputs_rescaled_finite" if finite
                              else "model_inputs_rescaled_non_finite"] += 1
        if finite or not all_finite(item.inputs.arrays):
            return
        self.input_counts["model_inputs_non_finite_outputs"] += 1
        if item.rescales >= MAX_RESCALES:
            self.input_counts["model_inputs_rescale_gave_up"] += 1
            return
        self._rescaled.append(_Searched(item.model, item.label, item.origin,
                                        rescaled(item.inputs), item.rescales + 1))

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        if isinstance(case, TrainCase):
            if self.training is not None:
                self.training.ran(findings)
            return
        if self.training is not None and isinstance(case, GraphCase):
            self.training.offer(case, outcomes, findings)
        self._search(case, outcomes)
        self._judge_in_float32(case, findings)
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

    def _judge_in_float32(self, case: Any, findings: Sequence[Finding]) -> None:
        """Queue the float32 sibling of a float16/bfloat16 model whose finding was
        demoted as accumulated rounding (``low_precision_model``): the same graph,
        weights and inputs (widened exactly) in float32, where the reference judges each
        layer to its tolerance. A planted torch conv that halves its output showed in a
        float16 model only as a demoted "inconsistency" 250 tolerances off; its float32
        sibling is a wrong result the oracles blame in their own right. One sibling per
        model; a deviation that is only float16 rounding stays listed, never filed."""
        if not isinstance(case, GraphCase) or case.model_key in self._siblinged:
            return
        if not any(f.detail("low_precision_model") for f in findings):
            return
        self._siblinged.add(case.model_key)
        wide = tuple(Tensor.from_numpy(t.to_numpy().astype(np.float32)) for t in case.tensors)
        sibling = case.with_tensors(wide)
        self._siblings.append(replace(
            sibling, origin=sibling.origin + (("sibling", f"float32 of a {case.graph.dtype} "
                                               "model whose finding was demoted"),)))

    def unsupported_backends(self, case: Any) -> frozenset[str]:
        return frozenset()

    def counters(self) -> dict[str, int]:
        """Input sets per profile and the rescaling search's steps (``inputs.py``), and
        the models proposed (``model_graphs``: cases over graphs is inputs per model)."""
        return {**self.input_counts, "model_graphs": self.models_proposed,
                **(self.training.counts if self.training is not None else {})}


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

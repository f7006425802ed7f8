"""DLJSFuzzer's loop (shared/papers/dljsfuzzer.txt), aimed at every optimizing backend.

Each round takes a seed by tournament over fitness (the initial identity chain first),
a model rule by contribution-proportional probability (each ROR target counts as its own
rule), and mutates. The mutant's first input set has its own shape; the others come from
the 13 tensor mutations (shape and dtype changes of the input of the same model), so a
backend that compiled the model meets new shapes and dtypes on a cached compilation,
which is where cache-reuse bugs live. Fitness (m_d on crash/NaN, else the largest
difference between libraries) feeds both the pool and the rule contributions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dlfuzz.engines.model.dljs_rules import (
    SETTINGS,
    DljsSettings,
    RoundSummary,
    RuleContributions,
    apply_rule,
    contribution_rules,
    fitness,
    input_mean,
    tournament,
)
from dlfuzz.engines.model.dljs_tensor import TENSOR_RULES
from dlfuzz.engines.model.engine import ModelResult, Proposal
from dlfuzz.errors import Rejected
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import random_inputs

POOL_MAX = 200  # models kept for tournaments (the fittest survive)
# Mutants larger than this many times their seed do not join the pool: DLJSFuzzer sizes
# its models by the seed chain's length ("the length of this operator chain determines
# the size of the newly generated model"), and ever-growing models slow every round.
# Fitness rewards larger differences, which larger models give, so the pool fills with
# mutants at the cap: at 2.0 they averaged 20.7 nodes from a 10-node chain after nine
# minutes, and the rate fell to 0.77 of the first minute's (docs/performance.md).
GROWTH_MAX = 1.5
TENSOR_ATTEMPTS = 4


@dataclass
class Entry:
    model: Model
    name: str
    history: tuple[str, ...] = ()


class DljsMethod:
    def __init__(self, seeds: Sequence[tuple[str, Model]], rng: np.random.Generator,
                 inputs_per_model: int, settings: DljsSettings = SETTINGS) -> None:
        self.rng = rng
        self.settings = settings
        self.inputs_per_model = inputs_per_model
        self.initial = [Entry(model, name) for name, model in seeds]
        self.pool: list[tuple[Entry, float]] = [(e, 0.0) for e in self.initial]
        self.contributions = RuleContributions(contribution_rules(), settings)
        self.rounds = 0
        self.rejected = 0
        self.tensor_rejected = 0

    def _inputs(self, model: Model) -> tuple[list[tuple[Model, list[np.ndarray]]], list[str]]:
        base = random_inputs(model.graph, self.rng)
        out, applied = [(model, base)], []
        names = list(TENSOR_RULES)
        while len(out) < self.inputs_per_model:
            for _ in range(TENSOR_ATTEMPTS):
                name = names[int(self.rng.integers(len(names)))]
                try:
                    out.append(TENSOR_RULES[name](model, list(base), self.rng))
                    applied.append(name)
                    break
                except Rejected:
                    self.tensor_rejected += 1
            else:
                out.append((model, random_inputs(model.graph, self.rng)))
        return out, applied

    def propose(self) -> Proposal | None:
        self.rounds += 1
        if self.rounds <= len(self.initial):
            parent, parent_fitness = self.pool[self.rounds - 1]
        else:
            parent = tournament(self.pool, self.rng, self.settings.tournament_size)
            parent_fitness = dict((id(e), f) for e, f in self.pool).get(id(parent), 0.0)
        for _ in range(12):
            rule = self.contributions.choose(self.rng)
            try:
                mutant = apply_rule(rule, parent.model, self.rng)
                break
            except Rejected:
                self.rejected += 1
        else:
            return None
        history = parent.history + (rule,)
        inputs, tensor_rules = self._inputs(mutant)
        origin = (("method", "dljsfuzzer"), ("seed", parent.name),
                  ("rules", ",".join(history)), ("tensor_rules", ",".join(tensor_rules)))
        return Proposal(mutant, inputs, f"model:{parent.name}", origin,
                        token=(Entry(mutant, parent.name, history), rule, parent_fitness))

    def learn(self, result: ModelResult) -> None:
        entry, rule, parent_fitness = result.proposal.token
        crash = any(o.status in ("crash", "timeout", "oom")
                    for outcomes in result.outcomes for o in outcomes.values())
        nan_bug = False
        inconsistency = 0.0
        for outs in result.outputs():
            finite = {b: bool(np.isfinite(x.astype(np.float64)).all()) for b, x in outs.items()}
            if len(set(finite.values())) > 1:
                nan_bug = True
            arrays = [x.astype(np.float64) for x in outs.values()]
            for i, a in enumerate(arrays):
                for b in arrays[i + 1:]:
                    if a.shape == b.shape and a.size:
                        with np.errstate(invalid="ignore", over="ignore"):
                            diff = np.abs(a - b)
                        diff = diff[~np.isnan(diff)]
                        if diff.size:
                            inconsistency = max(inconsistency, float(diff.max()))
        inputs = [x for _, xs in result.proposal.inputs for x in xs]
        summary = RoundSummary(crash, nan_bug, inconsistency, input_mean(inputs))
        value = fitness(summary, self.settings)
        self.contributions.update(rule, value - parent_fitness)
        seed_nodes = max((len(e.model.graph.nodes) for e in self.initial
                          if e.name == entry.name), default=0)
        if len(entry.model.graph.nodes) <= GROWTH_MAX * max(seed_nodes, 1):
            self.pool.append((entry, value))
        if len(self.pool) > POOL_MAX:
            worst = min(range(len(self.initial), len(self.pool)), key=lambda i: self.pool[i][1])
            del self.pool[worst]

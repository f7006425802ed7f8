"""LEMON's loop (shared/papers/lemon.txt): mutate seeds towards larger inconsistency.

Each proposal picks a seed from the pool by roulette, a rule by Metropolis-Hastings over
the rules' amplification ratios, and applies it (higher-order mutation happens because
mutants join the pool and are mutated again). A mutant whose accumulated inconsistency
ACC exceeds its parent's "amplified": its rule's ratio rises and it joins the pool.
Degenerate mutants (one argmax for almost every input everywhere) are dropped.
Initial seeds are first run as they are, so every parent has an ACC.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dlfuzz.engines.model.engine import ModelResult, Proposal, mutate_with_retries
from dlfuzz.engines.model.guidance import (
    LemonSettings,
    MetropolisHastings,
    SeedEntry,
    SeedPool,
    accumulated_inconsistency,
    degenerate,
)
from dlfuzz.engines.model.lemon_rules import LEMON_RULES
from dlfuzz.errors import Rejected
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import random_inputs


class LemonMethod:
    def __init__(self, seeds: Sequence[tuple[str, Model]], rng: np.random.Generator,
                 inputs_per_model: int, settings: LemonSettings | None = None) -> None:
        self.settings = settings or LemonSettings()
        self.rng = rng
        self.inputs_per_model = inputs_per_model
        self.pool = SeedPool(self.settings.pool_max)
        for name, model in seeds:
            self.pool.add(SeedEntry(model, name, initial=True))
        self.mh = MetropolisHastings(list(LEMON_RULES), self.settings.mh_p)
        self.degenerate = 0
        self.rejected = 0

    def _inputs(self, model: Model) -> list[tuple[Model, list[np.ndarray]]]:
        return [(model, random_inputs(model.graph, self.rng))
                for _ in range(self.inputs_per_model)]

    def propose(self) -> Proposal | None:
        unrun = [e for e in self.pool.entries if e.acc is None and e.initial and
                 not e.selected]
        if unrun:
            entry = unrun[0]
            entry.selected += 1
            return Proposal(entry.model, self._inputs(entry.model), f"model:{entry.name}",
                            (("method", "lemon"), ("seed", entry.name), ("rules", "")),
                            token=(entry, None, entry.model))
        entry = self.pool.select(self.rng)
        try:
            mutant, rule = mutate_with_retries(LEMON_RULES, lambda: self.mh.choose(self.rng),
                                               entry.model, self.rng)
        except Rejected:
            self.rejected += 1
            return None
        history = entry.history + (rule,)
        return Proposal(mutant, self._inputs(mutant), f"model:{entry.name}",
                        (("method", "lemon"), ("seed", entry.name),
                         ("rules", ",".join(history))),
                        token=(entry, rule, mutant))

    def learn(self, result: ModelResult) -> None:
        entry, rule, model = result.proposal.token
        outputs = result.outputs()
        acc = accumulated_inconsistency(outputs)
        if rule is None:  # an initial seed run as it is
            entry.acc = acc
            return
        if degenerate(outputs, self.settings.degenerate_share):
            self.degenerate += 1
            self.mh.record(rule, False)
            return
        amplified = acc > (entry.acc or 0.0)
        self.mh.record(rule, amplified)
        if amplified or len(self.pool.entries) < self.settings.pool_max:
            self.pool.add(SeedEntry(model, entry.name, acc=acc,
                                    history=entry.history + (rule,)))

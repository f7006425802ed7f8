"""LEMON's guidance: roulette seed selection, Metropolis-Hastings rule selection, the
accumulated inconsistency ACC, and the degenerate-mutant filter (layer localization is in
oracles/localize.py; D_MAD and LEMON's vote, which the differential oracle uses too, in
oracles/lemon_vote.py).

Constants are LEMON's (shared/papers/NOTES.md) and live in ``LemonSettings``. D_MAD's
reference output ``g`` is LEMON's ground truth; without labels we use the elementwise
median of the backends' outputs, which keeps ACC cheap enough to compute for every
mutant (the float64 reference judge is only paid for on suspicious cases).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dlfuzz.ir.model import Model

# D_MAD and the vote are the differential oracle's too: they live with it.
from dlfuzz.oracles.lemon_vote import (  # noqa: F401 - re-exported for the engine
    LemonSettings,
    d_mad,
    lemon_vote,
    pair_dmads,
    theta,
)


def accumulated_inconsistency(per_input: Sequence[Mapping[str, np.ndarray]]) -> float:
    """ACC: the sum over inputs and backend pairs of D_MAD (LEMON's guidance signal)."""
    return float(sum(sum(pair_dmads(o).values()) for o in per_input))


def degenerate(per_input: Sequence[Mapping[str, np.ndarray]], share: float) -> bool:
    """More than ``share`` of inputs get one argmax on every backend: a useless mutant."""
    if len(per_input) < 2:
        return False
    for backend in per_input[0]:
        outs = [o[backend] for o in per_input if backend in o]
        if not outs or outs[0].ndim < 1 or outs[0].size < 2:
            return False
        tops = [int(np.nanargmax(o.reshape(-1))) if np.isfinite(o).any() else -1 for o in outs]
        counts = np.bincount(np.asarray(tops) + 1)
        if counts.max() <= share * len(tops):
            return False
    return True


@dataclass
class SeedEntry:
    model: Model
    name: str
    selected: int = 0
    acc: float | None = None  # None until the model itself has been run
    initial: bool = False
    history: tuple[str, ...] = ()  # the rules that made it from its seed


@dataclass
class SeedPool:
    """Roulette over ``1 / (times selected + 1)``; at most ``max_size`` entries."""

    max_size: int = 51
    entries: list[SeedEntry] = field(default_factory=list)

    def add(self, entry: SeedEntry) -> None:
        self.entries.append(entry)
        if len(self.entries) > self.max_size:
            mutants = [e for e in self.entries if not e.initial]
            if mutants:
                self.entries.remove(min(mutants, key=lambda e: e.acc or 0.0))

    def select(self, rng: np.random.Generator) -> SeedEntry:
        scores = np.array([1.0 / (e.selected + 1) for e in self.entries])
        pick = self.entries[int(rng.choice(len(self.entries), p=scores / scores.sum()))]
        pick.selected += 1
        return pick


@dataclass
class RuleStats:
    used: int = 0
    amplified: int = 0

    @property
    def ratio(self) -> float:
        return self.amplified / self.used if self.used else 0.0


class MetropolisHastings:
    """Rules ranked by amplification ratio; a candidate of rank k_b replaces the current
    rule of rank k_a with probability (1 - p)^(k_b - k_a) (always when it ranks higher)."""

    def __init__(self, rules: Sequence[str], p: float = 0.0) -> None:
        self.stats = {r: RuleStats() for r in rules}
        self.p = p or 1.0 / max(len(rules), 1)
        self.current = rules[0] if rules else ""

    def ranking(self) -> list[str]:
        return sorted(self.stats, key=lambda r: -self.stats[r].ratio)

    def choose(self, rng: np.random.Generator) -> str:
        ranked = self.ranking()
        k_a = ranked.index(self.current) if self.current in ranked else 0
        while True:
            candidate = ranked[int(rng.integers(len(ranked)))]
            k_b = ranked.index(candidate)
            if rng.random() < (1.0 - self.p) ** max(k_b - k_a, 0):
                self.current = candidate
                return candidate

    def record(self, rule: str, amplified: bool) -> None:
        st = self.stats[rule]
        st.used += 1
        st.amplified += int(amplified)

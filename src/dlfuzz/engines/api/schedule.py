"""Where the API engine spends its budget: per-API energy from what each API yields.

An AFL-style power schedule over APIs instead of inputs. Every API keeps a floor of
energy (``MIN_WEIGHT`` of a healthy API's), so none is ever dropped (and the engine's
coverage groups, ``COVERAGE_SHARE``, give every API its first two groups before
energy alone decides); above it, energy grows with

* the valid rate of its ordinary inputs: an API whose inputs never run (a spec wrong
  for the installed release) teaches little. Edge inputs (``edges.py``) do not count:
  they are meant to be rejected often, and an API's first group is one
  (``edge_visit``). Counted in, a first edge group all rejected (``dim`` at INT_MAX in
  each case) put the API at a tenth of a healthy one's energy before one ordinary
  input was tried: in a 600 s campaign ``tensorflow.math.cumsum``, ``torch.histc`` and
  the per-channel fake quantization's gradient, three APIs with known bugs, got no
  second group;
* the yield: the share of its cases that showed something new for it (an outcome
  kind, an exception message, a finding, a crash with a new message) since the
  campaign began, with a Beta-like prior so a fresh API starts at the average. An
  API still producing new behaviour gets up to ``1 + NOVELTY_BOOST`` times the energy;
  one that has settled (the same result, the same rejection) falls back to its base.

Energy is also divided by what a case of the API costs, as AFL favours fast inputs: an
API whose cases take ``COST_SCALE`` seconds (the slowest backend's time, compilation
included) gets half the energy of a free one, one at a second a fiftieth. A slow special
function (an iterative series in JAX eager, 1 s a case) otherwise took as much of the
budget as fifty fast APIs while finding no more.

An API not tried yet has no cost of its own: it is charged the median cost of the APIs
tried in its module (``estimated_costs``: ``jax.scipy.special``, ``torch.nn.functional``), or
in its library where its module has too few, or nothing where neither is known (an
unknown module is tried early, which measures it). What a first visit costs varies
twentyfold between modules (a 300 s campaign on numpy, torch, jax and tf: a group of a
torch API 0.05 s, of ``jax.numpy`` 0.36 s, of ``jax.scipy.special`` 1.3 s, compilation
included), and first visits are most of a broad campaign's groups: charged nothing, the
dear modules took their share of first visits at twenty times the price, and two thirds
of the campaign's fuzzing time went to JAX's APIs. The engine's coverage groups take
the APIs visited least in the same order, cheapest first: to visit the most APIs
before a deadline, the short jobs go first.

Each case that hangs or kills a worker halves the API's energy, down to a floor: it
costs a timeout or a worker restart and most likely repeats a bug already reported
(a crash with a new message counts as novelty too, which gives some of it back).

Violate mode goes where invalid inputs reach native code: an API whose rejections come
from C++/XLA/wasm checks (RuntimeError, InvalidArgumentError, ...) rather than from
Python-level argument checks (TypeError, ValueError) gets a larger share of violate
inputs, since a missing check there is a crash rather than a clean error.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

MIN_WEIGHT = 0.05   # an API that never ran keeps this share of a healthy API's weight
PRIOR = (1.0, 2.0)  # Beta-like prior: (ok, tried) before any feedback
NOVELTY_PRIOR = (1.0, 4.0)  # (novel, tried) before any feedback
NOVELTY_BOOST = 3.0  # energy of an API all of whose cases are new: (1 + boost) x base
MAX_HALVINGS = 6     # hangs and crashes divide energy by at most 2**MAX_HALVINGS
COST_SCALE = 0.02   # seconds a case: at this mean cost an API's energy halves
PEERS_MIN = 3       # APIs tried in a module before its mean cost stands for the others'
MEMORY = 64          # distinct outcome kinds and messages remembered per API
# Exception types raised by native code (C++ checks, XLA, wasm traps as JS errors)
# rather than by the Python layer's argument checks.
NATIVE_ERRORS = frozenset({"RuntimeError", "InvalidArgumentError", "InternalError",
                           "XlaRuntimeError", "UnimplementedError", "OutOfRangeError",
                           "FailedPreconditionError", "ResourceExhaustedError", "Error",
                           "NativeCrash"})
_NUMBERS = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def message_key(exc_type: str, message: str) -> str:
    """An exception's identity without its numbers (shapes, sizes, values)."""
    return f"{exc_type}:{_NUMBERS.sub('#', message[:240])[:120]}"


@dataclass
class ApiStats:
    """What feedback taught about one API (``summary`` shows it per API)."""

    tried: int = 0           # valid-mode cases, edge ones included
    ran_somewhere: int = 0   # at least one backend (of the API's library) returned ok
    edge_tried: int = 0      # of ``tried``, edge inputs
    edge_ran: int = 0        # of ``ran_somewhere``, edge inputs
    ran_everywhere: int = 0  # every backend returned ok
    costly: int = 0          # cases that hung or killed a worker (seconds each)
    crashes: int = 0         # of them, worker deaths (signal, abort)
    findings: int = 0
    novel: int = 0           # cases that showed something new for this API
    violate_tried: int = 0   # violate-mode cases
    violate_native: int = 0  # of them, rejected by native code (``NATIVE_ERRORS``)
    seconds: float = 0.0     # the slowest backend's time, summed over every case
    groups: int = 0          # valid-mode groups proposed (edge ones among them)
    seen: set[str] = field(default_factory=set)  # outcome kinds and message keys

    @property
    def valid_rate(self) -> float:
        """The share of ordinary (not edge) valid-mode inputs that ran, with the prior."""
        ran = self.ran_somewhere - self.edge_ran
        return (ran + PRIOR[0]) / (self.tried - self.edge_tried + PRIOR[1])

    @property
    def yield_rate(self) -> float:
        """The share of cases that showed something new (with the prior)."""
        return (self.novel + NOVELTY_PRIOR[0]) / (self.tried + NOVELTY_PRIOR[1])

    @property
    def native_rate(self) -> float:
        """The share of violate-mode rejections that came from native code."""
        return (self.violate_native + 1.0) / (self.violate_tried + 2.0)

    @property
    def cost(self) -> float:
        """Mean seconds a case of this API takes (0 before any feedback)."""
        return self.seconds / max(1, self.cases)

    @property
    def cases(self) -> int:
        """Cases run in any mode: what ``seconds`` is summed over."""
        return self.tried + self.violate_tried

    @property
    def weight(self) -> float:
        return self.energy(self.cost)

    def energy(self, cost: float) -> float:
        """The weight with ``cost`` seconds a case: the API's own cost once it has run,
        an estimate from its peers before (``estimated_costs``)."""
        base = MIN_WEIGHT + (1.0 - MIN_WEIGHT) * self.valid_rate
        energy = base * (1.0 + NOVELTY_BOOST * self.yield_rate) / (1.0 + cost / COST_SCALE)
        return max(MIN_WEIGHT * MIN_WEIGHT, energy / (1 << min(self.costly, MAX_HALVINGS)))

    def observe(self, keys: set[str]) -> bool:
        """Record what a case showed (outcome kinds, message keys, finding signatures);
        True when any of it is new for this API. Once ``MEMORY`` keys are held nothing
        more counts as new: an API whose messages always differ (a value in each) does
        not keep its boost for ever."""
        kept = sorted(keys - self.seen)[:max(0, MEMORY - len(self.seen))]
        self.seen.update(kept)
        return bool(kept)

    def row(self) -> dict[str, float]:
        return {"tried": self.tried, "ran_somewhere": self.ran_somewhere,
                "ran_everywhere": self.ran_everywhere, "costly": self.costly,
                "crashes": self.crashes, "findings": self.findings, "novel": self.novel,
                "valid_rate": round(self.valid_rate, 3), "edge_tried": self.edge_tried,
                "edge_ran": self.edge_ran,
                "yield": round(self.yield_rate, 3),
                "violate_tried": self.violate_tried,
                "native_rate": round(self.native_rate, 3),
                "seconds": round(self.seconds, 3), "cost": round(self.cost, 4),
                "weight": round(self.weight, 4), "groups": self.groups}


# Until every API has had COVERAGE_VISITS groups, half of the groups go to the API
# visited least (ties to the cheapest by its cost or its peers', ``estimated_costs``,
# then in an order drawn from the seed); the rest, and all of them after,
# are drawn by energy. A floor on visits, where ``MIN_WEIGHT`` is one on
# energy: drawn by energy alone an API is missed by chance (with 450 APIs and about
# 1,000 groups in a 300 s TF.js + TensorFlow campaign about one in ten got no group, and
# one CI run never checked tf.tanh's planted backward), and an API's first group is an
# edge one (``edge_visit``), half of it ordinary values (``engine.FIRST_ORDINARY``),
# so a second group is its first full one of ordinary values. A coverage group fills
# exactly such a gap. It was a quarter of the groups while ties went in the seed's
# order; taken cheapest first, a coverage group costs less than the energy schedule's
# average one (which re-visits the cheap APIs more, as energy favours fast ones), and
# with half of them a 300 s campaign on numpy, torch, jax and tf gave first visits to
# 492 of 573 torch APIs against 404 with a quarter (docs/recall.md, session 28).
COVERAGE_SHARE = 0.5
COVERAGE_VISITS = 2


class ApiPicker:
    """Which API the next group goes to: while some API has had fewer than
    ``COVERAGE_VISITS`` groups, the least visited one for ``COVERAGE_SHARE`` of the
    groups, the cheapest of those by its cost or its peers' (``estimated_costs``), ties
    in an order from the seed; else one drawn by energy. ``stats`` is the engine's own
    table, read as feedback changes it (``stale`` after each case)."""

    def __init__(self, names: list[str], stats: Mapping[str, ApiStats], seed: int) -> None:
        self.names, self.stats = names, stats
        self.visits: dict[str, int] = dict.fromkeys(names, 0)  # groups, in any mode
        order = np.random.default_rng([seed, 0xC0FE]).permutation(len(names))
        self.order = {names[int(k)]: rank for rank, k in enumerate(order)}
        self.credit = 0.0  # coverage groups owed
        self.uncovered = len(names)  # APIs with fewer than COVERAGE_VISITS visits
        self._cdf: np.ndarray | None = None
        self._costs: dict[str, float] = {}  # estimated seconds a case, with ``_cdf``

    def stale(self) -> None:
        """The stats changed: weights and costs are computed again at the next pick."""
        self._cdf = None

    def pick(self, rng: np.random.Generator) -> str:
        """The next group's API, counted as visited."""
        if self._cdf is None:
            self._costs = estimated_costs(self.stats)
            weights = np.array([self.stats[n].energy(self._costs[n]) for n in self.names])
            self._cdf = np.cumsum(weights) / weights.sum()
        name = ""
        if self.uncovered:
            self.credit += COVERAGE_SHARE
            if self.credit >= 1.0:
                self.credit -= 1.0
                costs = self._costs
                name = min(self.names, key=lambda n: (self.visits[n], costs[n], self.order[n]))
        if not name:
            index = int(np.searchsorted(self._cdf, rng.random(), side="right"))
            name = self.names[min(index, len(self.names) - 1)]
        self.visits[name] += 1
        self.uncovered -= self.visits[name] == COVERAGE_VISITS
        return name

    def restore(self, groups: Mapping[str, int]) -> None:
        """Visits of a resumed campaign: at least each API's stored groups."""
        for name, n in groups.items():
            if name in self.visits:
                self.visits[name] = max(self.visits[name], n)
        self.uncovered = sum(v < COVERAGE_VISITS for v in self.visits.values())
        self._cdf = None


def estimated_costs(stats: Mapping[str, ApiStats]) -> dict[str, float]:
    """Seconds a case of each API costs: its own mean once it has run; before, the
    median of the mean costs of the APIs tried in its module (the name less its last
    part), if ``PEERS_MIN`` of them were, else in its library (the first part), else 0.

    The median of the APIs, not the module's seconds over its cases: one API that hung
    for 5 s (``fractional_max_pool2d_with_indices``) and two whose counterparts JAX
    compiled for 0.2 s a case made ``torch.nn.functional``'s pooled mean 0.044 s
    against 0.018 in another run, and its 98 other APIs, ``conv2d`` among them, got
    their first visits after every cheaper module's: 20 of them were visited in a 300 s
    campaign against 110."""
    # Mean costs of the tried APIs per module and per library, apart: a library's
    # top-level module (``torch``) is not the whole library.
    pooled: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
    for name, s in stats.items():
        if s.cases:
            for group in zip(("module", "library"), _peer_groups(name), strict=True):
                pooled[group].append(s.cost)

    def peers(level: str, group: str) -> float | None:
        costs = pooled.get((level, group), [])
        return float(np.median(costs)) if len(costs) >= PEERS_MIN else None

    costs = {}
    for name, s in stats.items():
        if s.cases:
            costs[name] = s.cost
            continue
        module_group, library_group = _peer_groups(name)
        module, library = peers("module", module_group), peers("library", library_group)
        costs[name] = module if module is not None else library if library is not None else 0.0
    return costs


@functools.cache
def _peer_groups(name: str) -> tuple[str, str]:
    """(module, library) of an API name: ``jax.scipy.special.expn`` ->
    (``jax.scipy.special``, ``jax``)."""
    return name.rsplit(".", 1)[0], name.split(".", 1)[0]


def edge_visit(share: float, visit: int) -> bool:
    """Whether an API's valid group number ``visit`` (from 0) is an edge group, for a
    campaign share ``share`` of edge groups: stratified, not drawn. The first is one,
    then as many as keep the share (with 0.35: groups 0, 2, 5, 8, 11, ...).

    An unaided campaign over a thousand APIs visits each two or three times; drawn at
    random with a share of 0.35, four APIs in ten never got an edge group, while every
    crash of two 600 s campaigns on numpy, torch, jax and tf came from one (integer
    extremes, a rank or a scalar outside its bound) and the valid groups gave one wrong
    result in twenty confirmed bugs. Directed campaigns keep the share."""
    if share <= 0.0:
        return False
    return math.ceil((visit + 1) * share - 1e-9) > math.ceil(visit * share - 1e-9)


def violate_share(base: float, stats: ApiStats) -> float:
    """The API's share of violate-mode groups: the campaign's share, from half of it (all
    rejections in Python) to one and a half times it (all in native code)."""
    return min(1.0, base * (0.5 + stats.native_rate))

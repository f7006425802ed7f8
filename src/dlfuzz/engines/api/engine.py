"""``ApiEngine``: the baseline API-level fuzzer.

It picks an API (weighted by how often its cases have run anywhere), draws a signature
(or reuses one of that API's recent signatures, see below) and serves a group of cases
for it, so compiled backends compile once per group.
Feedback keeps a per-API count of cases that ran ``ok`` on at least one backend; an API
whose cases never run anywhere (a spec that is wrong for the installed versions) is
sampled less and less, but never dropped, in case the failure was the inputs' fault.
Each case that hangs or kills a worker halves its API's weight: it cost a timeout or a
restart, and the next one would most likely hit the same, already reported, bug.

Everything random comes from one ``numpy.random.Generator`` seeded at construction and
is consumed in a fixed order, so a seed reproduces the same cases. Feedback changes the
weights, hence the cases after it: a campaign is reproducible when its feedback is.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, DType, Finding, Outcome
from dlfuzz.engines.api.generate import Generator
from dlfuzz.engines.api.specs import ApiSpec, load_specs
from dlfuzz.engines.api.values import draw_profile
from dlfuzz.engines.base import Engine
from dlfuzz.errors import UsageError

DEFAULT_LIBRARIES = ("numpy", "torch", "jax", "tf")
GROUP_SIZE = (8, 16)
# Signature reuse. A new (shapes, dtypes, static arguments) costs a compilation in jax
# (even op by op), jax.jit, torch.compile and XLA: 50 ms to seconds; in numpy or eager
# torch it costs nothing. So each API keeps a pool of signatures, and a group draws a new
# one with a probability that adapts to what the backends charge: the extra time of a
# group's first case (compilation) over its later cases is measured from feedback, and
# new signatures are drawn as often as keeps compilation at about COMPILE_SHARE of the
# time (never less than NEW_SIGNATURE_MIN, always while the pool is under POOL_MIN).
# A reused signature gets fresh values and a fresh value profile.
NEW_SIGNATURE_MIN = 0.1
COMPILE_SHARE = 0.5
POOL_MIN = 2
POOL_MAX = 32
COST_EMA = 0.05  # smoothing of the measured first-case and later-case costs
MIN_WEIGHT = 0.05   # an API that never ran keeps this share of a healthy API's weight
PRIOR = (1.0, 2.0)  # Beta-like prior: (ok, tried) before any feedback
COSTLY = frozenset({"timeout", "crash", "oom"})


@dataclass
class ApiStats:
    """What feedback taught about one API."""

    tried: int = 0
    ran_somewhere: int = 0   # at least one backend returned ok
    ran_everywhere: int = 0  # every backend returned ok
    costly: int = 0          # cases that hung or killed a worker (seconds each)
    findings: int = 0

    @property
    def valid_rate(self) -> float:
        return (self.ran_somewhere + PRIOR[0]) / (self.tried + PRIOR[1])

    @property
    def weight(self) -> float:
        """Valid APIs are drawn more; each hang or crash halves the weight again, since
        it costs a timeout or a worker restart and most likely repeats a known bug."""
        base = MIN_WEIGHT + (1.0 - MIN_WEIGHT) * self.valid_rate
        return max(MIN_WEIGHT * MIN_WEIGHT, base / (1 << min(self.costly, 16)))


class ApiEngine(Engine):
    """Proposes ``ApiCase`` objects for numpy-like functions shared by the libraries."""

    name = "api"
    case_kind = "api"

    def __init__(self, specs: Mapping[str, ApiSpec] | str | Path | None = None, seed: int = 0,
                 libraries: Sequence[str] = DEFAULT_LIBRARIES,
                 apis: Iterable[str] | None = None,
                 group_size: tuple[int, int] = GROUP_SIZE) -> None:
        table = specs if isinstance(specs, Mapping) else load_specs(specs)
        self.libraries = tuple(libraries)
        if not self.libraries:
            raise UsageError("ApiEngine needs at least one library; give e.g. numpy,torch")
        if apis is not None:
            table = _select(table, list(apis))
        usable = {n: s for n, s in table.items() if set(s.libraries) & set(self.libraries)}
        if not usable:
            raise UsageError(f"no API spec binds any of the libraries {self.libraries}; "
                             f"bound libraries are: {_bound(table)}")
        lo, hi = group_size
        if not 1 <= lo <= hi:
            raise UsageError(f"group_size {group_size!r} must be (low, high) with "
                             "1 <= low <= high")
        self.specs: dict[str, ApiSpec] = usable
        self.names = list(usable)
        self.group_size = (lo, hi)
        self.seed = seed
        self.generator = Generator(seed=0, libraries=self.libraries)
        self.stats: dict[str, ApiStats] = {n: ApiStats() for n in self.names}
        self.pools: dict[str, list[Any]] = {}
        self._first_ids: set[str] = set()  # ids of first cases of a new signature
        self._first_cost = 0.0  # EMA of the slowest backend's time on such a case
        self._later_cost = 0.0  # EMA of the same for every other case
        self._pending: list[ApiCase] = []
        self._cdf: np.ndarray | None = None
        self.reseed(None)

    def reseed(self, batch: int | None) -> None:
        """Restart the random streams from (seed, batch): a campaign resumed at batch N
        proposes what an uninterrupted one would have (given the same feedback)."""
        entropy = [self.seed] if batch is None else [self.seed, batch]
        streams = np.random.SeedSequence(entropy).spawn(2)
        self.rng = np.random.default_rng(streams[0])
        self.generator.rng = np.random.default_rng(streams[1])
        self._pending = []

    # ---- Engine protocol ----------------------------------------------------------------
    def propose(self, n: int) -> list[ApiCase]:
        """The next ``n`` cases: whole signature groups, the last one possibly split."""
        out: list[ApiCase] = []
        while len(out) < n:
            if not self._pending:
                self._pending = self._next_group()
            take = min(n - len(out), len(self._pending))
            out.extend(self._pending[:take])
            del self._pending[:take]
        return out

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        stats = self.stats.get(getattr(case, "api", ""))
        if stats is None:
            return
        stats.tried += 1
        oks = [o.ok for o in outcomes.values()]
        stats.ran_somewhere += any(oks)
        stats.ran_everywhere += bool(oks) and all(oks)
        stats.costly += any(o.status in COSTLY for o in outcomes.values())
        stats.findings += len(findings)
        cost = max((o.duration_s for o in outcomes.values()), default=0.0)
        if case.id in self._first_ids:
            self._first_ids.discard(case.id)
            self._first_cost += COST_EMA * (cost - self._first_cost)
        else:
            self._later_cost += COST_EMA * (cost - self._later_cost)
        self._cdf = None  # weights changed; recomputed lazily at the next group

    # ---- internals ----------------------------------------------------------------------
    def _next_group(self) -> list[ApiCase]:
        if self._cdf is None:
            weights = np.array([self.stats[n].weight for n in self.names])
            self._cdf = np.cumsum(weights) / weights.sum()
        index = int(np.searchsorted(self._cdf, self.rng.random(), side="right"))
        spec = self.specs[self.names[min(index, len(self.names) - 1)]]
        lo, hi = self.group_size
        size = int(self.rng.integers(lo, hi + 1))
        sig, new = self._signature(spec, size)
        cases = [self.generator.case(sig) for _ in range(size)]
        if new:
            self._first_ids.add(cases[0].id)
        return cases

    def new_signature_p(self, group: int) -> float:
        """How often to draw a new signature, from the measured compile overhead."""
        extra = self._first_cost - self._later_cost
        if extra <= 0:
            return 1.0
        # compile share = p * extra / (p * extra + group * later) <= COMPILE_SHARE
        p = COMPILE_SHARE * group * max(self._later_cost, 1e-6) / ((1 - COMPILE_SHARE) * extra)
        return float(min(1.0, max(NEW_SIGNATURE_MIN, p)))

    def _signature(self, spec: ApiSpec, group: int) -> tuple[Any, bool]:
        """A new signature, or a pooled one with a fresh value profile; and which."""
        pool = self.pools.setdefault(spec.name, [])
        if len(pool) < POOL_MIN or self.rng.random() < self.new_signature_p(group):
            sig = self.generator.signature(spec)
            if len(pool) < POOL_MAX:
                pool.append(sig)
            else:
                pool[int(self.rng.integers(len(pool)))] = sig
            return sig, True
        sig = pool[int(self.rng.integers(len(pool)))]
        prep = self.generator.prepared(spec)
        profile = draw_profile(self.generator.rng, allow_specials=prep.specials_ok,
                               allow_extremes=prep.extremes_ok,
                               subnormals=self.generator.subnormals)
        return replace(sig, profile=profile), False

    def unsupported_backends(self, case: Any) -> frozenset[str]:
        """Backends known not to run this case's API at all (e.g. tf-xla for det).

        A failure there is a documented limitation, not a bug: callers running a case
        can leave these backends out (``Pool.run(..., only=...)``) or ignore them.
        """
        spec = self.specs.get(getattr(case, "api", ""))
        if spec is None or not spec.unsupported:
            return frozenset()
        dtypes = {t.dtype for t in case.tensors} | {
            v.name for _, v in case.params if isinstance(v, DType)}
        out = set()
        for key, _ in spec.unsupported:
            backend, _, dtype = key.partition(":")
            if not dtype or dtype in dtypes:
                out.add(backend)
        return frozenset(out)

    def rebuild(self, api: str, tensors: Iterable[Any], params: Any = (),
                like: ApiCase | None = None) -> ApiCase:
        """A case with calls for this engine's libraries (for reducers; ``like`` unused:
        calls derive from the canonical arguments)."""
        from dlfuzz.engines.api.generate import rebuild

        return rebuild(api, tensors, params, specs=self.specs, libraries=self.libraries)

    def summary(self) -> dict[str, dict[str, float]]:
        """Per-API counts and valid rate, for reports."""
        return {n: {"tried": s.tried, "ran_somewhere": s.ran_somewhere,
                    "ran_everywhere": s.ran_everywhere, "costly": s.costly,
                    "findings": s.findings,
                    "valid_rate": round(s.valid_rate, 3)} for n, s in self.stats.items()}


def _bound(table: Mapping[str, ApiSpec]) -> str:
    return ", ".join(sorted({lib for s in table.values() for lib in s.libraries}))


def _select(table: Mapping[str, ApiSpec], wanted: list[str]) -> dict[str, ApiSpec]:
    """APIs by name, or whole groups by ``group:NAME``; unknown names are usage errors."""
    out: dict[str, ApiSpec] = {}
    groups = sorted({s.group for s in table.values()})
    for item in wanted:
        if item.startswith("group:"):
            group = item.split(":", 1)[1]
            members = {n: s for n, s in table.items() if s.group == group}
            if not members:
                raise UsageError(f"unknown API group {group!r}; groups: {', '.join(groups)}")
            out.update(members)
        elif item in table:
            out[item] = table[item]
        else:
            close = difflib.get_close_matches(item, list(table), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else \
                "; use a spec name or group:NAME"
            raise UsageError(f"unknown API {item!r}{hint}")
    return out

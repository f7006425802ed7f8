"""Generation sharded over a Ray cluster's nodes (``--executor ray`` with 2+ nodes).

The driver's own generation is the first bottleneck of a Ray campaign (docs/scale.md:
61% of the driver's time on the api mix, saturating it at about 6-11 nodes). So each
node gets its own engine (``GeneratorActor``), seeded apart (shard k of n:
``seed * SEED_STRIDE + k``), and proposes its share of every batch there. The shards
get the feedback of the cases they proposed, so each adapts as a lone engine would.

The driver keeps a *mirror*: the same engine, fed every case's feedback, which answers
what the oracles and triage ask about a case (``broken_constraints``, ``rebuild``...):
those answers come from the specs and from what feedback taught (learned error
messages), never from the proposal stream. With one node there is no sharding at all,
so a one-node Ray campaign proposes exactly what a local one does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dlfuzz.cases import Finding, Outcome
from dlfuzz.engines.base import Engine

SEED_STRIDE = 1_000_003  # shard seeds far apart from any campaign seed's neighbours


class GeneratorActor:
    """Ray actor: one shard's engine on its node."""

    def __init__(self, make: Callable[[int], Engine], seed: int) -> None:
        self.engine = make(seed)

    def setup(self, compiled: Mapping[str, bool], programs: str | None,
              stats: dict[str, dict[str, float]] | None) -> None:
        self.engine.use_backends(compiled)
        if programs:
            self.engine.keep_programs(Path(programs))
        if stats:
            self.engine.load_api_stats(stats)

    def propose(self, batch: int | None, n: int,
                feedback: list[tuple[Any, Mapping[str, Outcome], Sequence[Finding]]]
                ) -> tuple[list[Any], dict[str, int], dict[str, dict[str, float]]]:
        """Take in the last batch's feedback, reseed for ``batch``, propose ``n``; with
        the engine's counters and API stats (the driver shows their sums)."""
        for case, outcomes, findings in feedback:
            self.engine.feedback(case, outcomes, findings)
        self.engine.reseed(batch)
        cases = self.engine.propose(n)
        return cases, dict(self.engine.counters()), self.engine.api_stats()


def made(cls: type[Engine], libraries: Sequence[str], apis: Sequence[str] | None,
         settings: Any, seed: int) -> Engine:
    """The campaign's engine with another seed (what each shard builds on its node)."""
    return cls.from_settings(seed=seed, libraries=libraries, apis=apis, settings=settings)


class ShardedEngine(Engine):
    """An ``Engine`` whose proposals come from one ``GeneratorActor`` per node."""

    @classmethod
    def on_nodes(cls, mirror: Engine, nodes: Sequence[str], make: Callable[[int], Engine],
                 seed: int, setup: tuple[Mapping[str, bool], str | None]) -> ShardedEngine:
        """One generator actor pinned to each node (``make(seed)`` builds its engine)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = ray.remote(GeneratorActor)
        shards = [actor.options(num_cpus=0, max_restarts=0, scheduling_strategy=(
                      NodeAffinitySchedulingStrategy(node, soft=False))
                  ).remote(make, seed * SEED_STRIDE + k) for k, node in enumerate(nodes)]
        return cls(mirror, shards, setup)

    def __init__(self, mirror: Engine, shards: list[Any],
                 setup: tuple[Mapping[str, bool], str | None]) -> None:
        self.mirror = mirror
        self.case_kind = mirror.case_kind  # type: ignore[misc]
        self.name = mirror.name  # type: ignore[misc]
        self.settings_class = mirror.settings_class  # type: ignore[misc]
        self.shards = shards
        self._setup = setup
        self._stats_loaded: dict[str, dict[str, float]] | None = None
        self.lost_shards = 0
        self._ready = False
        self._batch: int | None = None
        self._owner: dict[str, int] = {}  # case id -> the shard that proposed it
        self._feedback: list[list[Any]] = [[] for _ in shards]
        self._counters: list[dict[str, int]] = [{} for _ in shards]
        self._stats: list[dict[str, dict[str, float]]] = [{} for _ in shards]

    # ---- what the campaign drives -----------------------------------------------------
    def load_api_stats(self, rows: dict[str, dict[str, float]]) -> None:
        self.mirror.load_api_stats(rows)
        self._stats_loaded = rows

    def reseed(self, batch: int | None) -> None:
        self._batch = batch
        self.mirror.reseed(batch)

    def propose(self, n: int) -> list[Any]:
        import ray

        if not self._ready:
            compiled, programs = self._setup
            # Each shard's generated programs in a folder of their own: two engines
            # number their files alike.
            ray.get([s.setup.remote(compiled, programs and f"{programs}/shard-{k}",
                                    self._stats_loaded)
                     for k, s in enumerate(self.shards)])
            self._ready = True
        k = len(self.shards)
        if not k:  # every shard's node died
            return self.mirror.propose(n)
        shares = [n // k + (1 if i < n % k else 0) for i in range(k)]
        refs = [s.propose.remote(self._batch, share, self._feedback[i])
                for i, (s, share) in enumerate(zip(self.shards, shares, strict=True))]
        self._feedback = [[] for _ in self.shards]
        cases: list[Any] = []
        self._owner.clear()
        lost: list[int] = []
        for i, ref in enumerate(refs):
            try:
                proposed, counters, stats = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnschedulableError):
                lost.append(i)  # its node died: the driver proposes that share itself
                continue
            self._counters[i], self._stats[i] = counters, stats
            for case in proposed:
                self._owner[case.id] = i
            cases.extend(proposed)
        if lost:
            cases.extend(self.mirror.propose(sum(shares[i] for i in lost)))
            self._drop(lost)
        return cases

    def _drop(self, lost: list[int]) -> None:
        """Forget the shards whose actors died (a shard's engine state cannot be had
        back); later batches are shared between the others, or proposed here."""
        keep = [i for i in range(len(self.shards)) if i not in lost]
        self.lost_shards += len(lost)
        self.shards = [self.shards[i] for i in keep]
        self._feedback = [self._feedback[i] for i in keep]
        self._counters = [self._counters[i] for i in keep]
        self._stats = [self._stats[i] for i in keep]
        self._owner = {c: keep.index(i) for c, i in self._owner.items() if i in keep}

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        self.mirror.feedback(case, outcomes, findings)
        shard = self._owner.get(case.id)
        if shard is not None:
            self._feedback[shard].append((case, dict(outcomes), list(findings)))

    def counters(self) -> Mapping[str, int]:
        total: Counter[str] = Counter()
        for c in self._counters:
            total.update(c)
        total["generation_shards_lost"] = self.lost_shards
        return total

    def api_stats(self) -> dict[str, dict[str, float]]:
        """Per API, the shards' rows added (cases and counts); a rate is the plain mean
        over the shards that tried the API."""
        merged: dict[str, dict[str, float]] = {}
        for rows in self._stats:
            for api, row in rows.items():
                into = merged.setdefault(api, {})
                for key, value in row.items():
                    into[key] = into.get(key, 0.0) + float(value)
                into["_shards"] = into.get("_shards", 0.0) + 1
        for row in merged.values():
            shards = row.pop("_shards", 1.0)
            for key in list(row):
                if key in _RATES:
                    row[key] /= shards
        return merged

    # ---- what the oracles and triage ask: the mirror answers ---------------------------
    def unsupported_backends(self, case: Any) -> frozenset[str]:
        return self.mirror.unsupported_backends(case)

    def broken_constraints(self, case: Any) -> list[str] | None:
        return self.mirror.broken_constraints(case)

    def constraint_source(self, case: Any) -> str:
        return self.mirror.constraint_source(case)

    def is_deterministic(self, case: Any) -> bool:
        return self.mirror.is_deterministic(case)

    def rebuild(self, api: str, tensors: Iterable[Any], params: Any = (),
                like: Any = None) -> Any:
        return self.mirror.rebuild(api, tensors, params, like)


# Per-API stats that are rates (averaged over shards), not counts (added).
_RATES = frozenset({"valid_rate", "yield", "native_rate", "cost", "weight"})

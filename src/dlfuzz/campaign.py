"""A campaign: engine -> executor -> oracles -> triage -> store, until the budget is spent.

Batches are the unit of progress: a batch is proposed, run on every backend, judged,
triaged and then recorded in one transaction. The engine is re-seeded from (seed, batch
index), so a campaign resumed after a kill continues with the next batch; cases of the
batch in flight are lost, confirmed bugs never are (each is stored when confirmed).

Stopping (Ctrl-C, SIGTERM, the budget) does not wait for the batch: the pool's
``StopSignal`` ends every wait for a worker within a fraction of a second. A batch cut
while its cases run is not recorded (a resumed campaign runs that batch index again); a
batch cut during triage has been judged, so it is recorded and the resumed campaign goes
on with the next one. Triage cut half-way keeps what it stored: a confirmed bug is stored
before its folder is written and reduced, and ``_repair_folders`` completes a missing
folder on resume. A second Ctrl-C kills the workers at once.

A batch's size follows the measured time per case (``batch_seconds`` of work, at most
``batch_size`` cases, see ``_batch_size``): on the usual mix of APIs a batch is the full
256 cases, but a campaign on one slow API (``--apis``) gets batches of a few dozen, so
its first findings are triaged within a minute rather than cut with an unfinished batch
at the end of the budget.

The budget counts fuzzing time: it starts when the workers are ready (their start-up,
seconds per library, is shown and not charged), so ``--budget 5s`` fuzzes for 5 s.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from dlfuzz import registry
from dlfuzz.backends.base import Backend, load_backend_class
from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.engines.base import Engine
from dlfuzz.engines.sharded import ShardedEngine, made
from dlfuzz.errors import UsageError
from dlfuzz.executor.pool import Cancelled, Pool, WorkerConfig
from dlfuzz.oracles.base import Oracle, OracleContext
from dlfuzz.oracles.reference import REFERENCE_PREFERENCE, Judge
from dlfuzz.settings import CampaignSettings, engine_class
from dlfuzz.store.db import OUTCOME_COUNTER, PHASE_COUNTER, Store
from dlfuzz.triage.confirm import FreshRerun
from dlfuzz.triage.stored import filled
from dlfuzz.triage.triager import TRIAGE_PHASES, Triage, TriageSettings

# How often the engine's per-API stats are written to the campaign (and at the end).
STATS_EVERY_S = 10.0
# Sizes of batches sized by time (``batch_seconds``): the first, before anything is
# measured, and the least (a round trip and a store transaction cost milliseconds).
FIRST_BATCH = 32
MIN_BATCH = 16  # a whole group of one signature (engines.api.signature_costs.GROUP_MAX)
CASE_TIME_EMA = 0.5  # weight of the last batch in the time per case


@dataclass
class Progress:
    """What the live status shows; updated after every batch."""

    started: float = field(default_factory=time.time)
    budget_s: float = 0.0
    elapsed_before: float = 0.0
    cases: int = 0
    cases_before: int = 0
    batches: int = 0
    findings: int = 0
    bugs_confirmed: int = 0
    bugs_flaky: int = 0
    stats: Counter[str] = field(default_factory=Counter)
    backends: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str = "starting"
    startup_s: float = 0.0  # how long the workers took to start (not charged to the budget)
    interrupted: bool = False  # stopped by Ctrl-C/SIGTERM rather than by the budget
    triage_s: float = 0.0  # confirming and reducing new bugs (this run and before)
    reductions_waiting: int = 0  # confirmed bugs whose reduction waits (triage.triager)
    # ``--executor ray``: per node, its worker actors per backend, cases and cases/s.
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def elapsed(self) -> float:
        return self.elapsed_before + (time.time() - self.started)

    @property
    def rate(self) -> float:
        run = time.time() - self.started
        return self.cases / run if run > 0 else 0.0


# The order in which a model campaign adds reference libraries: the cheapest to run a
# fresh float64 graph first. Measured on 21 reference runs of synthesized graphs (the
# upcast case and two nudged copies of 7 graphs): torch 0.3 ms each, TensorFlow eager
# 10 ms, JAX eager 130 ms (it compiles every op of a new graph's shapes). With JAX as the
# added reference, reference runs took 49 of a 60 s torch-vs-ORT synth campaign.
MODEL_REFERENCE_ORDER = ("torch", "tf", "jax")
# A model campaign comparing two or more backends gets a third reference library, run
# only when the first two disagree in float64: a torch bug that torch's own float64 run
# shares (a planted flipped 3x3 conv) left torch and TF without consensus, so a
# torch-vs-ORT campaign could never blame it.
MODEL_REFERENCES = 3


def resolve_backends(settings: CampaignSettings) -> list[str]:
    """Selected backends plus reference workers when fewer than two eager libraries.

    References are eager backends of ``REFERENCE_PREFERENCE`` libraries that can run the
    engine's kind of case (numpy runs API calls but no models); a model campaign adds
    them in ``MODEL_REFERENCE_ORDER``, the cheapest first.
    """
    chosen = list(dict.fromkeys(settings.backends))
    for name in chosen:
        registry.import_string("backend", name)  # unknown names fail here, clearly
    if settings.reference != "auto":
        return chosen
    kind = engine_class(settings.engine).case_kind

    def reference_capable(name: str) -> type[Backend] | None:
        cls = load_backend_class(registry.import_string("backend", name))
        ok = not cls.compiled and cls.library in REFERENCE_PREFERENCE and kind in cls.case_kinds
        return cls if ok else None

    eager_libs = set()
    for name in chosen:
        cls = reference_capable(name)
        if cls is not None:
            eager_libs.add(cls.library)
    order: tuple[str, ...] = REFERENCE_PREFERENCE
    wanted = 2
    if kind == "graph":
        order = MODEL_REFERENCE_ORDER
        wanted = MODEL_REFERENCES if _compared(settings, kind) else 2
    for lib in order:
        if len(eager_libs) >= wanted:
            break
        if lib not in eager_libs and lib in registry.names("backend") and reference_capable(lib):
            chosen.append(lib)
            eager_libs.add(lib)
    return chosen


def on_demand_references(settings: CampaignSettings, resolved: Sequence[str]) -> frozenset[str]:
    """The reference backends ``resolve_backends`` added that run only when the judge asks
    (float64 reference runs of a suspicious case), not on every case.

    That is so for model campaigns whose own backends are two or more: every backend runs
    the same graph, the differential compares the selected ones, and a reference only
    settles who is wrong. JAX eager compiles every op of a new graph; running it on every
    case took a torch-vs-ORT model pipeline from 101 to 5.5 cases/s. An API campaign's
    added references stay on every case: there they are the counterparts compared."""
    kind = engine_class(settings.engine).case_kind
    if kind != "graph" or not _compared(settings, kind):
        return frozenset()
    return frozenset(n for n in resolved if n not in set(settings.backends))


def _compared(settings: CampaignSettings, kind: str) -> bool:
    """Whether two or more selected backends run the engine's kind of case: they are
    compared with each other, and added references only settle who is wrong."""
    runs_kind = [n for n in dict.fromkeys(settings.backends)
                 if kind in load_backend_class(registry.import_string("backend", n)).case_kinds]
    return len(runs_kind) >= 2


def processes_of(backend: str, replicas: int) -> int:
    """Worker processes for ``backend``: ``replicas`` (0: 2 where the machine has 2 or
    more cores) if it compiles every new signature, else 1. On the 2-core machine a
    second JAX process took the executor from 41 to 58-61 cases/s on one fixed stream of
    api cases on numpy, torch, jax, tf (docs/performance.md)."""
    cls = load_backend_class(registry.import_string("backend", backend))
    if not cls.compiles_per_signature:
        return 1
    if replicas:
        return replicas
    return 2 if (os.cpu_count() or 1) >= 2 else 1


class Campaign:
    def __init__(self, store: Store, settings: CampaignSettings,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.store = store
        self.settings = settings
        self.on_progress = on_progress or (lambda p: None)
        self.backend_names = resolve_backends(settings)
        # Backends every case runs on; the others are references the judge calls on.
        on_demand = on_demand_references(settings, self.backend_names)
        self.hot = [n for n in self.backend_names if n not in on_demand]
        pythons = dict(settings.pythons)
        preload: dict[str, list[str]] = {}
        for backend, module in settings.preload:
            preload.setdefault(backend, []).append(module)
        engine_cls = engine_class(settings.engine)
        self.configs = [
            WorkerConfig(backend=name, python=pythons.get(name) or WorkerConfig.python,
                         memory_limit_mb=settings.memory_limit_mb,
                         case_timeout_s=settings.case_timeout_s,
                         restart_every=settings.restart_every,
                         preload=tuple(preload.get(name, ())),
                         scratch=str(store.root / "scratch" / name), threads=settings.threads,
                         replicas=processes_of(name, settings.replicas),
                         first_limit_share=engine_cls.first_limit_share)
            for name in self.backend_names]
        self.backends: dict[str, Backend] = {
            c.backend: load_backend_class(c.target)() for c in self.configs}
        self.library_of = {n: b.library for n, b in self.backends.items()}
        self.compiled = {n: b.compiled for n, b in self.backends.items()}
        executor: type[Pool] = registry.load("executor", settings.executor)
        self.pool = executor.for_campaign(self.configs, settings)
        self.oracles: list[Oracle] = [registry.load("oracle", n)()
                                      for n in registry.names("oracle")]
        kind = engine_cls.case_kind
        libraries = tuple(dict.fromkeys(b.library for b in self.backends.values()
                                        if kind in b.case_kinds))
        if not libraries:
            raise UsageError(f"none of the backends {', '.join(self.backend_names)} can run "
                             f"the {settings.engine} engine's cases; choose others")
        self.engine: Engine = engine_cls.from_settings(
            seed=settings.seed, libraries=libraries, apis=list(settings.apis) or None,
            settings=settings.engine_settings)
        # Which backends that run every case compile every new signature (jax, jax-jit,
        # tf-xla, torch-compile): not ``compiled``, which ONNX Runtime's optimizing mode
        # also is though its session is built in milliseconds, nor a reference run on
        # demand (synth ran 32 input sets per graph on torch,ort for either).
        compiles = {n: self.backends[n].compiles_per_signature for n in self.hot}
        self.engine.use_backends(compiles)
        self.engine.keep_programs(store.root / "programs")  # generated programs, as .py files
        self._engine_setup = (compiles, str(store.root / "programs"))
        self._engine_made = partial(made, engine_cls, libraries, list(settings.apis) or None,
                                    settings.engine_settings)
        self.progress = Progress(budget_s=settings.budget_s)
        self._stop = False
        self._stats_saved = 0.0
        self._totals: Counter[str] = Counter()  # engine and judge totals at the last batch
        self._case_s: float | None = None  # measured seconds per case (run and judged)
        self._triage_ms: dict[str, int] = {}  # triage's milliseconds by phase, last batch
        self._all_waiting = False  # a resumed campaign's waiting reductions: all at once
        self._signals = 0

    # ---- the pieces the oracles and triage call back into ------------------------------
    def _runner(self, cases: Sequence[ApiCase], only: Sequence[str]
                ) -> list[dict[str, Outcome]]:
        return self.pool.run(cases, only=only)

    def judge_cases(self, items: list[tuple[ApiCase, dict[str, Outcome]]],
                    timed: Counter[str] | None = None) -> list[list[Finding]]:
        """Every oracle's findings on each item; ``timed`` gets each oracle's
        milliseconds (``phase:oracle:<name>_ms``: the batch's own judging, not triage's
        re-checks, which triage times itself)."""
        found: list[list[Finding]] = [[] for _ in items]
        # A model dlfuzz failed to lower is dlfuzz's bug, never the library's: counted
        # (and shown in the status) but kept away from every oracle.
        own = sum(o.stage == "dlfuzz" for _, outcomes in items for o in outcomes.values())
        if own:
            self.ctx.stats["dlfuzz_errors"] += own
            items = [(case, {b: o for b, o in outcomes.items() if o.stage != "dlfuzz"})
                     for case, outcomes in items]
        # Documented limits (tf-xla has no determinant kernel): not evidence of a bug.
        unsupported = self.engine.unsupported_backends
        items = [(case, {b: o for b, o in outcomes.items() if b not in unsupported(case)})
                 for case, outcomes in items]
        for oracle in self.oracles:
            # Each oracle judges the kinds of case it knows (programs have their own).
            index = [i for i, (case, _) in enumerate(items)
                     if getattr(case, "kind", "api") in oracle.case_kinds]
            if not index:
                continue
            t0 = time.perf_counter()
            judged = oracle.check_many([items[i] for i in index], self.ctx)
            if timed is not None:
                timed[f"{PHASE_COUNTER}oracle:{oracle.name}_ms"] += round(
                    (time.perf_counter() - t0) * 1000.0)
            for i, fs in zip(index, judged, strict=True):
                found[i].extend(fs)
        return found

    def check(self, cases: Sequence[ApiCase], only: Sequence[str]
              ) -> list[tuple[dict[str, Outcome], list[Finding]]]:
        """Run cases on some backends and judge them (confirmation, reduction)."""
        results = self.pool.run(cases, only=only)
        found = self.judge_cases(list(zip(cases, results, strict=True)))
        return list(zip(results, found, strict=True))

    # ---- running ----------------------------------------------------------------------
    def start(self) -> dict[str, str]:
        p = self.progress
        n = len(self.configs)
        p.state = f"starting workers (0/{n})"
        self.on_progress(p)
        t0 = time.time()

        def ready(name: str, done: int, total: int, version: str | None, reason: str) -> None:
            p.state = f"starting workers ({done}/{total})"
            self.on_progress(p)

        versions = self.pool.start(ready)
        nodes = self.pool.generation_nodes()
        if len(nodes) > 1:  # an engine per node proposes its share (engines.sharded)
            self.engine = ShardedEngine.on_nodes(self.engine, nodes, self._engine_made,
                                                 self.settings.seed, self._engine_setup)
        self.store.set_meta(generation_shards=len(nodes) if len(nodes) > 1 else 0)
        p.startup_s = time.time() - t0
        if self.pool.unavailable:
            self.pool.close()
            reasons = "; ".join(f"{b}: {r}" for b, r in self.pool.unavailable.items())
            raise UsageError(f"backend(s) unavailable: {reasons} "
                             f"(run `dlfuzz backends` for details, or drop them from --backends)")
        graphs = self.engine.case_kind == "graph"
        judge = Judge(self._runner, [n for n in self.backend_names if not self.compiled[n]],
                      self.library_of, seed=self.settings.seed,
                      preference=MODEL_REFERENCE_ORDER if graphs else REFERENCE_PREFERENCE,
                      first=2 if graphs else 0)
        self.ctx = OracleContext(judge, self.library_of, self.compiled,
                                 broken=self.engine.broken_constraints,
                                 deterministic=self.engine.is_deterministic,
                                 constraint_source=self.engine.constraint_source)
        # Confirmation re-runs the guilty backend in a fresh worker, with the same limits,
        # and checks its standalone reproducer (triage/confirm.py).
        fresh = FreshRerun(self.pool, self.judge_cases)
        self.triage = Triage(
            self.store, self.check, judge,
            {n: b for n, b in self.backends.items() if n in self.hot}, versions, self.compiled,
            TriageSettings(self.settings.confirm_runs, self.settings.reduce,
                           self.settings.max_reduce_runs,
                           triage_share=self.settings.triage_share),
            rebuild=self.engine.rebuild, rerun=fresh, reproduce=fresh.reproduce)
        self.triage.time_left = lambda: self.settings.budget_s - self.progress.elapsed
        self.triage.elapsed = lambda: self.progress.elapsed
        # A resumed campaign's triage share counts the time triage took before.
        counters = self.store.counters()
        self._triage_ms = {phase: counters.get(f"triage_{phase}_ms", 0)
                           for phase in TRIAGE_PHASES}
        for phase, ms in self._triage_ms.items():
            self.triage.seconds[phase] = ms / 1000.0
        self.store.set_meta(versions=versions, backends_resolved=self.backend_names)
        return versions

    def run(self) -> Progress:
        totals = self.store.totals()
        p = self.progress
        p.elapsed_before, p.cases_before = float(totals["seconds"]), int(totals["cases"])
        self._refresh_bug_counts()
        self._install_signal_handlers()
        try:
            try:
                self.start()
                # The budget counts from here: start-up is shown, not charged.
                p.started = time.time()
                self.pool.stop.set_deadline(
                    time.monotonic() + max(0.0, self.settings.budget_s - p.elapsed_before))
                self._backfill_root_causes()
                self._repair_folders()
                self.triage.unchecked_reproducers()
                # What still waited when the campaign stopped is reduced in its first
                # batch, whatever triage's share (``_run_batch``).
                self._all_waiting = self.triage.restore_waiting() > 0
                saved = self.store.meta().get("api_stats")
                if isinstance(saved, dict):
                    self.engine.load_api_stats(saved)
                batch = self.store.last_batch() + 1
                p.state = "fuzzing"
                self.on_progress(p)
                while not self._stop and not self._spent():
                    self.pool.stop.check()
                    self._run_batch(batch)
                    batch += 1
                if not self._stop and self.triage.waiting() and self.triage.time_left() > 0:
                    self._reduce_left(batch)
            except Cancelled:
                pass  # the batch in flight is cut (see the module docstring)
            self._finish_checks()
            p.state = "interrupted" if p.interrupted else "done"
        finally:
            self._save_api_stats()
            self.pool.close()
        self.on_progress(p)
        return p

    def _finish_checks(self) -> None:
        """Every reproducer verdict still running (``Triage.collect``) before the end; an
        interrupted campaign does not wait (its unchecked bugs are checked on resume)."""
        triage = getattr(self, "triage", None)
        if triage is None:
            return
        if self.progress.interrupted:
            triage.abandon_checks()
            return
        if triage.collect():
            self.progress.state = "checking reproducers"
            self.on_progress(self.progress)
            triage.collect(wait=True)
        self._refresh_bug_counts()

    def _spent(self) -> bool:
        p = self.progress
        if p.elapsed >= self.settings.budget_s:
            return True
        return bool(self.settings.max_cases and p.cases + p.cases_before >= self.settings.max_cases)

    def _batch_size(self) -> int:
        """The next batch's size: ``batch_seconds`` of work at the measured time per
        case, within [MIN_BATCH, batch_size]; always ``batch_size`` when
        ``batch_seconds`` is 0."""
        most = self.settings.batch_size
        if not self.settings.batch_seconds:
            return most
        if self._case_s is None:
            return min(most, FIRST_BATCH)
        wanted = self.settings.batch_seconds / max(self._case_s, 1e-6)
        return int(min(most, max(min(MIN_BATCH, most), wanted)))

    def _run_batch(self, idx: int) -> None:
        t0 = time.time()
        # Where the batch's time goes (``phase:*_ms`` counters; triage's are its own).
        phases: Counter[str] = Counter()
        tick = time.perf_counter()
        self.engine.reseed(idx)
        cases = self.engine.propose(self._batch_size())
        phases[f"{PHASE_COUNTER}generate_ms"] += round((time.perf_counter() - tick) * 1000.0)
        tick = time.perf_counter()
        results = self.pool.run(cases, only=self.hot)
        phases[f"{PHASE_COUNTER}run_ms"] += round((time.perf_counter() - tick) * 1000.0)
        items = list(zip(cases, results, strict=True))
        # The batch's counters hold what its judging and its triage added to the stats.
        before = Counter(self.ctx.stats)
        found = self.judge_cases(items, phases)
        per_case = (time.time() - t0) / max(len(cases), 1)  # triage aside: it is per finding
        self._case_s = per_case if self._case_s is None else \
            self._case_s + CASE_TIME_EMA * (per_case - self._case_s)
        n_findings = 0
        cut: Cancelled | None = None
        for (case, outcomes), fs in zip(items, found, strict=True):
            self.engine.feedback(case, outcomes, fs)
            seen: set[str] = set()
            # Eager backends' findings first: a bug that the eager mode and a compiled one
            # share is filed (and reproduced) on the eager mode; the compiled mode's
            # finding is then a place of it (triage.root_cause).
            for f in sorted(fs, key=lambda f: self.compiled.get(f.guilty_backend, False)):
                n_findings += 1
                if f.signature in seen or cut is not None:
                    continue
                seen.add(f.signature)
                try:
                    self.triage.handle(f, case, fs)
                except Cancelled as exc:  # judged: the batch is recorded, triage is cut
                    cut = exc
        if cut is None:
            # Waiting reductions, as triage's share of the time allows, in the batch's
            # time: the batches' seconds are what a resumed campaign's budget counts.
            try:
                self.triage.reduce_waiting(within_share=not self._all_waiting)
                self._all_waiting = False
            except Cancelled as exc:
                cut = exc
        p = self.progress
        p.cases += len(cases)
        p.batches += 1
        p.findings += n_findings
        # Running totals kept outside the oracles' stats: the engine's, and the judge's
        # float64 reference runs and the cases a third reference library settled
        # (``Judge.first``); the batch stores what it added to them.
        totals = Counter(self.engine.counters())
        totals.update(reference_runs=self.ctx.judge.reference_runs,
                      reference_tie_breaks=self.ctx.judge.tie_breaks)
        p.stats = Counter(self.ctx.stats) + totals
        counters = dict(Counter(self.ctx.stats) - before)
        counters.update(totals - self._totals)
        self._totals = totals
        counters["findings"] = n_findings
        # Each backend's outcomes by status, for the report's stacked bars (report.charts).
        counters.update(Counter(f"{OUTCOME_COUNTER}{name}:{o.status}"
                                for _, outcomes in items for name, o in outcomes.items()))
        health = {}
        for name, st in self.pool.stats().items():
            prev = p.backends.get(name, {})
            row = {"version": st.version, "cases": st.cases, "crashes": st.crashes,
                   "timeouts": st.timeouts, "restarts": st.restarts,
                   "rss_mb": st.last_rss_mb}
            health[name] = {k: (v - prev.get(k, 0) if k in ("cases", "crashes", "timeouts",
                                                             "restarts") else v)
                            for k, v in row.items()}
            p.backends[name] = row
        run_s = max(time.time() - p.started, 1e-9)
        p.nodes = {node: {**row, "rate": row["cases"] / run_s}
                   for node, row in self.pool.node_stats().items()}
        self.triage.collect()  # reproducer verdicts that came in meanwhile
        # Milliseconds triage spent in this batch, by phase (its share of the campaign).
        counters.update(self._triage_counters())
        counters.update(phases)
        self.store.finish_batch(idx, len(cases), n_findings, time.time() - t0, counters, health)
        if time.time() - self._stats_saved >= STATS_EVERY_S:
            self._save_api_stats()
        self._refresh_bug_counts()
        self.on_progress(p)
        if cut is not None:
            raise cut

    def _triage_counters(self) -> dict[str, int]:
        """Milliseconds triage spent since the last call, by phase (``triage_<phase>_ms``);
        the progress gets triage's total and the reductions waiting."""
        spent = {phase: round(self.triage.seconds[phase] * 1000.0) for phase in TRIAGE_PHASES}
        added = {f"triage_{phase}_ms": ms - self._triage_ms.get(phase, 0)
                 for phase, ms in spent.items() if ms > self._triage_ms.get(phase, 0)}
        self._triage_ms = spent
        self.progress.triage_s = self.triage.busy_seconds()
        self.progress.reductions_waiting = len(self.triage.waiting())
        return added

    def _reduce_left(self, idx: int) -> None:
        """Fuzzing stopped before the budget (``--max-cases``): the reductions still
        waiting run in the time left, recorded as a batch of no cases."""
        t0 = time.time()
        self.progress.state = "reducing"
        self.on_progress(self.progress)
        try:
            self.triage.reduce_waiting(within_share=False)
        finally:
            self.store.finish_batch(idx, 0, 0, time.time() - t0, self._triage_counters(), {})
            self._refresh_bug_counts()

    def _save_api_stats(self) -> None:
        """The engine's per-API stats into the campaign's meta (``findings --stats``)."""
        stats = self.engine.api_stats()
        if stats:
            self.store.set_meta(api_stats=stats)
        self._stats_saved = time.time()

    def _refresh_bug_counts(self) -> None:
        bugs = self.store.bugs()
        self.progress.bugs_confirmed = sum(b.status == "confirmed" for b in bugs)
        self.progress.bugs_flaky = sum(b.status == "flaky" for b in bugs)

    def _backfill_root_causes(self) -> None:
        """Bugs of a campaign stored before severities and root causes existed (resumed
        now) get them from their stored fields, so new findings merge into them."""
        for bug in self.store.bugs():
            if bug.root_cause:
                continue
            severity, root_cause, places = filled(self.store, bug)
            self.store.update_bug(bug.id, severity=severity, root_cause=root_cause,
                                  places=places)

    def _repair_folders(self) -> None:
        """A confirmed bug whose folder was never written (killed in between) gets one now."""
        for bug in self.store.bugs("confirmed"):
            if bug.dir and (self.store.root / bug.dir / "meta.json").is_file():
                continue
            blob = bug.reduced_blob or bug.case_blob
            case = self.store.blobs.get(blob)
            f = Finding("store", bug.symptom, bug.api, bug.guilty_backend, bug.stage, bug.message,
                  bug.signature, case.id, tuple(bug.details.items()))
            outcomes, _ = self.check([case], self.triage.needed_backends(f))[0]
            self.triage.write(bug.id, f, case, outcomes, {"reduced": bool(bug.reduced_blob),
                                                         "repaired": True})

    def _install_signal_handlers(self) -> None:
        def stop(signum: int, frame: Any) -> None:
            # First signal: cut the batch in flight (within about a second). Second: kill
            # the workers now and unwind (the store's transactions roll back cleanly).
            # Later ones: nothing, the unwinding is under way. Raising again could land
            # after the CLI has caught the first KeyboardInterrupt and before it ignores
            # SIGINT for the exit, and kill the process by signal instead of exit 130
            # (a user holding Ctrl-C; seen once in test_stop under a loaded suite).
            self._signals += 1
            self._stop = True
            self.progress.interrupted = True
            if self._signals == 1:
                self.progress.state = "stopping"
                self.pool.stop.set("interrupted")
                return
            if self._signals > 2:
                return
            self.pool.kill()
            raise KeyboardInterrupt
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                signal.signal(sig, stop)
            except ValueError:  # not the main thread (tests): no handlers
                return


def open_campaign(out: Path | None, resume: Path | None, settings: CampaignSettings | None
                  ) -> tuple[Store, CampaignSettings]:
    """A new store for ``out``, or the existing one and its stored settings for ``resume``
    (``settings`` is then unused: the caller compares them with the stored ones). Either
    way the store holds the campaign's lock (one writer per folder) until it is closed."""
    if resume is not None:
        store = Store.open(resume, "--resume", lock=True)
        try:
            stored = CampaignSettings.from_json(store.meta()["settings"])
        except BaseException:
            store.close()
            raise
        return store, stored
    if out is None or settings is None:
        raise UsageError("dlfuzz run needs --out DIR (a new campaign) or --resume DIR")
    store = Store.create(out, {"settings": settings.to_json()})
    return store, settings

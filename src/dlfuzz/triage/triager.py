"""From raw findings to bugs: dedup by signature, confirm by re-running, reduce, write.

A finding is first given its root cause (``triage.root_cause``) and severity
(``triage.severity``). A known signature, or a new signature whose root cause already
has a confirmed bug, only adds an occurrence at its place (backend, API, dtypes,
symptom) of that bug: no re-run, no reduction, no second bug. Otherwise the new
signature is confirmed by re-running its case ``confirm_runs`` times under the
detection's conditions (``confirm``: a fresh worker for the guilty backend, the same
timeout); only if every re-run shows the same signature is it ``confirmed``, otherwise
it is labelled ``flaky`` (or ``invalid-program``, or ``slow`` for a "hang" that ends
within a few limits) and never reported as a confirmed bug.
A confirmed bug is stored at once (so a kill during reduction loses nothing), then
reduced and its folder rewritten; last, the guilty backend's reproducer must show it,
or the bug becomes ``unreproduced``.

Reduction is the dear part of triage (every candidate a compilation in JAX or TF, up to
``REDUCE_SECONDS``), and in a broad campaign most new root causes are special-value or
inconsistency findings: reducing each as it came took half of a 600 s API campaign, time
the search then lacked. So a wrong result (``reduce_at_once``) is reduced when
confirmed; a bug of another class, a crash included (every candidate that still crashes
costs a worker restart), is reduced then only while triage has taken at most
``triage_share`` of the campaign's time. Else it gets the quick step alone (its NaN/inf
inputs made finite where the bug survives: the step that re-keys a bug, to a wrong result
that is then reduced at once, or to a place of an earlier bug; not for a crash, keyed by
where it died) and waits (``reduce_waiting``, inside each batch, most severe first, as
the share allows; in the time ``--max-cases`` leaves; first thing on ``--resume``). Its reproducer is checked as
found meanwhile and again once reduced; only a bug's latest check counts.

The reproducer is a subprocess that imports its library (5-13 s under a campaign's load):
it runs in a background thread while fuzzing goes on, and its verdict is applied at the next ``collect`` (the campaign calls it after
each batch, and waits for every check at the end). A finding of the same root cause that
arrives meanwhile is a place of the bug, as of any confirmed one; if the verdict then
makes the bug ``unreproduced``, later findings of that root cause are confirmed anew.
A campaign killed before a verdict checks the bug again when resumed
(``unchecked_reproducers``).

What differs between kinds of case (reduction passes, the reproducers' expectation, the
title, which backends get a reproducer) is asked of the case's kind (``kind_of``).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dlfuzz.backends.base import Backend
from dlfuzz.cases import ApiCase, Expectation, Finding, Outcome, TriageTools, kind_of
from dlfuzz.cases.kind import Checker  # runs cases and applies every oracle
from dlfuzz.oracles.base import input_dtypes
from dlfuzz.oracles.reference import Judge
from dlfuzz.oracles.special import same_finding
from dlfuzz.store.db import BugRow, Store
from dlfuzz.triage.bugdir import BugFolder, write_bug_folder
from dlfuzz.triage.confirm import (
    HANG_FACTOR,
    SYMPTOMS_KILLED,
    ReproCheck,
    ReRun,
    SlowRun,
    confirm,
    record_in_folder,
    rerun_in_pool,
)
from dlfuzz.triage.reduce import FIRST_CHUNK, reduce_case
from dlfuzz.triage.root_cause import Backends, root_cause_key
from dlfuzz.triage.severity import SEVERITIES, finding_severity, inputs_hold_specials


@dataclass(frozen=True)
class TriageSettings:
    confirm_runs: int = 2
    reduce: bool = True
    max_reduce_runs: int = 200
    # Severities reduced as soon as they are confirmed, whatever triage has cost so far.
    # Not crashes: each candidate that still crashes costs a worker restart (10-23 s a
    # bug, half of a 300 s campaign's triage with seven crashes), and a crash's
    # reproducer is as truthful unreduced; they wait first in line (``_RANK``).
    reduce_at_once: tuple[str, ...] = ("wrong-result",)
    # Other bugs are reduced while triage (confirmation and reduction) has taken at most
    # this share of the campaign's elapsed time; else they wait (module docstring).
    triage_share: float = 0.3


# Every reduction run of a hang costs a full timeout, and of a crash a worker restart
# (seconds for TF or JAX): those get a small budget, hangs none.
REDUCE_RUNS_BY_SYMPTOM = {"timeout": 0, "crash": 24, "oom": 24, "performance": 0}
# Wall-clock cap of one reduction: every candidate of a JAX or TF case has new shapes, so
# a compilation each (a jax special function's 57 runs took 70 s of a 600 s campaign on
# the loaded machine). Past it the smallest case that kept the bug is the reduced case.
REDUCE_SECONDS = 30.0
# A candidate that still crashes kills the worker, and the next candidate waits for a new
# one (2-5 s for torch, JAX or TF on the loaded 2-core machine): a 300 s campaign spent
# 50 s reducing one torch ``lcm`` SIGFPE, every other worker idle meanwhile. Such a
# reduction sends its candidates one at a time (``first_chunk`` 1: the candidate after
# one that crashed would most likely crash too, a restart for nothing) and stops sooner.
REDUCE_SECONDS_DEATH = 15.0


_RANK = {s: i for i, s in enumerate(SEVERITIES)}
# The quick step of a bug whose reduction waits: its NaN/inf inputs made finite, where
# the bug survives, in at most this many candidates and seconds (``Triage.handle``).
FINITE_FIRST = ("finite_first",)
QUICK_RUNS = 8
QUICK_SECONDS = 8.0
# What triage's time is counted by (``Triage.seconds``; the campaign's counters
# ``triage_<phase>_ms``).
TRIAGE_PHASES = ("confirm", "reduce")


def _confirmed_message(finding: Finding, last: dict[str, Outcome] | None) -> str:
    """The bug's message: the finding's, except for a hang, whose detection may have been
    cut short (``WorkerConfig.first_limit_share``): there the re-run's, which had the
    full limit ("no result within 10.0 s", not the 5 s that detection allowed)."""
    rerun = (last or {}).get(finding.guilty_backend)
    if finding.symptom == "timeout" and rerun is not None and rerun.status == "timeout":
        return rerun.message or finding.message
    return finding.message


def bug_id_for(signature: str) -> str:
    return "b" + hashlib.blake2b(signature.encode(), digest_size=5).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What a confirmed bug's background check said: its reproducer's verdict and, for a
    hang, first the slow-run check's (``slow``: the case ended within ``HANG_FACTOR``
    limits, a slow run, and no reproducer ran)."""

    repro: ReproCheck | None
    slow: SlowRun | None = None
    hang_check: str = ""  # what the slow-run check said, for the bug's details
    still_hangs: bool = False  # the check ran and the case still ran: the second hit


@dataclass
class _Waiting:
    """A confirmed bug whose reduction waits for triage's share of the time."""

    bug_id: str
    finding: Finding
    case: ApiCase
    needed: list[str]
    details: dict[str, Any]
    found: dict[str, Outcome]  # its confirmation outcomes
    severity: str


class Triage:
    def __init__(self, store: Store, check: Checker, judge: Judge,
                 backends: dict[str, Backend], versions: dict[str, str],
                 compiled: dict[str, bool], settings: TriageSettings,
                 rebuild: Callable[..., ApiCase] | None = None,
                 rerun: ReRun | None = None,
                 reproduce: Callable[[Path, Finding], ReproCheck] | None = None) -> None:
        self.store = store
        self.check = check
        self.judge = judge
        self.backends = backends
        self.versions = versions
        self.compiled = compiled
        self.settings = settings
        self.rebuild = rebuild
        # How a new finding is re-run (the campaign: a fresh worker for the guilty
        # backend) and how its reproducer is checked (None: not checked).
        self.rerun = rerun or rerun_in_pool(check)
        self.reproduce = reproduce
        # A hang's slow-run check (``FreshRerun.still_hangs``: HANG_FACTOR limits in a
        # fresh worker), run in the background before its reproducer; the cases of the
        # confirmed hangs whose check is still to run, by bug id.
        self.still_hangs: Callable[[Any, str], tuple[bool, float]] | None = \
            getattr(self.rerun, "still_hangs", None)
        self._hang_checks_due: dict[str, ApiCase] = {}
        # Reproducer checks in flight: (bug id, details, folder, verdict to come).
        self._checks: list[tuple[str, dict[str, Any], Path, Future[Verdict]]] = []
        self._latest: dict[str, Future[Verdict]] = {}  # each bug's latest check
        self._check_lock = threading.Lock()
        # Seconds of campaign budget left; reduction is skipped once it is spent, so a
        # campaign ends near its budget (the bug stays confirmed, with its reproducers).
        self.time_left: Callable[[], float] = lambda: float("inf")
        # Seconds the campaign has run (triage included), for ``triage_share``; without a
        # campaign clock (infinite) every bug is reduced when confirmed.
        self.elapsed: Callable[[], float] = lambda: float("inf")
        # Seconds triage spent, by phase: confirm, reduce (the counters triage_*_ms).
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._waiting: list[_Waiting] = []

    def needed_backends(self, finding: Finding) -> list[str]:
        """The guilty backend and every library's eager backends (its eager sibling and
        the references). A library the campaign runs only in a compiled mode (``ort``
        without ``ort-noopt``) is there through that mode: a re-run without it lost the
        disagreement the finding came from, and every torch finding of a torch-vs-ort
        model campaign was called flaky."""
        eager = {b for b in self.backends if not self.compiled.get(b)}
        library_of = {b: getattr(be, "library", b) for b, be in self.backends.items()}
        covered = {library_of[b] for b in eager}
        needed = eager | {finding.guilty_backend} | {
            b for b in self.backends if library_of[b] not in covered}
        return [b for b in self.backends if b in needed]

    def root_cause(self, finding: Finding, case: ApiCase,
                   case_findings: Sequence[Finding] = ()) -> str:
        """The root-cause key of ``finding`` (``case_findings``: all of its case's)."""
        library_of = {b: getattr(be, "library", "") for b, be in self.backends.items()}
        return root_cause_key(finding, case, Backends(library_of, self.compiled),
                              case_findings)

    def handle(self, finding: Finding, case: ApiCase,
               case_findings: Sequence[Finding] = ()) -> tuple[str, bool]:
        """Returns (bug id, is_new). ``case_findings``: every finding of ``case`` (which
        other backends are blamed for the same mechanism decides the root cause)."""
        severity = finding_severity(finding, case)
        key = self.root_cause(finding, case, case_findings)
        place = {"backend": finding.guilty_backend, "api": finding.api,
                 "dtypes": input_dtypes(case), "symptom": finding.symptom}
        existing = self.store.bug_by_signature(finding.signature)
        if existing is None:
            existing = self.store.confirmed_bug_by_root_cause(key)
        if existing is not None:
            self.store.add_place(existing.id, place, severity, _RANK)
            return existing.id, False
        bug_id = bug_id_for(finding.signature)
        needed = self.needed_backends(finding)
        t0 = time.perf_counter()
        try:
            confirmation = confirm(finding, case, needed, self.settings.confirm_runs,
                                   self.rerun, defer_hang_check=self.reproduce is not None)
        finally:
            self.seconds["confirm"] += time.perf_counter() - t0
        status, hits, last = confirmation.status, confirmation.hits, confirmation.outcomes
        finding = replace(finding, message=_confirmed_message(finding, last))
        details = dict(finding.details)
        if confirmation.note:
            details["not_confirmed"] = confirmation.note
        if confirmation.hang_check_due:
            details["hang_check"] = "pending"
            self._hang_checks_due[bug_id] = case
        now = time.time()
        row = BugRow(
            id=bug_id, signature=finding.signature, symptom=finding.symptom,
            guilty_backend=finding.guilty_backend, api=finding.api, stage=finding.stage,
            message=finding.message, status=status, occurrences=1,
            case_blob=self.store.blobs.put(case), reduced_blob=None,
            confirm_runs=self.settings.confirm_runs, confirm_hits=hits, dir=None,
            details=details, created_at=now, updated_at=now,
            severity=severity, root_cause=key, places=[{**place, "count": 1}])
        self.store.add_bug(row)
        if status != "confirmed" or last is None:
            return bug_id, True
        self.write(bug_id, finding, case, last, {"reduced": False})
        if self.settings.reduce and self.time_left() > 0 and not _listed_only(finding, case):
            if severity not in self.settings.reduce_at_once and not self._within_share():
                # Waits; but first its special values are made finite where the bug
                # survives, the step that re-keys it (to a wrong result, or a place of
                # an earlier bug): without it a waiting bug could be listed twice.
                reduced = None
                # (Not a death's: its root cause is where it died, not its values.)
                if inputs_hold_specials(case) and finding.symptom not in SYMPTOMS_KILLED:
                    reduced = self._reduce(bug_id, finding, case, needed, details, last,
                                           only=FINITE_FIRST, runs=QUICK_RUNS,
                                           seconds=QUICK_SECONDS)
                if reduced is not None:
                    finding, details = reduced
                    if "duplicate_of" in details:
                        return bug_id, True
                    stored = self.store.bug(bug_id)
                    if stored is not None and stored.reduced_blob:
                        case = self.store.blobs.get(stored.reduced_blob)
                    severity = stored.severity if stored is not None else severity
                if severity not in self.settings.reduce_at_once:
                    self._waiting.append(_Waiting(bug_id, finding, case, needed, details,
                                                  last, severity))
                    self._save_waiting()
                    self._check_reproducer(bug_id, finding, details)
                    return bug_id, True
            reduced = self._reduce(bug_id, finding, case, needed, details, last)
            if reduced is not None:
                finding, details = reduced
                if "duplicate_of" in details:
                    return bug_id, True  # a place of an earlier bug now: no reproducer run
        self._check_reproducer(bug_id, finding, details)
        return bug_id, True

    # ---- reductions that wait for triage's share of the time ---------------------------
    def busy_seconds(self) -> float:
        return sum(self.seconds[phase] for phase in TRIAGE_PHASES)

    def _within_share(self) -> bool:
        elapsed = self.elapsed()
        return math.isinf(elapsed) or \
            self.busy_seconds() <= self.settings.triage_share * elapsed

    def waiting(self) -> list[str]:
        """The ids of the confirmed bugs whose reduction waits, next first."""
        return [w.bug_id for w in self._ordered_waiting()]

    def _ordered_waiting(self) -> list[_Waiting]:
        return sorted(self._waiting, key=lambda w: _RANK.get(w.severity, len(_RANK)))

    def reduce_waiting(self, within_share: bool = True) -> int:
        """Reduce waiting bugs, most severe and oldest first, while triage stays within
        its share of the time (unless ``within_share`` is false: a resumed campaign's
        first batch) and budget is left; the number reduced. A bug that became something
        else meanwhile (``unreproduced``, or a duplicate) is dropped."""
        done = 0
        while self._waiting and self.time_left() > 0 and (
                not within_share or self._within_share()):
            w = self._ordered_waiting()[0]
            self._waiting.remove(w)
            row = self.store.bug(w.bug_id)
            if row is not None and row.status == "confirmed":
                reduced = self._reduce(w.bug_id, w.finding, w.case, w.needed, w.details,
                                       w.found)
                if reduced is not None and "duplicate_of" not in reduced[1]:
                    self._check_reproducer(w.bug_id, *reduced)  # the reduced folder's
                done += 1
            self._save_waiting()
        return done

    def _save_waiting(self) -> None:
        self.store.set_meta(reductions_waiting=[w.bug_id for w in self._waiting])

    def restore_waiting(self) -> int:
        """A resumed campaign: the bugs whose reduction still waited go back in line (their
        confirmation outcomes are taken again, one run); the number restored."""
        ids = self.store.meta().get("reductions_waiting") or []
        for bug_id in ids:
            row = self.store.bug(str(bug_id))
            if row is None or row.status != "confirmed":
                continue
            case = self.store.blobs.get(row.reduced_blob or row.case_blob)
            finding = Finding("store", row.symptom, row.api, row.guilty_backend, row.stage,
                              row.message, row.signature, "", tuple(row.details.items()))
            needed = self.needed_backends(finding)
            outcomes, _ = self.check([case], needed)[0]
            self._waiting.append(_Waiting(row.id, finding, case, needed, dict(row.details),
                                          outcomes, row.severity))
        self._save_waiting()
        return len(self._waiting)

    def _describe_reduced(self, bug_id: str, finding: Finding, case: ApiCase,
                          details: dict[str, Any],
                          case_findings: Sequence[Finding]) -> dict[str, Any]:
        """The bug as its reduced case shows it. Reduction replaces NaN/Inf inputs by
        finite values where the bug survives, so the reduced finding may no longer
        involve special values: its severity, message and details are the ones that
        hold. The root-cause key follows; when another confirmed bug has the new key
        already, this one is a place of it (status ``duplicate``, ``duplicate_of`` in its
        details): one mechanism is never listed twice (tf ``floordiv`` found first on
        float64 and again on float16 NaN-free infinities, both demoted once reduced).
        ``case_findings`` are every finding of the reduced case: a compiled mode's bug
        that its eager sibling shows there too is the library's (``jax-jit`` reduced to a
        case where eager ``jax`` is as wrong is a place of the jax bug)."""
        details = {**dict(finding.details),
                   **({"not_confirmed": details["not_confirmed"]}
                      if "not_confirmed" in details else {})}
        severity = finding_severity(finding, case)
        fields: dict[str, Any] = {"message": finding.message, "details": details,
                                  "severity": severity}
        key = self.root_cause(finding, case, case_findings)
        other = self.store.confirmed_bug_by_root_cause(key)
        fields["root_cause"] = key
        if other is not None and other.id != bug_id:
            details["duplicate_of"] = other.id
            fields["status"] = "duplicate"
            row = self.store.bug(bug_id)
            for place in (row.places if row else []):
                self.store.add_place(other.id, place, severity, _RANK,
                                     count=int(place.get("count", 1)))
        self.store.update_bug(bug_id, **fields)
        return details

    def _check_reproducer(self, bug_id: str, finding: Finding, details: dict[str, Any]
                          ) -> None:
        """A confirmed bug whose guilty reproducer does not show it is ``unreproduced``."""
        row = self.store.bug(bug_id)
        if self.reproduce is None or row is None or not row.dir:
            return
        folder = self.store.root / row.dir
        reproduce = self.reproduce
        future: Future[Verdict] = Future()

        def check() -> None:
            with self._check_lock:  # one at a time: each is a process importing a library
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    future.set_result(self._background_check(bug_id, folder, finding,
                                                             reproduce))
                except BaseException as exc:  # noqa: BLE001 - handed to collect()
                    future.set_exception(exc)

        # A bug reduced after its first check is checked again; the first verdict is
        # about a folder rewritten meanwhile (it may even have read it half written), so
        # only the latest check of a bug counts, and one not started yet is dropped.
        earlier = self._latest.get(bug_id)
        if earlier is not None:
            earlier.cancel()
        self._latest[bug_id] = future
        # A daemon thread: an interrupted campaign exits without waiting for it.
        threading.Thread(target=check, name=f"dlfuzz-repro-{bug_id}", daemon=True).start()
        self._checks.append((bug_id, details, folder, future))

    def _background_check(self, bug_id: str, folder: Path, finding: Finding,
                          reproduce: Callable[[Path, Finding], ReproCheck]) -> Verdict:
        """A confirmed bug's checks in the background thread: a hang's slow-run check
        first, where it is due (one that ends there is a slow run, and no reproducer is
        run), then the reproducer."""
        case = self._hang_checks_due.pop(bug_id, None)
        if case is None or self.still_hangs is None:
            return Verdict(reproduce(folder, finding))
        try:
            hangs, seconds = self.still_hangs(case, finding.guilty_backend)
        except Exception as exc:  # noqa: BLE001 - a check that could not run
            return Verdict(reproduce(folder, finding), hang_check=f"failed to run: {exc}")
        if not hangs:
            return Verdict(None, slow=SlowRun(seconds))
        return Verdict(reproduce(folder, finding), still_hangs=True, hang_check=(
            f"still running after {seconds:.0f} s ({HANG_FACTOR:g} times the limit)"))

    def collect(self, wait: bool = False) -> int:
        """Apply the reproducer verdicts that are in (all of them with ``wait``); the
        number of checks still running."""
        left = []
        for item in self._checks:
            bug_id, details, folder, future = item
            if self._latest.get(bug_id) is not future:
                continue  # superseded by a later check of the same bug
            if future.cancelled() or not (wait or future.done()):
                left.append(item)
                continue
            del self._latest[bug_id]
            try:
                verdict = future.result()
            except Exception as exc:  # noqa: BLE001 - a check that failed to run
                verdict = Verdict(ReproCheck(None, f"the reproducer check failed: {exc}"))
            if verdict.hang_check:
                details = {**details, "hang_check": verdict.hang_check}
            if verdict.slow is not None:
                self.store.update_bug(bug_id, status="slow", details={
                    **details, "hang_check": "ended", "not_confirmed": verdict.slow.note})
                continue
            if verdict.still_hangs:
                self.store.update_bug(bug_id, confirm_hits=self.settings.confirm_runs)
            check = verdict.repro
            assert check is not None  # only a slow run has no reproducer verdict
            record_in_folder(folder, check)
            details = {**details, "reproducer": check.as_meta()}
            if check.reproduced is False:
                self.store.update_bug(bug_id, status="unreproduced", details=details)
            else:
                self.store.update_bug(bug_id, details=details)
        self._checks = left
        return len(left)

    def abandon_checks(self) -> None:
        """An interrupted campaign: checks not started are dropped, the running one is
        left to end on its own (its bug is checked again on ``--resume``)."""
        for *_, future in self._checks:
            future.cancel()  # only those not started yet
        self.collect()
        self._checks = []
        self._latest = {}

    def unchecked_reproducers(self) -> None:
        """Confirmed bugs whose reproducer verdict (or hang check) never came (a campaign
        killed while it ran) are checked now."""
        if self.reproduce is None:
            return
        for bug in self.store.bugs("confirmed"):
            if bug.details.get("hang_check") == "pending" and bug.dir:
                # Its slow-run check never ended either: it runs first, as when found.
                self._hang_checks_due[bug.id] = self.store.blobs.get(bug.case_blob)
            elif "reproducer" in bug.details or not bug.dir:
                continue
            if not (self.store.root / bug.dir / "meta.json").is_file():
                continue
            f = Finding("store", bug.symptom, bug.api, bug.guilty_backend, bug.stage,
                        bug.message, bug.signature, "", tuple(bug.details.items()))
            self._check_reproducer(bug.id, f, dict(bug.details))

    def _reduce(self, bug_id: str, finding: Finding, case: ApiCase, needed: list[str],
                details: dict[str, Any], found: dict[str, Outcome],
                only: Sequence[str] | None = None, runs: int | None = None,
                seconds: float = 0.0) -> tuple[Finding, dict[str, Any]] | None:
        """Reduce the bug's case; the reduced case's own finding and the bug's details
        after it (None when nothing was reduced). ``only``: these passes alone, within
        ``runs`` candidates and ``seconds`` (the quick step of a bug that waits).

        A candidate holds when it has the same finding and every backend that ran the
        found case without an error (``found``: its confirmation outcomes) still does:
        each such backend gets a reproducer that shows it passing, and a step that broke
        its call (``numpy.cumprod`` without ``axis`` leaves torch's ``cumprod`` without
        its required ``dim``) would make that reproducer fail with dlfuzz's error."""
        bystanders = [b for b, o in found.items() if o.ok and b in needed]

        def holds(candidates: list[ApiCase]) -> list[bool]:
            return [any(same_finding(f, finding) for f in findings)
                    and all(b in outcomes and outcomes[b].ok for b in bystanders)
                    for outcomes, findings in self.check(candidates, needed)]

        reduction = kind_of(case).reduction(case, finding, self.tools())
        passes = {name: make for name, make in reduction.passes.items()
                  if only is None or name in only}
        if not passes:
            return None  # the kind keeps its cases as found
        budget = min(self.settings.max_reduce_runs, REDUCE_RUNS_BY_SYMPTOM.get(
            finding.symptom, self.settings.max_reduce_runs), runs or self.settings.max_reduce_runs)
        if budget <= 0:
            return None
        t0 = time.perf_counter()
        try:
            deaths = finding.symptom in SYMPTOMS_KILLED
            limit = seconds or (REDUCE_SECONDS_DEATH if deaths else REDUCE_SECONDS)
            result = reduce_case(case, holds, passes, budget, weight=reduction.weight,
                                 deadline=time.monotonic() + limit,
                                 first_chunk=1 if deaths else FIRST_CHUNK)
            if only is not None and result.case.id == case.id:
                return None  # the quick step changed nothing: nothing to re-check
            outcomes, findings = self.check([result.case], needed)[0]
        finally:
            self.seconds["reduce"] += time.perf_counter() - t0
        same = [f for f in findings if same_finding(f, finding)]
        if not same:
            return None  # should not happen (holds() said so); keep the unreduced folder
        meta = {"reduced": True, "reduce_runs": result.runs, "reduce_stats": result.stats,
                "reduce_seconds": round(time.perf_counter() - t0, 3),
                "reduce_cut": result.cut}
        self.store.update_bug(bug_id, reduced_blob=self.store.blobs.put(result.case))
        details = self._describe_reduced(bug_id, same[0], result.case, details, findings)
        self.write(bug_id, same[0], result.case, outcomes, meta)
        return same[0], details

    def tools(self) -> TriageTools:
        """What the kinds' hooks may use: the judge, the checker, the engine's rebuild."""
        return TriageTools(judge=self.judge, check=self.check, rebuild=self.rebuild)

    def expectation(self, finding: Finding, case: ApiCase, outcomes: dict[str, Outcome]
                    ) -> Expectation:
        """What the reproducers of ``finding`` check (the case's kind decides)."""
        return kind_of(case).expectation(finding, case, outcomes, self.tools())

    def write(self, bug_id: str, finding: Finding, case: ApiCase,
               outcomes: dict[str, Outcome], extra: dict[str, Any]) -> None:
        kind = kind_of(case)
        title = kind.title(finding, case)
        involved = kind.involved_backends(
            finding, case, {b: self.backends[b] for b in outcomes if b in self.backends})
        row = self.store.bug(bug_id)
        folder = BugFolder(
            bug_id=bug_id, title=title, case=case, outcomes=outcomes,
            expectation=self.expectation(finding, case, outcomes), backends=involved,
            versions=self.versions,
            severity=row.severity if row else finding_severity(finding, case),
            root_cause=row.root_cause if row else "",
            places=tuple(row.places) if row else (),
            meta={"signature": finding.signature, "symptom": finding.symptom,
                  "guilty_backend": finding.guilty_backend, "api": finding.api,
                  "stage": finding.stage, "message": finding.message,
                  "details": dict(finding.details), **extra})
        path, _ = write_bug_folder(self.store.bugs_dir, folder)
        self.store.update_bug(bug_id, dir=str(path.relative_to(self.store.root)))


def _listed_only(finding: Finding, case: Any) -> bool:
    """A demoted model finding (a float16 model's rounding, a NaN the reference made):
    listed, never filed, so not reduced inside the campaign. Each reduction step is a new
    graph that jax-jit and tf-xla compile again: in a synth campaign on torch, ort,
    jax-jit and tf-xla, reducing such findings left 3 cases/s for fuzzing. Its bug folder
    and reproducer are those of the case as found."""
    return getattr(case, "kind", "") == "graph" and bool(finding.detail("demoted"))

"""The Python API: ``dlfuzz.run(...)`` and ``dlfuzz.open(DIR)`` -> typed, frozen records.

``run`` takes the options of ``dlfuzz run`` as typed keyword arguments and goes through
the CLI's own path (``cli.run_cmd.open_run`` / ``run_campaign``: the same checks, the same
resume rules, the same clean-up of a campaign that failed to start). ``open`` reads a
campaign folder through ``store.db`` and the same bug records ``dlfuzz findings --json``
prints (``cli.findings_cmd.bug_record``), so the API, the CLI and the report agree.

The records are snapshots: a ``Campaign`` does not change when the folder does; open it
again to see a resumed campaign's new bugs. Nothing here imports a deep learning library
(this module loads only when ``dlfuzz.run``/``dlfuzz.open`` is first used).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlfuzz.errors import UsageError

if TYPE_CHECKING:
    from dlfuzz.campaign import Progress
    from dlfuzz.cli.export_tests_cmd import ExportedFile


@dataclass(frozen=True)
class Place:
    """Where a root cause showed: a backend, an API, the input dtypes, how often."""

    backend: str
    api: str
    dtypes: str
    symptom: str
    count: int


@dataclass(frozen=True)
class Bug:
    """One bug of a campaign (a confirmed one, or a flaky one: ``confirmed`` False)."""

    id: str
    severity: str  # crash, wrong-result, special-value, inconsistency, validation, performance
    root_cause: str  # e.g. "torch/cumsum/wrong-result"
    api: str
    backend: str  # the guilty backend
    symptom: str  # numeric, nan, crash, timeout, boundary, status, ...
    stage: str
    message: str
    occurrences: int
    confirmed: bool
    status: str  # "confirmed" or "flaky"
    reduced: bool
    places: tuple[Place, ...]
    folder: Path | None  # the bug folder (confirmed bugs only)
    # backend -> its standalone reproducer script (exit 1 while the bug is present)
    reproducers: Mapping[str, Path] = field(default_factory=dict, hash=False)

    @property
    def backends(self) -> tuple[str, ...]:
        """Every backend the root cause showed on, the guilty one first."""
        return tuple(dict.fromkeys([self.backend, *(p.backend for p in self.places)]))


@dataclass(frozen=True)
class Stats:
    """The campaign's totals."""

    cases: int
    batches: int
    seconds: float  # fuzzing time spent
    bugs_confirmed: int
    bugs_flaky: int
    by_severity: Mapping[str, int] = field(hash=False)  # confirmed bugs per severity class
    # backend -> {version, cases, crashes, timeouts, restarts}
    backends: Mapping[str, Mapping[str, Any]] = field(hash=False)
    # API -> the engine's per-API stats (tried, valid_rate, yield, ...; `findings --stats`)
    apis: Mapping[str, Mapping[str, Any]] = field(hash=False)


@dataclass(frozen=True)
class Campaign:
    """A campaign folder as read by ``dlfuzz.open`` (or left by ``dlfuzz.run``)."""

    path: Path
    engine: str
    backends: tuple[str, ...]
    seed: int
    budget_s: float
    all_bugs: tuple[Bug, ...]  # every bug, confirmed and flaky, most severe first
    interrupted: bool = False  # set by dlfuzz.run when Ctrl-C stopped it
    _stats: Stats | None = field(default=None, repr=False, compare=False)

    def bugs(self, severity: str | Iterable[str] | None = None, *,
             include_flaky: bool = False, root_cause: str | None = None) -> list[Bug]:
        """Confirmed bugs (``include_flaky``: flaky ones too), most severe first, of the
        given severity class(es) and root-cause key when given."""
        from dlfuzz.triage.severity import SEVERITIES

        wanted: set[str] | None = None
        if severity is not None:
            wanted = {severity} if isinstance(severity, str) else set(severity)
            unknown = sorted(wanted - set(SEVERITIES))
            if unknown:
                raise UsageError(f"bugs(severity={severity!r}): unknown class "
                                 f"{', '.join(unknown)}; choose from {', '.join(SEVERITIES)}")
        return [b for b in self.all_bugs
                if (include_flaky or b.confirmed)
                and (wanted is None or b.severity in wanted)
                and (root_cause is None or b.root_cause == root_cause)]

    def bug(self, bug_id: str) -> Bug:
        """The bug with this id (a ``UsageError`` names the known ids)."""
        for b in self.all_bugs:
            if b.id == bug_id:
                return b
        known = ", ".join(b.id for b in self.all_bugs) or "none"
        raise UsageError(f"bug {bug_id!r} is not in {self.path}; known ids: {known}")

    def stats(self) -> Stats:
        """Cases, batches, time, bugs per class, per-backend and per-API counts."""
        if self._stats is None:  # a Campaign built by hand, not by open()
            return open(self.path)._stats  # type: ignore[return-value]
        return self._stats

    def export_tests(self, out: str | Path, xfail: bool = False) -> list[ExportedFile]:
        """``dlfuzz export-tests``: one pytest file per root cause in ``out``."""
        from dlfuzz.cli.export_tests_cmd import export

        files, _notes = export(self.path, Path(out), xfail)
        return files


def open(path: str | Path) -> Campaign:  # noqa: A001 - dlfuzz.open(DIR), like the CLI's DIR
    """The campaign in folder ``path`` (a ``UsageError`` when it is missing or not one)."""
    from dlfuzz.cli.findings_cmd import bug_record, ordered
    from dlfuzz.settings import CampaignSettings
    from dlfuzz.store.db import Store

    if not isinstance(path, str | Path):
        raise UsageError(f"dlfuzz.open({path!r}): give the campaign folder as a str or Path")
    root = Path(path)
    store = Store.open(root, "dlfuzz.open")
    try:
        meta = store.meta()
        records = ordered([bug_record(store, b) for b in store.bugs()])
        totals = store.totals()
        backends = {r["name"]: {k: v for k, v in r.items() if k != "name"}
                    for r in store.backend_rows()}
    finally:
        store.close()
    settings = CampaignSettings.from_json(meta.get("settings") or {})
    bugs = tuple(_bug(r) for r in records)
    by_severity: dict[str, int] = {}
    for b in bugs:
        if b.confirmed:
            by_severity[b.severity] = by_severity.get(b.severity, 0) + 1
    stats = Stats(cases=int(totals["cases"]), batches=int(totals["batches"]),
                  seconds=float(totals["seconds"]),
                  bugs_confirmed=sum(b.confirmed for b in bugs),
                  bugs_flaky=sum(not b.confirmed for b in bugs), by_severity=by_severity,
                  backends=backends, apis=dict(meta.get("api_stats") or {}))
    return Campaign(path=root, engine=settings.engine, backends=settings.backends,
                    seed=settings.seed, budget_s=settings.budget_s, all_bugs=bugs,
                    _stats=stats)


def _bug(r: Mapping[str, Any]) -> Bug:
    places = tuple(Place(backend=str(p.get("backend", "")), api=str(p.get("api", "")),
                         dtypes=str(p.get("dtypes", "")), symptom=str(p.get("symptom", "")),
                         count=int(p.get("count", 0))) for p in r["places"])
    return Bug(id=str(r["id"]), severity=str(r["severity"]), root_cause=str(r["root_cause"]),
               api=str(r["api"]), backend=str(r["guilty_backend"]), symptom=str(r["symptom"]),
               stage=str(r["stage"]), message=str(r["message"]),
               occurrences=int(r["occurrences"]), confirmed=bool(r["confirmed"]),
               status=str(r["status"]), reduced=bool(r["reduced"]), places=places,
               folder=Path(r["dir"]) if r["dir"] else None,
               reproducers={b: Path(p) for b, p in r["repro"].items()})


# ---- run -------------------------------------------------------------------------------

def _names(value: str | Sequence[str] | None, keyword: str) -> tuple[str, ...] | None:
    """A list option given as ``"a,b"`` or ``["a", "b"]``."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value]
    else:
        raise UsageError(f"dlfuzz.run({keyword}={value!r}): give a list of names or a "
                         "comma-separated string")
    if not any(items):
        raise UsageError(f"dlfuzz.run({keyword}={value!r}): empty; give at least one name")
    return tuple(v for v in items if v)


def _seconds(value: float | str | None, keyword: str) -> float | None:
    """Seconds given as a number or a duration string (``"60s"``, ``"2m"``)."""
    from dlfuzz.cli.common import parse_duration

    if value is None:
        return None
    if isinstance(value, str):
        return parse_duration(value, f"dlfuzz.run({keyword}=...)")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"dlfuzz.run({keyword}={value!r}): give seconds (a number) or a "
                         "duration such as '60s' or '2m'")
    return float(value)


def _pairs(value: Mapping[str, str] | Iterable[tuple[str, str]] | None, keyword: str
           ) -> tuple[tuple[str, str], ...] | None:
    """``{"torch": "mod"}`` or ``[("torch", "mod")]`` -> (("torch", "mod"),)."""
    if value is None:
        return None
    items = list(value.items()) if isinstance(value, Mapping) else list(value)
    if not all(isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p)
               for p in items):
        raise UsageError(f"dlfuzz.run({keyword}={value!r}): give a mapping backend -> "
                         f"value, e.g. {keyword}={{'torch': '...'}}")
    return tuple(items) or None


def _paths(value: str | Path | Sequence[str | Path] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | Path):
        return (str(value),)
    return tuple(str(v) for v in value)


def run(out: str | Path | None = None, *, resume: str | Path | None = None,
        engine: str | None = None, backends: str | Sequence[str] | None = None,
        budget: float | str | None = None, seed: int | None = None,
        batch_size: int | None = None, batch_seconds: float | None = None,
        timeout: float | str | None = None,
        memory_limit_mb: int | None = None, restart_every: int | None = None,
        confirm_runs: int | None = None, reduce: bool | None = None,
        triage_share: float | None = None,
        max_cases: int | None = None, apis: str | Sequence[str] | None = None,
        method: str | None = None, seed_model: str | Sequence[str] | None = None,
        inputs_per_model: int | None = None, generator: str | None = None,
        violate_share: float | None = None, edge_share: float | None = None,
        signature_inputs: int | None = None, specials: bool | None = None,
        gradients: bool | None = None,
        spec_file: str | Path | Sequence[str | Path] | None = None,
        seed_program: str | Sequence[str] | None = None,
        program_data: str | Path | None = None, times_mt: int | None = None,
        python: Mapping[str, str] | None = None, preload: Mapping[str, str] | None = None,
        threads: int | None = None, tfjs_version: str | None = None,
        executor: str | None = None, ray_address: str | None = None,
        config: str | Path | None = None, profile: str | None = None,
        on_progress: Callable[[Progress], None] | None = None) -> Campaign:
    """Run a campaign, like ``dlfuzz run``, and return it as ``dlfuzz.open`` reads it.

    Every keyword is the ``dlfuzz run`` option of the same name (``--seed-model`` is
    ``seed_model``, ``--no-reduce`` is ``reduce=False``, ``--no-specials`` is
    ``specials=False``, ``--no-gradients`` is ``gradients=False``, ``--python``/``--preload`` are mappings backend -> value); None
    means "not given" (the config file, profile or default decides). ``budget`` and
    ``timeout`` are seconds or duration strings. ``on_progress`` is called after each
    batch with the live ``Progress``. Bad values raise ``UsageError`` before any folder
    is written. Ctrl-C stops the campaign; the returned one says ``interrupted``.
    """
    from dlfuzz.cli.run_cmd import open_run, run_campaign

    over: dict[str, Any] = {
        "engine": engine, "backends": _names(backends, "backends"), "seed": seed,
        "batch_size": batch_size, "batch_seconds": batch_seconds,
        "memory_limit_mb": memory_limit_mb,
        "restart_every": restart_every, "confirm_runs": confirm_runs,
        "max_cases": max_cases, "apis": _names(apis, "apis"), "threads": threads,
        "budget_s": _seconds(budget, "budget"), "case_timeout_s": _seconds(timeout, "timeout"),
        "pythons": _pairs(python, "python"), "preload": _pairs(preload, "preload"),
        "reduce": reduce, "triage_share": triage_share, "method": method,
        "inputs_per_model": inputs_per_model,
        "seed_models": _names(seed_model, "seed_model"), "generator": generator,
        "violate_share": violate_share, "edge_share": edge_share,
        "signature_inputs": signature_inputs, "specials": specials, "gradients": gradients,
        "spec_files": _paths(spec_file), "seed_programs": _names(seed_program, "seed_program"),
        "times_mt": times_mt,
        "program_data": str(Path(program_data).resolve()) if program_data else None,
        "tfjs_version": tfjs_version, "executor": executor, "ray_address": ray_address,
    }
    out_path = Path(out) if out is not None else None
    resume_path = Path(resume) if resume is not None else None
    store, settings = open_run(out_path, resume_path, Path(config) if config else None,
                               profile, over)
    root = store.root
    progress = run_campaign(store, settings, resume is None, on_progress or _quiet)
    result = open(root)  # this module's open: the campaign as dlfuzz.open reads it
    return replace(result, interrupted=True) if progress.interrupted else result


def _quiet(progress: Progress) -> None:
    """The default progress callback: a library call prints nothing."""

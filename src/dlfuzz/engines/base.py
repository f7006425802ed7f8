"""The engine protocol: every hook the campaign loop calls on a test-case generator.

An engine proposes cases and learns from what happened to them. Nothing more: running
cases, judging outcomes and storing findings belong to the executor, the oracles and the
store, so an engine can be driven by a test with a fake loop as easily as by the CLI.

Like pytest's ``hookspec.py``, this file is the one place that says which hooks exist,
when the campaign calls each and why. ``propose`` is the only hook an engine must
implement; every other hook has a documented default that adds no behaviour, so an
engine implements only what it can do better, and the campaign calls every hook
directly (never "if the engine happens to have it").

An engine's options live in its own frozen ``EngineSettings`` subclass, declared by the
engine class as ``settings_class``; the campaign settings carry one instance of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from dlfuzz.cases import Finding, Outcome
from dlfuzz.errors import InternalError, Rejected, UsageError


@dataclass(frozen=True)
class EngineSettings:
    """The options of one engine (none for this base: an engine without options).

    A subclass adds one field per option; its name is the TOML key (flat under
    ``[campaign]`` or in the engine's own table, e.g. ``[model]``) and the keyword of
    the engine's constructor. ``metadata={"flag": "--seed-model"}`` names the CLI flag
    where it is not the key with dashes. Values are checked when the object is made
    (``validate``: ranges and choices), so an invalid settings object never exists;
    files are checked when the user gives them (``check_files``), not when a stored
    campaign is read back, so a moved file does not lock a finished campaign's report.
    """

    engine: ClassVar[str] = ""  # the engine these options belong to, for messages

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``UsageError`` for a value out of range or not among the choices."""

    def check_files(self) -> None:
        """Raise ``UsageError`` for a file named by an option that does not exist."""

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names (TOML keys and constructor keywords)."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def flag(cls, key: str) -> str:
        """The CLI flag of option ``key``."""
        for f in fields(cls):
            if f.name == key:
                return str(f.metadata.get("flag", "--" + key.replace("_", "-")))
        raise InternalError(f"{cls.__name__} has no option {key!r}")

    def to_kwargs(self) -> dict[str, Any]:
        """The options as constructor keywords of the engine."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def invalid(self, key: str, fix: str) -> UsageError:
        """The error for option ``key``: its flag, its value, whose option it is, the fix."""
        owner = f"{self.engine} engine option {key}" if self.engine else f"option {key}"
        return UsageError(f"{self.flag(key)} {getattr(self, key)!r} ({owner}): {fix}")

    def require_files(self, key: str, paths: Iterable[str], what: str = "file") -> None:
        """Every path of option ``key`` must be an existing file."""
        for path in paths:
            if not Path(path).is_file():
                raise UsageError(f"{self.flag(key)} {path}: no such {what} "
                                 f"({self.engine} engine option {key}); give the path of "
                                 f"an existing {what}")


class Engine:
    """A source of cases that may adapt to feedback. Must be deterministic per seed.

    Subclasses set the class-level declarations and implement ``propose``; the other
    hooks are optional. Hooks are listed in the order a campaign first calls them.
    """

    #: The engine's name in messages and reports (the registry name chooses it).
    name: ClassVar[str] = "engine"
    #: The kind of case it proposes ("api", "graph" or "program"): the campaign keeps
    #: only backends that run this kind, and adds reference backends that do.
    case_kind: ClassVar[str] = "api"
    #: Its options; the campaign settings carry one instance (``engine_settings``).
    settings_class: ClassVar[type[EngineSettings]] = EngineSettings
    #: The share of the case limit a case gets while fuzzing (``WorkerConfig.
    #: first_limit_share``); triage re-runs a case cut short with the full limit
    #: before anything is claimed. 1.0: the full limit.
    first_limit_share: ClassVar[float] = 1.0

    @classmethod
    def from_settings(cls, seed: int, libraries: Sequence[str], apis: Sequence[str] | None,
                      settings: EngineSettings) -> Engine:
        """Called once when a campaign starts (new or resumed), to make the engine.

        ``libraries`` are the libraries of the campaign's backends that run this
        engine's kind of case; ``apis`` restricts the engine to those API names (None:
        all). The default passes each option of ``settings`` as a keyword of the same
        name to the constructor, so engines stay easy to build by hand in tests.
        """
        if not isinstance(settings, cls.settings_class):
            raise InternalError(f"{cls.__name__} takes {cls.settings_class.__name__}, "
                                f"got {type(settings).__name__}")
        return cls(seed=seed, libraries=libraries, apis=apis,  # type: ignore[call-arg]
                   **settings.to_kwargs())

    def use_backends(self, compiled: Mapping[str, bool]) -> None:
        """Called once after construction with the campaign's backends (name -> whether
        it compiles every new signature it runs: jax, jax-jit, tf-xla, torch-compile;
        ``Backend.compiles_per_signature``; not ONNX Runtime), so an engine can
        spread the cost of a compilation (the model engine runs more input sets per
        model where a backend compiles each new one). Default: nothing changes."""

    def keep_programs(self, directory: Path) -> None:
        """Called once after construction with ``<campaign>/programs``.

        An engine whose cases are source files (generated programs) writes them there so
        a user can read and run them; it must continue numbering after files already
        present (a resumed campaign). Default: nothing is kept.
        """

    def reseed(self, batch: int | None) -> None:
        """Called before every batch with its index (None: the start of a campaign).

        Restart the random streams from (seed, batch), so a campaign resumed at batch N
        proposes what an uninterrupted one would have (given the same feedback).
        Default: the engine keeps one stream (reproducible only when never resumed).
        """

    def api_stats(self) -> dict[str, dict[str, float]]:
        """Per API (or per unit the engine schedules): cases, valid rate, yield... as
        ``dlfuzz findings --stats`` shows them; stored with the campaign. Default: none."""
        return {}

    def load_api_stats(self, rows: dict[str, dict[str, float]]) -> None:
        """Called on ``--resume`` with what ``api_stats`` stored, so the schedule goes on
        from what the earlier runs learned. Default: nothing to restore."""

    def propose(self, n: int) -> list[Any]:
        """Called once per batch: the next ``n`` cases (fewer only when the engine has run
        dry). Cases are ``ApiCase``, ``GraphCase`` or ``ProgramCase`` of ``case_kind``.
        The one hook every engine must implement."""
        raise NotImplementedError(f"{type(self).__name__} must implement propose()")

    def unsupported_backends(self, case: Any) -> frozenset[str]:
        """Called for every case before the oracles judge it.

        Backends whose outcome on ``case`` is no evidence of a bug (a documented limit,
        such as tf-xla lacking a determinant kernel); their outcomes are hidden from the
        oracles. Default: every backend's outcome counts.
        """
        return frozenset()

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        """Called for every case after it was judged: what the backends did with it
        (backend -> Outcome) and what the oracles found, for guidance. Default: the
        engine does not learn."""

    def counters(self) -> Mapping[str, int]:
        """Called after every batch's feedback: the engine's own running totals (the
        model engine's input sets per profile and rescaling steps). The campaign stores
        what each batch added beside the oracles' counters. Default: none."""
        return {}

    def broken_constraints(self, case: Any) -> list[str] | None:
        """Called by the boundary oracle for a violate-mode case (made to break one
        constraint), also after reduction changed it: which constraints it breaks now.

        A boundary finding needs exactly the one constraint the case was made to break.
        An engine that can re-check its specs answers from them (None: cannot tell).
        Default: trust the case's own label (``expect = "invalid:<constraint>"``), i.e.
        no extra check.
        """
        label = str(getattr(case, "expect", "")).partition(":")[2]
        return [label] if label else []

    def constraint_source(self, case: Any) -> str:
        """Called by the boundary oracle for a violate-mode case: where the constraint it
        breaks comes from ("documentation: ...", "source check: ...", "learned error
        message: ...", "hand table: ..."), which a validation report names. Default: ""
        (unknown)."""
        return ""

    def is_deterministic(self, case: Any) -> bool:
        """Called by the determinism oracle for an API case: whether the API must give
        the same bits when run again (dropout need not). Default: unknown, so the oracle
        leaves the engine's API cases alone."""
        return False

    def rebuild(self, api: str, tensors: Iterable[Any], params: Any = (),
                like: Any = None) -> Any:
        """Called by reduction to drop optional arguments: a case of ``api`` with these
        tensors and (fewer) params, shaped like the case ``like``. Raise ``Rejected``
        when no such case exists. Default: every rebuild is refused, so reduction keeps
        all arguments."""
        raise Rejected(f"{type(self).__name__} cannot rebuild cases")

"""Typed campaign settings: defaults, named profiles, a TOML file, then CLI overrides.

Every knob common to all engines lives here with its meaning; the options of one engine
live in that engine's own settings class (``Engine.settings_class``, e.g.
``ModelEngineSettings``), and a campaign carries the one of its engine. A campaign's
settings are stored in its directory, so a resumed campaign runs exactly as it started.

TOML: common keys and the chosen engine's options may sit flat in ``[campaign]`` (as
they always could), or the options in the engine's own table (``[model]``, ``[api]``,
``[program]``), which lets one file hold options of several engines. An option of
another engine than the chosen one is an error naming its engine, never silently
applied or dropped: on the command line too.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from dlfuzz import registry
from dlfuzz.engines.base import Engine, EngineSettings
from dlfuzz.errors import InternalError, UsageError


@dataclass(frozen=True)
class CampaignSettings:
    engine: str = "api"
    backends: tuple[str, ...] = ("numpy", "torch", "jax")
    budget_s: float = 60.0  # wall-clock budget of fuzzing (triage included)
    seed: int = 1
    batch_size: int = 256  # cases per round trip to the workers (the most, see below)
    # A batch aims at this many seconds of execution: its size follows the measured time
    # per case, within [campaign.MIN_BATCH, batch_size], so a slow API (jax compiling an
    # iterative special function per signature, 6 cases/s) still gets batches done and
    # its findings triaged inside a one-minute budget instead of a 256-case batch cut
    # unfinished at the end. 0: every batch is batch_size cases (also the default when
    # --batch-size is given without --batch-seconds: an explicit size is kept).
    batch_seconds: float = 5.0
    case_timeout_s: float = 10.0  # per case, times the backend's compile factor
    memory_limit_mb: int = 8192  # address-space limit of each worker
    restart_every: int = 0  # restart workers every N cases (0: never; leaks stay visible)
    confirm_runs: int = 2  # re-runs that must all show the bug to confirm it
    reduce: bool = True
    max_reduce_runs: int = 200
    # A crash or wrong result is reduced when confirmed; a bug of a lower class waits
    # while triage has taken more than this share of the elapsed time (triage.triager).
    triage_share: float = 0.3
    max_cases: int = 0  # stop after this many cases as well (0: budget only)
    apis: tuple[str, ...] = ()  # restrict the engine to these API names (empty: all)
    pythons: tuple[tuple[str, str], ...] = ()  # backend -> interpreter path
    preload: tuple[tuple[str, str], ...] = ()  # backend -> module imported in its worker
    reference: str = "auto"  # "auto": add numpy/jax workers when fewer than 2 eager libraries
    threads: int = 1  # library threads per worker
    # Worker processes of each backend that compiles every new signature (jax, jax-jit,
    # tf-xla, torch-compile): one of them bounds a campaign while the other workers wait.
    # 0: 2 on a machine with 2 or more cores, else 1.
    replicas: int = 0
    # Optional LLM (OpenAI-compatible chat completions) for spec extraction and counterpart
    # synthesis; empty endpoint: offline. $DLFUZZ_LLM_ENDPOINT / $DLFUZZ_LLM_MODEL fill in
    # empty values (dlfuzz.llm.client_from_settings). The key itself is read from the
    # environment variable named here, so it is never stored with a campaign.
    llm_endpoint: str = ""
    llm_model: str = ""
    llm_api_key_env: str = "DLFUZZ_LLM_API_KEY"
    tfjs_version: str = ""  # TF.js release of the tfjs-* backends ("": the default one)
    # Where the workers run: "local" (this host) or "ray" (actors on a Ray cluster's
    # nodes, dlfuzz.executor.ray_pool); ``ray_address`` joins a running cluster ("":
    # start a Ray instance on this machine). Both may change on --resume.
    executor: str = "local"
    ray_address: str = ""
    # The options of ``engine`` (an instance of its ``settings_class``); None: its
    # defaults. Always set once constructed.
    engine_settings: EngineSettings = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        cls = engine_class(self.engine).settings_class
        if self.engine_settings is None:
            object.__setattr__(self, "engine_settings", cls())
        elif type(self.engine_settings) is not cls:
            raise InternalError(f"engine {self.engine!r} takes {cls.__name__}, not "
                                f"{type(self.engine_settings).__name__}")

    def to_json(self) -> dict[str, Any]:
        """Common keys flat, the engine's options under ``engine_settings``."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CampaignSettings:
        """Settings stored with a campaign, in today's layout or the older flat one (every
        engine's options flat beside the common keys: only the engine's own are kept)."""
        common = {k: _tuplify(v) for k, v in data.items() if k in COMMON_KEYS}
        engine = common.get("engine", cls.engine)
        settings_cls = engine_class(engine).settings_class
        nested = data.get("engine_settings")
        options = nested if isinstance(nested, dict) else data
        known = settings_cls.keys()
        return cls(**common, engine_settings=settings_cls(
            **{k: _tuplify(v) for k, v in options.items() if k in known}))


COMMON_KEYS = tuple(f.name for f in fields(CampaignSettings) if f.name != "engine_settings")

PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"budget_s": 60.0, "batch_size": 128},
    "ci": {"budget_s": 600.0, "confirm_runs": 2},
    "deep": {"budget_s": 86400.0, "batch_size": 512, "confirm_runs": 3, "restart_every": 0},
}


def engine_class(name: str) -> type[Engine]:
    """The engine class registered as ``name`` (a ``UsageError`` names unknown ones)."""
    cls = registry.load("engine", name)
    if not (isinstance(cls, type) and issubclass(cls, Engine)):
        raise UsageError(f"engine {name!r}: {cls!r} is not an Engine; derive it from "
                         "dlfuzz.engines.base.Engine (its hooks have working defaults)")
    engine: type[Engine] = cls
    return engine


def option_owner(key: str) -> str | None:
    """The registered engine whose settings have option ``key`` (None: no engine's)."""
    for name in registry.names("engine"):
        if key in engine_class(name).settings_class.keys():
            return name
    return None


def _an(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _tuplify(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    return value


def load_settings(path: Path | None = None, profile: str | None = None,
                  overrides: dict[str, Any] | None = None,
                  base: CampaignSettings | None = None) -> CampaignSettings:
    """Defaults < profile < TOML file (``[campaign]``, then the engine's table) < CLI
    overrides. ``overrides`` are flat: common keys and engine options by key.

    ``base`` replaces the defaults (a resumed campaign's stored settings), so the result
    differs from it exactly where the user gave another value. Every value, wherever it
    came from, is checked here (``check_common`` and the engine's settings class): the one
    place that turns bad input into a ``UsageError`` before anything is written.
    """
    common: dict[str, Any] = {k: getattr(base or CampaignSettings, k) for k in COMMON_KEYS}
    source: dict[str, str] = {}  # key -> where its value came from, for messages
    if profile:
        if profile not in PROFILES:
            raise UsageError(f"--profile {profile!r}: unknown; choose one of "
                             f"{', '.join(PROFILES)}")
        common.update(PROFILES[profile])
        source.update(dict.fromkeys(PROFILES[profile], f"--profile {profile}"))
    flat: dict[str, Any] = {}  # engine options found flat in [campaign]
    tables: dict[str, dict[str, Any]] = {}  # engine name -> its TOML table
    if path is not None:
        flat, tables = _read_toml(Path(path), common, source)
    cli = {k: v for k, v in (overrides or {}).items() if v is not None}
    common.update({k: v for k, v in cli.items() if k in COMMON_KEYS})
    source.update({k: "" for k in cli if k in COMMON_KEYS})
    engine = common["engine"]
    cls = engine_class(engine).settings_class
    defaults = cls()
    if base is not None and base.engine == engine:
        defaults = base.engine_settings
    options: dict[str, Any] = {}
    for key, value in flat.items():
        if key not in cls.keys():
            owner = option_owner(key)
            if owner is None:
                raise UsageError(f"{path}: unknown key campaign.{key}; known keys: "
                                 f"{', '.join(COMMON_KEYS + cls.keys())}")
            raise UsageError(f"{path}: campaign.{key} is {_an(owner)}-engine option, but the "
                             f"engine is {engine}; move it to a [{owner}] table or drop it")
        options[key] = _coerce(value, getattr(defaults, key), f"{path}: campaign.{key}")
    for key, value in tables.get(engine, {}).items():
        if key not in cls.keys():
            raise UsageError(f"{path}: unknown key {engine}.{key}; the {engine} engine's "
                             f"options: {', '.join(cls.keys()) or 'none'}")
        if key in options:
            raise UsageError(f"{path}: {key} is set both in [campaign] and in [{engine}]; "
                             "keep one")
        options[key] = _coerce(value, getattr(defaults, key), f"{path}: {engine}.{key}")
    for key, value in cli.items():
        if key in COMMON_KEYS:
            continue
        if key not in cls.keys():
            owner = option_owner(key)
            if owner is None:
                raise InternalError(f"no engine has an option {key!r}")
            flag = engine_class(owner).settings_class.flag(key)
            raise UsageError(f"{flag} is {_an(owner)}-engine option; the campaign's engine is "
                             f"{engine} (add --engine {owner}, or drop {flag})")
        options[key] = value
    common["backends"] = tuple(dict.fromkeys(common["backends"]))
    if "batch_size" in source and "batch_seconds" not in source and base is None:
        # A batch size given is the size of every batch (a resumed campaign keeps its own).
        common["batch_seconds"] = 0.0
    if common["executor"] != "ray" and "ray_address" not in source:
        common["ray_address"] = ""  # a Ray campaign resumed on this host alone
    check_common(common, source)
    engine_settings = replace(defaults, **options)
    engine_settings.check_files()
    return CampaignSettings(**common, engine_settings=engine_settings)


def _read_toml(path: Path, common: dict[str, Any], source: dict[str, str]
               ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Apply the common keys of ``[campaign]`` to ``common``; return the engine options
    found flat in it and the engine tables (``[model]`` ...) of the file."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read ({exc.strerror})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--config {path}: not valid TOML ({exc})") from exc
    table = data.get("campaign", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [campaign] must be a table")
    flat = {}
    for key, value in table.items():
        if key in COMMON_KEYS:
            common[key] = _coerce(value, getattr(CampaignSettings, key),
                                  f"{path}: campaign.{key}")
            source[key] = f"{path}"
        else:
            flat[key] = value
    tables = {}
    for name in registry.names("engine"):
        if name in data:
            if not isinstance(data[name], dict):
                raise UsageError(f"{path}: [{name}] must be a table of {name}-engine options")
            tables[name] = data[name]
    return flat, tables


def _coerce(value: Any, default: Any, where: str) -> Any:
    """A TOML value as the type of the setting's default (lists and tables as tuples)."""
    expected = type(default)
    if isinstance(value, bool) and expected is not bool:
        raise UsageError(f"{where} = {value!r} should be a {expected.__name__}")
    if expected is float and isinstance(value, int):
        value = float(value)
    if isinstance(value, list) or isinstance(value, dict):
        value = tuple(value.items()) if isinstance(value, dict) else tuple(value)
    if not isinstance(value, expected):
        raise UsageError(f"{where} = {value!r} should be a {expected.__name__}")
    return value


# ---- checking the common settings ------------------------------------------------------

#: The CLI flag of each common setting whose flag is not its key with dashes.
FLAGS: dict[str, str] = {
    "budget_s": "--budget", "case_timeout_s": "--timeout", "reduce": "--no-reduce",
    "pythons": "--python", "max_reduce_runs": "(no flag)", "reference": "(no flag)",
    "llm_endpoint": "(no flag)", "llm_model": "(no flag)", "llm_api_key_env": "(no flag)",
}

#: Numeric ranges: key -> (lowest allowed value, whether the lowest is excluded, fix).
RANGES: dict[str, tuple[float, bool, str]] = {
    "budget_s": (0, True, "give a positive duration, e.g. 60s, 10m or 2h"),
    "case_timeout_s": (0, True, "give a positive duration, e.g. 10s"),
    "batch_size": (1, False, "must be at least 1"),
    "batch_seconds": (0, False, "must be 0 (every batch --batch-size cases) or a positive "
                                "number of seconds"),
    "max_cases": (0, False, "must be 0 (no limit: the budget alone) or more"),
    "restart_every": (0, False, "must be 0 (never restart) or more"),
    "confirm_runs": (1, False, "must be at least 1"),
    "max_reduce_runs": (0, False, "must be 0 or more"),
    "triage_share": (0, False, "must be a share between 0 and 1, e.g. 0.3"),
    "memory_limit_mb": (0, True, "must be a positive number of MiB"),
    "threads": (1, False, "must be at least 1"),
    "replicas": (0, False, "must be 0 (2 on a machine with 2 or more cores) or a number of "
                           "processes, e.g. 1"),
}

REFERENCE_CHOICES = ("auto", "none")


def flag_of(key: str) -> str:
    """The CLI flag of common setting ``key``."""
    return FLAGS.get(key, "--" + key.replace("_", "-"))


def setting_error(key: str, value: Any, fix: str, source: str = "") -> UsageError:
    """The one message shape for a bad common setting, whichever way it was given: the
    flag and the config key, the value, where it came from and the fix."""
    shown = value
    if key in ("pythons", "preload") and isinstance(value, tuple):
        shown = ",".join(f"{k}={v}" for k, v in value)
    elif isinstance(value, tuple):
        shown = ",".join(map(str, value))
    origin = f" in {source}" if source else ""
    return UsageError(f"{flag_of(key)} {shown!r} (config key campaign.{key}{origin}): {fix}")


def check_common(values: dict[str, Any], source: dict[str, str] | None = None) -> None:
    """Raise ``UsageError`` for the first common setting out of range, naming an unknown
    backend or engine, or not fitting the others (``tfjs_version`` without a tfjs
    backend, ``--python``/``--preload`` for a backend not selected)."""
    source = source or {}

    def bad(key: str, fix: str) -> UsageError:
        return setting_error(key, values[key], fix, source.get(key, ""))

    engine_class(values["engine"])  # an unknown engine names the known ones
    if isinstance(values["seed"], bool) or not isinstance(values["seed"], int):
        raise bad("seed", "give an integer")
    for key, (low, strict, fix) in RANGES.items():
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad(key, "give a number")
        if not math.isfinite(value) or value < low or (strict and value == low):
            raise bad(key, fix)
    if values["triage_share"] > 1:
        raise bad("triage_share", RANGES["triage_share"][2])
    backends = values["backends"]
    if not backends:
        raise bad("backends", "give at least one backend, e.g. numpy,torch,jax")
    for name in backends:
        try:
            registry.import_string("backend", name)
        except UsageError as exc:
            raise bad("backends", str(exc)) from None
    if values["executor"] not in registry.names("executor"):
        raise bad("executor", f"choose one of {', '.join(registry.names('executor'))}")
    if values["ray_address"] and values["executor"] != "ray":
        raise bad("ray_address", "it applies to --executor ray only; add --executor ray or "
                                 "drop --ray-address")
    if values["reference"] not in REFERENCE_CHOICES:
        raise bad("reference", f"choose one of {', '.join(REFERENCE_CHOICES)}")
    if values["tfjs_version"] and not any(b.startswith("tfjs-") for b in backends):
        raise bad("tfjs_version", "it applies to the tfjs-* backends only; add one to "
                                  "--backends (e.g. tfjs-node) or drop --tfjs-version")
    for key in ("pythons", "preload"):
        for backend, _ in values[key]:
            if backend not in backends:
                raise bad(key, f"backend {backend!r} is not selected (--backends "
                               f"{','.join(backends)}); add it or drop this {flag_of(key)}")


# ---- resuming ---------------------------------------------------------------------------

#: What ``run --resume`` may change: more budget (added to the time already spent) and
#: another case limit. Anything else would make the resumed batches differ from the ones
#: a single uninterrupted run would have made.
RESUME_CHANGEABLE = ("budget_s", "max_cases", "executor", "ray_address")


def resume_changes(stored: CampaignSettings, given: CampaignSettings
                   ) -> list[tuple[str, Any, Any]]:
    """(flag or key, stored value, given value) for each setting ``given`` changes,
    except ``RESUME_CHANGEABLE``; engine options are named by their flag."""
    changed = [(f"{flag_of(k)} (campaign.{k})", getattr(stored, k), getattr(given, k))
               for k in COMMON_KEYS
               if k not in RESUME_CHANGEABLE and getattr(stored, k) != getattr(given, k)]
    if stored.engine == given.engine:
        cls = type(stored.engine_settings)
        changed += [(f"{cls.flag(k)} ({stored.engine}.{k})", getattr(stored.engine_settings, k),
                     getattr(given.engine_settings, k))
                    for k in cls.keys()
                    if getattr(stored.engine_settings, k) != getattr(given.engine_settings, k)]
    return changed

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

import tomllib
from dataclasses import asdict, dataclass, fields
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
    batch_size: int = 256  # cases per round trip to the workers
    case_timeout_s: float = 10.0  # per case, times the backend's compile factor
    memory_limit_mb: int = 8192  # address-space limit of each worker
    restart_every: int = 0  # restart workers every N cases (0: never; leaks stay visible)
    confirm_runs: int = 2  # re-runs that must all show the bug to confirm it
    reduce: bool = True
    max_reduce_runs: int = 200
    max_cases: int = 0  # stop after this many cases as well (0: budget only)
    apis: tuple[str, ...] = ()  # restrict the engine to these API names (empty: all)
    pythons: tuple[tuple[str, str], ...] = ()  # backend -> interpreter path
    preload: tuple[tuple[str, str], ...] = ()  # backend -> module imported in its worker
    reference: str = "auto"  # "auto": add numpy/jax workers when fewer than 2 eager libraries
    threads: int = 1  # library threads per worker
    # Optional LLM (OpenAI-compatible chat completions) for spec extraction and counterpart
    # synthesis; empty endpoint: offline. $DLFUZZ_LLM_ENDPOINT / $DLFUZZ_LLM_MODEL fill in
    # empty values (dlfuzz.llm.client_from_settings). The key itself is read from the
    # environment variable named here, so it is never stored with a campaign.
    llm_endpoint: str = ""
    llm_model: str = ""
    llm_api_key_env: str = "DLFUZZ_LLM_API_KEY"
    tfjs_version: str = ""  # TF.js release of the tfjs-* backends ("": the default one)
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
    cls: type[Engine] = registry.load("engine", name)
    return cls


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
                  overrides: dict[str, Any] | None = None) -> CampaignSettings:
    """Defaults < profile < TOML file (``[campaign]``, then the engine's table) < CLI
    overrides. ``overrides`` are flat: common keys and engine options by key."""
    common: dict[str, Any] = {k: getattr(CampaignSettings, k) for k in COMMON_KEYS}
    if profile:
        if profile not in PROFILES:
            raise UsageError(f"--profile {profile!r}: unknown; choose one of "
                             f"{', '.join(PROFILES)}")
        common.update(PROFILES[profile])
    flat: dict[str, Any] = {}  # engine options found flat in [campaign]
    tables: dict[str, dict[str, Any]] = {}  # engine name -> its TOML table
    if path is not None:
        flat, tables = _read_toml(Path(path), common)
    cli = {k: v for k, v in (overrides or {}).items() if v is not None}
    common.update({k: v for k, v in cli.items() if k in COMMON_KEYS})
    engine = common["engine"]
    cls = engine_class(engine).settings_class
    defaults = cls()
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
    engine_settings = cls(**options)
    engine_settings.check_files()
    return CampaignSettings(**common, engine_settings=engine_settings)


def _read_toml(path: Path, common: dict[str, Any]
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
            common[key] = _coerce(value, common[key], f"{path}: campaign.{key}")
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
    if expected is float and isinstance(value, int):
        value = float(value)
    if isinstance(value, list) or isinstance(value, dict):
        value = tuple(value.items()) if isinstance(value, dict) else tuple(value)
    if not isinstance(value, expected):
        raise UsageError(f"{where} = {value!r} should be a {expected.__name__}")
    return value

"""Typed campaign settings: defaults, named profiles, a TOML file, then CLI overrides.

Every knob lives here with its meaning, so a campaign's settings can be stored in its
directory and a resumed campaign runs exactly as it started.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError


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
    apis: tuple[str, ...] = ()  # restrict the API engine to these names (empty: all)
    pythons: tuple[tuple[str, str], ...] = ()  # backend -> interpreter path
    preload: tuple[tuple[str, str], ...] = ()  # backend -> module imported in its worker
    reference: str = "auto"  # "auto": add numpy/jax workers when fewer than 2 eager libraries
    threads: int = 1  # library threads per worker
    method: str = "lemon"  # model engine: lemon | dljsfuzzer
    seed_models: tuple[str, ...] = ()  # model engine seeds: names or files (empty: default)
    inputs_per_model: int = 4  # model engine: input sets run per generated model
    # Optional LLM (OpenAI-compatible chat completions) for spec extraction and counterpart
    # synthesis; empty endpoint: offline. $DLFUZZ_LLM_ENDPOINT / $DLFUZZ_LLM_MODEL fill in
    # empty values (dlfuzz.llm.client_from_settings). The key itself is read from the
    # environment variable named here, so it is never stored with a campaign.
    llm_endpoint: str = ""
    llm_model: str = ""
    llm_api_key_env: str = "DLFUZZ_LLM_API_KEY"
    generator: str = "adjust"  # api engine: random | typed | adjust | z3
    violate_share: float = 0.1  # api engine: share of inputs that break one constraint
    spec_files: tuple[str, ...] = ()  # api engine: format-2 spec files (empty: built-in)
    specials: bool = True  # api engine: NaN/Inf/extreme values in generated tensors
    seed_programs: tuple[str, ...] = ()  # program engine seeds: names or .py files (empty: all)
    times_mt: int = 4  # program engine: mutants per code block and parent (MoCo's times_mt)
    program_data: str = ""  # program engine: a user .npz (x, y) instead of synthetic data
    tfjs_version: str = ""  # TF.js release of the tfjs-* backends ("": the default one)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CampaignSettings:
        known = {f.name for f in fields(cls)}
        clean = {k: _tuplify(v) for k, v in data.items() if k in known}
        return cls(**clean)


PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"budget_s": 60.0, "batch_size": 128},
    "ci": {"budget_s": 600.0, "confirm_runs": 2},
    "deep": {"budget_s": 86400.0, "batch_size": 512, "confirm_runs": 3, "restart_every": 0},
}


def _tuplify(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    return value


def load_settings(path: Path | None = None, profile: str | None = None,
                  overrides: dict[str, Any] | None = None) -> CampaignSettings:
    """Defaults < profile < TOML file ``[campaign]`` table < CLI overrides."""
    settings = CampaignSettings()
    if profile:
        if profile not in PROFILES:
            raise UsageError(f"--profile {profile!r}: unknown; choose one of "
                             f"{', '.join(PROFILES)}")
        settings = replace(settings, **PROFILES[profile])
    if path is not None:
        settings = _apply_toml(settings, Path(path))
    if overrides:
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    return settings


def _apply_toml(settings: CampaignSettings, path: Path) -> CampaignSettings:
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--config {path}: not valid TOML ({exc})") from exc
    table = data.get("campaign", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [campaign] must be a table")
    types = {f.name: f.type for f in fields(CampaignSettings)}
    current = asdict(settings)
    for key, value in table.items():
        if key not in types:
            raise UsageError(f"{path}: unknown key campaign.{key}; known keys: "
                             f"{', '.join(types)}")
        expected = type(current[key])
        if expected is float and isinstance(value, int):
            value = float(value)
        if isinstance(value, list) or isinstance(value, dict):
            value = tuple(value.items()) if isinstance(value, dict) else tuple(value)
        if not isinstance(value, expected):
            raise UsageError(f"{path}: campaign.{key} = {value!r} should be a "
                             f"{expected.__name__}")
        current[key] = value
    return CampaignSettings(**current)

"""`make demo`'s plan is a valid dlfuzz campaign at each level, without running it.

The demo takes three minutes, too long for the suite; what can rot cheaply is its plan:
a renamed flag, a seed model or program that no longer exists, a backend name dropped.
Each level's command line goes through the same parser and settings checks as
`dlfuzz run` (``load_settings``), and its seeds through the engines' own loaders.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dlfuzz import registry
from dlfuzz.cli.demo import PLAN, Level, run_argv
from dlfuzz.cli.main import build_parser
from dlfuzz.cli.run_cmd import _overrides
from dlfuzz.engines.model.seeds import SEEDS as MODEL_SEEDS
from dlfuzz.engines.program.engine import load_seed
from dlfuzz.settings import CampaignSettings, load_settings


def test_the_plan_covers_the_three_levels_on_several_backends() -> None:
    assert [_settings(level).engine for level in PLAN] == ["api", "model", "program"]
    backends = {b for level in PLAN for b in level.backends}
    assert {"torch", "jax", "tf", "ort"} <= backends
    assert len({level.name for level in PLAN}) == len(PLAN)  # one folder per level


@pytest.mark.parametrize("level", PLAN, ids=lambda level: level.name)
def test_each_level_is_a_run_that_dlfuzz_accepts(level: Level, tmp_path: Path) -> None:
    settings = _settings(level, tmp_path)
    assert settings.backends == level.backends
    assert set(level.backends) <= set(registry.names("backend"))
    assert 1 <= level.min_backends <= len(level.backends)
    # Fixed seeds: the demo shows the same campaign on each run of the same machine.
    assert "--seed" in level.options
    # About three minutes in all: no level may take a long budget.
    assert 20 <= settings.budget_s <= 90
    engine = settings.engine_settings
    for name in getattr(engine, "seed_models", ()):
        assert name in MODEL_SEEDS, f"{level.name}: unknown seed model {name}"
    for name in getattr(engine, "seed_programs", ()):
        _, library, _ = load_seed(name)  # raises UsageError on an unknown seed
        assert library in {registry_library(b) for b in level.backends}


def test_the_budgets_add_up_to_about_three_minutes() -> None:
    total = sum(_settings(level).budget_s for level in PLAN)
    assert 120 <= total <= 200


def registry_library(backend: str) -> str:
    """torch -> torch, keras-jax -> keras: the library a program seed is written in."""
    return "keras" if backend.startswith("keras-") else backend


def _settings(level: Level, tmp_path: Path | None = None) -> CampaignSettings:
    out = tmp_path or Path("demo-campaign")
    args = build_parser().parse_args(run_argv(level, level.backends, out))
    assert args.verb == "run" and args.out == out / level.name
    return load_settings(args.config, args.profile, _overrides(args))

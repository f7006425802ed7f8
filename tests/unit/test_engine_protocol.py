"""The engine protocol is declared in one place and the campaign relies on it alone.

Every registered engine derives from ``Engine`` and declares its settings class; the
hook defaults add no behaviour; campaign.py calls hooks directly (no getattr/hasattr on
engines or oracles), so a hook misspelt in an engine shows up here, not as a silently
skipped feature.
"""

import ast
import inspect
from dataclasses import FrozenInstanceError, dataclass, fields, is_dataclass
from pathlib import Path

import pytest

from dlfuzz import campaign, registry
from dlfuzz.cases import ApiCase
from dlfuzz.engines.base import Engine, EngineSettings
from dlfuzz.errors import InternalError, Rejected
from dlfuzz.oracles.base import Oracle

ENGINES = registry.names("engine")


@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_derives_from_engine_and_declares_its_settings(name):
    cls = registry.load("engine", name)
    assert issubclass(cls, Engine)
    assert cls.propose is not Engine.propose, f"{name} must implement propose"
    assert cls.case_kind in ("api", "graph", "program")
    settings_cls = cls.settings_class
    assert issubclass(settings_cls, EngineSettings) and is_dataclass(settings_cls)
    defaults = settings_cls()  # the defaults are valid
    if settings_cls.keys():
        with pytest.raises(FrozenInstanceError):
            setattr(defaults, settings_cls.keys()[0], None)
    # from_settings passes every option as a constructor keyword of the same name
    params = inspect.signature(cls.__init__).parameters
    for key in ("seed", "libraries", "apis", *settings_cls.keys()):
        assert key in params, f"{cls.__name__}.__init__ lacks {key}"
    for key in settings_cls.keys():
        assert settings_cls.flag(key).startswith("--")


# Options two engines share on purpose: the same meaning and default in each (the API
# engine over per-library specs and over the numpy set draw signatures alike, and check
# backward passes alike).
SHARED_OPTIONS = {"signature_inputs": ("api", "numpy-api"),
                  "gradients": ("api", "numpy-api", "model")}


def test_engine_options_belong_to_one_engine_each():
    owners: dict[str, str] = {}
    for name in ENGINES:
        settings = registry.load("engine", name).settings_class
        for key in settings.keys():
            if key in SHARED_OPTIONS and name in SHARED_OPTIONS[key]:
                first = registry.load("engine", SHARED_OPTIONS[key][0]).settings_class
                assert getattr(first(), key) == getattr(settings(), key)
                owners.setdefault(key, name)
                continue
            assert key not in owners, f"{key} is an option of {owners[key]} and {name}"
            owners[key] = name
    assert owners["seed_models"] == "model" and owners["generator"] == "api"
    assert owners["times_mt"] == "program"


class _Minimal(Engine):
    name = "minimal"

    def __init__(self, seed: int = 0, libraries=(), apis=None, width: int = 1) -> None:
        self.seed, self.libraries, self.apis, self.width = seed, tuple(libraries), apis, width

    def propose(self, n: int) -> list:
        return []


@dataclass(frozen=True)
class _MinimalSettings(EngineSettings):
    width: int = 1


class _WithSettings(_Minimal):
    settings_class = _MinimalSettings


def test_hook_defaults_are_no_ops(tmp_path):
    e = _Minimal()
    assert e.keep_programs(tmp_path / "programs") is None
    assert not (tmp_path / "programs").exists()
    assert e.reseed(3) is None and e.reseed(None) is None
    case = ApiCase("abs", (), ())
    assert e.feedback(case, {}, ()) is None
    assert e.unsupported_backends(case) == frozenset()
    assert e.is_deterministic(case) is False  # unknown: the determinism oracle abstains
    # the boundary check trusts the case's own label: no extra condition
    assert e.broken_constraints(case) == []
    bad = ApiCase("abs", (), (), expect="invalid:x >= 0")
    assert e.broken_constraints(bad) == ["x >= 0"]
    with pytest.raises(Rejected):  # reduction keeps every argument
        e.rebuild("abs", (), (), like=case)
    with pytest.raises(NotImplementedError):
        Engine().propose(1)


def test_from_settings_passes_options_and_refuses_other_settings():
    e = _WithSettings.from_settings(seed=4, libraries=("torch",), apis=None,
                                    settings=_MinimalSettings(width=3))
    assert (e.seed, e.libraries, e.width) == (4, ("torch",), 3)
    assert [f.name for f in fields(_MinimalSettings)] == ["width"]
    with pytest.raises(InternalError, match="_MinimalSettings"):
        _WithSettings.from_settings(seed=4, libraries=(), apis=None, settings=EngineSettings())


def test_every_oracle_declares_case_kinds():
    for name in registry.names("oracle"):
        cls = registry.load("oracle", name)
        assert issubclass(cls, Oracle)
        assert isinstance(cls.case_kinds, tuple) and cls.case_kinds
    assert Oracle.case_kinds == ("api", "graph")


def test_campaign_calls_hooks_directly():
    source = Path(inspect.getfile(campaign)).read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr"):
            target = ast.unparse(node.args[0])
            assert "engine" not in target and "oracle" not in target, \
                f"campaign.py line {node.lineno}: {ast.unparse(node)}"
    assert "settings_keys" not in source


def test_a_plugin_engine_that_is_no_engine_gets_a_clear_error() -> None:
    from dlfuzz.errors import UsageError
    from dlfuzz.settings import engine_class

    with pytest.raises(UsageError, match="derive it from dlfuzz.engines.base.Engine"):
        engine_class("collections:OrderedDict")

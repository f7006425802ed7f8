"""Loads a script of ``benchmarks/`` as a module, the way it runs: with its folder on
``sys.path`` (its sibling modules import) and registered under a name of its own
(dataclasses look their module up)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks"


def load(script: str) -> ModuleType:
    if str(FOLDER) not in sys.path:
        sys.path.insert(0, str(FOLDER))
    name = f"{script}_benchmark"
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

"""dlfuzz: finds bugs in deep learning libraries.

The package root stays light on purpose: importing ``dlfuzz`` never imports a deep
learning library. Those load only inside worker processes, when a backend is chosen.

The Python API (``dlfuzz.run``, ``dlfuzz.open`` and their records, in ``dlfuzz.api``;
docs/api-python.md) loads on first use, through the module ``__getattr__`` below, so
``import dlfuzz`` costs only what the CLI's first line costs. It is named by string on
purpose: the API runs campaigns, and modules under it read ``dlfuzz.__version__`` from
this root, which a static import here would make a cycle. ``__init__.pyi`` gives type
checkers the API's real types.
"""

from __future__ import annotations

import importlib
from typing import Any

from dlfuzz.errors import DlfuzzError, InternalError, UsageError

__version__ = "0.1.0"
__all__ = ["Bug", "Campaign", "DlfuzzError", "InternalError", "Place", "Stats", "UsageError",
           "__version__", "open", "run"]

_API = ("Bug", "Campaign", "Place", "Stats", "open", "run")


def __getattr__(name: str) -> Any:
    """``dlfuzz.run`` and friends, taken from ``dlfuzz.api`` when first asked for."""
    if name in _API:
        return getattr(importlib.import_module("dlfuzz.api"), name)
    raise AttributeError(f"module 'dlfuzz' has no attribute {name!r}")

"""Where dlfuzz keeps what outlives a campaign: TF.js releases, bisect installs, user
datasets conformed for the program engine, compiled JAX executables."""

from __future__ import annotations

import os
from pathlib import Path


def dlfuzz_cache() -> Path:
    """``$DLFUZZ_CACHE`` or ``~/.cache/dlfuzz``."""
    root = os.environ.get("DLFUZZ_CACHE", "")
    return Path(root) if root else Path.home() / ".cache" / "dlfuzz"

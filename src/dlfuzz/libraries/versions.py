"""Which version of a library is installed, read without importing the library.

A Python library's version is its distribution's metadata (what ``pip`` installed, equal
to its ``__version__``); reading it costs a file read, not a TensorFlow import. A
JavaScript library's version is the release dlfuzz selected for its backends.
"""

from __future__ import annotations

import os
from importlib import metadata

from dlfuzz.errors import UsageError
from dlfuzz.libraries.known import get


def selected_release(name: str) -> str:
    """The release of a JavaScript library dlfuzz runs: its environment variable (set by
    ``--tfjs-version``) or the default release. Its backends check the name is valid."""
    lib = get(name)
    return os.environ.get(lib.release_env, "") or lib.default_release


def versions(name: str) -> dict[str, str]:
    """Distribution -> installed version for each of the library's installed distributions
    (JAX: jax and jaxlib); the npm package -> selected release for a JavaScript library."""
    lib = get(name)
    if lib.npm:
        return {lib.npm: selected_release(name)}
    out: dict[str, str] = {}
    for dist in lib.distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def version(name: str) -> str:
    """The library's own version (its first distribution); a UsageError when absent."""
    lib = get(name)
    found = versions(name)
    own = lib.npm or (lib.distributions[0] if lib.distributions else "")
    if own not in found:
        raise UsageError(f"library {name!r} is not installed (no distribution {own!r}); "
                         f"install it, e.g. `pip install {own}`")
    return found[own]

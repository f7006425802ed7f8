"""Which version of a library is installed, read without importing the library.

A Python library's version is its distribution's metadata (what ``pip`` installed, equal
to its ``__version__``); reading it costs a file read, not a TensorFlow import. A
JavaScript library's version is the release dlfuzz selected for its backends.
"""

from __future__ import annotations

from importlib import metadata

from dlfuzz.errors import UsageError
from dlfuzz.libraries.known import get


def versions(name: str) -> dict[str, str]:
    """Distribution -> installed version for each of the library's installed distributions
    (JAX: jax and jaxlib); the npm package -> selected release for a JavaScript library."""
    lib = get(name)
    if lib.npm:
        from dlfuzz.backends.tfjs.backend import selected_version

        return {lib.npm: selected_version()}
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

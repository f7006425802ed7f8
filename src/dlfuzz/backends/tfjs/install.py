"""Installs TF.js releases into dlfuzz's cache, one directory per version, side by side.

Layout (shared with the spec extractor and the model interpreter):
``dlfuzz_cache()/tfjs/<version>/node_modules/@tensorflow/{tfjs,tfjs-backend-wasm}`` and
``dlfuzz_cache()/tfjs/tools/node_modules/{playwright-core,typescript}`` for tools that
every version shares. Each version has its own ``package.json`` so that ``npm install``
in one never touches another: an old release stays selectable while a new one is added.

Installs take an exclusive file lock per directory, so two processes (two campaigns, or
a test and a campaign) asking for the same version at once install it once.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dlfuzz.cachedir import dlfuzz_cache
from dlfuzz.errors import UsageError
from dlfuzz.libraries import get

DEFAULT_VERSION = get("tfjs").default_release
TOOLS = {"playwright-core": "1.56.1", "typescript": "5.9.3"}
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$")
_MARKER = ".dlfuzz-installed"


def check_version(version: str) -> str:
    if not _VERSION_RE.match(version):
        raise UsageError(f"--tfjs-version {version!r}: not a release number; give one "
                         f"like {DEFAULT_VERSION} (see `npm view @tensorflow/tfjs versions`)")
    return version


def tfjs_dir(version: str = DEFAULT_VERSION) -> Path:
    return dlfuzz_cache() / "tfjs" / check_version(version)


def tools_dir() -> Path:
    return dlfuzz_cache() / "tfjs" / "tools"


def is_installed(version: str = DEFAULT_VERSION) -> bool:
    return (tfjs_dir(version) / _MARKER).exists()


def tools_installed() -> bool:
    return (tools_dir() / _MARKER).exists()


def installed_versions() -> list[str]:
    root = dlfuzz_cache() / "tfjs"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / _MARKER).exists()
                  and _VERSION_RE.match(p.name))


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another process installing into {directory} ...",
                  file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm_install(directory: Path, packages: dict[str, str], what: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise UsageError(f"cannot install {what}: `npm` is not on PATH; install Node.js "
                         f"20+ with npm (Debian: apt-get install nodejs npm)")
    (directory / "package.json").write_text(json.dumps(
        {"name": "dlfuzz-tfjs-cache", "private": True, "dependencies": packages}, indent=1))
    # npm takes from seconds to minutes and prints nothing with --loglevel=error: say what
    # it installs (stderr: what goes to stdout stays what the caller prints).
    listing = ", ".join(f"{name}@{v}" for name, v in packages.items())
    print(f"installing {what} with npm: {listing} into {directory} ...", file=sys.stderr,
          flush=True)
    t0 = time.monotonic()
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                          cwd=directory, capture_output=True, text=True, timeout=900,
                          check=False)
    if proc.returncode != 0:
        if directory != tools_dir():
            shutil.rmtree(directory, ignore_errors=True)  # no half-installed version left
        raise UsageError(f"cannot install {what} into {directory}: npm install failed "
                         f"(exit {proc.returncode}): {proc.stderr.strip()[-1500:]}; check "
                         f"the version exists and the npm registry is reachable")
    (directory / _MARKER).write_text(json.dumps(packages))
    print(f"installed {what} in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)


def ensure_installed(version: str = DEFAULT_VERSION) -> Path:
    """The version's directory, installing ``@tensorflow/tfjs`` and its wasm backend first."""
    directory = tfjs_dir(version)
    if (directory / _MARKER).exists():
        return directory
    with _locked(directory):
        if not (directory / _MARKER).exists():
            _npm_install(directory, {"@tensorflow/tfjs": version,
                                     "@tensorflow/tfjs-backend-wasm": version},
                         f"TF.js {version}")
    return directory


def ensure_tools() -> Path:
    """The shared tools (playwright-core for the webgl page, typescript for specs)."""
    directory = tools_dir()
    if (directory / _MARKER).exists():
        return directory
    with _locked(directory):
        if not (directory / _MARKER).exists():
            _npm_install(directory, dict(TOOLS), "the TF.js tools")
    return directory

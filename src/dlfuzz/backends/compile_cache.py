"""A persistent compilation cache for the JAX backends (``jax``, ``jax-jit``).

JAX compiles every primitive for each new signature, even op by op: a broad API
campaign's first visit of an API cost about 0.27 s, nearly all of it XLA compiling, and
the next campaign on the same machine compiled the same primitives again. JAX can keep
its compiled executables on disk; with every entry kept (no minimum compile time or
size) 21 jax.numpy functions on two new shapes took 3.5 s cold and 0.64 s from the cache.

What is cached is exactly what XLA compiled, keyed by JAX on the lowered program, the
JAX and XLA versions and the compiler flags, so a cached run computes what a compiling
one does; a compiler bug compiled into an entry is in it as in a fresh compilation.
Reproducers never read the cache: a finding that only a cached entry showed would not
reproduce, and triage drops what does not reproduce.

Where: ``$DLFUZZ_JAX_CACHE`` (a directory; ``off`` turns the cache off), else
``jax-compilation`` under ``$DLFUZZ_CACHE`` or ``~/.cache/dlfuzz``. The directory is held
to ``MAX_BYTES``: a worker starting more than ``PRUNE_EVERY_S`` after the last pruning
removes the least recently written entries (JAX's own size bound would rescan the whole
directory on every write, under a lock).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from dlfuzz.cachedir import dlfuzz_cache

ENV = "DLFUZZ_JAX_CACHE"
MAX_BYTES = 1 << 30
PRUNE_EVERY_S = 600.0
_STAMP = ".dlfuzz-pruned"


def jax_cache_dir() -> Path | None:
    """The cache directory, or None when ``$DLFUZZ_JAX_CACHE`` is ``off``."""
    given = os.environ.get(ENV, "").strip()
    if given.lower() in ("off", "0", "none", "false"):
        return None
    return Path(given) if given else dlfuzz_cache() / "jax-compilation"


def enable_jax_cache(jax: Any) -> Path | None:
    """Point ``jax`` at the cache (every compilation kept); the directory, or None when it
    is off or cannot be made (then JAX compiles as without it)."""
    path = jax_cache_dir()
    if path is None:
        return None
    try:
        path.mkdir(parents=True, exist_ok=True)
        prune(path)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path


def prune(path: Path, max_bytes: int = MAX_BYTES, every_s: float = PRUNE_EVERY_S,
          now: float | None = None) -> int:
    """Remove the oldest entries until the directory holds at most ``max_bytes``, at most
    once every ``every_s`` seconds (a stamp file says when); returns how many went."""
    now = time.time() if now is None else now
    stamp = path / _STAMP
    try:
        if now - stamp.stat().st_mtime < every_s:
            return 0
    except FileNotFoundError:
        pass
    stamp.touch()
    os.utime(stamp, (now, now))
    entries = []
    total = 0
    with os.scandir(path) as it:
        for entry in it:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            entries.append((st.st_mtime, st.st_size, entry.path))
            total += st.st_size
    removed = 0
    for _, size, name in sorted(entries):
        if total <= max_bytes:
            break
        try:
            os.unlink(name)
        except FileNotFoundError:
            continue  # another worker pruned it
        total -= size
        removed += 1
    return removed

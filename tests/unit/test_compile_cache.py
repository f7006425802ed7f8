"""The JAX backends' persistent compilation cache (``backends/compile_cache.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlfuzz.backends.compile_cache import ENV, jax_cache_dir, prune

_RUN = """
import numpy as np
from jax import monitoring
from dlfuzz.backends.jax_backend import JaxBackend
hits = []
monitoring.register_event_listener(
    lambda event, **kw: hits.append(event) if event.endswith("/cache_hits") else None)
b = JaxBackend()
b.setup()
for n in range(2, 12):
    x = b.jnp.asarray(np.ones((n, 3), np.float32))
    b.jnp.tanh(b.jnp.cumsum(x, axis=0)).block_until_ready()
print(len(hits))
"""


def _jax_worker(env: dict[str, str]) -> int:
    """A real JAX backend's worker set-up, then ten new signatures; the cache hits JAX
    reported."""
    proc = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.strip().splitlines()[-1])


def test_a_jax_worker_keeps_its_compilations_and_the_next_one_reads_them(tmp_path):
    cache = tmp_path / "jax"
    assert _jax_worker({ENV: str(cache)}) == 0  # cold
    entries = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert len(entries) >= 10  # every new signature's primitives, however quick
    # The same signatures in a new worker: read from the cache, not compiled again.
    assert _jax_worker({ENV: str(cache)}) >= len(entries)
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == len(entries)


def test_off_leaves_jax_compiling_as_without_a_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, "off")
    assert jax_cache_dir() is None
    assert _jax_worker({ENV: "off", "DLFUZZ_CACHE": str(tmp_path)}) == 0
    assert not (tmp_path / "jax-compilation").exists()
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("DLFUZZ_CACHE", str(tmp_path))
    assert jax_cache_dir() == tmp_path / "jax-compilation"


def test_prune_removes_the_oldest_entries_down_to_the_bound_and_not_too_often(tmp_path):
    for i in range(10):
        f = tmp_path / f"entry{i}-cache"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1000 + i, 1000 + i))
    assert prune(tmp_path, max_bytes=450, every_s=600, now=5000) == 6
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        f"entry{i}-cache" for i in range(6, 10)]
    (tmp_path / "late-cache").write_bytes(b"x" * 500)
    assert prune(tmp_path, max_bytes=450, every_s=600, now=5100) == 0  # pruned recently
    assert prune(tmp_path, max_bytes=450, every_s=600, now=5700) > 0


@pytest.mark.parametrize("value", ["off", "OFF", "0", "none"])
def test_the_ways_to_say_off(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    assert jax_cache_dir() is None


def test_a_cache_that_cannot_be_made_leaves_jax_uncached(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _jax_worker({ENV: str(blocker / "jax")})  # below a file: no cache, no failure
    assert Path(blocker).read_text() == "x"

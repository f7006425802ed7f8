"""Must-show 3 of TF.js: `dlfuzz run --engine api --backends tfjs-cpu,tfjs-wasm
--tfjs-version 4.1.0` runs the API engine's tfjs specs against that old release."""

from __future__ import annotations

import json
from pathlib import Path

from executor_support import dlfuzz_cli

from dlfuzz.store.db import Store


def test_api_engine_runs_on_an_old_tfjs_release(tmp_path: Path) -> None:
    out = tmp_path / "old"
    proc = dlfuzz_cli("run", "--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm",
                      "--tfjs-version", "4.1.0", "--seed", "4", "--out", str(out), "--quiet",
                      "--budget", "60s", "--max-cases", "300", "--batch-size", "100",
                      timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    store = Store.open(out)
    try:
        meta = store.meta()
        totals = store.totals()
    finally:
        store.close()
    # (numpy and jax join as float64 reference backends)
    assert meta["versions"]["tfjs-cpu"] == "tfjs 4.1.0 (cpu)", meta["versions"]
    assert meta["versions"]["tfjs-wasm"] == "tfjs 4.1.0 (wasm)", meta["versions"]
    assert totals["cases"] >= 100, totals
    listing = dlfuzz_cli("findings", str(out), "--json", "--all", timeout=120)
    assert listing.returncode == 0, listing.stderr
    for bug in json.loads(listing.stdout):  # every finding names a backend of the campaign
        assert bug["guilty_backend"] in ("tfjs-cpu", "tfjs-wasm", "numpy", "jax"), bug

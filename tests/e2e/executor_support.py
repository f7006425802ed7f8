"""Shared by the executor tests: planted-fault cases through the numpy backend."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import WorkerConfig

PLANTED = Path(__file__).resolve().parents[1] / "planted"
TIMEOUT_S = 2.0


def planted_env() -> dict[str, str]:
    """The environment with tests/planted on PYTHONPATH (workers and scripts inherit it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), env.get("PYTHONPATH")]))
    return env


def dlfuzz_cli(*args: str, **kw: object) -> subprocess.CompletedProcess:
    """``python -m dlfuzz ARGS`` with the planted modules importable."""
    return subprocess.run([sys.executable, "-m", "dlfuzz", *args], capture_output=True,
                          text=True, env=planted_env(), **kw)  # type: ignore[call-overload]


def campaign_digest(out: Path, apis: tuple[str, ...]) -> str:
    """What an unaided campaign did, for the message of a test that finds its plant
    missing: the cases, triage's seconds and the gradient counters, the per-API stats
    of ``apis`` (reached? how often?) and every bug, flaky and unreproduced ones too."""
    with sqlite3.connect(out / "campaign.db") as db:
        counters = dict(db.execute("SELECT name, value FROM counters").fetchall())
        cases, seconds = db.execute("SELECT SUM(cases), SUM(seconds) FROM batches").fetchone()
    kept = {k: v for k, v in counters.items()
            if k.startswith(("triage_", "gradient_cases", "dtype_checks", "outcome:"))}
    stats = dlfuzz_cli("findings", str(out), "--stats", "--json", timeout=120)
    rows = json.loads(stats.stdout) if stats.returncode == 0 else {}
    listing = dlfuzz_cli("findings", str(out), "--json", "--all", timeout=120)
    bugs = json.loads(listing.stdout) if listing.returncode == 0 else []
    return "\n".join([
        f"{cases} cases in {seconds or 0:.0f} s of batches; {kept}",
        *(f"{api}: {rows.get(api, 'never tried')}" for api in apis),
        *(f"bug {b['api']} {b['symptom']} {b['severity']} {b.get('status', '')} "
          f"{b['guilty_backend']}" for b in bugs)])


def config(backend: str = "numpy", **kwargs: object) -> WorkerConfig:
    kwargs.setdefault("case_timeout_s", TIMEOUT_S)
    kwargs.setdefault("start_timeout_s", 60.0)
    return WorkerConfig(backend, **kwargs)  # type: ignore[arg-type]


def case(function: str, x: np.ndarray | None = None) -> ApiCase:
    """A case calling ``planted_faults.<function>(x)`` through the numpy backend."""
    if x is None:
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
    call = Call(f"planted_faults.{function}", (Ref(0),))
    return ApiCase(f"planted.{function}", (Tensor.from_numpy(x),), (("numpy", call),))


def ok_case(seed: int) -> ApiCase:
    return case("identity", np.full((3,), seed, dtype=np.int64))

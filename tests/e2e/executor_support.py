"""Shared by the executor tests: planted-fault cases through the numpy backend."""

from __future__ import annotations

import os
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

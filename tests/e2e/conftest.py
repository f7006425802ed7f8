"""End-to-end tests: tests/planted on PYTHONPATH, which workers inherit."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from executor_support import PLANTED, config, dlfuzz_cli

from dlfuzz.executor.pool import Worker


@pytest.fixture(autouse=True)
def planted_path(monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))


@pytest.fixture
def worker() -> Iterator[Worker]:
    """A started numpy worker with the executor tests' short timeouts."""
    w = Worker(config())
    w.start()
    yield w
    w.close()


# Four bugs planted in torch at once, found by one unaided campaign over every torch spec
# (test_planted_edges.py: integer extremes, a rank abort, a bfloat16-only result;
# test_planted_gradient.py: a wrong backward). One campaign instead of two saves the
# suite five minutes; each plant shows on its own API, so none hides another.
TORCH_PLANTS = ("planted_torch_gcd_extreme", "planted_torch_pool_rank_abort",
                "planted_torch_hardswish_bf16", "planted_torch_tanh_backward")
# The campaign is bounded by its cases, the budget only caps a stalled one: what it finds
# must not depend on how fast the machine is at the time (a 480 s budget in a CI run
# found two of the four; on a quiet machine the four were found within 60,000 cases,
# within 120,000 with two busy loops beside the campaign, and within 90,000 with
# coverage groups, whose 200,000 cases took 360 s).
TORCH_PLANTS_CASES = "200000"
TORCH_PLANTS_CAP = "900s"


@pytest.fixture(scope="session")
def torch_plants_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of that campaign (seed 1, default settings, no ``--apis``)."""
    out = tmp_path_factory.mktemp("torch-plants") / "c"
    preload = [arg for p in TORCH_PLANTS for arg in ("--preload", f"torch={p}")]
    proc = dlfuzz_cli("run", "--engine", "api", "--backends", "torch", "--seed", "1",
                      "--max-cases", TORCH_PLANTS_CASES, "--budget", TORCH_PLANTS_CAP,
                      "--out", str(out), "--quiet", *preload, timeout=2400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out

"""End-to-end tests: tests/planted on PYTHONPATH, which workers inherit."""

import os
from collections.abc import Iterator

import pytest
from executor_support import PLANTED, config

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

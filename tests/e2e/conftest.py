"""End-to-end tests: tests/planted on PYTHONPATH, which workers inherit."""

import os
from pathlib import Path

import pytest

PLANTED = Path(__file__).resolve().parents[1] / "planted"


@pytest.fixture(autouse=True)
def planted_path(monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))

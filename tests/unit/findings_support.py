"""A campaign folder with chosen bugs, for the findings formats and the CI gate.

Each bug gets a real folder (``meta.json`` naming its reproducers, the scripts) as the
triager writes it; a reproducer here is a tiny Python script whose exit status and last
line say what a real one would (``OK: ...`` / ``BUG present: ...``), so the baseline's
fixed check runs real subprocesses without importing a DL library.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dlfuzz.cli.main import main
from dlfuzz.store.db import BugRow, Store

PASSES = 'print("OK: fixed here")\n'
FAILS = 'import sys\nprint("BUG present: still wrong")\nsys.exit(1)\n'


@dataclass(frozen=True)
class Bug:
    id: str
    severity: str
    root_cause: str
    backends: tuple[str, ...] = ("torch",)
    status: str = "confirmed"
    message: str = "torch gives 1 where the reference gives 0"
    script: str = FAILS  # the guilty backend's reproducer
    others: dict[str, str] = field(default_factory=dict)  # backend -> script


def make_campaign(root: Path, bugs: list[Bug]) -> Path:
    store = Store.create(root, {"settings": {}})
    for i, b in enumerate(bugs):
        guilty = b.backends[0]
        folder = root / "bugs" / b.id
        folder.mkdir(parents=True)
        scripts = {guilty: b.script, **b.others}
        names = {backend: f"repro_{backend}.py" for backend in scripts}
        for backend, text in scripts.items():
            (folder / names[backend]).write_text(text)
        (folder / "meta.json").write_text(json.dumps({"repro": names}))
        now = time.time() + i
        store.add_bug(BugRow(
            id=b.id, signature=f"sig-{b.id}", symptom="numeric", guilty_backend=guilty,
            api=f"api.{b.root_cause.split('/')[1]}", stage="call", message=b.message,
            status=b.status, occurrences=2, case_blob="x", reduced_blob=None,
            confirm_runs=2, confirm_hits=2, dir=f"bugs/{b.id}", details={},
            created_at=now, updated_at=now, severity=b.severity, root_cause=b.root_cause,
            places=[{"backend": be, "api": f"api.{b.root_cause.split('/')[1]}",
                     "dtypes": "float32", "symptom": "numeric", "count": 1}
                    for be in b.backends]))
    store.close()
    return root


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``dlfuzz ARGV`` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err

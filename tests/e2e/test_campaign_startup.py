"""Start-up of a real campaign (workers included): a run that cannot start its workers
leaves no folder; a running campaign is locked against a second writer; ``--resume``
applies a new budget and case limit and says so."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

SMALL = ("--engine", "numpy-api", "--backends", "numpy", "--apis", "add,abs",
         "--batch-size", "10", "--quiet")


def _dlfuzz(*args: object, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dlfuzz", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def test_unavailable_backend_removes_the_new_campaign(tmp_path: Path) -> None:
    proc = _dlfuzz("run", *SMALL, "--python", "numpy=/nonexistent/python", "--budget", "20s",
                   "--out", tmp_path / "a" / "camp")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "backend(s) unavailable: numpy" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "a").exists()


def _batches(db: Path) -> int:
    """Batches the campaign stored so far; 0 while the database is still being made (a
    full CI-mode run read the file between its creation and its first table)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise
    finally:
        conn.close()


def test_running_campaign_is_locked_and_resume_applies_budget_and_max_cases(
        tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    first = subprocess.Popen([sys.executable, "-m", "dlfuzz", "run", *SMALL, "--budget", "300s",
                              "--out", str(camp)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        end = time.time() + 240
        while time.time() < end and not ((camp / "campaign.db").exists()
                                         and _batches(camp / "campaign.db") > 0):
            time.sleep(0.3)
        assert _batches(camp / "campaign.db") > 0, first.stderr.read() if first.stderr else ""
        second = _dlfuzz("run", "--resume", camp, "--budget", "5s", timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"in use by another dlfuzz run (pid {first.pid})" in second.stderr
        readers = _dlfuzz("findings", camp, timeout=120)
        assert readers.returncode == 0, readers.stderr
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    done = _batches(camp / "campaign.db")
    resumed = _dlfuzz("run", "--resume", camp, "--budget", "60s",
                      "--max-cases", (done + 2) * 10, "--quiet", timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"dlfuzz: resuming {camp}: budget +60s" in resumed.stderr
    assert f"max cases 0 -> {(done + 2) * 10}" in resumed.stderr
    assert _batches(camp / "campaign.db") == done + 2  # the new case limit stopped it

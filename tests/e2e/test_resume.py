"""Must-show 3: SIGKILL a running campaign at arbitrary moments, resume it; nothing
confirmed is lost and the store stays consistent."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

PLANTED = Path(__file__).resolve().parent.parent / "planted"


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), env.get("PYTHONPATH")]))
    return env


def _rows(db: Path, sql: str) -> list:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dlfuzz", "run", *args, "--quiet"],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def _wait_for(pred, timeout: float) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        try:
            if pred():
                return True
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    return False


def test_kill_and_resume_loses_nothing_confirmed(tmp_path):
    out = tmp_path / "camp"
    db = out / "campaign.db"
    proc = _start("--engine", "numpy-api", "--backends", "numpy,torch,jax", "--budget", "300s",
                  "--seed", "3", "--out", str(out), "--preload", "torch=planted_torch_cumsum",
                  "--apis", "cumsum,sum,add,sort,abs,exp")

    def confirmed() -> list:
        return _rows(db, "SELECT id, signature FROM bugs WHERE status = 'confirmed'")

    assert _wait_for(lambda: db.exists() and confirmed(), 240), proc.communicate()[1][-2000:]
    time.sleep(1.3)  # somewhere inside a later batch, triage or reduction
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = set(confirmed())
    batches_before = _rows(db, "SELECT MAX(idx) FROM batches")[0][0]
    assert before

    # Kill the resumed run too, at a different moment, then let a final resume finish.
    again = _start("--resume", str(out), "--budget", "60s")
    time.sleep(12)
    os.killpg(again.pid, signal.SIGKILL)
    again.wait()
    final = subprocess.run([sys.executable, "-m", "dlfuzz", "run", "--resume", str(out),
                            "--budget", "8s", "--quiet"], env=_env(), capture_output=True,
                           text=True, timeout=600)
    assert final.returncode == 0, final.stderr[-3000:]

    assert _rows(db, "PRAGMA integrity_check")[0][0] == "ok"
    after = set(confirmed())
    assert before <= after  # nothing confirmed was lost
    assert _rows(db, "SELECT MAX(idx) FROM batches")[0][0] > batches_before  # it went on
    idx = [r[0] for r in _rows(db, "SELECT idx FROM batches ORDER BY idx")]
    assert idx == list(range(len(idx)))  # batches recorded once each, no gaps
    # Every confirmed bug has a complete folder with its reproducers.
    listing = subprocess.run([sys.executable, "-m", "dlfuzz", "findings", str(out), "--json"],
                             capture_output=True, text=True, timeout=120)
    for bug in json.loads(listing.stdout):
        assert bug["confirmed"] and bug["repro"], bug
        assert all(Path(p).is_file() for p in bug["repro"].values())
    assert not list((out / "bugs").glob(".tmp-*"))

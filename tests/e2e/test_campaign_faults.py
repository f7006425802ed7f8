"""Must-show 2 at campaign level: planted segfault, abort, SIGFPE, hang, 50 GB allocation,
os._exit and 100 MB of output each become the right outcome and finding, are confirmed,
and the campaign goes on to finish its budget."""

import json
import os
import subprocess
import sys
from pathlib import Path

PLANTED = Path(__file__).resolve().parent.parent / "planted"


def test_faults_become_findings_and_the_campaign_goes_on(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), env.get("PYTHONPATH")]))
    out = tmp_path / "camp"
    run = subprocess.run(
        [sys.executable, "-m", "dlfuzz", "run", "--engine", "fault_engine:FaultEngine",
         "--backends", "numpy,torch,jax", "--budget", "90s", "--batch-size", "64",
         "--timeout", "2s", "--memory-limit-mb", "6144", "--out", str(out), "--quiet"],
        env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    listing = subprocess.run([sys.executable, "-m", "dlfuzz", "findings", str(out), "--json",
                              "--all"], env=env, capture_output=True, text=True, timeout=120)
    bugs = {b["api"]: b for b in json.loads(listing.stdout)}
    expected = {
        "planted.segfault": ("crash", "SIGSEGV"),
        "planted.abort": ("crash", "SIGABRT"),
        "planted.sigfpe": ("crash", "SIGFPE"),
        "planted.exit7": ("crash", "exit(7)"),
        "planted.hang_sleep": ("timeout", "timeout"),
        "planted.allocate_50gb": ("oom", "oom"),
    }
    for api, (symptom, marker) in expected.items():
        assert api in bugs, (api, sorted(bugs))
        bug = bugs[api]
        assert bug["symptom"] == symptom and bug["guilty_backend"] == "numpy", bug
        assert bug["confirmed"], bug
        assert marker in bug["message"] or marker in bug["signature"], bug
    # Printing 100 MB is not a bug, and nothing is blamed on torch or jax.
    assert "planted.flood_stdout" not in bugs
    assert all(b["guilty_backend"] == "numpy" for b in bugs.values())
    # The campaign went on: many batches after the faulty first one (its triage: each new
    # bug confirmed in fresh workers, reduced, and its reproducer run, takes about 40 s).
    import sqlite3

    conn = sqlite3.connect(out / "campaign.db")
    n_batches, n_cases = conn.execute("SELECT COUNT(*), SUM(cases) FROM batches").fetchone()
    crashes = conn.execute("SELECT crashes FROM backends WHERE name = 'numpy'").fetchone()[0]
    conn.close()
    assert n_batches >= 5 and n_cases >= 5 * 64
    assert crashes >= 4
    # The segfault's reproducer dies by the signal (non-zero), as the bug is present.
    repro = bugs["planted.segfault"]["repro"]["numpy"]
    proc = subprocess.run([sys.executable, repro], env=env, capture_output=True, timeout=120)
    assert proc.returncode != 0

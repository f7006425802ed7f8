"""Batches sized by time: a campaign on a slow API still finishes batches within its
budget, and an explicit ``--batch-size`` is every batch's size.

A planted module makes torch's abs/exp sleep 0.1 s per call, so a case costs at least
0.1 s: a fixed batch of 256 cases would take about 26 s, longer than the 12 s budget, and
the campaign would record nothing (the batch in flight is cut at the end). Gradient cases
are off (``--no-gradients``): a backward pass calls the slow function about ten times, so
a batch's cost would no longer be a number of 0.1 s cases.
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

PLANTED = Path(__file__).resolve().parent.parent / "planted"


def _run(out: Path, *extra: str) -> list[int]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), env.get("PYTHONPATH")]))
    env["PLANTED_SLOW_S"] = "0.1"
    proc = subprocess.run(
        [sys.executable, "-m", "dlfuzz", "run", "--engine", "numpy-api", "--backends",
         "numpy,torch", "--apis", "abs,exp", "--preload", "torch=planted_torch_slow",
         "--seed", "3", "--budget", "12s", "--no-gradients", "--out", str(out), "--quiet",
         *extra],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True)
    try:
        return [n for (n,) in conn.execute("SELECT cases FROM batches ORDER BY idx")]
    finally:
        conn.close()


def test_slow_cases_get_small_batches_that_finish_within_the_budget(tmp_path):
    sizes = _run(tmp_path / "auto")
    assert len(sizes) >= 2, sizes  # several batches recorded in 12 s
    assert sizes[0] == 32  # the first, before any time is measured
    # then about 5 s of work each: 0.1-0.2 s a case is 25-50 cases, never the full 256
    assert all(16 <= n <= 64 for n in sizes[1:]), sizes


def test_an_explicit_batch_size_is_every_batchs_size(tmp_path):
    sizes = _run(tmp_path / "fixed", "--batch-size", "40")
    assert sizes and set(sizes) == {40}, sizes

"""A campaign stops within ~2 s of Ctrl-C, SIGTERM or the end of its budget, even in the
middle of a long batch; a second Ctrl-C stops it at once; the store stays consistent and
``--resume`` goes on.

Batches are made long on purpose: a planted module makes torch's abs/exp sleep
``PLANTED_SLOW_S`` per call, so one batch of 300 cases takes about a minute.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from executor_support import case, config

from dlfuzz.executor.pool import Cancelled, Pool, StopSignal, Worker

PLANTED = Path(__file__).resolve().parent.parent / "planted"
READY = "workers ready in"
RESUME_LINE = "interrupted — resume with `dlfuzz run --resume"


def _env(slow_s: float) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), env.get("PYTHONPATH")]))
    env["PLANTED_SLOW_S"] = str(slow_s)
    return env


class _Run:
    """A ``dlfuzz run`` subprocess whose stderr lines are collected with their times."""

    def __init__(self, *args: str, slow_s: float = 0.2) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dlfuzz", "run", *args, "--quiet"], env=_env(slow_s),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
            start_new_session=True)
        self.launched = time.monotonic()
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line))

    @property
    def stderr(self) -> str:
        return "".join(line for _, line in self.lines)

    def time_of(self, text: str, timeout: float) -> float | None:
        """When a stderr line containing ``text`` appeared (waits up to ``timeout``)."""
        end = time.monotonic() + timeout
        while True:
            for t, line in list(self.lines):
                if text in line:
                    return t
            if time.monotonic() >= end:
                return None
            if self.proc.poll() is not None and not self._reader.is_alive():
                return None
            time.sleep(0.05)

    def ready(self, timeout: float = 60.0) -> float:
        """When the workers were ready ("workers ready in N s" on stderr).

        A run that never says so but still runs after ``timeout`` (a dlfuzz without that
        line) is taken as ready now, so a test still checks what it is about.
        """
        ready = self.time_of(READY, timeout)
        assert ready is not None or self.proc.poll() is None, self.stderr[-3000:]
        return ready if ready is not None else time.monotonic()

    def wait(self, timeout: float) -> int | None:
        """Exit code, or None (then the process is killed) if it ran past ``timeout``."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return None
        self._reader.join(10)
        return code


def _campaign(out: Path, *extra: str) -> tuple[str, ...]:
    return ("--engine", "numpy-api", "--backends", "numpy,torch", "--apis", "abs,exp",
            "--preload", "torch=planted_torch_slow", "--batch-size", "300", "--seed", "5",
            "--out", str(out), *extra)


def _workers_left(out: Path) -> list[int]:
    """Processes still working in the campaign's scratch folders (leaked workers)."""
    scratch = str((out / "scratch").resolve())
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd").startswith(scratch):
                    left.append(int(entry.name))
            except OSError:
                continue
    return left


def _store_is_consistent(out: Path) -> None:
    conn = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True, timeout=30)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    listing = subprocess.run([sys.executable, "-m", "dlfuzz", "findings", str(out), "--json"],
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stderr[-2000:]
    json.loads(listing.stdout)


def _batches(out: Path) -> int:
    conn = sqlite3.connect(f"file:{out / 'campaign.db'}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0]
    finally:
        conn.close()


def test_ctrl_c_mid_batch_stops_within_seconds_and_resume_goes_on(tmp_path):
    out = tmp_path / "camp"
    run = _Run(*_campaign(out, "--budget", "10h"))
    run.ready()
    time.sleep(3)  # well inside the first batch (about a minute long)
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    code = run.wait(30)
    took = time.monotonic() - sent
    assert code == 130, (code, run.stderr[-3000:])
    assert took < 3.0, took
    assert RESUME_LINE in run.stderr and str(out) in run.stderr, run.stderr[-2000:]
    assert not _workers_left(out)
    _store_is_consistent(out)
    assert _batches(out) == 0  # the cut batch is not recorded: a resume runs it again

    # Resumed without the planted delay: batches now finish and are recorded. Worker
    # start-up (seconds) does not eat the 5 s: the budget counts from when they are ready.
    again = subprocess.run(
        [sys.executable, "-m", "dlfuzz", "run", "--resume", str(out), "--budget", "5s",
         "--quiet"], env=_env(0), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert RESUME_LINE not in again.stderr
    assert _batches(out) >= 1
    _store_is_consistent(out)


def test_sigterm_mid_batch_stops_within_seconds(tmp_path):
    out = tmp_path / "camp"
    run = _Run(*_campaign(out, "--budget", "10h"))
    run.ready()
    time.sleep(2)
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGTERM)
    code = run.wait(30)
    assert code == 130, (code, run.stderr[-3000:])
    assert time.monotonic() - sent < 3.0
    assert RESUME_LINE in run.stderr
    assert not _workers_left(out)
    _store_is_consistent(out)


def test_short_budget_ends_within_budget_despite_long_batches(tmp_path):
    out = tmp_path / "camp"
    budget = 30.0  # more than start-up takes, less than one batch (about a minute)
    run = _Run(*_campaign(out, "--budget", f"{budget:g}s"))
    code = run.wait(400)
    ended = time.monotonic()
    assert code == 0, (code, run.stderr[-3000:])  # a budget that ran out is no interruption
    # Fuzzing time is counted from when the workers are ready (from the launch for a
    # dlfuzz that does not say when that was).
    ready = run.time_of(READY, 0) or run.launched
    assert ended - ready < budget + 2.0, (ended - ready, run.stderr[-3000:])
    assert ended - ready > budget - 1.0, (ended - ready, run.stderr[-3000:])
    assert run.time_of("starting workers (2/2)", 0) is not None, run.stderr[-3000:]
    assert RESUME_LINE not in run.stderr
    assert not _workers_left(out)
    _store_is_consistent(out)


def test_second_ctrl_c_stops_at_once(tmp_path):
    out = tmp_path / "camp"
    run = _Run(*_campaign(out, "--budget", "10h"))
    run.ready()
    time.sleep(2)
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    run.proc.send_signal(signal.SIGINT)
    # An impatient user keeps pressing: Ctrl-C landing while the interpreter shuts down
    # (default SIGINT action back) must not turn the documented 130 into death by signal.
    while run.proc.poll() is None and time.monotonic() - sent < 30:
        try:
            run.proc.send_signal(signal.SIGINT)
        except ProcessLookupError:
            break
        time.sleep(0.002)
    code = run.wait(30)
    assert code == 130, (code, run.stderr[-3000:])
    assert time.monotonic() - sent < 2.0
    assert RESUME_LINE in run.stderr
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert not _workers_left(out)
    _store_is_consistent(out)


def test_a_stop_cuts_a_hanging_case_and_the_worker_is_killed():
    stop = StopSignal()
    worker = Worker(config(case_timeout_s=60.0), stop)
    worker.start()
    try:
        timer = threading.Timer(0.5, stop.set, ("test",))
        timer.start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            worker.run([case("identity"), case("hang_sleep"), case("hang_sleep")])
        assert time.monotonic() - started < 1.5
        assert not worker.alive()
    finally:
        worker.close()


def test_a_deadline_cuts_worker_start_up_and_pool_start_reports_each_worker():
    seen = []
    with Pool([config()]) as pool:
        versions = pool.start(lambda *a: seen.append(a))
    assert seen == [("numpy", 1, 1, versions["numpy"], "")]

    pool = Pool([config()])
    pool.stop.set_deadline(time.monotonic())  # already spent: start-up is cut too
    try:
        with pytest.raises(Cancelled):
            pool.start()
        assert not pool.workers
    finally:
        pool.close()

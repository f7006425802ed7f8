"""The fork server (``executor.zygote``): workers forked from a process that has imported
the library, with every guarantee of a spawned worker.

The fault tests (``test_executor_faults.py``) run through the fork server already (the
numpy backend opts in): each signal, hang, out-of-memory death and stray fork becomes the
right outcome there. These tests check what is particular to forking: that it happens,
that it falls back to spawning where it must, and that nothing outlives its host.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from executor_support import case, config, ok_case
from test_executor_faults import assert_ok_identity, pid_of, wait_gone

from dlfuzz.executor import zygote
from dlfuzz.executor.pool import BackendUnavailable, Pool, Worker

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the executor's sandbox is Linux-only")


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def test_a_restart_is_a_fork_of_the_fork_server_not_a_new_interpreter() -> None:
    w = Worker(config())
    try:
        w.start()
        assert w.info["forked"] is True
        server = parent_of(w.pid)
        assert server != os.getpid()
        first = w.pid
        started = time.perf_counter()
        outcomes = w.run([case("segfault"), case("pid"), case("segfault"), case("pid")])
        elapsed = time.perf_counter() - started
        assert [o.exc_type for o in outcomes[::2]] == ["SIGSEGV", "SIGSEGV"]
        pids = {pid_of(o) for o in outcomes[1::2]}
        assert len(pids) == 2 and first not in pids
        assert all(parent_of(p) == server for p in pids if not wait_gone(p, 0.0))
        assert w.stats.restarts == 2 and w.stats.forks == 3
        # Two restarts of a spawned numpy worker take about a second; forks milliseconds.
        assert elapsed < 1.0, f"two crashes and restarts took {elapsed:.2f} s"
    finally:
        w.close()


def test_a_worker_forked_gets_its_own_session_limits_and_directory(tmp_path: Path) -> None:
    w = Worker(config(scratch=str(tmp_path), memory_limit_mb=3000))
    try:
        w.start()
        assert w.info["forked"] is True
        assert os.getsid(w.pid) == w.pid and os.getpgid(w.pid) == w.pid
        assert os.readlink(f"/proc/{w.pid}/cwd") == str(tmp_path)
        with open(f"/proc/{w.pid}/limits") as f:
            limits = {line[:26].strip(): line[26:].split() for line in f}
        assert int(limits["Max address space"][0]) == 3000 * 1024 * 1024
        assert limits["Max core file size"][0] == "0"
        (big,) = w.run([case("allocate_50gb")])
        assert big.status == "oom", big
    finally:
        w.close()


def test_a_relative_scratch_directory_is_the_hosts_relative_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spawned worker's directory is relative to the host's; the fork server's own
    directory is "/", so a forked worker gets it made absolute."""
    monkeypatch.chdir(tmp_path)
    w = Worker(config(scratch="camp/scratch/numpy"))
    try:
        w.start()
        assert w.info["forked"] is True
        assert os.readlink(f"/proc/{w.pid}/cwd") == str(tmp_path / "camp/scratch/numpy")
    finally:
        w.close()


def test_a_memory_limit_below_the_imported_library_is_a_clear_start_error() -> None:
    """numpy and dlfuzz imported map about 150 MB: a forked worker under 100 MB would fail
    every case as out of memory, so it refuses to start and says which option to raise."""
    w = Worker(config(memory_limit_mb=100))
    try:
        with pytest.raises(BackendUnavailable, match="--memory-limit-mb"):
            w.start()
    finally:
        w.close()


def test_a_library_with_a_thread_after_setup_is_spawned_not_forked() -> None:
    name = "planted_backends:ThreadAtSetup"
    w = Worker(config(name))
    try:
        w.start()
        assert w.info["forked"] is False
        assert parent_of(w.pid) == os.getpid()
        assert w.stats.forks == 0
        (crash, after) = w.run([case("segfault"), ok_case(1)])
        assert crash.exc_type == "SIGSEGV"
        assert_ok_identity(after, 1)
    finally:
        w.close()


def test_the_switch_turns_forking_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(zygote.ENV_SWITCH, "off")
    w = Worker(config())
    try:
        w.start()
        assert w.info["forked"] is False
        assert parent_of(w.pid) == os.getpid()
    finally:
        w.close()


def test_a_dead_fork_server_ends_no_case_and_is_replaced() -> None:
    """The fork server killed under a live worker (the kernel's OOM killer picks big
    processes): the worker goes on serving (it watches its host, not its parent), its
    death is still seen, and the next start forks from a new server."""
    w = Worker(config())
    try:
        w.start()
        server = parent_of(w.pid)
        os.kill(server, signal.SIGKILL)
        assert wait_gone(server)
        time.sleep(1.5)  # longer than a watch by polling the parent would take to notice
        ok, hang, crash = w.run([ok_case(1), case("hang_sleep"), case("segfault")])
        assert_ok_identity(ok, 1)
        assert hang.status == "timeout", hang
        assert crash.status == "crash", crash  # forked by a new server, status named
        assert crash.exc_type == "SIGSEGV", crash
        (after,) = w.run([ok_case(5)])
        assert_ok_identity(after, 5)
        assert w.info["forked"] is True and parent_of(w.pid) != server
    finally:
        w.close()


def test_closing_a_pool_closes_its_idle_fork_servers() -> None:
    with Pool([config()]) as pool:
        pool.start()
        server = parent_of(pool.workers["numpy"].pid)
    assert wait_gone(server)


HOST_SCRIPT = """
import sys
import numpy as np
from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import Worker, WorkerConfig
call = Call("planted_faults.hang_busy", (Ref(0),))
case = ApiCase("hang", (Tensor.from_numpy(np.zeros(1)),), (("numpy", call),))
worker = Worker(WorkerConfig("numpy", case_timeout_s=60))
worker.start()
with open(f"/proc/{worker.pid}/stat") as f:
    server = f.read().rsplit(")", 1)[1].split()[1]
print(worker.pid, server, worker.info["forked"], flush=True)
worker.run([case])
"""


def test_fork_server_and_worker_die_with_their_host() -> None:
    from executor_support import planted_env

    host = subprocess.Popen([sys.executable, "-c", HOST_SCRIPT], stdout=subprocess.PIPE,
                            text=True, env=planted_env())
    try:
        assert host.stdout is not None
        worker_pid, server_pid, forked = host.stdout.readline().split()
        assert forked == "True"
        time.sleep(0.3)  # the hanging case is running now
        host.kill()
        host.wait()
        assert wait_gone(int(server_pid), within_s=5.0)
        assert wait_gone(int(worker_pid), within_s=5.0)
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()

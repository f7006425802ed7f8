"""The sandboxed executor against real faults, with real worker processes.

Every fault a native library can commit (segfault, abort, SIGFPE, hang, huge allocation,
exit(), output flood, stray fork) must become the right Outcome for the case that caused
it and nothing else, and the rest of the batch must go on in a fresh worker. The faults
live in ``tests/planted/planted_faults.py`` and run as ordinary API targets of the numpy
backend; the worker finds them through ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib.util
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from executor_support import PLANTED, TIMEOUT_S, case, config, ok_case

from dlfuzz.cases import ApiCase, Call, DType, Outcome, Ref, Tensor
from dlfuzz.executor import host, process
from dlfuzz.executor.pool import BackendUnavailable, Pool, Worker

ABORT_MESSAGE = "planted_faults: about to abort, invariant violated"
WRAPPER_MARKER = "DLFUZZ_PLANTED_INTERPRETER"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the executor's sandbox is Linux-only")










def assert_ok_identity(outcome: Outcome, seed: int) -> None:
    assert outcome.status == "ok", outcome
    assert len(outcome.outputs) == 1
    np.testing.assert_array_equal(outcome.outputs[0].to_numpy(), np.full((3,), seed))


def pid_of(outcome: Outcome) -> int:
    assert outcome.status == "ok", outcome
    return int(outcome.outputs[0].to_numpy()[0])


def process_gone(pid: int) -> bool:
    """True once ``pid`` is dead: absent, or a zombie nobody has reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.02)
    return process_gone(pid)


def wait_exited(pid: int) -> None:
    """Until every thread of ``pid`` has exited (its descriptors closed), reaped or not:
    a zombie leader in ``/proc`` can still have threads holding its pipes. A pidfd works
    whoever the parent is (the host, or the fork server for a forked worker)."""
    fd = os.pidfd_open(pid)
    try:
        assert select.select([fd], [], [], 10.0)[0], f"process {pid} still alive after 10 s"
    finally:
        os.close(fd)


# ---- one fault, one outcome -------------------------------------------------------------

FAULTS = [
    ("segfault", "crash", "SIGSEGV"),
    ("abort", "crash", "SIGABRT"),
    ("sigfpe", "crash", "SIGFPE"),
    ("exit7", "crash", "exit(7)"),
    ("bad_alloc_abort", "oom", "SIGABRT"),
    ("allocator_warning_then_segfault", "crash", "SIGSEGV"),
    ("hang_sleep", "timeout", ""),
    ("hang_busy", "timeout", ""),
    ("allocate_50gb", "oom", "MemoryError"),
]


@pytest.mark.parametrize(("function", "status", "exc_type"), FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_fault_becomes_its_outcome_and_the_worker_still_serves(
        worker: Worker, function: str, status: str, exc_type: str) -> None:
    started = time.perf_counter()
    fault, after = worker.run([case(function), ok_case(1)])
    elapsed = time.perf_counter() - started
    assert fault.status == status, fault
    assert exc_type in fault.exc_type if status == "oom" else fault.exc_type == exc_type, fault
    assert fault.backend == "numpy"
    assert_ok_identity(after, 1)
    if status == "timeout":
        assert TIMEOUT_S * 0.9 <= fault.duration_s < TIMEOUT_S + 1.5
        assert worker.stats.timeouts == 1
    else:
        assert elapsed < TIMEOUT_S, "a death must be seen at once, not after the timeout"
    if status == "crash":
        assert fault.stage == "worker"
        assert worker.stats.crashes == 1
    # MemoryError leaves the worker alive; a death restarts it, whatever its status
    expected_restarts = 0 if exc_type == "MemoryError" else 1
    assert worker.stats.restarts == expected_restarts
    assert worker.run([ok_case(2)])[0].outputs[0].to_numpy().tolist() == [2, 2, 2]


def test_an_output_too_large_to_compare_stays_in_the_worker(worker: Worker) -> None:
    """96 MiB of output is not sent: the host would hold it per backend and widen it to
    float64 (likely why one campaign's host was killed at 21 GB). It is an exception of stage
    "fetch" that the status oracle reads as a deliberate rejection, never a finding."""
    from dlfuzz.executor.worker import MAX_OUTPUT_BYTES
    from dlfuzz.oracles.status import is_deliberate_rejection

    big, after = worker.run([case("huge_output"), ok_case(1)])
    assert (big.status, big.exc_type, big.stage, big.outputs) == (
        "exception", "OutputTooLarge", "fetch", ()), big
    assert "96 MiB (uint8[100663296])" in big.message, big.message
    assert is_deliberate_rejection(big)
    assert MAX_OUTPUT_BYTES < 96 << 20
    assert_ok_identity(after, 1)
    assert worker.stats.restarts == 0


def test_abort_message_is_in_the_log_tail(worker: Worker) -> None:
    (outcome,) = worker.run([case("abort")])
    assert outcome.exc_type == "SIGABRT"
    assert ABORT_MESSAGE in outcome.log_tail
    assert "SIGABRT" in outcome.message


def test_exit_code_is_named(worker: Worker) -> None:
    (outcome,) = worker.run([case("exit7")])
    assert outcome.status == "crash"
    assert "code 7" in outcome.message


def test_100mb_on_stdout_neither_blocks_nor_fails(worker: Worker) -> None:
    started = time.perf_counter()
    flood, after = worker.run([case("flood_stdout"), ok_case(5)])
    assert flood.status == "ok", flood
    assert time.perf_counter() - started < TIMEOUT_S
    assert_ok_identity(after, 5)
    assert worker.stats.restarts == 0
    deadline = time.monotonic() + 2.0  # the drain may run a pipe buffer behind the result
    while worker.log_bytes < 100 * 1024 * 1024 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert worker.log_bytes >= 100 * 1024 * 1024
    assert worker.log_tail().rstrip("\n").endswith("y" * 100)
    assert len(worker.log_tail()) <= 64 * 1024


# ---- the batch goes on --------------------------------------------------------------------

def test_batch_goes_on_past_crash_hang_and_oom() -> None:
    batch = [ok_case(0), case("segfault"), ok_case(2), case("hang_sleep"), ok_case(4),
             case("allocate_50gb"), ok_case(6)]
    with Pool([config()]) as pool:
        assert pool.start() == {"numpy": np.__version__}
        started = time.perf_counter()
        results = pool.run(batch)
        elapsed = time.perf_counter() - started
        assert len(results) == 7
        outcomes = [r["numpy"] for r in results]
        for i in (0, 2, 4, 6):
            assert_ok_identity(outcomes[i], i)
        assert (outcomes[1].status, outcomes[1].exc_type) == ("crash", "SIGSEGV")
        assert outcomes[3].status == "timeout"
        assert outcomes[5].status == "oom"
        assert elapsed < TIMEOUT_S + 3.0  # one timeout, no other waiting
        stats = pool.stats()["numpy"]
        assert (stats.restarts, stats.crashes, stats.timeouts, stats.cases) == (2, 1, 1, 7)
        again = pool.run([ok_case(7), case("pid")])
        assert_ok_identity(again[0]["numpy"], 7)
        assert pid_of(again[1]["numpy"]) == pool.workers["numpy"].pid


# library -> (backend, module a worker imports, the library's "ones" for the 50 GB case)
HEAVY = {"torch": ("torch", "torch", "torch.ones"),
         "jax": ("jax", "jax", "jax.numpy.ones"),
         "tf": ("tf", "tensorflow", "tensorflow.ones")}


def test_real_libraries_crash_oom_and_go_on() -> None:
    """The same batch on torch, JAX and TF workers: their allocators and signal handlers."""
    present = {lib: v for lib, v in HEAVY.items() if importlib.util.find_spec(v[1])}
    if not present:
        pytest.skip("no deep learning library installed")
    x = Tensor.from_numpy(np.arange(4, dtype=np.float32))

    def on_all(api: str, make: Callable[[str], Call]) -> ApiCase:
        libs = ("numpy", *present)
        return ApiCase(api, (x,), tuple((lib, make(lib)) for lib in libs))

    n = 50 * 1024**3
    ones = {"numpy": "numpy.ones", **{lib: v[2] for lib, v in present.items()}}
    identity = on_all("identity", lambda lib: Call("planted_faults.identity", (Ref(0),)))
    segfault = on_all("segfault", lambda lib: Call("planted_faults.segfault", (Ref(0),)))
    huge = on_all("ones", lambda lib: Call(ones[lib], ((n,),), (("dtype", DType("uint8")),)))
    names = ["numpy", *(v[0] for v in present.values())]
    with Pool([config(name, case_timeout_s=30.0) for name in names]) as pool:
        assert set(pool.start()) == set(names), pool.unavailable
        # The crash comes last: restarting TF and torch costs seconds, and going on after
        # a crash is what the numpy tests prove.
        results = pool.run([identity, huge, identity, segfault])
        for name in names:
            got = [r[name] for r in results]
            for outcome in (got[0], got[2]):
                assert outcome.status == "ok", outcome
                np.testing.assert_array_equal(outcome.outputs[0].to_numpy(), x.to_numpy())
            assert got[1].status == "oom", got[1]
            assert (got[3].status, got[3].exc_type) == ("crash", "SIGSEGV"), got[3]
            assert pool.stats()[name].restarts == 0


@pytest.mark.parametrize("fault,status", [("hang_sleep", "timeout"), ("segfault", "crash")])
def test_a_signature_that_killed_the_worker_twice_is_not_run_again_in_the_batch(
        fault: str, status: str) -> None:
    """Two hangs (or crashes) of one signature, then its later cases of the batch are
    left out (no outcome at all: nothing is claimed about a case that never ran); other
    signatures, before and after, still run."""
    batch = [ok_case(0), *(case(fault) for _ in range(5)), ok_case(6)]
    with Pool([config(case_timeout_s=1.0)]) as pool:
        pool.start()
        results = pool.run(batch)
        assert "numpy" in results[0] and "numpy" in results[6]
        assert_ok_identity(results[6]["numpy"], 6)
        assert [r["numpy"].status for r in results[1:3]] == [status, status]
        assert all("numpy" not in r for r in results[3:6])
        assert pool.stats()["numpy"].restarts == 2


def test_an_api_that_killed_the_worker_three_times_is_not_run_again_in_the_batch() -> None:
    """Deaths are also counted per API: five crashing cases of one API, each its own
    signature (another shape: as a scalar argument such as ``rfftfreq``'s ``n`` makes
    each case one), and after three deaths its later cases of the batch are left out;
    another API still runs after them."""
    crashes = [case("segfault", np.zeros((n + 1,), np.float32)) for n in range(5)]
    batch = [ok_case(0), *crashes, ok_case(6)]
    with Pool([config(case_timeout_s=5.0)]) as pool:
        pool.start()
        results = pool.run(batch)
        assert [r["numpy"].status for r in results[1:4]] == ["crash"] * 3
        assert all("numpy" not in r for r in results[4:6])
        assert_ok_identity(results[6]["numpy"], 6)
        assert pool.stats()["numpy"].restarts == 3


def test_after_an_api_hung_its_other_signatures_get_a_shorter_limit() -> None:
    """An API that hung once in a batch is given 0.3 of the limit for its later cases of
    other signatures (a tenth is for the same signature): each still runs, and a hang
    there is still observed, at a third of the cost."""
    hangs = [case("hang_sleep", np.zeros((n,), np.float32)) for n in (1, 2)]
    with Pool([config(case_timeout_s=5.0)]) as pool:
        pool.start()
        first, second, ok = (r["numpy"] for r in pool.run([*hangs, ok_case(3)]))
        assert first.status == second.status == "timeout"
        assert first.duration_s >= 5.0 * 0.95, first.duration_s
        assert 1.5 * 0.9 <= second.duration_s < 3.0, second.duration_s
        assert_ok_identity(ok, 3)


def test_a_campaign_worker_cuts_a_case_at_its_first_limit_and_triage_gets_the_full_one(
        ) -> None:
    """``first_limit_share``: a campaign's worker gives each case that share of the limit
    (never under 3 s), so a hang holds the batch half as long; a case that ends within
    it is untouched, and triage's fresh workers have the full limit."""
    with Pool([config(case_timeout_s=8.0, first_limit_share=0.5)]) as pool:
        pool.start()
        hung, ok = (r["numpy"] for r in pool.run([case("hang_sleep",
                                                       np.zeros((1,), np.float32)),
                                                  case("sleep_seconds", np.array([2.5]))]))
        assert hung.status == "timeout" and hung.message == "no result within 4.0 s"
        assert 4.0 * 0.95 <= hung.duration_s < 6.0, hung.duration_s
        assert ok.status == "ok", ok
        fresh = pool.fresh_worker("numpy")
        try:
            assert fresh.first_limit == fresh.case_timeout == pytest.approx(8.0)
            again = fresh.run([case("hang_sleep", np.zeros((1,), np.float32))])[0]
            assert again.message == "no result within 8.0 s"
        finally:
            fresh.close()
    floor = Worker(config(case_timeout_s=4.0, first_limit_share=0.5))
    assert floor.first_limit == pytest.approx(3.0)  # 2 s would be under the floor


def test_fresh_workers_come_from_a_spare_started_in_the_background() -> None:
    """Triage's fresh workers: the first is started on demand, and a spare starts at
    once for the next request; the spare has run nothing, is handed out with the pool's
    stop signal, and close() leaves no spare process behind."""
    with Pool([config()]) as pool:
        pool.start()
        first = pool.fresh_worker("numpy")
        spare, _ = pool._spares["numpy"]
        second = pool.fresh_worker("numpy")
        assert second is spare and second is not first
        assert second.stats.cases == 0 and second.stop_signal is pool.stop
        assert second.stats.start_s > 0
        assert pid_of(second.run([case("pid")])[0]) == second.pid
        slow = pool.fresh_worker("numpy", timeout_factor=4.0)  # never a spare
        assert slow.case_timeout == pytest.approx(4 * TIMEOUT_S)
        third_spare, _ = pool._spares["numpy"]
        for w in (first, second, slow):
            w.close()
    assert not third_spare.alive()


def test_timeout_is_per_case_not_per_batch() -> None:
    slow = [case("sleep_seconds", np.array([0.6])) for _ in range(3)]
    w = Worker(config(case_timeout_s=1.0))
    try:
        w.start()
        outcomes = w.run(slow)
        assert [o.status for o in outcomes] == ["ok"] * 3
        assert w.stats.restarts == 0
    finally:
        w.close()


def test_case_timeout_factor_of_the_backend_applies() -> None:
    w = Worker(config("planted_backends:SlowFactor", case_timeout_s=0.6))
    try:
        w.start()
        assert w.case_timeout == pytest.approx(1.2)
        (outcome,) = w.run([case("sleep_seconds", np.array([0.8]))])
        assert outcome.status == "ok", outcome
    finally:
        w.close()


# ---- processes a library leaves behind ----------------------------------------------------

def test_fork_holding_the_pipes_does_not_hide_a_crash(tmp_path: Path) -> None:
    w = Worker(config(scratch=str(tmp_path)))
    try:
        w.start()
        started = time.perf_counter()
        crash, after = w.run([case("fork_then_segfault"), ok_case(1)])
        assert time.perf_counter() - started < TIMEOUT_S
        assert (crash.status, crash.exc_type) == ("crash", "SIGSEGV")
        assert_ok_identity(after, 1)
        child = int((tmp_path / "forked_child.pid").read_text())
        assert wait_gone(child), "the forked child must die with its worker"
    finally:
        w.close()


def test_death_is_seen_without_pidfds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    """Old kernels and other systems have no pidfd: polling ``waitid`` must do as well."""
    monkeypatch.setattr(process, "_pidfd_open", lambda pid: -1)
    w = Worker(config(scratch=str(tmp_path)))
    try:
        w.start()
        started = time.perf_counter()
        outcomes = w.run([ok_case(0), case("fork_then_segfault"), ok_case(2), case("hang_sleep")])
        assert time.perf_counter() - started < 2 * TIMEOUT_S
        assert_ok_identity(outcomes[0], 0)
        assert (outcomes[1].status, outcomes[1].exc_type) == ("crash", "SIGSEGV")
        assert_ok_identity(outcomes[2], 2)
        assert outcomes[3].status == "timeout"
    finally:
        w.close()


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    w = Worker(config(scratch=str(tmp_path)))
    try:
        w.start()
        (hang,) = w.run([case("fork_then_hang")])
        assert hang.status == "timeout"
        child = int((tmp_path / "forked_child.pid").read_text())
        assert wait_gone(child)
    finally:
        w.close()


def test_fork_returning_into_the_worker_answers_once(worker: Worker) -> None:
    outcomes = worker.run([case("fork_and_return"), ok_case(1), ok_case(2)])
    assert [o.status for o in outcomes] == ["ok"] * 3
    assert_ok_identity(outcomes[2], 2)
    assert worker.stats.restarts == 0
    assert_ok_identity(worker.run([ok_case(3)])[0], 3)


def test_garbage_in_the_result_pipe_is_a_crash_of_that_case(worker: Worker) -> None:
    started = time.perf_counter()
    outcomes = worker.run([ok_case(0), case("corrupt_protocol"), ok_case(2)])
    assert time.perf_counter() - started < TIMEOUT_S
    assert_ok_identity(outcomes[0], 0)
    assert (outcomes[1].status, outcomes[1].exc_type) == ("crash", "protocol")
    assert_ok_identity(outcomes[2], 2)


def test_lingering_thread_does_not_block_stop(worker: Worker) -> None:
    (outcome,) = worker.run([case("linger_thread")])
    assert outcome.status == "ok"
    pid = worker.pid
    started = time.perf_counter()
    worker.stop()
    assert time.perf_counter() - started < 3.0
    assert wait_gone(pid)


HOST_SCRIPT = """
import sys
import numpy as np
from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor import process
from dlfuzz.executor.pool import Worker, WorkerConfig
call = Call("planted_faults.hang_busy", (Ref(0),))
case = ApiCase("hang", (Tensor.from_numpy(np.zeros(1)),), (("numpy", call),))
worker = Worker(WorkerConfig("numpy", case_timeout_s=60, scratch=sys.argv[1]))
worker.start()
print(worker.pid, flush=True)
worker.run([case])
"""


def test_worker_dies_with_its_host(tmp_path: Path) -> None:
    """A host killed with SIGKILL must not leave a worker spinning forever."""
    host = subprocess.Popen([sys.executable, "-c", HOST_SCRIPT, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        worker_pid = int(host.stdout.readline())
        time.sleep(0.3)  # the hanging case is running now
        host.kill()
        host.wait()
        assert wait_gone(worker_pid, within_s=5.0)
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()


# ---- worker life cycle --------------------------------------------------------------------

def test_worker_killed_between_batches_blames_no_case(worker: Worker) -> None:
    pid = worker.pid
    os.kill(pid, signal.SIGKILL)
    wait_exited(pid)  # dead, not yet reaped (by the host or by the fork server)
    outcomes = worker.run([ok_case(1), ok_case(2)])
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert worker.stats.crashes == 0
    assert (worker.stats.restarts, worker.stats.idle_deaths) == (1, 1)
    assert worker.pid != pid


def test_broken_pipe_on_send_restarts_and_resends(worker: Worker,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker dies after the liveness check and before the batch is written."""
    pid = worker.pid
    os.kill(pid, signal.SIGKILL)
    wait_exited(pid)
    monkeypatch.setattr(worker, "alive", lambda: True)  # lose the race on purpose, once
    outcomes = worker.run([ok_case(1), ok_case(2)])
    monkeypatch.undo()
    assert [o.status for o in outcomes] == ["ok", "ok"], outcomes
    assert worker.stats.crashes == 0
    assert (worker.stats.restarts, worker.stats.idle_deaths) == (1, 1)
    assert worker.pid != pid


def test_restart_every(tmp_path: Path) -> None:
    w = Worker(config(restart_every=3))
    try:
        w.start()
        pids = [pid_of(o) for o in w.run([case("pid") for _ in range(7)])]
        assert pids[0] == pids[1] == pids[2] != pids[3]
        assert pids[3] == pids[4] == pids[5] != pids[6]
        assert w.stats.restarts == 2
        assert len(set(pids)) == 3
    finally:
        w.close()


def test_isolate_runs_in_a_fresh_worker() -> None:
    with Pool([config()]) as pool:
        pool.start()
        resident = pid_of(pool.run([case("pid")])[0]["numpy"])
        isolated = pool.isolate(case("pid"), ["numpy"])["numpy"]
        assert pid_of(isolated) != resident
        crash = pool.isolate(case("segfault"), ["numpy"])["numpy"]
        assert crash.exc_type == "SIGSEGV"
        assert pid_of(pool.run([case("pid")])[0]["numpy"]) == resident
        assert pool.stats()["numpy"].restarts == 0


def test_explicit_interpreter_is_used(tmp_path: Path) -> None:
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\nexport {WRAPPER_MARKER}=via-wrapper\n'
                       f'exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    w = Worker(config(python=str(wrapper)))
    try:
        w.start()
        (outcome,) = w.run([case("interpreter")])
        executable, marker = outcome.outputs[0].to_numpy().tobytes().decode().split("\n")
        assert marker == "via-wrapper"
        assert Path(executable).resolve() == Path(sys.executable).resolve()
    finally:
        w.close()


def test_relative_pythonpath_means_the_hosts_directory(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Workers run in a scratch directory; ``PYTHONPATH=planted`` must still find it."""
    monkeypatch.chdir(PLANTED.parent)
    monkeypatch.setenv("PYTHONPATH", PLANTED.name)
    w = Worker(config())
    try:
        w.start()
        assert_ok_identity(w.run([ok_case(1)])[0], 1)
    finally:
        w.close()


def test_third_party_backend_by_import_string() -> None:
    name = "planted_backends:OtherNumpy"
    with Pool([config(name), config()]) as pool:
        versions = pool.start()
        assert versions[name] == "other-" + np.__version__
        results = pool.run([ok_case(3), case("segfault")])
        assert_ok_identity(results[0][name], 3)
        assert results[0][name].backend == name  # outcomes are named as the pool names them
        assert results[1][name].exc_type == results[1]["numpy"].exc_type == "SIGSEGV"
        only = pool.run([ok_case(4)], only=[name])
        assert set(only[0]) == {name}


def test_backend_whose_library_is_missing_is_unavailable() -> None:
    name = "planted_backends:MissingLibrary"
    with pytest.raises(BackendUnavailable) as info:
        Worker(config(name)).start()
    assert info.value.backend == name
    assert "No module named 'dlfuzz_planted_missing_library'" in info.value.reason
    with Pool([config(name), config()]) as pool:
        assert set(pool.start()) == {"numpy"}
        assert "dlfuzz_planted_missing_library" in pool.unavailable[name]
        assert set(pool.run([ok_case(1)])[0]) == {"numpy"}


def test_missing_interpreter_or_module_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="cannot start"):
        Worker(config(python=str(tmp_path / "no-python"))).start()
    with pytest.raises(BackendUnavailable, match="no_such_module"):
        Worker(config("no_such_module:Backend")).start()


def test_no_descriptor_or_thread_leak_across_restarts(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    # Ten deaths of one API are the point here: no skipping after its third.
    monkeypatch.setattr(host, "_API_DEATHS_BEFORE_SKIP", 100)
    w = Worker(config(restart_every=1))
    w.start()
    w.run([ok_case(0)])
    before_fds, before_threads = fds(), threading.active_count()
    # Ten segfaults of ten signatures: one signature would be skipped after two deaths.
    segfaults = [case("segfault", np.arange(i + 1, dtype=np.float32)) for i in range(10)]
    outcomes = w.run([case("pid") for _ in range(10)] + segfaults + [ok_case(1)])
    assert len({pid_of(o) for o in outcomes[:10]}) == 10
    assert {o.exc_type for o in outcomes[10:20]} == {"SIGSEGV"}
    assert_ok_identity(outcomes[20], 1)
    assert w.stats.restarts >= 20
    assert fds() == before_fds
    assert threading.active_count() == before_threads
    w.close()
    assert fds() < before_fds
    time.sleep(0.1)
    assert threading.active_count() < before_threads


def test_at_least_1000_small_cases_per_second(worker: Worker) -> None:
    batch = [ok_case(i) for i in range(3000)]
    worker.run(batch[:100])  # warm
    started = time.perf_counter()
    outcomes = worker.run(batch)
    rate = len(batch) / (time.perf_counter() - started)
    assert all(o.ok for o in outcomes)
    assert rate >= 1000, f"{rate:.0f} cases/s"

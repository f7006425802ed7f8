"""A backend on several worker processes (``WorkerConfig.replicas``), with real workers.

What must hold: every case gets its outcome exactly as with one process, all cases of a
signature in a batch run in one process, the work spreads over the processes, a process
out of work takes over another's queue, and a fault in one process stays that case's
outcome.
"""

from __future__ import annotations

import numpy as np
from executor_support import case, config

from dlfuzz.campaign import processes_of
from dlfuzz.cases import ApiCase
from dlfuzz.executor.pool import Pool


def pid_cases(signatures: int, per_signature: int, first: int = 1) -> list[ApiCase]:
    """``planted_faults.pid_after_sleep`` over ``signatures`` input shapes (lengths from
    ``first``), grouped as the engine groups them: the answer is the process that ran the
    case. Each takes 20 ms, so a batch outlasts a thread's start on a loaded machine."""
    return [case("pid_after_sleep", np.full((s + first,), 0.02, dtype=np.float32))
            for s in range(signatures) for _ in range(per_signature)]


def pids(results: list[dict]) -> list[int]:
    out = []
    for r in results:
        assert r["numpy"].status == "ok", r["numpy"]
        out.append(int(r["numpy"].outputs[0].to_numpy()[0]))
    return out


def test_signatures_stay_in_one_process_and_both_processes_work() -> None:
    cases = pid_cases(signatures=12, per_signature=4)
    with Pool([config(replicas=2)]) as pool:
        pool.start()
        assert len(pool.replicas["numpy"]) == 1
        first = pids(pool.run(cases))
        again = pids(pool.run(cases))
        assert pool.stats()["numpy"].cases == 2 * len(cases)
    by_signature = [set(first[i:i + 4]) for i in range(0, len(first), 4)]
    assert all(len(s) == 1 for s in by_signature), by_signature
    assert len(set(first)) == 2, "the second process never ran a case"
    # In the next batch too a signature's cases run together. Which process runs them
    # (where it was compiled, unless the other process runs out of work and takes the
    # chunk) depends on timing here; tests/unit/test_replicas_shares.py checks the queues.
    again_by = [set(again[i:i + 4]) for i in range(0, len(again), 4)]
    assert all(len(s) == 1 for s in again_by), again_by


def test_outcomes_are_those_of_one_process() -> None:
    rng = np.random.default_rng(0)
    cases = [case("identity", rng.standard_normal((k % 5 + 1, 3)).astype(np.float32))
             for k in range(40)]
    with Pool([config()]) as one, Pool([config(replicas=2)]) as two:
        one.start()
        two.start()
        a, b = one.run(cases), two.run(cases)
    for x, y in zip(a, b, strict=True):
        assert x["numpy"].status == y["numpy"].status == "ok"
        np.testing.assert_array_equal(x["numpy"].outputs[0].to_numpy(),
                                      y["numpy"].outputs[0].to_numpy())


def test_a_crash_in_one_process_is_that_case_s_outcome_and_both_go_on() -> None:
    cases = [*pid_cases(signatures=6, per_signature=2),
             case("segfault", np.zeros((9, 9), dtype=np.float32)),
             *pid_cases(signatures=6, per_signature=2)]
    with Pool([config(replicas=2)]) as pool:
        pool.start()
        results = pool.run(cases)
        assert results[12]["numpy"].status == "crash"
        assert "SIGSEGV" in results[12]["numpy"].message
        others = pids(results[:12] + results[13:])
        assert len(pool.replicas["numpy"]) == 1  # restarted, not dropped
        after = pids(pool.run(pid_cases(signatures=6, per_signature=2, first=50)))
    # both processes ran cases (the one that crashed, before and after its restart)
    assert len(set(others)) >= 2 and len(set(after)) == 2


def test_a_slow_signature_does_not_hold_the_other_process_idle() -> None:
    """The queue of the process stuck in a slow case is taken over by the other one."""
    slow = case("sleep_seconds", np.full((1,), 2.5, dtype=np.float32))
    cases = [slow, *pid_cases(signatures=10, per_signature=2)]
    with Pool([config(replicas=2, case_timeout_s=10.0)]) as pool:
        pool.start()
        results = pool.run(cases)
    assert results[0]["numpy"].status == "ok"
    ran = pids(results[1:])
    # whichever process took the slow case, the other ran every pid case queued behind it
    assert len(set(ran)) == 1, ran


def test_only_backends_that_compile_every_signature_get_more_processes() -> None:
    assert processes_of("numpy", 0) == 1 and processes_of("torch", 0) == 1
    assert processes_of("tf", 0) == 1
    assert processes_of("jax", 0) == 2 and processes_of("tf-xla", 0) == 2
    assert processes_of("jax", 1) == 1 and processes_of("torch-compile", 3) == 3


def test_a_lost_first_process_hands_the_backend_to_the_other() -> None:
    """The first process of a backend can no longer start (its interpreter is gone):
    the backend goes on in its other process, which runs the lost process's cases too,
    rather than dropping out (``Pool._drop_processes``). On Ray the same happens when an
    actor cannot come back."""
    from dataclasses import replace

    cases = pid_cases(signatures=8, per_signature=2)
    with Pool([config(replicas=2)]) as pool:
        pool.start()
        first = pool.workers["numpy"]
        other = pool.replicas["numpy"][0]
        first.config = replace(first.config, python="/nonexistent/python3")
        first.kill()
        first.stop()
        results = pool.run(cases)
        assert pool.unavailable == {}
        assert pool.workers["numpy"] is other and "numpy" not in pool.replicas
        assert set(pids(results)) == {other.pid}
        assert len(pids(pool.run(cases))) == len(cases)

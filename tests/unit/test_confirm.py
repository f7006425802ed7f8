"""Confirmation under the detection's conditions (triage/confirm.py), with real workers.

numpy runs planted faults (``planted_faults``: a crash that needs an earlier case's
leftovers, a real segfault, calls that sleep); torch carries a wrong ``cumsum`` that only
shows inside a dlfuzz worker (``planted_torch_cumsum_in_worker``), so its standalone
reproducer says OK. Bugs are stored in a real campaign Store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from real_workers import COMPILED, LIBRARY_OF, PLANTED, make_judge

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.cases import ApiCase, Call, Finding, Outcome, Ref, Tensor
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.oracles.differential import DifferentialOracle
from dlfuzz.store.db import Store
from dlfuzz.triage.confirm import (
    FreshRerun,
    confirm,
    invalid_program,
    judge_reproducer,
    rerun_in_pool,
    run_reproducer,
)
from dlfuzz.triage.triager import Triage, TriageSettings

TIMEOUT_S = 4.0


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with pytest.MonkeyPatch.context() as mp:
        old = os.environ.get("PYTHONPATH", "")
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))
        p = Pool([WorkerConfig("numpy", case_timeout_s=TIMEOUT_S, start_timeout_s=120.0),
                  WorkerConfig("torch", case_timeout_s=20.0, start_timeout_s=120.0,
                               preload=("planted_torch_cumsum_in_worker",))])
        try:
            assert set(p.start()) == {"numpy", "torch"}, p.unavailable
            yield p
        finally:
            p.close()


class Harness:
    """What a campaign hands triage: every oracle over a case's outcomes."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.judge, _ = make_judge(pool)
        self.ctx = OracleContext(self.judge, LIBRARY_OF, COMPILED)
        self.oracles = (CrashOracle(), DifferentialOracle())

    def judge_cases(self, items: list[tuple[Any, dict[str, Outcome]]]) -> list[list[Finding]]:
        found: list[list[Finding]] = [[] for _ in items]
        for oracle in self.oracles:
            for i, fs in enumerate(oracle.check_many(items, self.ctx)):
                found[i].extend(fs)
        return found

    def check(self, cases: Sequence[ApiCase], only: Sequence[str]
              ) -> list[tuple[dict[str, Outcome], list[Finding]]]:
        results = self.pool.run(cases, only=only)
        return list(zip(results, self.judge_cases(list(zip(cases, results, strict=True))),
                        strict=True))

    def triage(self, store: Store, fresh: bool = True) -> Triage:
        from dlfuzz.backends.torch_backend import TorchBackend

        rerun = FreshRerun(self.pool, self.judge_cases)
        return Triage(store, self.check, self.judge,
                      {"numpy": NumpyBackend(), "torch": TorchBackend()}, {},
                      {"numpy": False, "torch": False}, TriageSettings(reduce=False),
                      rerun=rerun if fresh else None,
                      reproduce=rerun.reproduce if fresh else None)


@pytest.fixture
def harness(pool: Pool) -> Harness:
    return Harness(pool)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.create(tmp_path / "campaign", {"test": True})
    yield s
    s.close()


def fault_case(fault: str, x: np.ndarray | None = None) -> ApiCase:
    x = np.arange(4, dtype=np.float32) if x is None else x
    return ApiCase(f"planted.{fault}", (Tensor.from_numpy(x),),
                   (("numpy", Call(f"planted_faults.{fault}", (Ref(0),))),
                    ("torch", Call("torch.clone", (Ref(0),)))))


def only_finding(found: list[Finding], symptom: str) -> Finding:
    hits = [f for f in found if f.symptom == symptom]
    assert len(hits) == 1, found
    return hits[0]


# ---- a fresh worker -----------------------------------------------------------------------

def test_a_crash_caused_by_an_earlier_case_is_not_confirmed(harness: Harness, store: Store):
    """The earlier case left a file in the worker's directory, which the pool's worker
    keeps across restarts: re-running in the pool would crash again, a fresh worker not."""
    poisoned = fault_case("segfault_if_poisoned")
    (_, _), (outcomes, found) = harness.check([fault_case("poison"), poisoned],
                                              ["numpy", "torch"])
    assert outcomes["numpy"].status == "crash"
    crash = only_finding(found, "crash")
    # The pool's own worker still carries the leftover: an in-pool re-run is fooled.
    fooled = confirm(crash, poisoned, ["numpy", "torch"], 2, rerun_in_pool(harness.check))
    assert fooled.status == "confirmed"
    bug_id, new = harness.triage(store).handle(crash, poisoned)
    row = store.bug(bug_id)
    assert new and row is not None
    assert (row.status, row.confirm_hits) == ("flaky", 0)
    assert row.dir is None  # no folder, no reproducer: never listed as a bug


def test_a_real_crash_is_confirmed_and_its_reproducer_crashes(harness: Harness, store: Store):
    case = fault_case("segfault")
    (outcomes, found), = harness.check([case], ["numpy", "torch"])
    crash = only_finding(found, "crash")
    triage = harness.triage(store)
    bug_id, _ = triage.handle(crash, case)
    assert "reproducer" not in store.bug(bug_id).details  # the check runs meanwhile
    assert triage.collect(wait=True) == 0
    row = store.bug(bug_id)
    assert row is not None and row.status == "confirmed", row
    assert row.confirm_hits == 2
    assert row.details["reproducer"]["reproduced"] is True
    assert "SIGSEGV" in row.details["reproducer"]["verdict"]


# ---- the detection's limits -----------------------------------------------------------------

def test_timeouts_are_confirmed_with_the_detections_full_limit(harness: Harness):
    """A batch gives later cases of a signature that hung a tenth of the limit: a 2 s
    call then 'times out' at 1 s. Confirmation gives each re-run the whole limit, so the
    slow call is not a hang, and a real hang waits the whole limit every time."""
    hang = fault_case("sleep_first", np.array([600, 0], np.float32))
    slow = fault_case("sleep_first", np.array([2, 0], np.float32))
    (o_hang, f_hang), (o_slow, f_slow) = harness.check([hang, slow], ["numpy", "torch"])
    assert o_hang["numpy"].status == o_slow["numpy"].status == "timeout"
    assert o_slow["numpy"].duration_s < TIMEOUT_S  # detection cut it short

    runs: list[Outcome] = []
    fresh = FreshRerun(harness.pool, harness.judge_cases)

    def recording(case: Any, needed: Sequence[str], guilty: str
                  ) -> tuple[dict[str, Outcome], list[Finding]]:
        outcomes, found = fresh(case, needed, guilty)
        runs.append(outcomes[guilty])
        return outcomes, found

    slow_c = confirm(only_finding(f_slow, "timeout"), slow, ["numpy", "torch"], 2, recording)
    assert slow_c.status == "flaky" and [o.status for o in runs] == ["ok", "ok"]
    runs.clear()
    hang_c = confirm(only_finding(f_hang, "timeout"), hang, ["numpy", "torch"], 2, recording)
    assert hang_c.status == "confirmed"
    assert [o.status for o in runs] == ["timeout", "timeout"]
    assert all(o.duration_s >= TIMEOUT_S * 0.95 for o in runs), [o.duration_s for o in runs]


def test_a_timeout_that_ends_within_a_few_limits_is_slow_not_a_hang(harness: Harness):
    """A call of 1.5 limits times out on every re-run at the detection's limit, yet it
    ends: a slow run (a large network training on a loaded machine), not a hang."""
    slow = fault_case("sleep_first", np.array([TIMEOUT_S * 1.5, 0], np.float32))
    ((_, found),) = harness.check([slow], ["numpy", "torch"])
    fresh = FreshRerun(harness.pool, harness.judge_cases)
    c = confirm(only_finding(found, "timeout"), slow, ["numpy", "torch"], 2, fresh)
    assert c.status == "slow", c
    assert "not a hang" in c.note


def test_a_real_hang_still_runs_after_several_limits():
    hang = fault_case("sleep_first", np.array([600, 0], np.float32))
    with pytest.MonkeyPatch.context() as mp:
        old = os.environ.get("PYTHONPATH", "")
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))
        pool = Pool([WorkerConfig("numpy", case_timeout_s=1.0, start_timeout_s=120.0)])
        try:
            pool.start()
            hangs, seconds = FreshRerun(pool, lambda items: [[] for _ in items]).still_hangs(
                hang, "numpy", factor=2.0)
        finally:
            pool.close()
    assert hangs and seconds >= 2.0 * 0.95


def test_triage_checks_a_hang_for_a_slow_run_in_the_background(harness: Harness,
                                                                 tmp_path: Path):
    """In a campaign the slow-run check (four limits in a fresh worker) runs beside the
    fuzzing, before the reproducer: the bug is confirmed by its re-run at the limit and
    the check's verdict comes with the reproducer's. A call of 1.5 limits becomes
    ``slow``; a real hang stays confirmed, its check and its reproducer recorded. (A
    store each: both are one root cause, a hang of the same API.)"""
    slow = fault_case("sleep_first", np.array([TIMEOUT_S * 1.5, 0], np.float32))
    hang = fault_case("sleep_first", np.array([600, 0], np.float32))
    handled = []
    for name, case in (("slow", slow), ("hang", hang)):
        store = Store.create(tmp_path / name, {"test": True})
        triage = harness.triage(store)
        ((_, found),) = harness.check([case], ["numpy", "torch"])
        bug_id, new = triage.handle(only_finding(found, "timeout"), case)
        row = store.bug(bug_id)
        assert new and row is not None
        # Handed back before the check: confirmed by the re-run at the limit alone.
        assert (row.status, row.confirm_hits) == ("confirmed", 1), row
        assert row.details["hang_check"] == "pending"
        handled.append((store, triage, bug_id))
    rows = []
    for store, triage, bug_id in handled:
        assert triage.collect(wait=True) == 0
        rows.append(store.bug(bug_id))
        store.close()
    slow_row, hang_row = rows
    assert slow_row is not None and hang_row is not None
    assert slow_row.status == "slow", slow_row.details
    assert "not a hang" in slow_row.details["not_confirmed"]
    assert "reproducer" not in slow_row.details  # a slow run gets no reproducer run
    assert (hang_row.status, hang_row.confirm_hits) == ("confirmed", 2), hang_row.details
    assert hang_row.details["hang_check"].startswith("still running after")
    assert hang_row.details["reproducer"]["reproduced"] is True


# ---- the standalone reproducer -------------------------------------------------------------

def test_a_bug_whose_reproducer_does_not_fail_is_unreproduced(harness: Harness, store: Store):
    x = np.random.default_rng(3).uniform(-1, 1, (2, 5)).astype(np.float32)
    case = ApiCase("cumsum", (Tensor.from_numpy(x),),
                   (("numpy", Call("numpy.cumsum", (Ref(0),), (("axis", -1),))),
                    ("torch", Call("torch.cumsum", (Ref(0),), (("dim", -1),)))))
    (_, found), = harness.check([case], ["numpy", "torch"])
    wrong = [f for f in found if f.guilty_backend == "torch"]
    assert wrong, found
    triage = harness.triage(store)
    bug_id, _ = triage.handle(wrong[0], case)
    triage.collect(wait=True)
    row = store.bug(bug_id)
    assert row is not None
    assert row.confirm_hits == 2  # every re-run in a (fresh) worker shows it
    assert row.status == "unreproduced", row.details
    assert row.details["reproducer"]["verdict"].startswith("OK"), row.details
    assert store.bugs("confirmed") == []


def test_reproducer_verdicts() -> None:
    bug = "BUG present: f output 0: 1 of 4 elements off"
    assert judge_reproducer("numeric", 1, f"x\n{bug}\n", "", 10).reproduced is True
    assert judge_reproducer("numeric", 0, "OK: f matches\n", "", 10).reproduced is False
    broken = "Traceback (most recent call last):\n  ...\nImportError: no module named q\n"
    said = judge_reproducer("numeric", 1, "", broken, 10)
    assert said.reproduced is False and "ImportError" in said.verdict
    assert judge_reproducer("crash", -11, "", "", 10).reproduced is True
    assert judge_reproducer("numeric", -11, "", "", 10).reproduced is False
    assert judge_reproducer("timeout", None, "", "", 10).reproduced is True
    assert judge_reproducer("crash", None, "", "", 10).reproduced is False  # hung instead
    assert judge_reproducer("timeout", -14, "", "", 10).reproduced is True  # its alarm


# ---- programs that are themselves invalid ------------------------------------------------

def test_a_program_failing_everywhere_the_same_way_is_invalid() -> None:
    program = SimpleNamespace(kind="program")

    def exc(backend: str, exc_type: str, message: str) -> Outcome:
        return Outcome(backend, "exception", exc_type=exc_type, message=message)

    same = {b: exc(b, "ValueError", f"Input 0 of layer dense_{i} is incompatible")
            for i, b in enumerate(("keras-tf", "keras-jax", "keras-torch"))}
    assert invalid_program(program, same)
    own = {"keras-tf": exc("keras-tf", "NameError", "name 'layer_3' is not defined"),
           "keras-jax": Outcome("keras-jax", "ok")}
    assert "NameError" in invalid_program(program, own)
    lstm = {"torch": exc("torch", "AttributeError", "'tuple' object has no attribute 'flatten'")}
    assert "AttributeError" in invalid_program(program, lstm)
    library_attr = {"torch": exc("torch", "AttributeError",
                                 "'Tensor' object has no attribute 'flatten'")}
    assert invalid_program(program, library_attr) == ""  # a library object: maybe its bug
    runs_elsewhere = {**lstm, "keras-torch": Outcome("keras-torch", "ok")}
    assert invalid_program(program, runs_elsewhere) == ""  # valid where another runs it
    one = {"keras-tf": exc("keras-tf", "ValueError", "bad"),
           "keras-jax": Outcome("keras-jax", "ok")}
    assert invalid_program(program, one) == ""  # one backend alone: maybe its bug
    assert invalid_program(SimpleNamespace(kind="api"), same) == ""


def test_the_reproducer_runs_from_a_relative_campaign_folder(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch):
    """``dlfuzz run --out camp`` stores bug folders relative to the working directory."""
    folder = tmp_path / "camp" / "bugs" / "b1"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text('{"repro": {"numpy": "repro_numpy.py"}}')
    (folder / "repro_numpy.py").write_text(
        "import sys\nprint('BUG present: planted')\nsys.exit(1)\n")
    monkeypatch.chdir(tmp_path)
    check = run_reproducer(Path("camp/bugs/b1"), "numpy", "numeric",
                           WorkerConfig("numpy"), 5.0)
    assert check.reproduced is True and check.verdict == "BUG present: planted", check


def test_a_hang_cut_short_in_detection_is_filed_with_the_full_limit_of_its_rerun() -> None:
    """A campaign's worker cuts a case at a share of the limit (``first_limit_share``);
    the confirming re-run has the full limit, and the bug says that one: a report of
    "no result within 5.0 s" would understate a hang that ran past 10 s in triage."""
    from dataclasses import replace

    from dlfuzz.oracles.base import finding
    from dlfuzz.triage.triager import _confirmed_message

    case = fault_case("sleep_first", np.array([600, 0], np.float32))
    cut = finding("crash", "timeout", case, "numpy", "call", "no result within 5.0 s",
                  "timeout")
    rerun = {"numpy": Outcome(backend="numpy", status="timeout", stage="call",
                              message="no result within 10.0 s"),
             "torch": Outcome(backend="torch", status="ok")}
    assert _confirmed_message(cut, rerun) == "no result within 10.0 s"
    assert _confirmed_message(cut, None) == "no result within 5.0 s"
    crash = replace(cut, symptom="crash", message="SIGSEGV")
    assert _confirmed_message(crash, rerun) == "SIGSEGV"

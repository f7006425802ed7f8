"""Triage through the case-kind protocol: confirmation by re-running, flakiness, dedup,
bug folders with runnable reproducers and the kind's report section, and reduction
through the case's kind, with one library (numpy) and planted misbehaving functions.

Cases run in real numpy workers (the executor Pool); a small module written into the
test's directory supplies library functions that misbehave on purpose (workers import it
through PYTHONPATH, as the e2e tests import tests/planted). The store is a real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.cases import ApiCase, Call, Finding, Outcome, Ref, Tensor, kind_of
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.kinds.api import ApiKind
from dlfuzz.oracles.base import Oracle, OracleContext, finding
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.oracles.reference import Judge
from dlfuzz.report.html import write_report
from dlfuzz.store.db import Store
from dlfuzz.triage.triager import Triage, TriageSettings, bug_id_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the executor's sandbox is Linux-only")

PLANTED = textwrap.dedent('''
    """Library functions for the triage tests (imported by numpy workers)."""
    import ctypes
    import os

    import numpy as np

    COUNTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt")


    def fails_when_large(x):
        """An internal error while the input has several elements and one beyond +-1."""
        if x.size > 1 and np.any(np.abs(x) > 1):
            raise RuntimeError("internal error: a large value")
        return x


    def fails_every_other_call(x):
        """Raises on odd calls (counted in a file), returns on even ones: flaky."""
        n = int(open(COUNTER).read()) if os.path.exists(COUNTER) else 0
        with open(COUNTER, "w") as f:
            f.write(str(n + 1))
        if n % 2 == 0:
            raise RuntimeError("internal error: sometimes")
        return x


    def segfault(x):
        ctypes.string_at(0)
        return x


    def needs_two_columns(x):
        """A bystander library's call that wants a matrix of two columns or more (as
        torch's ``cumprod`` refuses a call without ``dim``)."""
        if x.ndim != 2 or x.shape[1] < 2:
            raise ValueError("needs two columns")
        return x
''')


class RaisesOracle(Oracle):
    """Every exception of a backend is a finding (the judgement these tests need with one
    library; the status oracle wants three libraries to blame one)."""

    name = "raises"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        return [finding(self.name, "status", case, b, o.stage, f"{o.exc_type}: {o.message}")
                for b, o in sorted(outcomes.items()) if o.status == "exception"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The planted module's directory, on PYTHONPATH for workers and scripts."""
    where = tmp_path_factory.mktemp("planted")
    (where / "triage_planted.py").write_text(PLANTED)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(where), old) if p)
    yield where
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def pool(planted: Path) -> Iterator[Pool]:
    p = Pool([WorkerConfig("numpy", case_timeout_s=5.0, start_timeout_s=60.0)])
    p.start()
    yield p
    p.close()


Check = Callable[[Sequence[ApiCase], Sequence[str]],
                 list[tuple[dict[str, Outcome], list[Finding]]]]


def judge_and_check(pool: Pool, libraries: dict[str, str]) -> tuple[Judge, Check]:
    """The judge over ``libraries`` and the checker triage uses: run, then the crash and
    raises oracles."""
    judge = Judge(lambda cases, only: pool.run(cases, only=only), list(libraries), libraries)
    ctx = OracleContext(judge, libraries, {b: False for b in libraries})
    oracles = [CrashOracle(), RaisesOracle()]

    def check(cases: Sequence[ApiCase], only: Sequence[str]
              ) -> list[tuple[dict[str, Outcome], list[Finding]]]:
        results = pool.run(cases, only=only)
        return [(o, [f for oracle in oracles for f in oracle.check(c, o, ctx)])
                for c, o in zip(cases, results, strict=True)]

    return judge, check


@pytest.fixture
def triage(pool: Pool, tmp_path: Path) -> Iterator[Triage]:
    store = Store.create(tmp_path / "campaign", {"settings": {}})
    backend = {"numpy": NumpyBackend()}
    judge, check = judge_and_check(pool, {"numpy": "numpy"})
    t = Triage(store, check, judge, backend, {"numpy": np.__version__}, {"numpy": False},
               TriageSettings(confirm_runs=2, reduce=False, max_reduce_runs=60))
    yield t
    store.close()


def case(function: str, x: np.ndarray) -> ApiCase:
    call = Call(f"triage_planted.{function}", (Ref(0),))
    return ApiCase(f"planted.{function}", (Tensor.from_numpy(x),), (("numpy", call),))


def first_finding(t: Triage, c: ApiCase) -> Finding:
    """The finding of one real run of ``c`` (what the campaign hands triage)."""
    (_, found), = t.check([c], ["numpy"])
    assert found, "the planted function misbehaved"
    return found[0]


LARGE = np.array([[3.0, -2.0, 0.5], [7.0, 1.0, 0.0]], dtype=np.float32)


def test_confirmed_on_identical_reruns_and_folder_has_reproducers(triage: Triage) -> None:
    c = case("fails_when_large", LARGE)
    f = first_finding(triage, c)
    bug_id, new = triage.handle(f, c)
    assert new and bug_id == bug_id_for(f.signature)
    row = triage.store.bug(bug_id)
    assert row is not None and row.status == "confirmed"
    assert (row.confirm_hits, row.confirm_runs) == (2, 2)
    folder = triage.store.root / row.dir
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["case_kind"] == "api" and meta["repro"] == {"numpy": "repro_numpy.py"}
    assert json.loads((folder / "case.json").read_text()) == kind_of(c).describe(c)
    assert (folder / "inputs.npz").is_file() and (folder / "error.log").is_file()
    # The reproducer is standalone: it shows the bug (exit 1) with only the library.
    run = subprocess.run([sys.executable, str(folder / "repro_numpy.py")],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "BUG present" in run.stdout
    # The report shows the kind's section (the call per library) beside the generic parts.
    html = write_report(triage.store).read_text()
    assert "Calls of planted.fails_when_large" in html and "repro_numpy.py" in html
    assert (folder / "issue.md").is_file()
    assert (row.severity, row.root_cause) == ("inconsistency", meta["root_cause"])


def test_a_new_signature_of_a_confirmed_root_cause_is_a_place_not_a_bug(triage: Triage
                                                                         ) -> None:
    c = case("fails_when_large", LARGE)
    f = first_finding(triage, c)
    bug_id, _ = triage.handle(f, c)
    calls: list[int] = []
    check = triage.check
    triage.check = lambda cases, only: calls.append(len(cases)) or check(cases, only)
    # Another signature (as another dtype gives a numeric finding) of the same mechanism.
    c64 = case("fails_when_large", LARGE.astype(np.float64))
    other = replace(f, signature=f.signature + "|float64", case_id=c64.id)
    assert triage.root_cause(other, c64) == triage.store.bug(bug_id).root_cause
    assert triage.handle(other, c64) == (bug_id, False)
    assert calls == [], "no confirmation re-runs, no reduction for a known root cause"
    row = triage.store.bug(bug_id)
    assert len(triage.store.bugs()) == 1 and row.occurrences == 2
    assert [(p["dtypes"], p["count"]) for p in row.places] == [("float32", 1), ("float64", 1)]


def test_a_crash_is_confirmed_by_rerunning_it(triage: Triage) -> None:
    c = case("segfault", np.zeros(2, dtype=np.float32))
    f = first_finding(triage, c)
    assert f.symptom == "crash"
    bug_id, _ = triage.handle(f, c)
    assert triage.store.bug(bug_id).status == "confirmed"


def test_flaky_when_a_rerun_differs(triage: Triage, planted: Path) -> None:
    (planted / "calls.txt").write_text("0")  # call 1 raises, 2 returns, 3 raises
    c = case("fails_every_other_call", np.ones(2, dtype=np.float32))
    f = first_finding(triage, c)
    bug_id, new = triage.handle(f, c)
    row = triage.store.bug(bug_id)
    assert new and row.status == "flaky"
    assert (row.confirm_hits, row.confirm_runs) == (1, 2)
    assert row.dir is None, "a flaky finding gets no bug folder"


def test_dedup_by_signature_counts_occurrences_without_rerunning(triage: Triage) -> None:
    c = case("fails_when_large", LARGE)
    f = first_finding(triage, c)
    bug_id, _ = triage.handle(f, c)
    calls: list[int] = []
    check = triage.check
    triage.check = lambda cases, only: calls.append(len(cases)) or check(cases, only)
    other = case("fails_when_large", LARGE * 2)  # another input, the same bug
    again, new = triage.handle(first_finding(triage, other), other)
    assert (again, new) == (bug_id, False)
    assert calls == [1], "only the run that made the finding: no confirmation re-runs"
    assert triage.store.bug(bug_id).occurrences == 2
    assert len(triage.store.bugs()) == 1


def test_reduction_goes_through_the_kind(triage: Triage, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    asked: list[str] = []
    original = ApiKind.reduction

    def spy(self: ApiKind, case: ApiCase, f: Finding, tools: object) -> object:
        asked.append(f.signature)
        return original(self, case, f, tools)

    monkeypatch.setattr(ApiKind, "reduction", spy)
    triage.settings = TriageSettings(confirm_runs=2, reduce=True, max_reduce_runs=60)
    c = case("fails_when_large", LARGE)
    f = first_finding(triage, c)
    bug_id, _ = triage.handle(f, c)
    assert asked == [f.signature]
    row = triage.store.bug(bug_id)
    assert row.reduced_blob is not None
    reduced = triage.store.blobs.get(row.reduced_blob)
    assert reduced.tensors[0].size < c.tensors[0].size
    meta = json.loads((triage.store.root / row.dir / "meta.json").read_text())
    assert meta["reduced"] is True
    assert set(meta["reduce_stats"]) == {"finite_first", "drop_params", "shrink_axes",
                                         "drop_unit_axes", "simplify_values"}
    assert sum(s["accepted"] for s in meta["reduce_stats"].values()) >= 1


@pytest.fixture(scope="module")
def two_pool(planted: Path) -> Iterator[Pool]:
    p = Pool([WorkerConfig(b, case_timeout_s=5.0, start_timeout_s=120.0)
              for b in ("numpy", "torch")])
    p.start()
    yield p
    p.close()


def test_reduction_keeps_every_bystander_call_working(two_pool: Pool, tmp_path: Path
                                                      ) -> None:
    """A reduction step that breaks another library's call is refused: that library's
    reproducer shows it passing, and would fail with an error of the reduced call."""
    from dlfuzz.backends.torch_backend import TorchBackend

    store = Store.create(tmp_path / "campaign", {"settings": {}})
    judge, check = judge_and_check(two_pool, {"numpy": "numpy", "torch": "torch"})
    import torch
    t = Triage(store, check, judge, {"numpy": NumpyBackend(), "torch": TorchBackend()},
               {"numpy": np.__version__, "torch": torch.__version__},
               {"numpy": False, "torch": False},
               TriageSettings(confirm_runs=2, reduce=True, max_reduce_runs=60))
    x = np.array([[3.0, -2.0, 0.5, 0.25], [7.0, 1.0, 0.0, 0.5], [0.5, 0.5, 0.5, 0.5]],
                 dtype=np.float32)
    c = ApiCase("planted.fails_when_large", (Tensor.from_numpy(x),),
                (("numpy", Call("triage_planted.fails_when_large", (Ref(0),))),
                 ("torch", Call("triage_planted.needs_two_columns", (Ref(0),)))))
    (outcomes, found), = check([c], ["numpy", "torch"])
    assert outcomes["torch"].ok and [f.guilty_backend for f in found] == ["numpy"]
    bug_id, _ = t.handle(found[0], c)
    row = store.bug(bug_id)
    assert row is not None and row.reduced_blob is not None
    reduced = store.blobs.get(row.reduced_blob)
    assert reduced.tensors[0].size < x.size  # reduced where the bystander allows
    # Cutting to one column, or to one axis, keeps numpy's bug but breaks torch's call.
    assert reduced.tensors[0].shape == (1, 2)
    (after, _), = check([reduced], ["numpy", "torch"])
    assert after["torch"].ok and not after["numpy"].ok
    store.close()

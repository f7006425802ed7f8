"""Triage: dedup by signature, confirmation by re-running, the bug folder, reduction.

Cases run in real numpy and torch workers. torch carries two planted bugs: the steady
``planted_torch_cumsum`` (float32, scanned axis of 7 or more: the last sum is 1.0 too
high) and a flaky one written below, in ``torch.cumprod``, wrong on every other call.
Bugs are stored in a real campaign Store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from real_workers import COMPILED, LIBRARY_OF, PLANTED, make_judge, outcome, started_pool

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.cases import ApiCase, Call, Finding, Outcome, Ref, Tensor
from dlfuzz.executor.pool import Pool
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.oracles.differential import DifferentialOracle
from dlfuzz.store.db import BugRow, Store
from dlfuzz.triage.triager import Triage, TriageSettings

FLAKY_CUMPROD = '''"""Test-only: torch.cumprod adds 1.0 to the last product of float32 inputs on every
other call (the 1st, 3rd, ...): a bug that shows on some runs only."""
import torch

_real_cumprod = torch.cumprod
_calls = [0]


def cumprod(input, dim, *, dtype=None, out=None):
    result = _real_cumprod(input, dim, dtype=dtype)
    if input.dtype == torch.float32:
        _calls[0] += 1
        if _calls[0] % 2 == 1:
            result = result.clone()
            result.select(dim, -1).add_(1.0)
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.cumprod = cumprod
'''

# The planted cumsum bug reaches float16 too (float32 has it from planted_torch_cumsum):
# one mechanism under two dtypes, so two signatures of one root cause. (Not float64: the
# float64 reference re-run would carry the plant and judge nothing.)
CUMSUM_FLOAT16 = '''"""Test-only: the planted torch.cumsum bug on float16 too."""
import torch

import planted_torch_cumsum

planted_torch_cumsum.DTYPES.add(torch.float16)
'''

# A bug that needs its infinity: torch.diff is 1.0 off wherever it is finite when a
# float32 input holds one (not float64: the reference re-run would carry it too).
# Made finite, the input shows nothing, so the bug stays a special-value one.
DIFF_INF = '''"""Test-only: torch.diff is 1.0 off where finite when a float32 input holds inf,
and aborts the process when one holds NaN."""
import os

import torch

_real_diff = torch.diff


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dtype == torch.float32 and torch.isnan(input).any():
        os.abort()
    result = _real_diff(input, n=n, dim=dim, prepend=prepend, append=append)
    if input.dtype == torch.float32 and torch.isinf(input).any():
        result = torch.where(torch.isfinite(result), result + 1.0, result)
    return result


torch.diff = diff
'''

RNG = np.random.default_rng(11)
ROWS = RNG.uniform(-2.0, 2.0, (3, 8)).astype(np.float32)  # the cumsum bug fires (8 >= 7)


class Harness:
    """What a campaign hands triage: a checker running cases through the oracle."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.judge, _ = make_judge(pool)
        self.ctx = OracleContext(self.judge, LIBRARY_OF, COMPILED)
        self.oracles = (DifferentialOracle(), CrashOracle())
        self.checked: list[int] = []  # cases per checker call

    def judge_cases(self, items: list[tuple[ApiCase, dict[str, Outcome]]]
                    ) -> list[list[Finding]]:
        found: list[list[Finding]] = [[] for _ in items]
        for oracle in self.oracles:
            for mine, more in zip(found, oracle.check_many(items, self.ctx), strict=True):
                mine.extend(more)
        return found

    def check(self, cases: Sequence[ApiCase], only: Sequence[str]
              ) -> list[tuple[dict[str, Outcome], list[Finding]]]:
        self.checked.append(len(cases))
        results = self.pool.run(cases, only=only)
        found = self.judge_cases(list(zip(cases, results, strict=True)))
        return list(zip(results, found, strict=True))

    def finding(self, case: ApiCase) -> Finding:
        (_, found), = self.check([case], ["numpy", "torch"])
        assert len(found) == 1, found
        return found[0]

    def triage(self, store: Store, **settings: object) -> Triage:
        from dlfuzz.backends.torch_backend import TorchBackend

        backends = {"numpy": NumpyBackend(), "torch": TorchBackend()}
        versions = {"numpy": "n", "torch": "t"}
        t = Triage(store, self.check, self.judge, backends, versions,
                   {"numpy": False, "torch": False}, TriageSettings(**settings))  # type: ignore[arg-type]
        self.checked.clear()
        return t


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    plants = tmp_path_factory.mktemp("plants")
    (plants / "planted_flaky_cumprod.py").write_text(FLAKY_CUMPROD)
    (plants / "planted_cumsum_float16.py").write_text(CUMSUM_FLOAT16)
    (plants / "planted_diff_inf.py").write_text(DIFF_INF)
    with started_pool(preload={"torch": ("planted_torch_cumsum", "planted_flaky_cumprod",
                                         "planted_cumsum_float16", "planted_diff_inf")},
                      extra_path=[plants]) as p:
        yield p


@pytest.fixture
def harness(pool: Pool) -> Harness:
    return Harness(pool)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.create(tmp_path / "campaign", {"test": True})
    yield s
    s.close()


def scan_case(api: str, x: np.ndarray) -> ApiCase:
    calls = (("numpy", Call(f"numpy.{api}", (Ref(0),), (("axis", -1),))),
             ("torch", Call(f"torch.{api}", (Ref(0),), (("dim", -1),))))
    return ApiCase(api, (Tensor.from_numpy(x),), calls)


# ---- confirmation ----------------------------------------------------------------------

def test_a_bug_every_rerun_shows_is_confirmed_and_stored(harness: Harness, store: Store):
    case = scan_case("cumsum", ROWS)
    finding = harness.finding(case)
    triage = harness.triage(store, confirm_runs=3, reduce=False)
    bug_id, new = triage.handle(finding, case)
    assert new
    # one case per round trip: a batch would give a repeated signature a shorter timeout
    assert harness.checked == [1, 1, 1]
    row = store.bug(bug_id)
    assert row is not None and row.confirmed
    assert (row.status, row.confirm_runs, row.confirm_hits, row.occurrences) == (
        "confirmed", 3, 3, 1)
    assert (row.signature, row.symptom, row.guilty_backend, row.api, row.stage) == (
        finding.signature, "numeric", "torch", "cumsum", "call")
    assert row.message == finding.message
    assert row.details == dict(finding.details)
    assert store.blobs.get(row.case_blob) == case
    assert row.reduced_blob is None
    assert store.bug_by_signature(finding.signature).id == bug_id
    assert [b.id for b in store.bugs("confirmed")] == [bug_id]
    assert row.dir is not None and (store.root / row.dir).is_dir()


def test_the_bug_folder_holds_case_meta_and_a_reproducer_per_backend(harness: Harness,
                                                                       store: Store):
    case = scan_case("cumsum", ROWS)
    finding = harness.finding(case)
    bug_id, _ = harness.triage(store, reduce=False).handle(finding, case)
    folder = store.root / store.bug(bug_id).dir
    described = json.loads((folder / "case.json").read_text())
    assert described["api"] == "cumsum"
    assert described["tensors"] == [{"dtype": "float32", "shape": [3, 8]}]
    assert {lib: c["target"] for lib, c in described["calls"].items()} == {
        "numpy": "numpy.cumsum", "torch": "torch.cumsum"}
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["id"] == bug_id
    assert (meta["signature"], meta["symptom"], meta["guilty_backend"], meta["api"]) == (
        finding.signature, "numeric", "torch", "cumsum")
    assert meta["reduced"] is False
    assert meta["repro"] == {"numpy": "repro_numpy.py", "torch": "repro_torch.py"}
    for name in ("repro_numpy.py", "repro_torch.py", "inputs.npz", "error.log",
                 "outputs/numpy.npz", "outputs/torch.npz"):
        assert (folder / name).is_file(), name
    with np.load(folder / "inputs.npz") as inputs:
        np.testing.assert_array_equal(inputs["x0"], ROWS)
    with np.load(folder / "outputs" / "torch.npz") as out:
        wrong = np.cumsum(ROWS, axis=-1)
        assert np.allclose(out["out0"][:, -1], wrong[:, -1] + 1.0, atol=1e-5)


def test_the_reproducer_fails_where_the_bug_is_and_passes_where_it_is_not(harness: Harness,
                                                                         store: Store):
    case = scan_case("cumsum", ROWS)
    bug_id, _ = harness.triage(store, reduce=False).handle(harness.finding(case), case)
    folder = store.root / store.bug(bug_id).dir
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(PLANTED), os.environ.get("PYTHONPATH", "")) if p))

    def exit_code(script: str, plant: str = "") -> int:
        code = (f"import {plant}\n" if plant else "") + (
            "import runpy, sys\n"
            f"sys.argv = [{script!r}]\n"
            f"runpy.run_path({script!r}, run_name='__main__')\n")
        return subprocess.run([sys.executable, "-c", code], cwd=folder, env=env,
                              capture_output=True, timeout=120).returncode

    # numpy computes it right: its script passes against the same expected values.
    assert exit_code("repro_numpy.py") == 0
    assert exit_code("repro_torch.py", plant="planted_torch_cumsum") == 1  # bug present


def test_a_bug_one_rerun_misses_is_flaky_and_gets_no_folder(harness: Harness, store: Store):
    x = RNG.uniform(0.5, 1.5, (2, 6)).astype(np.float32)
    case = scan_case("cumprod", x)
    finding = harness.finding(case)  # the 1st call: wrong
    assert finding.guilty_backend == "torch"
    bug_id, new = harness.triage(store, confirm_runs=2).handle(finding, case)  # right, wrong
    row = store.bug(bug_id)
    assert new and not row.confirmed
    assert (row.status, row.confirm_runs, row.confirm_hits) == ("flaky", 2, 1)
    assert row.dir is None and not (store.bugs_dir / bug_id).exists()
    assert store.bugs("confirmed") == []
    assert harness.checked == [1, 1]  # no reduction of a flaky bug


def test_a_finding_no_rerun_shows_is_flaky(harness: Harness, store: Store):
    short = ROWS[:, :5]  # the planted bug does not fire here
    case = scan_case("cumsum", short)
    outcomes = harness.pool.run([case])[0]
    glitch = outcomes["torch"].outputs[0].to_numpy()
    glitch[0, 0] += 1.0
    outcomes["torch"] = outcome("torch", glitch)
    (finding,) = harness.oracles[0].check(case, outcomes, harness.ctx)
    bug_id, _ = harness.triage(store, confirm_runs=2).handle(finding, case)
    row = store.bug(bug_id)
    assert (row.status, row.confirm_hits) == ("flaky", 0)


def test_a_known_signature_only_counts_an_occurrence(harness: Harness, store: Store):
    case = scan_case("cumsum", ROWS)
    finding = harness.finding(case)
    triage = harness.triage(store, reduce=False)
    bug_id, new = triage.handle(finding, case)
    assert new
    harness.checked.clear()
    other = scan_case("cumsum", RNG.uniform(-9, 9, (5, 12)).astype(np.float32))
    again = harness.finding(other)
    assert again.signature == finding.signature
    harness.checked.clear()
    assert triage.handle(again, other) == (bug_id, False)
    assert harness.checked == []  # nothing re-run
    row = store.bug(bug_id)
    assert row.occurrences == 2
    assert store.blobs.get(row.case_blob) == case  # the first case stays the bug's case
    assert len(store.bugs()) == 1


# ---- reduction -------------------------------------------------------------------------

def test_reduction_keeps_the_signature_and_shrinks_the_case(harness: Harness, store: Store):
    big = RNG.uniform(-3.0, 3.0, (4, 16)).astype(np.float32)
    case = scan_case("cumsum", big)
    finding = harness.finding(case)
    bug_id, _ = harness.triage(store, reduce=True, max_reduce_runs=60).handle(finding, case)
    row = store.bug(bug_id)
    assert row.confirmed and row.reduced_blob is not None
    reduced = store.blobs.get(row.reduced_blob)
    (x,) = reduced.tensors
    assert x.size < big.size
    assert x.shape[-1] >= 7  # below that the planted bug, hence the signature, is gone
    (_, found), = harness.check([reduced], ["numpy", "torch"])
    assert finding.signature in {f.signature for f in found}
    folder = store.root / row.dir
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["reduced"] is True and 0 < meta["reduce_runs"] <= 60
    assert set(meta["reduce_stats"]) >= {"shrink_axes", "drop_unit_axes", "simplify_values"}
    accepted = sum(s["accepted"] for s in meta["reduce_stats"].values())
    assert accepted >= 1
    assert json.loads((folder / "case.json").read_text())["tensors"] == [
        {"dtype": "float32", "shape": list(x.shape)}]
    with np.load(folder / "inputs.npz") as inputs:
        np.testing.assert_array_equal(inputs["x0"], x.to_numpy())


def test_a_bug_reduced_to_finite_inputs_is_described_by_the_reduced_case(harness: Harness,
                                                                         store: Store):
    # The planted cumsum bug needs no special value; the found case has an inf in another
    # row. Reduction replaces the inf by a finite value, so the stored bug is a wrong
    # result on ordinary inputs, not a special-value one.
    x = RNG.uniform(-2.0, 2.0, (2, 8)).astype(np.float32)
    x[0, 3] = np.inf
    case = scan_case("cumsum", x)
    finding = harness.finding(case)
    assert finding.detail("special_values")
    bug_id, _ = harness.triage(store, reduce=True, max_reduce_runs=60).handle(finding, case)
    row = store.bug(bug_id)
    assert row.confirmed and row.reduced_blob is not None
    assert np.isfinite(store.blobs.get(row.reduced_blob).tensors[0].to_numpy()).all()
    assert row.severity == "wrong-result"
    assert not row.details.get("special_values")
    assert "inputs hold" not in row.message
    meta = json.loads((store.root / row.dir / "meta.json").read_text())
    assert not meta["details"].get("special_values")


def test_reduction_stays_within_its_run_budget(harness: Harness, store: Store):
    case = scan_case("cumsum", RNG.uniform(-3.0, 3.0, (4, 16)).astype(np.float32))
    finding = harness.finding(case)
    bug_id, _ = harness.triage(store, reduce=True, max_reduce_runs=5,
                               confirm_runs=2).handle(finding, case)
    meta = json.loads((store.root / store.bug(bug_id).dir / "meta.json").read_text())
    assert meta["reduced"] is True and meta["reduce_runs"] <= 5
    # Confirmation (2), at most 5 candidates, one re-check of the result.
    assert sum(harness.checked) <= 2 + 5 + 1


def test_reduction_stops_at_its_deadline_with_the_smallest_case_that_held(
        harness: Harness, store: Store, monkeypatch: pytest.MonkeyPatch):
    """A reduction whose candidates compile slowly is cut at REDUCE_SECONDS: the bug keeps
    the smallest case that still showed it (here: none reduced yet, no deadline left)."""
    import dlfuzz.triage.triager as triager

    monkeypatch.setattr(triager, "REDUCE_SECONDS", 0.0)
    case = scan_case("cumsum", RNG.uniform(-3.0, 3.0, (4, 16)).astype(np.float32))
    bug_id, _ = harness.triage(store, reduce=True, confirm_runs=2).handle(
        harness.finding(case), case)
    meta = json.loads((store.root / store.bug(bug_id).dir / "meta.json").read_text())
    assert meta["reduced"] is True and meta["reduce_cut"] is True
    assert meta["reduce_runs"] == 0
    assert store.bug(bug_id).confirmed


def test_no_reduction_once_the_campaign_budget_is_spent(harness: Harness, store: Store):
    case = scan_case("cumsum", ROWS)
    finding = harness.finding(case)
    triage = harness.triage(store, reduce=True)
    triage.time_left = lambda: 0.0
    bug_id, _ = triage.handle(finding, case)
    row = store.bug(bug_id)
    assert row.confirmed and row.reduced_blob is None
    assert json.loads((store.root / row.dir / "meta.json").read_text())["reduced"] is False
    assert harness.checked == [1, 1]


def test_confirmation_reruns_the_guilty_backend_and_every_eager_one(harness: Harness,
                                                                   store: Store):
    from dlfuzz.backends.torch_backend import TorchBackend, TorchCompileBackend

    backends = {"numpy": NumpyBackend(), "torch": TorchBackend(),
                "torch-compile": TorchCompileBackend()}
    compiled = {"numpy": False, "torch": False, "torch-compile": True}
    triage = Triage(store, harness.check, harness.judge, backends, {}, compiled,
                    TriageSettings())

    def blaming(backend: str) -> Finding:
        return Finding("differential", "numeric", "cumsum", backend, "call", "m", "s", "c")

    assert triage.needed_backends(blaming("torch-compile")) == ["numpy", "torch",
                                                                "torch-compile"]
    # An eager backend's bug needs no compiled worker to confirm it.
    assert triage.needed_backends(blaming("numpy")) == ["numpy", "torch"]


def test_a_library_run_only_compiled_is_in_every_confirmation(harness: Harness,
                                                              store: Store) -> None:
    """torch vs ort (ORT with graph optimizations, a compiled mode, and no ort-noopt): a
    torch finding's re-runs need ort, the only other library, or the disagreement the
    finding came from is gone and every such finding is called flaky."""
    from dlfuzz.backends.ort_backend import OrtBackend
    from dlfuzz.backends.torch_backend import TorchBackend

    triage = Triage(store, harness.check, harness.judge,
                    {"torch": TorchBackend(), "ort": OrtBackend()}, {},
                    {"torch": False, "ort": True}, TriageSettings())
    finding = Finding("differential", "numeric", "Conv2D", "torch", "call", "m", "s", "c")
    assert triage.needed_backends(finding) == ["torch", "ort"]


def test_a_bug_whose_reduced_case_has_an_earlier_bugs_root_cause_is_a_duplicate(
        harness: Harness, store: Store):
    # First the planted cumsum bug on finite float32 inputs: a wrong result.
    triage = harness.triage(store, reduce=True, max_reduce_runs=60)
    finite = scan_case("cumsum", RNG.uniform(-2.0, 2.0, (2, 8)).astype(np.float32))
    first, _ = triage.handle(harness.finding(finite), finite)
    assert store.bug(first).severity == "wrong-result"
    # Then on float16 with an inf elsewhere: another signature and, as found, another
    # key (special-value); once reduced to finite inputs it is the first bug again.
    x = RNG.uniform(-2.0, 2.0, (2, 8)).astype(np.float16)
    x[0, 3] = np.inf
    special = scan_case("cumsum", x)
    finding = harness.finding(special)
    assert finding.detail("special_values")
    second, new = triage.handle(finding, special)
    assert new and second != first
    row = store.bug(second)
    assert row.status == "duplicate" and row.details["duplicate_of"] == first
    assert row.root_cause == store.bug(first).root_cause
    assert [b.id for b in store.bugs("confirmed")] == [first]
    assert [p["count"] for p in store.bug(first).places if p["dtypes"] == "float16"] == [1]


def test_demoted_model_findings_are_listed_not_reduced() -> None:
    """Reducing a demoted model finding recompiles every step on jit/xla backends for a
    bug that is never filed; an API finding, or a model one that is not demoted, is."""
    import numpy as np

    from dlfuzz.cases import ApiCase, GraphCase, Tensor
    from dlfuzz.ir.graph import GraphBuilder
    from dlfuzz.oracles.base import finding
    from dlfuzz.triage.triager import _listed_only

    b = GraphBuilder((1, 3), dtype="float16")
    b.add("Tanh", "x0")
    model = GraphCase("m", b.build(), (), (Tensor.from_numpy(np.ones((1, 3), np.float16)),),
                      ("torch",))
    demoted = finding("differential", "numeric", model, "torch", "call", "off",
                      demoted="a float16 model: ...")
    plain = finding("differential", "numeric", model, "torch", "call", "off")
    assert _listed_only(demoted, model) and not _listed_only(plain, model)
    api = ApiCase("relu", (), ())
    assert not _listed_only(finding("differential", "numeric", api, "torch", "call", "off",
                                    demoted="documented"), api)


# ---- reductions that wait for triage's share of the time -------------------------------

def special_diff_case() -> ApiCase:
    """The planted diff bug: special-value, and it stays one (it needs the inf)."""
    x = RNG.uniform(-2.0, 2.0, (2, 9)).astype(np.float32)
    x[1, 4] = np.inf
    return scan_case("diff", x)


def nan_diff_case() -> ApiCase:
    """The planted diff crash: torch aborts on a float32 input holding NaN."""
    x = RNG.uniform(-2.0, 2.0, (2, 9)).astype(np.float32)
    x[0, 2] = np.nan
    return scan_case("diff", x)


def reduced_once_the_share_allows(triage: Triage, store: Store, bug_id: str,
                                  clock: list[float]) -> tuple[BugRow, ApiCase]:
    """Let the campaign's clock run until triage is within its share: the waiting bug
    is reduced; its row and reduced case."""
    clock[0] = triage.busy_seconds() / 0.3 + 1.0
    assert triage.reduce_waiting() == 1
    row = store.bug(bug_id)
    assert row is not None and row.reduced_blob is not None
    return row, store.blobs.get(row.reduced_blob)


def test_a_lower_class_bug_waits_while_triage_is_over_its_share(harness: Harness,
                                                                store: Store):
    case = special_diff_case()
    finding = harness.finding(case)
    triage = harness.triage(store, reduce=True, max_reduce_runs=60, triage_share=0.3)
    clock = [0.0]  # the campaign has run 0 s: any triage time is over the share
    triage.elapsed = lambda: clock[0]
    bug_id, _ = triage.handle(finding, case)
    row = store.bug(bug_id)
    assert row.confirmed and row.severity == "special-value" and row.reduced_blob is None
    assert triage.waiting() == [bug_id]
    assert store.meta()["reductions_waiting"] == [bug_id]
    # Confirmation, and the quick step's candidates (the inf made finite: no bug left).
    assert triage.seconds["confirm"] > 0
    assert 1 <= sum(harness.checked) - 2 <= 8, harness.checked
    assert triage.reduce_waiting() == 0  # still over: nothing runs
    # Once the campaign has run long enough, the share allows it.
    row, reduced = reduced_once_the_share_allows(triage, store, bug_id, clock)
    assert row.severity == "special-value"
    assert reduced.tensors[0].size < case.tensors[0].size
    assert not np.isfinite(reduced.tensors[0].to_numpy()).all()  # the inf it needs
    assert triage.waiting() == [] and store.meta()["reductions_waiting"] == []
    meta = json.loads((store.root / row.dir / "meta.json").read_text())
    assert meta["reduced"] is True and "shrink_axes" in meta["reduce_stats"]


def test_a_crash_waits_while_triage_is_over_its_share(harness: Harness, store: Store):
    """Every candidate of a crash's reduction that still crashes costs a worker restart:
    a crash is confirmed and stored at once, and reduced as the share allows (first in
    line), with no quick step (its root cause is where it died)."""
    case = nan_diff_case()
    finding = harness.finding(case)
    assert finding.symptom == "crash", finding
    triage = harness.triage(store, reduce=True, max_reduce_runs=60, triage_share=0.3)
    clock = [0.0]
    triage.elapsed = lambda: clock[0]
    bug_id, _ = triage.handle(finding, case)
    row = store.bug(bug_id)
    assert row.confirmed and row.severity == "crash" and row.reduced_blob is None
    assert triage.waiting() == [bug_id]
    assert sum(harness.checked) == 2, harness.checked  # the two confirm runs, no quick step
    row, reduced = reduced_once_the_share_allows(triage, store, bug_id, clock)
    assert row.severity == "crash"
    assert reduced.tensors[0].size < case.tensors[0].size
    assert np.isnan(reduced.tensors[0].to_numpy()).any()  # the NaN it needs


def test_a_special_value_bug_that_is_a_wrong_result_on_finite_inputs_does_not_wait(
        harness: Harness, store: Store):
    """The quick step (NaN/inf made finite) runs even over the share: the planted cumsum
    bug found on a row holding an inf is a wrong result once finite, and a wrong result
    is reduced at once."""
    x = RNG.uniform(-2.0, 2.0, (2, 8)).astype(np.float32)
    x[0, 3] = np.inf
    case = scan_case("cumsum", x)
    finding = harness.finding(case)
    assert finding.detail("special_values")
    triage = harness.triage(store, reduce=True, max_reduce_runs=60, triage_share=0.3)
    triage.elapsed = lambda: 0.0
    bug_id, _ = triage.handle(finding, case)
    row = store.bug(bug_id)
    assert row.severity == "wrong-result" and row.reduced_blob is not None
    assert triage.waiting() == []
    meta = json.loads((store.root / row.dir / "meta.json").read_text())
    assert "shrink_axes" in meta["reduce_stats"]  # the full reduction, not the quick one


def test_a_wrong_result_is_reduced_at_once_whatever_triage_cost(harness: Harness,
                                                                store: Store):
    case = scan_case("cumsum", RNG.uniform(-2.0, 2.0, (3, 9)).astype(np.float32))
    triage = harness.triage(store, reduce=True, max_reduce_runs=60, triage_share=0.3)
    triage.elapsed = lambda: 0.0
    bug_id, _ = triage.handle(harness.finding(case), case)
    row = store.bug(bug_id)
    assert row.severity == "wrong-result" and row.reduced_blob is not None
    assert triage.waiting() == []


def test_a_resumed_campaign_reduces_what_still_waited(harness: Harness, store: Store):
    case = special_diff_case()
    triage = harness.triage(store, reduce=True, max_reduce_runs=60)
    triage.elapsed = lambda: 0.0
    bug_id, _ = triage.handle(harness.finding(case), case)
    assert triage.waiting() == [bug_id]
    # The campaign was killed; the resumed one's triage starts from the store.
    resumed = harness.triage(store, reduce=True, max_reduce_runs=60)
    assert resumed.restore_waiting() == 1 and resumed.waiting() == [bug_id]
    resumed.seconds["confirm"] = 1.0  # what the campaign restores from its counters
    resumed.elapsed = lambda: 0.0
    assert resumed.reduce_waiting() == 0  # over the share
    assert resumed.reduce_waiting(within_share=False) == 1  # a resumed campaign's first batch
    assert store.bug(bug_id).reduced_blob is not None


def test_only_the_latest_reproducer_check_of_a_bug_counts(harness: Harness, store: Store):
    """A waiting bug's reproducer is checked as found, and again once reduced; the first
    verdict is about a folder rewritten meanwhile and must not decide the bug (it made a
    real NaN-handling bug 'unreproduced' in a campaign)."""
    import threading

    from dlfuzz.triage.confirm import ReproCheck

    first_running = threading.Event()
    release = threading.Event()
    verdicts: list[str] = []

    def reproduce(folder: Path, finding: Finding) -> ReproCheck:
        if not verdicts:  # the check of the folder as found: slow, and says no
            verdicts.append("as found")
            first_running.set()
            release.wait(60)
            return ReproCheck(False, "OK (the folder changed under it)")
        verdicts.append("reduced")
        return ReproCheck(True, "BUG present")

    case = special_diff_case()
    triage = harness.triage(store, reduce=True, max_reduce_runs=60)
    triage.reproduce = reproduce
    clock = [0.0]
    triage.elapsed = lambda: clock[0]
    bug_id, _ = triage.handle(harness.finding(case), case)
    assert triage.waiting() == [bug_id] and first_running.wait(60)
    clock[0] = 1e6
    assert triage.reduce_waiting() == 1  # reduced and checked again
    release.set()
    assert triage.collect(wait=True) == 0
    row = store.bug(bug_id)
    assert verdicts == ["as found", "reduced"]
    assert row.status == "confirmed" and row.details["reproducer"]["reproduced"] is True


def test_only_a_crash_or_a_hang_is_re_run_in_a_fresh_worker(harness: Harness):
    """A fresh worker costs a library start (3-8 s of CPU for JAX or TF) per new bug: a
    wrong value is re-run in the pool's workers (its reproducer, a fresh process, checks
    it), a crash in a fresh worker (what an earlier case left in the process can kill
    it)."""
    from dlfuzz.triage.confirm import FreshRerun, confirm

    started: list[str] = []
    real_fresh = harness.pool.fresh_worker

    def counting(backend: str, timeout_factor: float = 1.0) -> object:
        started.append(backend)
        return real_fresh(backend, timeout_factor)

    wrong = scan_case("cumsum", ROWS)
    dying = nan_diff_case()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(harness.pool, "fresh_worker", counting)
        fresh = FreshRerun(harness.pool, harness.judge_cases)
        try:
            result = confirm(harness.finding(wrong), wrong, ["numpy", "torch"], 2, fresh)
            assert result.status == "confirmed" and started == []
            result = confirm(harness.finding(dying), dying, ["numpy", "torch"], 2, fresh)
            assert result.status == "confirmed" and started and set(started) == {"torch"}
        finally:
            fresh.close()

"""The report's chart data and diff highlight, on hand-made stores and arrays (the
browser test, tests/e2e/test_report_page.py, checks a real campaign's page)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

from dlfuzz.report import charts
from dlfuzz.report.bugs import diff_table, output_diffs
from dlfuzz.report.html import write_report
from dlfuzz.store.db import OUTCOME_COUNTER, BugRow, Store


def test_bug_times_are_fuzzing_time_and_a_resume_pause_is_not_counted() -> None:
    # Two 10 s batches, the second after a 100 s pause (a resume).
    clock = charts.FuzzClock.of([{"seconds": 10.0, "finished_at": 110.0},
                                 {"seconds": 10.0, "finished_at": 220.0}])
    assert clock.at(105.0) == 5.0  # mid first batch
    assert clock.at(150.0) == 10.0  # during the pause: where the first batch ended
    assert clock.at(215.0) == 15.0  # mid second batch: the pause is not time
    assert clock.at(300.0) == 20.0  # after the last batch (triage of a cut batch)
    assert clock.at(50.0) == 0.0


def _bug(bid: str, api: str, status: str, created_at: float) -> BugRow:
    return BugRow(id=bid, signature=f"sig-{bid}", symptom="numeric", guilty_backend="torch",
                  api=api, stage="call", message="m", status=status, occurrences=1,
                  case_blob="x", reduced_blob=None, confirm_runs=2, confirm_hits=2, dir=None,
                  details={}, created_at=created_at, updated_at=created_at,
                  severity="wrong-result", root_cause=f"torch/{bid}/wrong-result")


def test_outcomes_timeline_and_hostile_names_in_the_page(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "c", {"settings": {}})
    health = {"torch": {"version": "1", "cases": 5, "crashes": 1, "timeouts": 0,
                        "restarts": 1}}
    store.finish_batch(0, 5, 1, 2.0, {f"{OUTCOME_COUNTER}torch:ok": 3,
                                      f"{OUTCOME_COUNTER}torch:crash": 1,
                                      f"{OUTCOME_COUNTER}torch:exception": 1}, health)
    store.finish_batch(1, 5, 0, 2.0, {f"{OUTCOME_COUNTER}torch:ok": 5}, health)
    hostile = "x</script><script>alert(1)</script><!--"
    store.add_bug(_bug("b1", hostile, "confirmed", time.time() - 1.0))
    store.add_bug(_bug("b2", "torch.add", "flaky", time.time()))
    store.set_meta(api_stats={hostile: {"tried": 10, "valid_rate": 0.5, "yield": 0.2},
                              "torch.add": {"tried": 20, "valid_rate": 1.0, "yield": 0.0}})
    outcomes = charts.outcomes(store)
    assert outcomes["recorded"] and outcomes["backends"] == ["torch"]
    assert {s: outcomes["counts"][s][0] for s in outcomes["statuses"]} == {
        "ok": 8, "exception": 1, "crash": 1, "timeout": 0, "oom": 0}
    timeline = charts.timeline(store, store.bugs())
    assert timeline["cases"] == [[0.0, 0], [2.0, 5], [4.0, 10]]
    assert len(timeline["confirmed"]) == 1 and len(timeline["filed"]) == 2
    apis = charts.api_rates(store.meta()["api_stats"])
    assert apis["apis"] == ["torch.add", hostile]  # most tried first

    html = write_report(store, tmp_path / "r.html").read_text()
    store.close()
    # The names reach the page as text and as chart data, never as markup.
    tags = re.findall(r"<script\b[^>]*>", html, flags=re.IGNORECASE)
    assert len(tags) == 3 and all("data-dlfuzz=" in t for t in tags), tags
    blob = re.search(r"id='dlfuzz-data' data-dlfuzz='data'>(.*?)</script>", html, re.S)
    assert blob is not None
    data = json.loads(blob.group(1))
    assert data["apis"]["apis"][1] == hostile
    assert data["severity"]["confirmed"][data["severity"]["classes"].index(
        "wrong-result")] == 1
    assert data["severity"]["flaky"][data["severity"]["classes"].index("wrong-result")] == 1


def test_a_campaign_without_outcome_counters_draws_the_backends_table(tmp_path: Path
                                                                      ) -> None:
    store = Store.create(tmp_path / "c", {"settings": {}})
    store.finish_batch(0, 6, 0, 1.0, {}, {"jax": {"version": "1", "cases": 6, "crashes": 2,
                                                  "timeouts": 1, "restarts": 3}})
    outcomes = charts.outcomes(store)
    store.close()
    assert not outcomes["recorded"]
    assert outcomes["counts"] == {"ok or exception": [3], "crash": [2], "timeout": [1]}


def test_charts_without_data_say_why_instead_of_drawing_empty_axes(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "c", {"settings": {}})
    html = write_report(store, tmp_path / "r.html").read_text()
    store.close()
    assert "data-chart='severity'" in html
    assert "data-chart='apis'" not in html and "keeps no per-API statistics" in html
    assert "data-chart='timeline'" not in html and "no batch finished yet" in html


def test_the_guilty_backend_is_compared_with_numpy_and_only_its_wrong_values_marked(
        ) -> None:
    good = np.array([1.0, 2.0, np.nan, 4.0], dtype=np.float32)
    bad = np.array([1.0, 2.5, np.nan, 4.0000005], dtype=np.float32)  # last: within rtol
    outputs = {"jax": {"out0": good}, "numpy": {"out0": good}, "torch": {"out0": bad},
               "tf": {"out0": good.reshape(2, 2)}}
    [diff] = output_diffs(outputs, "torch")
    assert diff.reference == "numpy"  # the reference library, not the first by name
    assert diff.differs["torch"].tolist() == [False, True, False, False]  # NaN = NaN
    assert not diff.differs["jax"].any()
    assert diff.shape_differs == ("tf",)
    table = diff_table(diff)
    assert table.count("<mark class='diff'>2.5</mark>") == 1
    assert "numpy float32[4] (reference)" in table
    assert "torch: 1 of 4 differ" in table


def test_the_window_starts_just_before_the_first_difference() -> None:
    ref = np.arange(1000, dtype=np.int64)
    bad = ref.copy()
    bad[700] = -1
    [diff] = output_diffs({"numpy": {"out0": ref}, "torch": {"out0": bad}}, "torch")
    table = diff_table(diff)
    assert "<mark class='diff'>-1</mark>" in table
    assert "elements 696–719 of 1000 shown" in table

"""The HTML report as a reader sees it: a real small campaign with two planted bugs, its
report opened offline in headless Chromium (playwright-core, as for tfjs-webgl).

* ``planted_jax_cumsum``: ``jax.numpy.cumsum`` adds 1.0 to the last element of long
  float scans: a wrong-result bug whose differing value the report must highlight in
  jax's column, not in the reference's.
* ``planted_torch_cumsum_inf``: ``torch.cumsum`` gives NaN wherever an input is ±inf: a
  special-value bug, so the severity chart has two classes.

The page must log no error, ask for nothing over the network (the charting library is
inlined), and every chart must have drawn data (coloured pixels inside its plot area,
where only grey grid lines are otherwise). The screenshot's path is printed (``-s``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli

from dlfuzz.report import charts
from dlfuzz.report.browser import PageCheck, check_page
from dlfuzz.store.db import Store

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "c"
    proc = dlfuzz_cli(
        "run", "--engine", "numpy-api", "--backends", "numpy,torch,jax",
        "--apis", "numpy.cumsum", "--seed", "1", "--budget", "30s", "--out", str(out),
        "--preload", "jax=planted_jax_cumsum", "--preload", "torch=planted_torch_cumsum_inf",
        "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def page(campaign: Path) -> Path:
    proc = dlfuzz_cli("report", str(campaign), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def checked(page: Path) -> PageCheck:
    shot = page.parent / "report.png"
    check = check_page(page, shot)
    print(f"\nreport screenshot: {shot}")
    return check


def _bug_id(campaign: Path, backend: str) -> str:
    store = Store.open(campaign)
    try:
        ids = [b.id for b in store.bugs("confirmed") if b.guilty_backend == backend]
    finally:
        store.close()
    assert ids, f"no confirmed bug blamed on {backend}"
    return ids[0]


def test_page_loads_offline_without_errors(checked: PageCheck) -> None:
    assert checked.console_errors == ()
    assert checked.page_errors == ()
    assert checked.blocked == ()  # nothing fetched: the library is in the page
    assert checked.problems == []


def test_every_chart_draws_its_data(checked: PageCheck) -> None:
    assert set(checked.charts) == {key for key, _ in charts.CHARTS}
    for name, chart in checked.charts.items():
        assert chart["error"] is None, (name, chart)
        assert chart["width"] > 100 and chart["height"] > 100, (name, chart)
        assert chart["drawn"] > 0, (name, chart)  # Chart.js laid out bars / points
        assert chart["colored"] > 50, (name, chart)  # and painted them


def test_the_wrong_value_is_highlighted_in_the_guilty_column(campaign: Path,
                                                             checked: PageCheck) -> None:
    jax_bug = _bug_id(campaign, "jax")
    assert jax_bug in checked.open_bugs  # the most severe bugs are unfolded
    assert checked.visible_diff_marks >= 1
    marked = {(m["bug"], m["column"].split()[0]) for m in checked.marks}
    assert (jax_bug, "jax") in marked, checked.marks
    # The reference column is what the others are compared with: never marked itself.
    assert not [m for m in checked.marks if m["column"].endswith("(reference)")]


def test_screenshot_is_a_png_of_the_page(checked: PageCheck) -> None:
    assert checked.screenshot is not None
    data = checked.screenshot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 20_000


def test_chart_data_counts_what_the_campaign_ran(campaign: Path) -> None:
    store = Store.open(campaign)
    try:
        cases = int(store.totals()["cases"])
        gradient_cases = int(store.counters().get("gradient_cases_run", 0))
        timeline = charts.timeline(store, store.bugs())
        outcomes = charts.outcomes(store)
        confirmed = len(store.bugs("confirmed"))
    finally:
        store.close()
    assert timeline["cases"][-1][1] == cases
    assert len(timeline["confirmed"]) == confirmed >= 1
    assert all(0 <= t <= timeline["end"] for t, _ in timeline["confirmed"])
    assert outcomes["recorded"] and set(outcomes["backends"]) == {"numpy", "torch", "jax"}
    per_backend = [sum(outcomes["counts"][s][i] for s in outcomes["statuses"])
                   for i in range(len(outcomes["backends"]))]
    # every numpy.cumsum case runs on each of the three libraries, but its backward
    # passes (gradient cases) on the two with autodiff only
    expected = [cases - gradient_cases if b == "numpy" else cases for b in outcomes["backends"]]
    assert per_backend == expected, (per_backend, cases, gradient_cases)


def test_screenshot_option_of_the_cli(campaign: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shots" / "r.png"
    proc = dlfuzz_cli("report", str(campaign), "--out", str(tmp_path / "r.html"),
                      "--screenshot", str(shot), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str((tmp_path / "r.html").resolve()), str(shot.resolve())]
    assert "report check:" not in proc.stderr, proc.stderr
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_page_check_script_fails_loudly_without_playwright(page: Path, tmp_path: Path
                                                           ) -> None:
    """The Node script is what both the test and --screenshot trust: a missing tools
    folder is an error exit, never an empty (passing) result."""
    script = Path(charts.__file__).with_name("page_check.js")
    proc = subprocess.run(["node", str(script), str(page), "--tools-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc

"""Must-show of issue 16 item 5: `dlfuzz bisect` finds the release where a real TF.js bug
changed. A short campaign on TF.js 4.1.0 confirms that tf.avgPool3d on tfjs-cpu accepts a
negative stride (4.22.0 rejects it); bisecting over 4.1.0, 4.10.0, 4.22.0 must name 4.10.0
as the first good release and 4.1.0 as the last bad one (the middle probe decides it).
The other direction, a regression, comes from a planted bug: ``planted_tfjs_add_since_4_10``
breaks tfjs-cpu's Add only when the loaded TF.js is 4.10.0 or newer; a campaign on 4.22.0
confirms it, and bisecting (the campaign's preload applied to every probe) must name
4.10.0 as the first bad release and 4.1.0 as the last good one.
TF.js 4.10.0 is installed from npm on first use (about 35 s), 4.1.0 and 4.22.0 by
`make install`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli

from dlfuzz.backends.tfjs import install
from dlfuzz.store.db import BugRow, Store

VERSIONS = "4.1.0,4.10.0,4.22.0"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real campaign on TF.js 4.1.0 and the id of its avgPool3d stride bug."""
    if not (install.is_installed("4.1.0") and install.is_installed("4.22.0")):
        pytest.skip("TF.js 4.1.0 and 4.22.0 are not installed (make install)")
    out = tmp_path_factory.mktemp("bisect") / "old"
    # Every group in violate mode: the stride bug is an accepted invalid input, and with
    # the default share (one group in ten) 200 cases held a violation of the stride
    # constraint in some seeds' streams only. What this file tests is the bisection.
    proc = dlfuzz_cli("run", "--engine", "api", "--backends", "tfjs-cpu", "--tfjs-version",
                      "4.1.0", "--apis", "tf.avgPool3d", "--seed", "1", "--out", str(out),
                      "--quiet", "--budget", "50s", "--max-cases", "200",
                      "--violate-share", "1", "--batch-size", "50", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, _confirmed_bug(
        out, lambda b: b.api == "tf.avgPool3d" and b.guilty_backend == "tfjs-cpu"
        and "strides" in b.message, "the avgPool3d stride bug of TF.js 4.1.0")


def _confirmed_bug(out: Path, wanted: Callable[[BugRow], bool], what: str) -> str:
    """The id of the campaign's first confirmed bug that ``wanted`` accepts."""
    store = Store.open(out)
    try:
        bugs = [b for b in store.bugs() if b.confirmed and wanted(b)]
    finally:
        store.close()
    assert bugs, f"the campaign did not confirm {what}"
    return bugs[0].id


def test_bisect_names_the_release_that_fixed_a_tfjs_bug(campaign: tuple[Path, str],
                                                        tmp_path: Path) -> None:
    out, bug = campaign
    cache = tmp_path / "cache"
    args = ("bisect", str(out), bug, "--versions", VERSIONS, "--cache-dir", str(cache))
    proc = dlfuzz_cli(*args, "--json", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert (result["direction"], result["last_bad"], result["first_good"]) == \
        ("fix", "4.1.0", "4.10.0"), result
    verdicts = {p["version"]: p["verdict"] for p in result["probes"]}
    assert verdicts == {"4.1.0": "bad", "4.10.0": "good", "4.22.0": "good"}, result
    assert not any(p["cached"] for p in result["probes"])
    assert "4.1.0        bad" in proc.stderr  # each probe is shown as it ends

    t0 = time.monotonic()  # a re-run answers from the verdict cache
    again = dlfuzz_cli(*args, timeout=120)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "fixed in 4.10.0 (first good), last bad 4.1.0" in again.stdout
    assert again.stdout.count("(cached)") == 3, again.stdout
    assert time.monotonic() - t0 < 20

    # Ends that agree (fixed in both) leave nothing to bisect: exit 1, said plainly.
    same = dlfuzz_cli("bisect", str(out), bug, "--versions", "4.10.0,4.22.0",
                      "--cache-dir", str(cache), timeout=120)
    assert same.returncode == 1, same.stdout + same.stderr
    assert "absent in both 4.10.0 and 4.22.0" in same.stderr


@pytest.fixture(scope="module")
def regression(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A campaign on TF.js 4.22.0 with the planted since-4.10.0 Add bug, and the bug's id."""
    if not (install.is_installed("4.1.0") and install.is_installed("4.22.0")):
        pytest.skip("TF.js 4.1.0 and 4.22.0 are not installed (make install)")
    out = tmp_path_factory.mktemp("bisect") / "new"
    # The planted engine's tf.add cases (as in test_planted_tfjs.py): random float32
    # shapes up to 7 wide, so the planted kernel's trigger (last dimension >= 5) is met.
    proc = dlfuzz_cli("run", "--engine", "planted_tfjs_engine:TfjsEngine",
                      "--backends", "tfjs-cpu,tfjs-wasm", "--tfjs-version", "4.22.0",
                      "--apis", "tf.add", "--seed", "1",
                      "--preload", "tfjs-cpu=planted_tfjs_add_since_4_10", "--out", str(out),
                      "--quiet", "--budget", "40s", "--max-cases", "60",
                      "--batch-size", "30", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, _confirmed_bug(
        out, lambda b: b.api == "tf.add" and b.guilty_backend == "tfjs-cpu"
        and b.symptom == "numeric", "the planted Add bug of tfjs-cpu on 4.22.0")


def test_bisect_names_the_release_that_brought_a_tfjs_bug(regression: tuple[Path, str],
                                                          tmp_path: Path) -> None:
    out, bug = regression
    proc = dlfuzz_cli("bisect", str(out), bug, "--versions", VERSIONS,
                      "--cache-dir", str(tmp_path / "cache"), "--json", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert (result["direction"], result["first_bad"], result["last_good"]) == \
        ("regression", "4.10.0", "4.1.0"), result
    assert result["last_bad"] is None and result["first_good"] is None, result
    verdicts = {p["version"]: p["verdict"] for p in result["probes"]}
    assert verdicts == {"4.1.0": "good", "4.10.0": "bad", "4.22.0": "bad"}, result

    # Without the campaign's preload the reproducer meets the real kernel everywhere.
    clean = dlfuzz_cli("bisect", str(out), bug, "--versions", "4.10.0,4.22.0", "--no-preload",
                       "--cache-dir", str(tmp_path / "cache"), timeout=300)
    assert clean.returncode == 1, clean.stdout + clean.stderr
    assert "absent in both 4.10.0 and 4.22.0" in clean.stderr

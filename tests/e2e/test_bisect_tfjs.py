"""Must-show of issue 16 item 5: `dlfuzz bisect` finds the release where a real TF.js bug
changed. A short campaign on TF.js 4.1.0 confirms that tf.avgPool3d on tfjs-cpu accepts a
negative stride (4.22.0 rejects it); bisecting over 4.1.0, 4.10.0, 4.22.0 must name 4.10.0
as the first good release and 4.1.0 as the last bad one (the middle probe decides it).
TF.js 4.10.0 is installed from npm on first use (about 35 s), 4.1.0 and 4.22.0 by
`make install`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli

from dlfuzz.backends.tfjs import install
from dlfuzz.store.db import Store

VERSIONS = "4.1.0,4.10.0,4.22.0"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real campaign on TF.js 4.1.0 and the id of its avgPool3d stride bug."""
    if not (install.is_installed("4.1.0") and install.is_installed("4.22.0")):
        pytest.skip("TF.js 4.1.0 and 4.22.0 are not installed (make install)")
    out = tmp_path_factory.mktemp("bisect") / "old"
    proc = dlfuzz_cli("run", "--engine", "api", "--backends", "tfjs-cpu", "--tfjs-version",
                      "4.1.0", "--apis", "tf.avgPool3d", "--seed", "1", "--out", str(out),
                      "--quiet", "--budget", "50s", "--max-cases", "200",
                      "--batch-size", "50", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    store = Store.open(out)
    try:
        bugs = [b for b in store.bugs() if b.confirmed and b.api == "tf.avgPool3d"
                and b.guilty_backend == "tfjs-cpu" and "strides" in b.message]
    finally:
        store.close()
    assert bugs, "the campaign did not confirm the avgPool3d stride bug of TF.js 4.1.0"
    return out, bugs[0].id


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

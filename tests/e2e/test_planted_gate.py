"""The CI gate on a real planted bug: ``planted_torch_cumsum`` (a wrong result in
``torch.cumsum`` for float32 scans of length >= 7) preloaded in the torch worker.

One short numpy-api campaign (numpy, torch; cumsum only) run with ``--fail-on
wrong-result`` exits 1; ``findings --fail-on wrong-result`` exits 1; after ``dlfuzz
baseline`` the same with ``--baseline`` exits 0 and lists it as known; a resumed run with
the baseline passes the gate; in a campaign without the plant the baseline entry's
reproducer passes and it is reported fixed. SARIF validates against the published schema
and JUnit XML has the failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from executor_support import dlfuzz_cli
from junitparser import Failure, JUnitXml

from dlfuzz.triage.baseline import ReproEnv, check_entry, load_baseline

PLANT = "planted_torch_cumsum"
KEY = "torch/cumsum/wrong-result"
SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gate") / "c"
    proc = dlfuzz_cli("run", "--engine", "numpy-api", "--backends", "numpy,torch",
                      "--apis", "numpy.cumsum", "--budget", "30s", "--seed", "1",
                      "--out", str(out), "--preload", f"torch={PLANT}", "--quiet",
                      "--fail-on", "wrong-result", timeout=600)
    # The run itself is the gate: the planted wrong result fails it.
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"FAILED, 1 new confirmed root cause(s) at or above wrong-result: {KEY}" \
        in proc.stderr
    return out


@pytest.fixture(scope="module")
def known(campaign: Path) -> Path:
    path = campaign.parent / "known.json"
    proc = dlfuzz_cli("baseline", str(campaign), "--out", str(path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return path


def test_findings_fail_on_wrong_result_exits_1_and_0_with_the_baseline(campaign, known):
    bad = dlfuzz_cli("findings", str(campaign), "--fail-on", "wrong-result", timeout=120)
    assert bad.returncode == 1 and KEY in bad.stderr, bad.stderr
    # A wrong result is below the crash class: --fail-on crash lets it pass.
    assert dlfuzz_cli("findings", str(campaign), "--fail-on", "crash",
                      timeout=120).returncode == 0
    ok = dlfuzz_cli("findings", str(campaign), "--json", "--baseline", str(known),
                    "--fail-on", "wrong-result", timeout=120)
    assert ok.returncode == 0, ok.stderr
    listing = json.loads(ok.stdout)
    assert [r["root_cause"] for r in listing["known"]] == [KEY] and listing["new"] == []


def test_sarif_validates_and_junit_has_the_failure(campaign, tmp_path):
    sarif = dlfuzz_cli("findings", str(campaign), "--format", "sarif", timeout=120)
    assert sarif.returncode == 0, sarif.stderr
    log = json.loads(sarif.stdout)
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(log)
    run = log["runs"][0]
    result = next(r for r in run["results"] if r["ruleId"] == KEY)
    assert result["level"] == "error"
    index = result["locations"][0]["physicalLocation"]["artifactLocation"]["index"]
    assert "torch.cumsum" in run["artifacts"][index]["contents"]["text"]
    junit = dlfuzz_cli("findings", str(campaign), "--format", "junit", timeout=120)
    assert junit.returncode == 0, junit.stderr
    (tmp_path / "junit.xml").write_text(junit.stdout)
    xml = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    failed = [c for s in xml for c in s if any(isinstance(r, Failure) for r in c.result)]
    assert [(c.classname, c.name) for c in failed] == [("dlfuzz.torch", KEY)]


def test_resumed_run_with_the_baseline_passes_the_gate(campaign, known):
    proc = dlfuzz_cli("run", "--resume", str(campaign), "--budget", "1s", "--quiet",
                      "--baseline", str(known), "--fail-on", "wrong-result", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"1 known root cause(s) found again: {KEY}" in proc.stdout


def test_a_baseline_entry_whose_bug_is_gone_is_reported_fixed(campaign, known, tmp_path):
    entry = next(e for e in load_baseline(known).entries if e.key == KEY)
    # The real torch reproducer: present with the plant loaded, fixed without it.
    assert check_entry(entry, ReproEnv(sys.executable, (PLANT,)),
                       10.0).state == "present"
    assert check_entry(entry, ReproEnv(sys.executable, ()), 10.0).state == "fixed"
    # From the CLI: a campaign without the plant does not show it, and its reproducer,
    # run as that campaign runs torch (no preload), passes.
    clean = tmp_path / "clean"
    proc = dlfuzz_cli("run", "--engine", "numpy-api", "--backends", "numpy", "--apis",
                      "numpy.abs", "--max-cases", "20", "--budget", "10s", "--quiet",
                      "--out", str(clean), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = dlfuzz_cli("findings", str(clean), "--json", "--baseline", str(known),
                         "--fail-on", "wrong-result", timeout=300)
    assert listing.returncode == 0, listing.stderr
    fixed = json.loads(listing.stdout)["fixed"]
    assert [e["key"] for e in fixed] == [KEY] and fixed[0]["verdict"].startswith("OK")

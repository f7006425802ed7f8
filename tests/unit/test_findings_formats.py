"""``dlfuzz findings --format table|json|markdown|sarif|junit`` on a campaign with one bug
of every severity class (and two bugs of one root cause, and a flaky one).

SARIF is checked against the published SARIF 2.1.0 schema (tests/data, Draft-07) with
``jsonschema``; JUnit XML is read by ``xml.etree`` and by ``junitparser``, a JUnit consumer
CI plug-ins build on. The planted-bug campaign in tests/e2e/test_planted_gate.py checks
the same on real reproducers.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from findings_support import Bug, cli, make_campaign
from junitparser import Failure, JUnitXml, Skipped

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"

BUGS = [
    Bug("b0perf", "performance", "torch/conv2d/performance"),
    Bug("b1crash", "crash", "torch/lstm/memory", backends=("torch", "torch-compile")),
    Bug("b2wrong", "wrong-result", "torch/cumsum/wrong-result",
        others={"numpy": 'print("OK: numpy agrees")\n'}),
    Bug("b3special", "special-value", "jax/hypot/special-value", backends=("jax",)),
    Bug("b4incons", "inconsistency", "tf/reshape/status", backends=("tf", "tf-xla")),
    Bug("b5valid", "validation", "torch/dropout/boundary",
        message="p=1.5 accepted | table <b>cell</b> `tick`"),
    Bug("b6wrong", "wrong-result", "torch/cumsum/wrong-result"),  # same root cause as b2
    Bug("b7flaky", "crash", "tf/gather/memory", backends=("tf",), status="flaky"),
]
EXPECTED_LEVELS = {"torch/conv2d/performance": "note", "torch/lstm/memory": "error",
                   "torch/cumsum/wrong-result": "error",
                   "jax/hypot/special-value": "warning", "tf/reshape/status": "warning",
                   "torch/dropout/boundary": "note"}


@pytest.fixture
def camp(tmp_path: Path) -> Path:
    return make_campaign(tmp_path / "camp", BUGS)


def _validate(log: dict) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema,
                                           format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_sarif_validates_one_rule_per_root_cause_levels_and_reproducer_artifacts(camp, capsys):
    code, out, err = cli(["findings", str(camp), "--format", "sarif"], capsys)
    assert code == 0, err
    log = json.loads(out)
    _validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["torch/lstm/memory", "torch/cumsum/wrong-result",
                                        "jax/hypot/special-value", "tf/reshape/status",
                                        "torch/dropout/boundary", "torch/conv2d/performance"]
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in rules} == EXPECTED_LEVELS
    results = run["results"]
    assert len(results) == len(rules)  # b2 and b6 are one root cause; flaky b7 left out
    base = run["originalUriBaseIds"]["CAMPAIGN"]["uri"]
    assert base == camp.resolve().as_uri() + "/"
    for res in results:
        rule = rules[res["ruleIndex"]]
        assert res["ruleId"] == rule["id"] and res["level"] == EXPECTED_LEVELS[rule["id"]]
        loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
        artifact = run["artifacts"][loc["index"]]
        assert artifact["location"]["uri"] == loc["uri"] and loc["uriBaseId"] == "CAMPAIGN"
        script = camp / loc["uri"]
        assert script.name == f"repro_{res['properties']['guilty_backend']}.py"
        assert artifact["contents"]["text"] == script.read_text()
        assert "baselineState" not in res  # no baseline given
    cumsum = next(r for r in results if r["ruleId"] == "torch/cumsum/wrong-result")
    assert cumsum["properties"]["ids"] == ["b2wrong", "b6wrong"]
    related = cumsum["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    assert related["uri"].endswith("b2wrong/repro_numpy.py")


def test_sarif_with_baseline_marks_new_unchanged_and_fixed_absent(camp, tmp_path, capsys):
    known = tmp_path / "known.json"
    old = make_campaign(tmp_path / "old", [
        Bug("o1", "wrong-result", "torch/cumsum/wrong-result"),
        Bug("o2", "crash", "torch/gone/memory", script='print("OK: no crash")\n')])
    assert cli(["baseline", str(old), "--out", str(known)], capsys)[0] == 0
    code, out, err = cli(["findings", str(camp), "--format", "sarif", "--baseline",
                          str(known)], capsys)
    assert code == 0, err
    log = json.loads(out)
    _validate(log)
    states = {r["ruleId"]: r["baselineState"] for r in log["runs"][0]["results"]}
    assert states.pop("torch/cumsum/wrong-result") == "unchanged"
    assert states.pop("torch/gone/memory") == "absent"  # its reproducer passes: fixed
    assert set(states.values()) == {"new"}


def test_junit_parses_with_a_failure_per_confirmed_root_cause_and_backend(camp, capsys):
    code, out, err = cli(["findings", str(camp), "--format", "junit", "--all"], capsys)
    assert code == 0, err
    root = ET.fromstring(out)
    suites = root.findall("testsuite")
    assert len(suites) == 1  # one per campaign
    cases = suites[0].findall("testcase")
    # Root cause x backend: lstm and reshape showed on two backends each; flaky b7 too.
    names = sorted((c.get("classname"), c.get("name")) for c in cases)
    assert ("dlfuzz.torch-compile", "torch/lstm/memory") in names
    assert ("dlfuzz.tf-xla", "tf/reshape/status") in names
    assert len(cases) == 9
    path = camp.parent / "junit.xml"
    path.write_text(out)
    xml = JUnitXml.fromfile(str(path))
    outcomes = {(case.classname, case.name): [type(r) for r in case.result]
                for suite in xml for case in suite}
    failures = [k for k, v in outcomes.items() if Failure in v]
    assert len(failures) == 8 and xml.failures == 8  # every confirmed root cause x backend
    assert outcomes[("dlfuzz.tf", "tf/gather/memory")] == [Skipped]  # flaky: not a failure
    fail = next(c for s in xml for c in s if c.name == "torch/cumsum/wrong-result")
    text = fail.result[0].text or ""
    assert "repro_torch.py" in text and fail.result[0].message.startswith("wrong-result:")


def test_markdown_has_a_heading_per_severity_and_a_row_per_root_cause(camp, capsys):
    code, out, err = cli(["findings", str(camp), "--format", "markdown"], capsys)
    assert code == 0, err
    headings = [line for line in out.splitlines() if line.startswith("## ")]
    assert headings == ["## crash (1)", "## wrong-result (1)", "## special-value (1)",
                        "## inconsistency (1)", "## validation (1)", "## performance (1)"]
    rows = [line for line in out.splitlines() if line.startswith("| b")]
    assert len(rows) == 6
    # Every row has the 6 columns: the message's pipe and tags are escaped, not cells.
    assert all(line.replace("\\|", "").count("|") == 7 for line in rows), rows
    boundary = next(r for r in rows if "dropout" in r)
    assert "<b>" not in boundary and "\\|" in boundary
    assert str(camp.resolve() / "bugs" / "b2wrong" / "repro_torch.py") in out


def test_table_fits_80_columns_with_known_bugs_and_long_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    camp = make_campaign(tmp_path / ("c" + "x" * 90), BUGS)
    known = tmp_path / "known.json"
    assert cli(["baseline", str(camp), "--out", str(known)], capsys)[0] == 0
    new = make_campaign(tmp_path / "new", [*BUGS, Bug("b9new" + "0" * 8, "crash",
                                                      "tf/very_long_operation_name/memory")])
    code, out, err = cli(["findings", str(new), "--baseline", str(known)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert sum(line.startswith("b9new00000000 ") for line in lines) == 1  # whole, once
    for b in BUGS[:6]:  # known ones are listed apart, ids whole
        assert sum(line.startswith(b.id + " ") or line.startswith(b.id + "+")
                   for line in lines) == 1, b.id
    assert any(line.startswith("known bugs") or "known bugs" in line for line in lines)


def test_json_alias_and_conflicting_format(camp, capsys):
    code, alias, _ = cli(["findings", str(camp), "--json"], capsys)
    assert code == 0
    code, full, _ = cli(["findings", str(camp), "--format", "json"], capsys)
    assert code == 0 and json.loads(alias) == json.loads(full)
    assert [r["id"] for r in json.loads(full)][:2] == ["b1crash", "b2wrong"]
    code, out, err = cli(["findings", str(camp), "--json", "--format", "sarif"], capsys)
    assert code == 2 and "--json" in err and "--format sarif" in err and not out
    code, _, err = cli(["findings", str(camp), "--stats", "--format", "junit"], capsys)
    assert code == 2 and "--stats" in err

"""The CI gate: ``--fail-on`` exit codes, ``dlfuzz baseline``, ``--baseline`` and the fixed
check, and every bad baseline file as a one-line usage error (exit 2).

The planted-bug campaign (tests/e2e/test_planted_gate.py) shows the same end to end on a
real torch reproducer; here the reproducers are tiny scripts whose exit status says what
a real one would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from findings_support import FAILS, PASSES, Bug, cli, make_campaign

from dlfuzz.cli.gate import at_or_above
from dlfuzz.triage.severity import SEVERITIES


def test_at_or_above_follows_the_severity_order() -> None:
    assert at_or_above("crash", "wrong-result") and at_or_above("wrong-result", "wrong-result")
    assert not at_or_above("special-value", "wrong-result")
    assert all(at_or_above(s, "performance") for s in SEVERITIES)
    assert [s for s in SEVERITIES if at_or_above(s, "crash")] == ["crash"]


def test_fail_on_exits_1_only_for_confirmed_bugs_at_or_above(tmp_path, capsys) -> None:
    camp = make_campaign(tmp_path / "c", [
        Bug("b1", "special-value", "jax/hypot/special-value", backends=("jax",)),
        Bug("b2", "crash", "tf/gather/memory", backends=("tf",), status="flaky")])
    expected = {"crash": 0, "wrong-result": 0, "special-value": 1, "inconsistency": 1,
                "validation": 1, "performance": 1}
    for severity, want in expected.items():
        code, out, err = cli(["findings", str(camp), "--all", "--json", "--fail-on",
                              severity], capsys)
        assert code == want, (severity, err)
        assert json.loads(out)  # stdout stays machine-readable; the verdict is on stderr
        assert ("FAILED" if want else "passed") in err
    assert cli(["findings", str(camp)], capsys)[0] == 0  # no --fail-on: no gate
    code, _, err = cli(["findings", str(camp), "--fail-on", "serious"], capsys)
    assert code == 2 and "--fail-on" in err and "invalid choice" in err


def test_baseline_round_trip_known_never_fails_and_new_ones_do(tmp_path, capsys) -> None:
    old = make_campaign(tmp_path / "old", [Bug("o1", "wrong-result",
                                               "torch/cumsum/wrong-result")])
    known = tmp_path / "known.json"
    code, out, err = cli(["baseline", str(old), "--out", str(known)], capsys)
    assert code == 0, err
    data = json.loads(known.read_text())
    entry = data["bugs"][0]
    assert data["format"] == "dlfuzz-baseline" and entry["key"] == "torch/cumsum/wrong-result"
    assert entry["severity"] == "wrong-result" and entry["backends"] == ["torch"]
    assert entry["reproducer"]["content"] == FAILS
    assert entry["reproducer"]["path"].endswith("bugs/o1/repro_torch.py")
    # A later campaign: the same root cause under another id, plus a new crash.
    new = make_campaign(tmp_path / "new", [
        Bug("n1", "wrong-result", "torch/cumsum/wrong-result"),
        Bug("n2", "crash", "torch/lstm/memory")])
    code, out, err = cli(["findings", str(new), "--json", "--baseline", str(known),
                          "--fail-on", "wrong-result"], capsys)
    assert code == 1 and "torch/lstm/memory" in err
    listing = json.loads(out)
    assert [r["id"] for r in listing["known"]] == ["n1"]
    assert [r["id"] for r in listing["new"]] == ["n2"]
    assert listing["fixed"] == [] and listing["not_seen"] == []
    code, _, err = cli(["baseline", str(new), "--out", str(known)], capsys)
    assert code == 0
    code, _, err = cli(["findings", str(new), "--baseline", str(known), "--fail-on",
                        "crash"], capsys)
    assert code == 0 and "2 known root cause(s)" in err


def test_entries_not_found_again_are_rechecked_with_their_reproducer(tmp_path, capsys):
    crash_script = 'raise RuntimeError("no library here")\n'
    old = make_campaign(tmp_path / "old", [
        Bug("o1", "wrong-result", "torch/fixed/wrong-result", script=PASSES),
        Bug("o2", "wrong-result", "torch/still/wrong-result", script=FAILS),
        Bug("o3", "crash", "torch/broken/memory", script=crash_script)])
    known = tmp_path / "known.json"
    assert cli(["baseline", str(old), "--out", str(known)], capsys)[0] == 0
    # The campaign folder is gone: the recorded content is what runs.
    for path in (old / "bugs").rglob("repro_*.py"):
        path.unlink()
    new = make_campaign(tmp_path / "new", [Bug("n1", "crash", "torch/lstm/memory")])
    code, out, err = cli(["findings", str(new), "--json", "--baseline", str(known)], capsys)
    assert code == 0, err
    listing = json.loads(out)
    assert [e["key"] for e in listing["fixed"]] == ["torch/fixed/wrong-result"]
    assert listing["fixed"][0]["verdict"] == "OK: fixed here"
    states = {e["key"]: e["state"] for e in listing["not_seen"]}
    # A script failing without a verdict says nothing about the library: never "fixed".
    assert states == {"torch/still/wrong-result": "present",
                      "torch/broken/memory": "unchecked"}
    code, out, _ = cli(["findings", str(new), "--baseline", str(known)], capsys)
    assert "fixed       torch/fixed/wrong-result" in out
    code, out, err = cli(["findings", str(new), "--json", "--baseline", str(known),
                          "--no-check-fixed"], capsys)
    listing = json.loads(out)
    assert listing["fixed"] == [] and "re-checking" not in err
    assert {e["state"] for e in listing["not_seen"]} == {"not-checked"}


def test_baseline_merge_keeps_entries_of_other_campaigns(tmp_path, capsys) -> None:
    known = tmp_path / "known.json"
    tf = make_campaign(tmp_path / "tf", [Bug("t1", "crash", "tf/gather/memory",
                                             backends=("tf",))])
    torch = make_campaign(tmp_path / "torch", [Bug("p1", "crash", "torch/lstm/memory")])
    assert cli(["baseline", str(tf), "--out", str(known)], capsys)[0] == 0
    code, out, _ = cli(["baseline", str(torch), "--out", str(known), "--merge"], capsys)
    assert code == 0 and "+1 kept" in out
    keys = [e["key"] for e in json.loads(known.read_text())["bugs"]]
    assert keys == ["torch/lstm/memory", "tf/gather/memory"]
    assert cli(["baseline", str(torch), "--out", str(known)], capsys)[0] == 0
    assert [e["key"] for e in json.loads(known.read_text())["bugs"]] == ["torch/lstm/memory"]


BAD_FILES = [
    (None, "no such file"),
    ("{not json", "not valid JSON (line 1"),
    ('{"bugs": []}', "not a dlfuzz baseline"),
    ('{"format": "dlfuzz-baseline", "version": 9, "bugs": []}', "newer dlfuzz"),
    ('{"format": "dlfuzz-baseline", "version": 1, "bugs": {}}', '"bugs" must be a list'),
    ('{"format": "dlfuzz-baseline", "version": 1, "bugs": [{"severity": "crash"}]}',
     'bugs[0]: "key"'),
    ('{"format": "dlfuzz-baseline", "version": 1, "bugs": [{"key": "a/b/c", '
     '"severity": "fatal"}]}', "severity 'fatal' is not one of"),
    ('{"format": "dlfuzz-baseline", "version": 1, "bugs": [{"key": "a/b/c", '
     '"reproducer": {"backend": "torch", "name": "../x.py"}}]}', "must be a file name"),
]


@pytest.mark.parametrize(("text", "problem"), BAD_FILES)
def test_a_bad_baseline_is_one_usage_error_naming_the_file(tmp_path, capsys, text, problem):
    camp = make_campaign(tmp_path / "c", [Bug("b1", "crash", "torch/lstm/memory")])
    path = tmp_path / "known.json"
    if text is not None:
        path.write_text(text)
    code, out, err = cli(["findings", str(camp), "--baseline", str(path)], capsys)
    assert code == 2 and not out
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"--baseline {path}" in err and problem in err, err


def test_run_checks_the_gate_options_before_a_folder_exists(tmp_path, capsys) -> None:
    out = tmp_path / "never"
    base = ["run", "--engine", "numpy-api", "--backends", "numpy", "--out", str(out)]
    code, _, err = cli([*base, "--baseline", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "missing.json: no such file" in err
    code, _, err = cli([*base, "--check-fixed"], capsys)
    assert code == 2 and "--check-fixed" in err and "--baseline" in err
    code, _, err = cli([*base, "--fail-on", "bad"], capsys)
    assert code == 2 and "--fail-on" in err
    assert not out.exists()


def test_baseline_out_must_be_a_writable_file(tmp_path, capsys) -> None:
    camp = make_campaign(tmp_path / "c", [Bug("b1", "crash", "torch/lstm/memory")])
    code, _, err = cli(["baseline", str(camp), "--out", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    code, _, err = cli(["baseline", str(camp), "--out", str(tmp_path / "no" / "k.json")],
                       capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = cli(["baseline", str(tmp_path / "nothing"), "--out",
                        str(tmp_path / "k.json")], capsys)
    assert code == 2 and not (tmp_path / "k.json").exists()


def test_help_lists_the_exit_codes(capsys) -> None:
    code, out, _ = cli(["--help"], capsys)
    assert code == 0
    for line in ("0    success", "1    with --fail-on", "2    usage error",
                 "3    internal error", "130  interrupted"):
        assert line in out, out
    _, run_help, _ = cli(["run", "--help"], capsys)
    assert "--fail-on" in run_help and "--check-fixed" in run_help
    _, findings_help, _ = cli(["findings", "--help"], capsys)
    assert "--no-check-fixed" in findings_help and "sarif" in findings_help


def test_baseline_path_recorded_is_absolute(tmp_path, capsys, monkeypatch) -> None:
    make_campaign(tmp_path / "c", [Bug("b1", "crash", "torch/lstm/memory")])
    monkeypatch.chdir(tmp_path)
    assert cli(["baseline", "c", "--out", "known.json"], capsys)[0] == 0
    entry = json.loads(Path(tmp_path / "known.json").read_text())["bugs"][0]
    assert Path(entry["reproducer"]["path"]).is_absolute()

"""The peer benchmark (NNSmith vs dlfuzz): what it counts from the observers' files, the
campaign DB and NNSmith's bug folders; its patches; its venv steps and their errors. No
NNSmith here: every file is written by the test."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchmark_scripts import load

from dlfuzz.store.db import BugRow, Store

peers = load("peers")

EXC = "bug-Symptom.EXCEPTION-Stage.COMPILATION-{}"
MISMATCH = "bug-Symptom.INCONSISTENCY-Stage.VERIFICATION-{}"


def _observed(path: Path, start: float, models: list[dict], end: dict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"event": "start", "t": start}, *({"event": "model", **m} for m in models)]
    if end is not None:
        lines.append({"event": "end", "t": start + 100, **end})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _model(t: float, nodes: int, ops: list[str], dtypes: list[str], **more: object) -> dict:
    return {"t": t, "nodes": nodes, "ops": ops, "dtypes": dtypes, **more}


def test_report_folder_names_parse_to_symptom_and_stage():
    assert peers.parse_report(EXC.format(11)) == ("exception", "compilation")
    assert peers.parse_report(MISMATCH.format(0)) == ("inconsistency", "verification")
    assert peers.parse_report("bug-whatever") is None
    assert peers.parse_report("") is None


def test_summary_counts_the_models_of_the_window_only(tmp_path):
    path = tmp_path / "observed.jsonl"
    _observed(path, 1000.0, [
        _model(1001.0, 4, ["core.Add", "core.ReLU", "core.Add", "core.ArgMax"],
               ["float32", "float32", "float32", "int64"], ok=True, inputs=1),
        _model(1009.0, 2, ["core.Sin", "core.Cos"], ["float16", "float16"], ok=False,
               report=EXC.format(0), inputs=1),
        _model(1010.0, 6, ["core.Add"] * 6, ["float64"] * 6, ok=False,
               report=MISMATCH.format(1), inputs=1),
        _model(1010.5, 99, ["core.Late"], ["int8"], ok=True, inputs=1),  # after 10 s
    ])
    r = peers.summarise("NNSmith", peers.read_observed(path), 10.0)
    assert r.models == 3 and r.per_s == pytest.approx(0.3)
    assert r.nodes == pytest.approx(4.0) and r.inputs == pytest.approx(1.0)
    assert set(r.ops) == {"core.Add", "core.ReLU", "core.ArgMax", "core.Sin", "core.Cos"}
    assert r.ops["core.Add"] == 8
    assert r.dtypes == {"float32": 3, "int64": 1, "float16": 2, "float64": 6}
    # passed, and the output mismatch: both ran; the ORT exception: not
    assert r.both_ran == 2
    assert any("1 model(s) ended after the 10 s window" in n for n in r.notes)


def test_a_loop_that_never_started_counts_nothing(tmp_path):
    r = peers.summarise("dlfuzz", peers.read_observed(tmp_path / "missing.jsonl"), 10.0)
    assert r.models == 0 and r.per_s == 0.0
    assert "never started" in r.notes[0]


def test_a_broken_observer_line_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "observed.jsonl"
    path.write_text('{"event": "start", "t": 1}\n{not json\n')
    with pytest.raises(peers.PeerError, match=r"observed.jsonl:2: not a JSON line"):
        peers.read_observed(path)


def test_nnsmith_reports_are_those_of_the_counted_models(tmp_path):
    folder = tmp_path / "nnsmith"
    _observed(folder / peers.OBSERVED, 0.0, [
        _model(1.0, 1, ["core.Erf"], ["float64"], ok=False, report=EXC.format(0)),
        _model(2.0, 1, ["core.Add"], ["float32"], ok=False, report=EXC.format(1)),
        _model(3.0, 1, ["core.Add"], ["float32"], ok=False, report=MISMATCH.format(2)),
        _model(4.0, 1, ["core.Add"], ["float32"], ok=True),
        _model(11.0, 1, ["core.Add"], ["float32"], ok=False, report=EXC.format(3)),
    ], end={"models": 5, "reports": 4, "failed_make": 0})
    for i, name in enumerate([EXC, EXC, MISMATCH, EXC]):
        (folder / "reports" / name.format(i)).mkdir(parents=True)
    r = peers.nnsmith_result(folder, 10.0)
    assert r.models == 4 and r.reports == 3
    assert r.report_lines == ["exception at compilation: 2",
                              "inconsistency at verification: 1"]
    assert any("4 bug folders" in n and "3 of them" in n for n in r.notes)
    assert r.confirmed is None


def _bug(i: int, status: str, root_cause: str) -> BugRow:
    now = time.time()
    return BugRow(id=f"b{i}", signature=f"sig{i}", symptom="numeric", guilty_backend="ort",
                  api="Conv2D", stage="run", message=f"message {i}", status=status,
                  occurrences=1, case_blob="x", reduced_blob=None, confirm_runs=2,
                  confirm_hits=2, dir=None, details={}, created_at=now, updated_at=now,
                  severity="wrong-result", root_cause=root_cause)


def test_dlfuzz_counts_raw_findings_from_the_db_and_bugs_from_the_listing(tmp_path):
    folder = tmp_path / "dlfuzz"
    _observed(folder / peers.OBSERVED, 0.0, [
        _model(1.0, 10, ["Conv2D"] * 10, ["float16"] * 10, ran=False, findings=0, inputs=4),
        _model(2.0, 8, ["Dense"] * 8, ["float32"] * 8, ran=True, findings=3, inputs=4),
    ])
    store = Store.create(folder / "campaign",
                         {"settings": {"engine_settings": {"inputs_per_model": 4}}})
    health = {"torch": {"version": "2", "cases": 4, "crashes": 0, "timeouts": 0,
                        "restarts": 0}}
    store.finish_batch(0, 4, 3, 1.0, {}, health)
    store.finish_batch(1, 4, 2, 1.0, {}, health)
    store.add_bug(_bug(1, "confirmed", "ort/Conv2D/numeric"))
    store.add_bug(_bug(2, "flaky", "ort/Dense/numeric"))
    store.close()
    (folder / "findings.json").write_text(json.dumps([
        {"id": "b1", "severity": "wrong-result", "guilty_backend": "ort", "api": "Conv2D",
         "message": "far  off\nby 1", "root_cause": "ort/Conv2D/numeric"}]))
    r = peers.dlfuzz_result(folder, 10.0)
    assert r.models == 2 and r.inputs == pytest.approx(4.0) and r.both_ran == 1
    assert r.reports == 5
    assert r.report_lines == ["2 distinct signatures (bug rows): confirmed 1, flaky 1"]
    assert (r.confirmed, r.root_causes) == (1, 1)
    assert r.confirmed_lines == ["[wrong-result] ort Conv2D: far off by 1"]
    assert any("8 cases in 2 batches = 2 models of 4 inputs" in n for n in r.notes)


def test_the_table_gives_the_ratio_of_throughputs():
    nn = peers.Result("NNSmith", 10.0, models=50, inputs=1, nodes=10.0, reports=7,
                      both_ran=45)
    nn.dtypes.update({"float32": 3, "int64": 1})
    dl = peers.Result("dlfuzz", 10.0, models=100, inputs=4, nodes=5.0, reports=2,
                      confirmed=1, root_causes=1, both_ran=100)
    dl.dtypes.update({"float32": 1})
    rows = {line.strip().split("  ")[0]: line.split() for line in peers.table(nn, dl)[1:]}
    assert rows["models/s"][-3:] == ["5.00", "10.00", "2.00x"]
    assert rows["nodes/s"][-3:] == ["50.0", "50.0", "1.00x"]
    assert rows["float32 (of op outputs)"][-2:] == ["75.0%", "100.0%"]
    assert rows["int64 (of op outputs)"][-2:] == ["25.0%", "0.0%"]
    assert rows["both libraries ran"][-2:] == ["90.0%", "100.0%"]
    assert rows["confirmed bugs (root causes)"][-3:] == ["-", "1", "(1)"]
    empty = peers.table(peers.Result("NNSmith", 10.0), dl)
    assert [line for line in empty if line.startswith("models/s")][0].endswith("-")


def _package(root: Path) -> Path:
    pkg = root / "nnsmith"
    (pkg / "backends").mkdir(parents=True)
    (pkg / "materialize" / "onnx").mkdir(parents=True)
    (pkg / "backends" / "onnxruntime.py").write_text(
        "sess = ort.InferenceSession(\n    onnx._serialize(model.native_model),\n)\n")
    (pkg / "materialize" / "onnx" / "__init__.py").write_text(
        "            torch.onnx.export(\n                model,\n"
        "                opset_version=14,\n            )\n")
    return pkg


def test_patches_apply_once_and_say_so(tmp_path):
    pkg = _package(tmp_path)
    first = peers.apply_patches(pkg)
    assert len(first) == 2 and all("(applied now)" in line and "why:" in line
                                   for line in first)
    assert "SerializeToString()" in (pkg / "backends" / "onnxruntime.py").read_text()
    assert "dynamo=False," in (pkg / "materialize" / "onnx" / "__init__.py").read_text()
    again = peers.apply_patches(pkg)
    assert all("(already applied)" in line for line in again)
    assert (pkg / "materialize" / "onnx" / "__init__.py").read_text().count("dynamo") == 1


def test_a_file_of_another_nnsmith_is_refused(tmp_path):
    pkg = _package(tmp_path)
    (pkg / "backends" / "onnxruntime.py").write_text("something else\n")
    with pytest.raises(peers.PeerError, match="holds neither the text to patch") as exc:
        peers.apply_patches(pkg)
    assert "onnxruntime.py" in str(exc.value) and "fix:" in str(exc.value)


def test_a_failed_step_names_the_step_the_command_and_the_fix():
    cmd = [sys.executable, "-c", "import sys; print('WARNING: noise'); "
           "print('ERROR: No matching distribution'); sys.exit(3)"]
    with pytest.raises(peers.PeerError) as exc:
        peers.run_step("install NNSmith into its venv", cmd, "check the index")
    text = str(exc.value)
    assert text.startswith("install NNSmith into its venv failed (exit 3): ")
    output = text.splitlines()[1:]  # the command is on the first line
    assert output[0] == "  ERROR: No matching distribution"
    assert not any("WARNING" in line for line in output)
    assert text.endswith("fix: check the index")
    with pytest.raises(peers.PeerError, match="create venv failed: /no/such/python"):
        peers.run_step("create venv", ["/no/such/python"], "x")


def test_a_complete_venv_is_reused_and_an_incomplete_one_installed(tmp_path, monkeypatch):
    pins = {"torch": "2.13.0", "onnx": "1.23.2"}
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    calls: list[tuple[str, list[str]]] = []

    def fake(step: str, cmd: list[str], fix: str, **kw: object):
        calls.append((step, cmd))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(peers, "run_step", fake)
    said: list[str] = []
    python = peers.ensure_venv(venv, pins, say=said.append)  # no marker: installs
    assert python == venv / "bin" / "python"
    assert [c[1][-1] for c in calls][0] == "torch==2.13.0"  # torch first, alone
    assert calls[1][1][5:7] == ["nnsmith==0.1.0", "torch==2.13.0"]
    assert json.loads((venv / peers.MARKER).read_text())["onnx"] == "1.23.2"
    calls.clear()
    peers.ensure_venv(venv, pins, say=said.append)  # marker matches: nothing run
    assert calls == [] and said[-1].endswith("(complete, reused)")
    peers.ensure_venv(venv, {**pins, "onnx": "1.24.0"}, say=said.append)  # pins moved
    assert len(calls) == 2


def test_main_summarises_a_kept_folder_and_refuses_one_without_run_json(tmp_path, capsys):
    root = tmp_path / "out"
    _observed(root / "nnsmith" / peers.OBSERVED, 0.0,
              [_model(1.0, 10, ["core.Add"], ["float32"], ok=True)])
    _observed(root / "dlfuzz" / peers.OBSERVED, 0.0,
              [_model(1.0, 10, ["Add"], ["float32"], ran=True, inputs=4)] * 3)
    info = {"seconds": 10, "seed": 1, "venv": "/v", "patches": ["  a (applied now)"],
            "versions": {"NNSmith venv": {"nnsmith": "0.1.0"}},
            "runs": {"nnsmith": {"command": ["py", "x"], "env": {"A": "b c"}, "wall_s": 12.0,
                                 "returncode": 0, "log": "/l", "others_cores": 0.0},
                     "dlfuzz": {"command": ["py", "y"], "env": {}, "wall_s": 12.0,
                                "returncode": 0, "log": "/m", "others_cores": 64.0}}}
    (root / "run.json").write_text(json.dumps(info))
    assert peers.main(["--from", str(root)]) == 0
    out = capsys.readouterr().out
    assert [ln for ln in out.splitlines() if ln.startswith("models/s")][0].split() == \
        ["models/s", "0.10", "0.30", "3.00x"]
    assert "A='b c' py x" in out and "nnsmith 0.1.0" in out and "(applied now)" in out
    warnings = [ln for ln in out.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "64.0 of" in warnings[0] and "dlfuzz run" in warnings[0]
    with pytest.raises(peers.PeerError, match="no readable run.json"):
        peers.main(["--from", str(tmp_path)])
    with pytest.raises(peers.PeerError, match="give one"):
        peers.main(["--from", str(root), "--out", str(tmp_path / "x")])


def test_the_load_of_other_processes_is_measured_around_a_run(tmp_path):
    busy = peers.busy_cpu_s()
    if busy is None:
        pytest.skip("no /proc/stat here")
    run = peers.run_tool("sleep", [sys.executable, "-c", "import time; time.sleep(0.3)"],
                         {"X": "1"}, tmp_path / "log", timeout=60)
    assert run.returncode == 0 and run.env == {"X": "1"} and run.wall_s >= 0.3
    assert run.others_cores is not None and run.others_cores >= 0.0

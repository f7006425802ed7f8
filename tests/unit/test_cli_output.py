"""The CLI's output under hostile text and paths: literal, one line per error, no traceback.

Each case here once crashed or lied: library text parsed as rich markup (``[dim]``
vanished, ``[/x]`` raised), tracebacks for filesystem errors and closed pipes, a findings
table that split bug ids, a ``run --help`` without defaults.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from findings_support import cli

import dlfuzz
from dlfuzz.cli import backends_cmd, findings_cmd
from dlfuzz.store.db import BugRow, Store

MARKUP = "shape [batch, 3] is [dim] odd [/x] here"
SRC = str(Path(dlfuzz.__file__).resolve().parents[1])  # workers import this same tree


def make_campaign(root: Path, messages: list[str]) -> Path:
    store = Store.create(root, {"settings": {}})
    for i, msg in enumerate(messages):
        now = time.time()
        store.add_bug(BugRow(
            id=f"b{i:010x}", signature=f"sig{i}", symptom="crash", guilty_backend="torch",
            # One API per bug: bugs of one API, symptom and mechanism are one root
            # cause, one line of the table.
            api=f"torch.nn.functional.conv_transpose3d_{i}", stage="run", message=msg,
            status="confirmed", occurrences=3, case_blob="x", reduced_blob=None,
            confirm_runs=2, confirm_hits=2, dir=None, details={}, created_at=now,
            updated_at=now))
    store.close()
    return root


def test_findings_prints_library_text_literally(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    root = make_campaign(tmp_path / "c", [MARKUP])
    code, out, err = cli(["findings", str(root)], capsys)
    assert code == 0, err
    assert MARKUP in out


def test_findings_path_with_closing_tag(tmp_path, capsys):
    root = make_campaign(tmp_path / "c[/x]", [MARKUP])
    code, out, err = cli(["findings", str(root)], capsys)
    assert code == 0, err
    assert "c[/x]" in out and "Traceback" not in err


def test_findings_table_fits_80_columns_and_keeps_ids_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = make_campaign(tmp_path / "c", [MARKUP * 4, "short", "x\ny"])
    code, out, _ = cli(["findings", str(root)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    for i in range(3):
        bug_id = f"b{i:010x}"
        assert sum(line.startswith(bug_id) for line in lines) == 1
    assert any("…" in line for line in lines)  # the long message is cut, not wrapped


def test_backends_prints_reasons_literally(capsys, monkeypatch):
    class FakePool:
        def __init__(self, configs):
            self.unavailable = {c.backend: f"import failed: {MARKUP}" for c in configs}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def start(self, on_ready=None):
            return {}

    monkeypatch.setattr(backends_cmd, "Pool", FakePool)
    monkeypatch.setenv("COLUMNS", "400")
    code, out, err = cli(["backends"], capsys)
    assert code == 0, err
    assert MARKUP in out
    assert "available" in out


def test_report_out_existing_foreign_folder_is_a_usage_error(tmp_path, capsys):
    root = make_campaign(tmp_path / "c", ["m"])
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    code, out, err = cli(["report", str(root), "--out", str(folder)], capsys)
    assert code == 2
    assert "Traceback" not in err and str(folder) in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_report_out_folder_of_previous_report_is_rewritten(tmp_path, capsys):
    root = make_campaign(tmp_path / "c", ["m"])
    folder = tmp_path / "rep"
    folder.mkdir()
    assert cli(["report", str(root), "--out", str(folder)], capsys)[0] == 0  # empty folder
    code, out, err = cli(["report", str(root), "--out", str(folder)], capsys)
    assert code == 0, err
    assert Path(out.strip()) == (folder / "index.html").resolve()


def test_report_out_missing_parents_are_created(tmp_path, capsys):
    root = make_campaign(tmp_path / "c", [MARKUP])
    out_file = tmp_path / "a" / "b" / "r.html"
    code, out, err = cli(["report", str(root), "--out", str(out_file)], capsys)
    assert code == 0, err
    assert out_file.is_file()


def test_report_out_under_a_file_is_a_usage_error(tmp_path, capsys):
    root = make_campaign(tmp_path / "c", ["m"])
    (tmp_path / "f").write_text("")
    code, _, err = cli(["report", str(root), "--out", str(tmp_path / "f" / "r.html")], capsys)
    assert code == 2
    assert "Traceback" not in err and "is a file" in err


def test_report_out_non_utf8_name(tmp_path, capsys):
    root = make_campaign(tmp_path / "c", ["m"])
    name = os.fsdecode(bytes(tmp_path / "r") + b"\xff.html")
    code, out, err = cli(["report", str(root), "--out", name], capsys)
    assert code == 0, err
    assert "\\udcff" in out or "\\xff" in out
    assert Path(name).is_file()


def test_filesystem_error_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    def boom(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", str(tmp_path / "x[/y]"))

    monkeypatch.setattr(findings_cmd, "run", boom)
    code, _, err = cli(["findings", str(tmp_path)], capsys)
    assert code == 2
    assert err.strip() == f"dlfuzz: error: {tmp_path / 'x[/y]'}: Permission denied"


def test_unexpected_exception_is_exit_3_with_traceback_file(tmp_path, capsys, monkeypatch):
    def boom(args: argparse.Namespace) -> int:
        raise RuntimeError("a dlfuzz bug")

    monkeypatch.setattr(findings_cmd, "run", boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code, _, err = cli(["findings", str(tmp_path)], capsys)
    assert code == 3
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    crash = next(tmp_path.glob("dlfuzz-crash-*.txt"))
    assert "RuntimeError: a dlfuzz bug" in crash.read_text()
    assert str(crash) in err


def test_closed_stdout_ends_quietly(tmp_path):
    root = make_campaign(tmp_path / "c", [MARKUP * 20] * 300)
    code = ("import sys; from dlfuzz.cli.main import main; main(sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", code, "findings", "--json", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == ""
    assert proc.returncode in (0, 1)


@pytest.mark.parametrize("verb", ["run", "findings", "reproduce", "report", "backends",
                                  "specs show", "tfjs install"])
def test_help_shows_defaults(verb, capsys):
    code, out, _ = cli([*verb.split(), "--help"], capsys)
    assert code == 0
    if verb == "run":
        assert "(default: 60s)" in out and "(default: 256)" in out
    if verb == "reproduce":
        assert "(default: 300.0)" in out
    if verb in ("findings", "report", "backends", "specs show", "tfjs install"):
        assert "(default: None)" not in out and "(default: False)" not in out

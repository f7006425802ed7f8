"""Severity, root causes and places in the store, ``findings`` and the report; and a
campaign stored before they existed still opens and lists."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from dlfuzz.cli.main import main
from dlfuzz.report.html import write_report
from dlfuzz.store.db import DB_NAME, FORMAT, BugRow, Store

# The bugs table as dlfuzz wrote it before severity, root_cause and places existed.
OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE batches (idx INTEGER PRIMARY KEY, cases INTEGER NOT NULL,
    findings INTEGER NOT NULL, seconds REAL NOT NULL, finished_at REAL NOT NULL);
CREATE TABLE bugs (
    id TEXT PRIMARY KEY, signature TEXT UNIQUE NOT NULL, symptom TEXT NOT NULL,
    guilty_backend TEXT NOT NULL, api TEXT NOT NULL, stage TEXT NOT NULL,
    message TEXT NOT NULL, status TEXT NOT NULL, occurrences INTEGER NOT NULL DEFAULT 1,
    case_blob TEXT NOT NULL, reduced_blob TEXT, confirm_runs INTEGER NOT NULL DEFAULT 0,
    confirm_hits INTEGER NOT NULL DEFAULT 0, dir TEXT,
    details TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE backends (name TEXT PRIMARY KEY, version TEXT NOT NULL,
    cases INTEGER NOT NULL DEFAULT 0, crashes INTEGER NOT NULL DEFAULT 0,
    timeouts INTEGER NOT NULL DEFAULT 0, restarts INTEGER NOT NULL DEFAULT 0);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


def old_campaign(root: Path) -> Path:
    root.mkdir(parents=True)
    conn = sqlite3.connect(root / DB_NAME)
    conn.executescript(OLD_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('format', ?)", (json.dumps(FORMAT),))
    rows = [("b1", "sig-xla", "numeric", "tf-xla", "tf.math.hypot",
             json.dumps({"special_values": "inputs hold inf, nan"})),
            ("b2", "sig-tf", "numeric", "tf", "tf.math.hypot",
             json.dumps({"special_values": "inputs hold inf, nan"})),
            ("b3", "sig-seg", "crash", "tf", "tf.linalg.tridiagonal_solve", "{}")]
    for i, (bid, sig, symptom, backend, api, details) in enumerate(rows):
        conn.execute("INSERT INTO bugs VALUES (?, ?, ?, ?, ?, 'call', ?, 'confirmed', 2, "
                     "'blob', NULL, 2, 2, NULL, ?, ?, ?)",
                     (bid, sig, symptom, backend, api,
                      "SIGSEGV: worker killed by SIGSEGV" if symptom == "crash" else "off",
                      details, 100.0 + i, 100.0 + i))
    conn.commit()
    conn.close()
    return root


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, _ = capsys.readouterr()
    return int(exc.value.code or 0), out


def test_an_old_campaign_opens_lists_and_gets_severity_and_root_cause(tmp_path, capsys):
    root = old_campaign(tmp_path / "old")
    code, out = cli(["findings", str(root), "--json"], capsys)
    assert code == 0
    records = json.loads(out)
    assert [r["id"] for r in records] == ["b3", "b1", "b2"]  # the crash first
    assert [r["severity"] for r in records] == ["crash", "special-value", "special-value"]
    assert records[0]["root_cause"] == "tf/tridiagonalsolve/memory"
    assert records[1]["root_cause"] == records[2]["root_cause"] == "tf/hypot/special-value"
    assert all(r["places"] for r in records)
    # The columns were added: the migrated store takes new bugs with them.
    store = Store.open(root)
    cols = {r["name"] for r in store.conn.execute("PRAGMA table_info(bugs)")}
    assert {"severity", "root_cause", "places"} <= cols
    store.migrate()  # idempotent
    assert [b.id for b in store.bugs()] == ["b1", "b2", "b3"]
    store.close()
    # The table shows one line per root cause: the two hypot bugs are one line.
    code, out = cli(["findings", str(root)], capsys)
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("b")]
    assert len(lines) == 2 and lines[0].startswith("b3") and lines[1].startswith("b1+1")
    assert "crash 1 · wrong-result 0 · special-value 1" in " ".join(out.split())


def add(store: Store, bid: str, symptom: str, severity: str, key: str,
        places: list[dict]) -> None:
    now = time.time()
    store.add_bug(BugRow(
        id=bid, signature=f"sig-{bid}", symptom=symptom, guilty_backend="torch",
        api="torch.cumsum", stage="call", message=f"message of {bid}", status="confirmed",
        occurrences=sum(p["count"] for p in places), case_blob="x", reduced_blob=None,
        confirm_runs=2, confirm_hits=2, dir=None, details={}, created_at=now,
        updated_at=now, severity=severity, root_cause=key, places=places))


def test_findings_orders_by_class_and_gives_the_new_fields(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    store = Store.create(tmp_path / "c", {"settings": {}})
    place = {"backend": "torch", "api": "torch.cumsum", "dtypes": "float32",
             "symptom": "numeric", "count": 1}
    add(store, "bv", "boundary", "validation", "torch/dropout/accepts-invalid:p", [place])
    add(store, "bs", "numeric", "special-value", "torch/exp/special-value", [place])
    add(store, "bw", "numeric", "wrong-result", "torch/cumsum/wrong-result",
        [place, {**place, "backend": "torch-compile", "dtypes": "float64", "count": 2}])
    add(store, "bp", "performance", "performance", "torch/x/performance", [place])
    add(store, "bi", "status", "inconsistency", "torch/x/error:boom", [place])
    add(store, "bc", "crash", "crash", "torch/x/memory", [place])
    store.add_place("bw", {**place, "backend": "torch-compile", "dtypes": "float64"},
                    "special-value", {"wrong-result": 1, "special-value": 2})
    store.close()
    code, out = cli(["findings", str(tmp_path / "c"), "--json"], capsys)
    records = json.loads(out)
    assert [r["severity"] for r in records] == [
        "crash", "wrong-result", "special-value", "inconsistency", "validation",
        "performance"]
    wrong = records[1]
    assert wrong["root_cause"] == "torch/cumsum/wrong-result"
    assert wrong["occurrences"] == 4  # 3 + the place added
    assert [(p["backend"], p["dtypes"], p["count"]) for p in wrong["places"]] == [
        ("torch", "float32", 1), ("torch-compile", "float64", 3)]
    for k in ("id", "symptom", "guilty_backend", "api", "message", "repro", "signature"):
        assert k in wrong  # the keys scripts used before stay
    code, out = cli(["findings", str(tmp_path / "c")], capsys)
    ids = [ln.split()[0] for ln in out.splitlines() if ln[:2] in
           ("bc", "bw", "bs", "bi", "bv", "bp")]
    assert ids == ["bc", "bw", "bs", "bi", "bv", "bp"]
    assert "torch,torch-compile" in out  # where it appears
    report = write_report(Store.open(tmp_path / "c"), tmp_path / "r.html").read_text()
    assert report.index("bc") < report.index("bw") < report.index("bp")
    assert "Confirmed root causes per class" in report


def test_a_resumed_old_campaign_gets_keys_so_new_findings_merge_into_its_bugs(tmp_path):
    from types import SimpleNamespace

    from dlfuzz.campaign import Campaign

    store = Store.open(old_campaign(tmp_path / "old"))
    Campaign._backfill_root_causes(SimpleNamespace(store=store))  # what a resume runs
    rows = {b.id: b for b in store.bugs()}
    assert rows["b3"].severity == "crash"
    assert rows["b3"].root_cause == "tf/tridiagonalsolve/memory"
    assert rows["b1"].root_cause == "tf/hypot/special-value"
    assert store.confirmed_bug_by_root_cause("tf/hypot/special-value").id == "b1"
    assert rows["b2"].places == [{"backend": "tf", "api": "tf.math.hypot", "dtypes": "?",
                                  "symptom": "numeric", "count": 2}]
    store.close()


def test_an_old_numeric_bug_on_infinite_inputs_is_special_value_by_its_stored_case(tmp_path):
    import numpy as np

    from dlfuzz.cases import ApiCase, Call, Ref, Tensor
    from dlfuzz.store.artifacts import BlobStore
    from dlfuzz.triage.stored import filled

    root = old_campaign(tmp_path / "old")
    inf_case = ApiCase("tf.linalg.expm", (Tensor.from_numpy(np.array([[np.inf]])),),
                       (("tf", Call("tf.linalg.expm", (Ref(0),))),))
    blob = BlobStore(root / "blobs").put(inf_case)
    conn = sqlite3.connect(root / DB_NAME)
    conn.execute("INSERT INTO bugs VALUES ('b4', 'sig-expm', 'numeric', 'tf', "
                 "'tf.linalg.expm', 'call', 'off', 'confirmed', 1, ?, NULL, 2, 2, NULL, "
                 "'{}', 200.0, 200.0)", (blob,))
    conn.commit()
    conn.close()
    store = Store.open(root)
    sev, key, _ = filled(store, store.bug("b4"))
    store.close()
    assert (sev, key) == ("special-value", "tf/matrixexp/special-value")

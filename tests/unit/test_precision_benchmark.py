"""The precision benchmark: the label loader refuses what would skew the number, and a
small made-up campaign (a real store, listed through the real CLI) is scored right."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest
from benchmark_scripts import load

from dlfuzz.errors import UsageError
from dlfuzz.store.db import BugRow, Store

precision = load("precision")


def _write(folder: Path, name: str, labels: dict, **top: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"labels": labels, **top}))
    return path


def _entry(verdict: str = "real", **extra: object) -> dict:
    return {"verdict": verdict, "reason": "why", "checked": "repro run", **extra}


def test_the_shipped_corpus_loads_and_every_label_says_what_was_checked():
    labels = precision.load_labels()
    assert labels, "benchmarks/labels/ holds no labels"
    for label in labels.values():
        assert label.verdict in precision.VERDICTS
        assert label.reason.strip() and label.checked.strip()


def test_loader_reads_keys_and_aliases_across_files(tmp_path):
    _write(tmp_path, "a.json", {"tf/x/crash": _entry(upstream="https://x.org/1",
                                                     aliases=["tf/tf.x/crash"])},
           about="campaign a")
    _write(tmp_path, "b.json", {"torch/y/numeric": _entry("false")})
    labels = precision.load_labels(tmp_path)
    assert set(labels) == {"tf/x/crash", "tf/tf.x/crash", "torch/y/numeric"}
    assert labels["tf/tf.x/crash"] is labels["tf/x/crash"]
    assert labels["tf/x/crash"].file == "a.json"
    assert labels["torch/y/numeric"].verdict == "false"


@pytest.mark.parametrize("entry, message", [
    (_entry("maybe"), "verdict 'maybe' is not one of"),
    ({"verdict": "real", "checked": "x"}, "reason must be a non-empty string"),
    ({"verdict": "real", "reason": "x"}, "checked must be a non-empty string"),
    (_entry(reason="two\nlines"), "reason must be one line"),
    (_entry(upstream="github.com/x"), "must be an https:// link"),
    (_entry(seen="yes"), r"unknown field\(s\) \['seen'\]"),
    (_entry(aliases="k"), "aliases must be a list"),
    ("real", "needs an object"),
])
def test_loader_names_file_and_key_of_a_bad_entry(tmp_path, entry, message):
    path = _write(tmp_path, "bad.json", {"tf/x/crash": entry})
    with pytest.raises(UsageError, match=message) as exc:
        precision.load_labels(tmp_path)
    assert str(path) in str(exc.value) and "'tf/x/crash'" in str(exc.value)


def test_loader_refuses_a_key_labelled_twice_and_malformed_files(tmp_path):
    _write(tmp_path / "twice", "a.json", {"k": _entry()})
    _write(tmp_path / "twice", "b.json", {"other": _entry(aliases=["k"])})
    with pytest.raises(UsageError, match=r"key 'k' is labelled already \(in a.json"):
        precision.load_labels(tmp_path / "twice")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("{")
    with pytest.raises(UsageError, match="x.json: not readable JSON"):
        precision.load_labels(tmp_path / "broken")
    _write(tmp_path / "shape", "x.json", {}, extra=1)
    with pytest.raises(UsageError, match=r"unknown top-level key\(s\) \['extra'\]"):
        precision.load_labels(tmp_path / "shape")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no \\*.json label files"):
        precision.load_labels(tmp_path / "empty")


def _bug(i: int, symptom: str, backend: str, api: str, status: str = "confirmed",
         **more: object) -> BugRow:
    """A bug row; fields a newer store may add (severity, root_cause) when it has them."""
    now = time.time() + i
    values = dict(id=f"b{i:010x}", signature=f"sig{i}", symptom=symptom,
                  guilty_backend=backend, api=api, stage="run", message=f"message {i}",
                  status=status, occurrences=1, case_blob="x", reduced_blob=None,
                  confirm_runs=2, confirm_hits=2 if status == "confirmed" else 1, dir=None,
                  details={}, created_at=now, updated_at=now)
    names = {f.name for f in dataclasses.fields(BugRow)}
    values.update({k: v for k, v in more.items() if k in names})
    for f in dataclasses.fields(BugRow):  # columns added later: their empty value
        if f.name not in values:
            values[f.name] = [] if "places" in f.name else ""
    return BugRow(**values)


@pytest.fixture
def campaign(tmp_path) -> Path:
    """Campaign folder ``root/a``: tf and tf-xla crash on one API (one derived root
    cause), a numpy numeric bug, a torch bug nobody labelled, and a flaky bug."""
    root = tmp_path / "runs"
    store = Store.create(root / "a", {"settings": {}})
    store.add_bug(_bug(1, "crash", "tf", "tf.linalg.tridiagonal_solve"))
    store.add_bug(_bug(2, "crash", "tf-xla", "tf.linalg.tridiagonal_solve"))
    store.add_bug(_bug(3, "numeric", "numpy", "numpy.hypot"))
    store.add_bug(_bug(4, "numeric", "torch", "torch.erf"))
    store.add_bug(_bug(5, "crash", "jax", "jax.numpy.sort", status="flaky"))
    store.close()
    return root


def test_campaign_is_listed_through_the_cli_and_grouped_by_derived_key(campaign):
    bugs = precision.list_bugs(campaign / "a")
    assert len(bugs) == 5  # --all: the flaky one is listed too
    causes, n_derived = precision.root_causes(bugs)
    # ``findings`` fills the root cause of rows stored without one (triage/stored.py).
    assert [rc.key for rc in causes] == ["tf/tridiagonalsolve/crash",
                                         "numpy/hypot/wrong-result",
                                         "torch/erf/wrong-result"]
    assert [len(rc.bugs) for rc in causes] == [2, 1, 1]  # tf and tf-xla: one library
    assert n_derived == 0


def test_scoring_counts_verdicts_per_severity_and_lists_the_unlabelled():
    bugs = [
        {"id": "1", "status": "confirmed", "symptom": "crash", "guilty_backend": "tf",
         "api": "tf.a", "root_cause": "tf/a", "severity": "crash"},
        {"id": "2", "status": "confirmed", "symptom": "crash", "guilty_backend": "tf-xla",
         "api": "tf.a", "root_cause": "tf/a", "severity": "special-value"},
        {"id": "3", "status": "confirmed", "symptom": "numeric", "guilty_backend": "torch",
         "api": "torch.b", "root_cause": "torch/b", "severity": "wrong-result"},
        {"id": "4", "status": "confirmed", "symptom": "numeric", "guilty_backend": "jax",
         "api": "jax.c", "root_cause": "jax/c", "severity": "special-value"},
        {"id": "5", "status": "confirmed", "symptom": "status", "guilty_backend": "jax",
         "api": "jax.d", "root_cause": "jax/d", "severity": "validation",
         "repro": {"jax": "/x/repro_jax.py"}},
        {"id": "6", "status": "flaky", "symptom": "crash", "guilty_backend": "jax",
         "api": "jax.e", "root_cause": "jax/e", "severity": "crash"},
        {"id": "7", "status": "confirmed", "symptom": "numeric", "guilty_backend": "numpy",
         "api": "numpy.f", "root_cause": "numpy/f-new-scheme", "severity": "wrong-result"},
    ]
    labels = {
        "tf/a": precision.Label("tf/a", "real", "r", "c"),
        "torch/b": precision.Label("torch/b", "false", "r", "c"),
        "jax/c": precision.Label("jax/c", "low-value", "r", "c"),
        # labelled under the derived key only: still matches a bug with a newer key
        "numpy/numpy.f/numeric": precision.Label("numpy/numpy.f/numeric", "real", "r", "c"),
    }
    causes, n_derived = precision.root_causes(bugs)
    assert n_derived == 0
    assert [rc.key for rc in causes] == ["tf/a", "torch/b", "jax/c", "jax/d",
                                         "numpy/f-new-scheme"]
    assert causes[0].severity == "crash"  # the most severe place of the root cause
    s = precision.score(causes, labels)
    assert (s.overall.total, s.overall.labelled) == (5, 4)
    assert s.overall.counts == {"real": 2, "low-value": 1, "false": 1}
    assert s.overall.precision() == "2/4 = 50%"
    assert s.high.precision() == "2/3 = 67%"  # crash tf/a, wrong-result torch/b, numpy/f
    assert s.by_severity["special-value"].counts["low-value"] == 1
    assert s.by_severity["validation"].precision() == "-"
    assert [rc.key for rc in s.unlabelled] == ["jax/d"]
    assert [rc.key for rc in s.by_derived] == ["numpy/f-new-scheme"]
    lines = precision.unlabelled_lines(s.unlabelled)
    assert any("repro jax: /x/repro_jax.py" in line for line in lines)
    assert "derived key: jax/jax.d/status" in "\n".join(lines)


def test_main_scores_kept_folders_and_prints_plain_numbers(campaign, tmp_path, capsys):
    labels = tmp_path / "labels"
    _write(labels, "a.json", {
        "tf/tf.linalg.tridiagonal_solve/crash": _entry("real"),
        "numpy/numpy.hypot/numeric": _entry("false"),
    })
    assert precision.main(["--from", str(campaign), "--only", "a", "--labels",
                           str(labels)]) == 0
    out = capsys.readouterr().out
    assert "5 bugs listed (1 not confirmed, left out), 4 confirmed in 3 root causes" in out
    assert ("3 root causes, 2 labelled: 1 real, 0 low-value, 1 false, 1 unlabelled; "
            "precision 1/2 = 50%") in out
    assert "torch/torch.erf/numeric" in out.split("unlabelled root causes")[1]
    assert out.strip().splitlines()[-1].startswith("  crash+wrong")
    with pytest.raises(UsageError, match="unknown campaign 'z'"):
        precision.main(["--from", str(campaign), "--only", "z", "--labels", str(labels)])

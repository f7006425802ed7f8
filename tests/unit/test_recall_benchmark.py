"""The recall benchmark's bug files and its matching of campaign bugs to known bugs
(``benchmarks/recall.py``): a malformed entry is a clear error, and a known bug counts
as found only on its backend, API and severity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_scripts import load

from dlfuzz.errors import UsageError

recall = load("recall")

ENTRY = {"id": "torch-x", "library": "torch", "level": "api", "kind": "crash",
         "upstream": "https://github.com/pytorch/pytorch/issues/1", "title": "t",
         "reproduces_on": "torch 2.13.0", "api": "torch.lcm", "backend": "torch",
         "severity": ["crash"], "symptom": "SIGFPE", "trigger_lang": "python",
         "trigger": "pass", "verify": "signal"}


def _folder(tmp_path: Path, *entries: dict) -> Path:
    (tmp_path / "b.json").write_text(json.dumps({"bugs": list(entries)}))
    return tmp_path


def test_the_shipped_bug_files_load_and_name_known_campaigns() -> None:
    bugs = recall.load_bugs()
    assert len(bugs) >= 40
    assert {b.library for b in bugs} >= {"torch", "tf", "jax", "onnxruntime", "keras", "tfjs"}
    assert {b.level for b in bugs} == {"api", "model", "program"}
    assert all(b.campaign_name in recall.CAMPAIGNS for b in bugs)
    assert len({b.id for b in bugs}) == len(bugs)


@pytest.mark.parametrize("change,needle", [
    ({"severity": ["fatal"]}, "severity"),
    ({"level": "kernel"}, "level"),
    ({"upstream": "http://example.com/1"}, "upstream"),
    ({"colour": "red"}, "unknown key"),
    ({"trigger": ""}, "missing trigger"),
])
def test_a_malformed_entry_names_its_file_entry_and_key(tmp_path, change, needle) -> None:
    folder = _folder(tmp_path, {**ENTRY, **change})
    with pytest.raises(UsageError) as exc:
        recall.load_bugs(folder)
    assert "b.json" in str(exc.value) and needle in str(exc.value)


def test_a_duplicate_id_is_an_error(tmp_path) -> None:
    with pytest.raises(UsageError, match="used already"):
        recall.load_bugs(_folder(tmp_path, ENTRY, ENTRY))


def _found(*rows: dict) -> object:
    base = {"api": "", "backend": "", "severity": "", "root_cause": "k", "places": [],
            "created_at": 130.0, "updated_at": 200.0, "suspect_op": "", "id": "b1"}
    return recall.CampaignBugs(100.0, [{**base, **r} for r in rows])


def test_a_known_bug_matches_its_backend_api_and_severity_only(tmp_path) -> None:
    (bug,) = recall.load_bugs(_folder(tmp_path, ENTRY))
    hit = recall.match(bug, _found({"api": "torch.lcm", "backend": "torch",
                                    "severity": "crash"}))
    assert hit is not None and hit.seconds == 30.0
    for other in ({"api": "torch.gcd", "backend": "torch", "severity": "crash"},
                  {"api": "torch.lcm", "backend": "torch-compile", "severity": "crash"},
                  {"api": "torch.lcm", "backend": "torch", "severity": "wrong-result"}):
        assert recall.match(bug, _found(other)) is None
    # as a later place of another root cause: counted by the time that bug last changed
    place = {"backend": "torch", "api": "torch.lcm"}
    hit = recall.match(bug, _found({"api": "torch.gcd", "backend": "torch",
                                    "severity": "crash", "places": [place]}))
    assert hit is not None and hit.seconds == 100.0

"""The Python API: ``dlfuzz.run`` (one short planted campaign), ``dlfuzz.open`` and the
typed, frozen records they return; ``import dlfuzz`` loads no deep learning library."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dlfuzz
from dlfuzz import Bug, Campaign, UsageError

PLANTED = Path(__file__).resolve().parents[1] / "planted"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Campaign]:
    """torch.cumsum planted wrong (``planted_torch_cumsum``), found in a 15 s campaign."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLANTED), old]))
    try:  # the workers inherit the environment, so they can import the plant
        yield dlfuzz.run(tmp_path_factory.mktemp("api") / "c", engine="numpy-api",
                         backends=["numpy", "torch"], apis="numpy.cumsum", budget=15, seed=1,
                         preload={"torch": "planted_torch_cumsum"})
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def test_run_returns_the_typed_campaign(campaign: Campaign) -> None:
    assert isinstance(campaign, Campaign) and campaign.engine == "numpy-api"
    assert campaign.backends == ("numpy", "torch") and not campaign.interrupted
    bugs = campaign.bugs(severity="wrong-result")
    assert [b.root_cause for b in bugs] == ["torch/cumsum/wrong-result"], campaign.all_bugs
    bug = bugs[0]
    assert isinstance(bug, Bug) and bug.confirmed and bug.backend == "torch"
    assert bug.api == "numpy.cumsum" and bug.symptom == "numeric" and bug.occurrences >= 1
    assert bug.backends[0] == "torch" and bug.places[0].dtypes == "float32"
    assert bug.reproducers["torch"].is_file() and bug.reproducers["torch"].suffix == ".py"
    assert bug.folder is not None and (bug.folder / "meta.json").is_file()
    assert campaign.bug(bug.id) == bug
    with pytest.raises(dataclasses.FrozenInstanceError):
        bug.severity = "crash"  # type: ignore[misc]


def test_filters_and_stats(campaign: Campaign) -> None:
    assert campaign.bugs(severity="crash") == []
    assert campaign.bugs(severity=["crash", "wrong-result"]) == campaign.bugs("wrong-result")
    assert all(b.confirmed for b in campaign.bugs())
    assert set(campaign.bugs(include_flaky=True)) >= set(campaign.bugs())
    with pytest.raises(UsageError, match="unknown class wrong"):
        campaign.bugs(severity="wrong")
    with pytest.raises(UsageError, match="known ids"):
        campaign.bug("nope")
    stats = campaign.stats()
    assert stats.cases > 0 and stats.batches > 0 and stats.seconds > 0
    assert stats.bugs_confirmed == len(campaign.bugs())
    assert stats.by_severity.get("wrong-result") == 1
    assert set(stats.backends) == {"numpy", "torch"} and "numpy.cumsum" in stats.apis


def test_open_reads_the_same_campaign(campaign: Campaign) -> None:
    again = dlfuzz.open(str(campaign.path))
    assert again.all_bugs == campaign.all_bugs and again.seed == 1
    assert again.stats().cases == campaign.stats().cases


def test_errors_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such directory"):
        dlfuzz.open(tmp_path / "missing")
    with pytest.raises(UsageError, match="not a dlfuzz campaign"):
        dlfuzz.open(tmp_path)
    with pytest.raises(UsageError, match="nope"):
        dlfuzz.run(tmp_path / "a", engine="nope", budget=1)
    with pytest.raises(UsageError, match="duration"):
        dlfuzz.run(tmp_path / "b", budget="soon")
    with pytest.raises(UsageError, match="not both"):
        dlfuzz.run(tmp_path / "c", resume=tmp_path)
    with pytest.raises(UsageError, match="backend"):
        dlfuzz.run(tmp_path / "d", backends=["numpy", "nonesuch"], budget=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left behind


def test_import_dlfuzz_stays_light() -> None:
    code = ("import sys, dlfuzz; heavy = ('torch', 'tensorflow', 'jax', 'keras', 'onnxruntime'); "
            "assert callable(dlfuzz.run) and callable(dlfuzz.open); "
            "print(sorted(m for m in heavy if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout
    assert set(dlfuzz.__all__) >= {"run", "open", "Campaign", "Bug", "UsageError"}

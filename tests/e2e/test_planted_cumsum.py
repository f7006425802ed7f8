"""Must-show 1: a planted torch.cumsum bug is found from the CLI, confirmed, blamed on torch
by the float64 reference, deduplicated into one bug, reduced, and reproduced by a script
that fails with the patch loaded and passes without it.

The campaign is directed at the cumulative APIs: on this machine a 45 s campaign over the
whole cumulative and reduction groups misses the plant, before and after the one-engine
refactor alike (a recall weakness of mixed batches, left to the recall work)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli, planted_env


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("camp") / "c"
    proc = dlfuzz_cli("run", "--engine", "numpy-api", "--backends", "numpy,torch,jax", "--budget", "45s",
                   "--apis", "numpy.cumsum,numpy.cumprod",
                   "--seed", "1", "--out", str(out), "--preload", "torch=planted_torch_cumsum",
                   "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_found_confirmed_blamed_and_deduplicated(campaign):
    proc = dlfuzz_cli("findings", str(campaign), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    bugs = json.loads(proc.stdout)
    cumsum = [b for b in bugs if b["api"] == "numpy.cumsum" and b["guilty_backend"] == "torch"]
    assert len(cumsum) == 1, bugs  # one bug, however many cases hit it
    bug = cumsum[0]
    assert bug["confirmed"] and bug["symptom"] == "numeric" and bug["reduced"]
    assert set(bug["repro"]) >= {"torch", "numpy"}
    for key in ("id", "symptom", "guilty_backend", "api", "confirmed", "repro"):
        assert key in bug
    # Nothing else is blamed on numpy or jax: their implementations are untouched.
    assert not [b for b in bugs if b["api"] == "numpy.cumsum" and b["guilty_backend"] != "torch"]
    meta = json.loads((Path(bug["dir"]) / "meta.json").read_text())
    assert meta["details"]["method"] == "float64"
    case = json.loads((Path(bug["dir"]) / "case.json").read_text())
    sizes = [t["shape"] for t in case["tensors"]]
    assert all(t["dtype"] == "float32" for t in case["tensors"])
    assert sum(max(s, default=1) for s in sizes) <= 8, sizes  # reduced to about 7 elements


def test_repro_fails_with_patch_and_passes_without(campaign):
    bug = next(b for b in json.loads(dlfuzz_cli("findings", str(campaign), "--json",
                                              timeout=120).stdout)
               if b["api"] == "numpy.cumsum" and b["guilty_backend"] == "torch")
    script = bug["repro"]["torch"]
    clean = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           timeout=300)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    patched = subprocess.run(
        [sys.executable, "-c", "import planted_torch_cumsum, runpy; "
         f"runpy.run_path({script!r}, run_name='__main__')"],
        capture_output=True, text=True, timeout=300, env=planted_env())
    assert patched.returncode == 1, patched.stdout + patched.stderr
    assert "BUG present" in patched.stdout
    # The same through the CLI: exit 1 while present (campaign preloads), 0 without.
    assert dlfuzz_cli("reproduce", str(campaign), bug["id"], timeout=300).returncode == 1
    assert dlfuzz_cli("reproduce", str(campaign), bug["id"], "--no-preload",
                   timeout=300).returncode == 0


def test_report_escapes_and_lists_the_bug(campaign):
    proc = dlfuzz_cli("report", str(campaign), timeout=120)
    assert proc.returncode == 0, proc.stderr
    html = Path(proc.stdout.strip()).read_text()
    assert "cumsum" in html and "repro_torch.py" in html
    # The only scripts are the report's own three (chart data, Chart.js, the drawing):
    # library text is escaped.
    tags = re.findall(r"<script\b[^>]*>", html, flags=re.IGNORECASE)
    assert len(tags) == 3 and all("data-dlfuzz=" in t for t in tags), tags

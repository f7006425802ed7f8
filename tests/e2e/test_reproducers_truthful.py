"""Every reproducer of a planted-bug campaign tells the truth.

A short API campaign over numpy/torch/jax with the torch.cumsum plant preloaded in torch;
then EVERY reproducer script of every confirmed bug runs, as ``dlfuzz reproduce`` runs it
(the campaign's preloads imported first): the guilty backend's script exits 1 and every
other backend's exits 0 (only the guilty library may say "bug present"). Without the
preload the planted bug's scripts all exit 0 (it is "fixed"). Each script's last line is
its verdict. ``dlfuzz reproduce`` with a relative DIR from another working directory runs
the same scripts, and a missing script is dlfuzz's error, not a verdict.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli, planted_env

PLANT = "planted_torch_cumsum"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("truth") / "c"
    proc = dlfuzz_cli("run", "--engine", "numpy-api", "--backends", "numpy,torch,jax",
                      "--budget", "60s", "--apis", "numpy.cumsum,numpy.cumprod", "--seed", "1",
                      "--out", str(out), "--preload", f"torch={PLANT}", "--quiet",
                      timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _bugs(campaign: Path) -> list[dict]:
    proc = dlfuzz_cli("findings", str(campaign), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [b for b in json.loads(proc.stdout) if b["confirmed"] and b["repro"]]


def _run(script: str, backend: str, preload: bool) -> tuple[int, str]:
    mods = f"import {PLANT}; " if preload and backend == "torch" else ""
    proc = subprocess.run(
        [sys.executable, "-c", f"{mods}import runpy; runpy.run_path({script!r}, "
         "run_name='__main__')"],
        capture_output=True, text=True, timeout=300, env=planted_env(),
        cwd=str(Path(script).parent))
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, (lines[-1] if lines else proc.stderr[-2000:])


def _is_planted(bug: dict) -> bool:
    return bug["guilty_backend"] == "torch" and "cumsum" in bug["api"]


def test_every_reproducer_blames_only_the_guilty_backend(campaign: Path) -> None:
    bugs = _bugs(campaign)
    assert any(_is_planted(b) for b in bugs), bugs
    wrong = []
    for bug in bugs:
        for backend, script in sorted(bug["repro"].items()):
            rc, verdict = _run(script, backend, preload=True)
            guilty = backend == bug["guilty_backend"]
            want = 1 if guilty else 0
            prefix = "BUG present:" if guilty else "OK:"
            if rc != want or not verdict.startswith(prefix):
                wrong.append(f"{bug['id']} {bug['api']} {backend}: exit {rc}, {verdict}")
    assert not wrong, "\n".join(wrong)


def test_without_the_plant_every_planted_reproducer_passes(campaign: Path) -> None:
    wrong = []
    for bug in (b for b in _bugs(campaign) if _is_planted(b)):
        for backend, script in sorted(bug["repro"].items()):
            rc, verdict = _run(script, backend, preload=False)
            if rc != 0 or not verdict.startswith("OK:"):
                wrong.append(f"{bug['id']} {backend}: exit {rc}, {verdict}")
    assert not wrong, "\n".join(wrong)


def test_reproduce_cli_from_another_directory(campaign: Path, tmp_path: Path) -> None:
    bug = next(b for b in _bugs(campaign) if _is_planted(b))
    relative = os.path.relpath(campaign, tmp_path)
    cmd = [sys.executable, "-m", "dlfuzz", "reproduce", relative, bug["id"]]
    present = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                             env=planted_env(), cwd=tmp_path)
    assert present.returncode == 1, present.stdout + present.stderr
    assert "expected guilty backend: torch" in present.stdout
    assert "repro_torch.py (expected guilty): exit 1 -> bug present" in present.stdout
    assert "    BUG present: torch.cumsum output 0:" in present.stdout, present.stdout
    for backend in set(bug["repro"]) - {"torch"}:
        assert f"repro_{backend}.py: exit 0 -> no bug" in present.stdout, present.stdout
    fixed = subprocess.run([*cmd, "--no-preload"], capture_output=True, text=True,
                           timeout=600, env=planted_env(), cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "bug present" not in fixed.stdout, fixed.stdout
    # A missing script is dlfuzz's error (exit 2, named), never a verdict on a library.
    script = Path(bug["repro"]["torch"])
    saved = script.read_bytes()
    script.unlink()
    try:
        gone = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              env=planted_env(), cwd=tmp_path)
    finally:
        script.write_bytes(saved)
    assert gone.returncode == 2, gone.stdout + gone.stderr
    assert "missing" in gone.stderr and "repro_torch.py" in gone.stderr, gone.stderr
    assert "bug present" not in gone.stdout

"""Must-show of the program engine (MoCo), from the CLI, on real libraries with planted bugs.

* ``planted_program_torch_pool_padding``: torch max pooling silently accepts a negative
  ``padding``. Boundary checking (BC) derives a negative node with ``padding=-1``; the
  execution-state oracle reports that the program ran; the finding names the block and
  the parameter, is reduced to the template plus that one block, and its reproducer
  exits 1 with the patch and 0 without.
* ``planted_program_keras_jax_pool``: keras-jax alone computes MaxPooling2D with
  ``padding="same"`` wrongly. Random generation (RG) sets that value; the Keras
  cross-backend comparison blames keras-jax (not keras-tf or keras-torch), localizes the
  bug to the block and ``padding``, and the keras-jax reproducer shows it standalone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import PLANTED, dlfuzz_cli, planted_env

KERAS_SEED = str(PLANTED / "planted_program_seed_keras.py")


def _campaign(out: Path, *args: str) -> list[dict]:
    proc = dlfuzz_cli("run", "--engine", "program", "--seed", "1", "--out", str(out),
                      "--quiet", "--batch-size", "64", *args, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = dlfuzz_cli("findings", str(out), "--json", timeout=120)
    assert listing.returncode == 0, listing.stderr
    return json.loads(listing.stdout)


def _repro_exit(script: str, planted: str | None, **env: str) -> subprocess.CompletedProcess:
    environ = {**planted_env(), **env}
    if planted is None:
        return subprocess.run([sys.executable, script], capture_output=True, text=True,
                              timeout=300, env=environ)
    return subprocess.run(
        [sys.executable, "-c", f"import {planted}, runpy; "
         f"runpy.run_path({script!r}, run_name='__main__')"],
        capture_output=True, text=True, timeout=300, env=environ)


def _meta(bug: dict) -> dict:
    return json.loads((Path(bug["dir"]) / "meta.json").read_text())


def test_boundary_check_finds_localizes_reduces_and_reproduces(tmp_path: Path) -> None:
    bugs = _campaign(tmp_path / "c", "--backends", "torch", "--seed-program", "torch_lenet_seq",
                     "--preload", "torch=planted_program_torch_pool_padding", "--budget", "60s")
    mine = [b for b in bugs if b["symptom"] == "boundary" and "MaxPool" in b["api"]
            and _meta(b)["details"].get("edge_param") == "padding"]
    assert mine, [(b["symptom"], b["api"], b["message"]) for b in bugs]
    bug = mine[0]
    assert bug["confirmed"] and bug["reduced"] and bug["guilty_backend"] == "torch"
    meta = _meta(bug)
    details = meta["details"]
    assert details["edge_operator"] == "BC" and int(details["edge_value"]) < 0, details
    assert details["edge_api"] == bug["api"]
    folder = Path(bug["dir"])
    case = json.loads((folder / "case.json").read_text())
    assert case["kind"] == "program" and case["edge"]["param"] == "padding"
    # Reduced to the template plus the one block: input layer, the block, the head.
    program = (folder / "program.py").read_text()
    body = program[program.index("nn.Sequential("):program.index("\n)\n")]
    layers = [ln for ln in body.splitlines()[1:] if ln.strip()]
    assert len(layers) == 4 and "padding=-1" in layers[1], layers
    script = bug["repro"]["torch"]
    clean = _repro_exit(script, None)
    assert clean.returncode == 0 and "rejected" in clean.stdout, clean.stdout + clean.stderr
    patched = _repro_exit(script, "planted_program_torch_pool_padding")
    assert patched.returncode == 1 and "BUG present" in patched.stdout, patched.stdout
    # every program the campaign ran is kept as a readable file, with the tree's index
    kept = list((tmp_path / "c" / "programs").glob("*.py"))
    index = (tmp_path / "c" / "programs" / "index.jsonl").read_text().splitlines()
    assert len(kept) >= len(index) > 20


@pytest.fixture(scope="module")
def keras_bugs(tmp_path_factory) -> list[dict]:
    return _campaign(tmp_path_factory.mktemp("keras") / "c", "--backends",
                     "keras-tf,keras-jax,keras-torch", "--seed-program", KERAS_SEED,
                     "--times-mt", "8", "--preload",
                     "keras-jax=planted_program_keras_jax_pool", "--budget", "150s")
    # 150 s: the plant shows in the third batch (about 80 s on a loaded machine), and its
    # confirmation starts a fresh keras-jax worker and runs the reproducer (about 40 s).


def test_cross_backend_blames_keras_jax_and_localizes(keras_bugs) -> None:
    numeric = [b for b in keras_bugs if b["symptom"] in ("numeric", "nan")]
    assert numeric, [(b["symptom"], b["api"], b["message"]) for b in keras_bugs]
    assert {b["guilty_backend"] for b in numeric} == {"keras-jax"}, numeric
    bug = numeric[0]
    assert bug["confirmed"] and bug["api"] == "keras.layers.MaxPooling2D", bug
    details = _meta(bug)["details"]
    assert details["edge_param"] == "padding" and details["edge_value"] == "'same'", details
    assert set(bug["repro"]) == {"keras-tf", "keras-jax", "keras-torch"}


def test_keras_reproducer_is_standalone_per_backend(keras_bugs) -> None:
    bug = next(b for b in keras_bugs if b["symptom"] == "numeric")
    jax_script = bug["repro"]["keras-jax"]
    text = Path(jax_script).read_text()
    assert text.index('os.environ["KERAS_BACKEND"] = "jax"') < text.index("import keras\n")
    patched = _repro_exit(jax_script, "planted_program_keras_jax_pool", KERAS_BACKEND="jax")
    assert patched.returncode == 1 and "BUG present" in patched.stdout, \
        patched.stdout + patched.stderr[-2000:]
    clean = _repro_exit(jax_script, None)
    assert clean.returncode == 0, clean.stdout + clean.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    other = subprocess.run([sys.executable, bug["repro"]["keras-torch"]], capture_output=True,
                           text=True, timeout=300, env=env)
    assert other.returncode == 0, other.stdout + other.stderr[-2000:]

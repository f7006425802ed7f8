"""Model must-show 1: a planted wrong result in torch's conv2d (3x3 kernels at stride 1,
applied flipped) is found by LEMON from the LeNet-5 seed (whose convolutions are 5x5,
so a mutation must insert the 3x3 one), blamed on torch by the float64 reference and by
LEMON's own D_MAD vote, localized to the convolution by R_a, reduced to at most three
layers, and reproduced by a standalone torch script (fails with the patch, passes
without)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli, planted_env


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("camp") / "c"
    proc = dlfuzz_cli("run", "--engine", "model", "--method", "lemon", "--backends",
                   "torch,jax,tf", "--seed-model", "lenet5", "--budget", "100s", "--seed", "1",
                   "--out", str(out), "--preload", "torch=planted_torch_conv", "--quiet",
                   timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


# The layers whose torch lowering calls F.conv2d, where the bug is planted: a depthwise
# convolution (F.conv2d with groups) shows the same bug, so either may be found first.
CONV_LAYERS = ("Conv2D", "DepthwiseConv2D", "SeparableConv2D")


def _conv_bug(campaign: Path) -> dict:
    proc = dlfuzz_cli("findings", str(campaign), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    bugs = json.loads(proc.stdout)
    conv = [b for b in bugs if b["api"] in CONV_LAYERS]
    assert conv, bugs
    return conv[0]


def test_found_voted_localized_and_reduced(campaign):
    bug = _conv_bug(campaign)
    assert bug["guilty_backend"] == "torch" and bug["confirmed"] and bug["reduced"]
    # Nothing is ever blamed on the untouched libraries.
    bugs = json.loads(dlfuzz_cli("findings", str(campaign), "--json", timeout=120).stdout)
    assert all(b["guilty_backend"] == "torch" for b in bugs if b["symptom"] == "numeric")
    meta = json.loads((Path(bug["dir"]) / "meta.json").read_text())
    details = meta["details"]
    assert details["method"] == "float64" and details["suspect_op"] == bug["api"]
    assert details["lemon_vote"] == "torch"
    case = json.loads((Path(bug["dir"]) / "case.json").read_text())
    assert bug["api"] in case["nodes"] and len(case["nodes"]) <= 3, case["nodes"]
    assert (Path(bug["dir"]) / "graph.dot").read_text().startswith("digraph")
    # The reduced model is a dlfuzz model file, so fuzzing can go on from it.
    from dlfuzz.ir.serialize import load_model

    reduced = load_model(Path(bug["dir"]) / "graph.json")
    assert [n.op for n in reduced.graph.nodes] == case["nodes"]


def test_repro_is_torch_code_that_fails_with_the_patch_only(campaign):
    bug = _conv_bug(campaign)
    script = bug["repro"]["torch"]
    text = Path(script).read_text()
    assert "F.conv2d(" in text and "model.npz" in text
    clean = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           timeout=300)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    patched = subprocess.run(
        [sys.executable, "-c", "import planted_torch_conv, runpy; "
         f"runpy.run_path({script!r}, run_name='__main__')"],
        capture_output=True, text=True, timeout=300, env=planted_env())
    assert patched.returncode == 1, patched.stdout + patched.stderr
    assert "BUG present" in patched.stdout
    # The other libraries' reproducers compute the same model correctly.
    for lib in ("jax", "tf"):
        other = subprocess.run([sys.executable, bug["repro"][lib]], capture_output=True,
                               text=True, timeout=300)
        assert other.returncode == 0, other.stdout + other.stderr

"""Model must-show: a compile-only bug is found unaided by synthesized graphs.

``planted_jax_jit_conv`` flips the 3x3 stride-1 kernel of ``lax.conv_general_dilated``
under ``jax.jit`` only (eager JAX is right). A DLJSFuzzer campaign on torch, jax, jax-jit
and tf missed such a bug in 300 s when the issue was filed; here ``--method synth`` on
torch and jax-jit, with no hint of the op (the model engine has no ``--apis``), must find
it, blame jax-jit by the float64 reference of the eager libraries, reduce it, and write a
jax-jit reproducer that fails with the plant and passes without it.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli, planted_env

# The layers whose jax lowering calls lax.conv_general_dilated with an HWIO kernel.
CONV_LAYERS = ("Conv2D", "DepthwiseConv2D", "SeparableConv2D")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("camp") / "c"
    proc = dlfuzz_cli("run", "--engine", "model", "--method", "synth", "--backends",
                      "torch,jax-jit", "--budget", "150s", "--seed", "1", "--out", str(out),
                      "--preload", "jax-jit=planted_jax_jit_conv", "--quiet", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _bugs(campaign: Path) -> list[dict]:
    proc = dlfuzz_cli("findings", str(campaign), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _conv_bug(campaign: Path) -> dict:
    conv = [b for b in _bugs(campaign) if b["api"] in CONV_LAYERS
            and b["severity"] == "wrong-result"]
    assert conv, [(b["root_cause"], b["message"][:80]) for b in _bugs(campaign)]
    return conv[0]


def test_found_blamed_on_the_compiled_mode_and_reduced(campaign):
    bug = _conv_bug(campaign)
    assert bug["guilty_backend"] == "jax-jit" and bug["confirmed"] and bug["reduced"]
    assert bug["root_cause"].startswith("jax-jit/")
    # torch computes every convolution right: no wrong result is ever blamed on it.
    assert not [b for b in _bugs(campaign)
                if b["guilty_backend"] == "torch" and b["severity"] == "wrong-result"]
    case = json.loads((Path(bug["dir"]) / "case.json").read_text())
    assert bug["api"] in case["nodes"] and len(case["nodes"]) <= 3, case["nodes"]


def test_jit_repro_fails_with_the_plant_only(campaign):
    bug = _conv_bug(campaign)
    script = bug["repro"]["jax-jit"]
    assert "jax.jit" in Path(script).read_text()
    clean = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           timeout=300)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    patched = subprocess.run(
        [sys.executable, "-c", "import planted_jax_jit_conv, runpy; "
         f"runpy.run_path({script!r}, run_name='__main__')"],
        capture_output=True, text=True, timeout=300, env=planted_env())
    assert patched.returncode == 1, patched.stdout + patched.stderr
    assert "BUG present" in patched.stdout

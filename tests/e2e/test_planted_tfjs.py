"""Must-show 1 of TF.js: planted kernels found, confirmed and reproduced, from the CLI.

* ``planted_tfjs_add.js`` replaces the ``Add`` kernel of tfjs' cpu backend in the Node
  worker (a - b for float32 inputs whose last dimension is >= 5). A campaign on tfjs-cpu
  and tfjs-wasm, on the old release 4.1.0 (``--tfjs-version``), with numpy and jax as the
  float64 reference, blames tfjs-cpu alone; the bug is confirmed and reduced, and its
  ``repro_tfjs_cpu.js`` exits 1 under node with the patch loaded and 0 without, while the
  wasm one exits 0 either way.
* ``planted_tfjs_webgl_add.js`` does the same to the webgl kernel inside the Chromium
  page; the bug's standalone ``repro_tfjs_webgl.html``, opened headless by
  ``run_html.js``, says 1 with the patch and 0 without.

The cases come from ``tests/planted/planted_tfjs_engine.py`` (small random add, mul, sub
and matMul calls), so these tests depend only on the backends.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from executor_support import PLANTED, dlfuzz_cli

from dlfuzz.backends.tfjs import install

TFJS = Path(__file__).resolve().parents[2] / "src" / "dlfuzz" / "backends" / "tfjs"
OLD = "4.1.0"


def _campaign(out: Path, *args: str) -> list[dict]:
    proc = dlfuzz_cli("run", "--engine", "planted_tfjs_engine:TfjsEngine", "--seed", "1",
                      "--out", str(out), "--quiet", "--budget", "60s", "--max-cases", "200",
                      "--batch-size", "50", *args, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = dlfuzz_cli("findings", str(out), "--json", timeout=120)
    assert listing.returncode == 0, listing.stderr
    return json.loads(listing.stdout)


def _node_repro(script: str, version: str, patch: str | None) -> subprocess.CompletedProcess:
    module = install.tfjs_dir(version) / "node_modules" / "@tensorflow" / "tfjs"
    code = f"const tf = require({json.dumps(str(module))}); "
    if patch:
        code += f"require({json.dumps(str(PLANTED / patch))})(tf); "
    code += f"require({json.dumps(script)});"
    return subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=120)


def test_planted_cpu_kernel_on_an_old_release(tmp_path: Path) -> None:
    bugs = _campaign(tmp_path / "c", "--backends", "tfjs-cpu,tfjs-wasm", "--tfjs-version",
                     OLD, "--preload", "tfjs-cpu=planted_tfjs_add")
    assert bugs and {b["guilty_backend"] for b in bugs} == {"tfjs-cpu"}, bugs
    bug = next(b for b in bugs if b["symptom"] == "numeric")
    assert bug["api"] == "tf.add" and bug["confirmed"] and bug["reduced"], bug
    meta = json.loads((Path(bug["dir"]) / "meta.json").read_text())
    assert meta["versions"]["tfjs-cpu"] == f"tfjs {OLD} (cpu)", meta["versions"]
    cpu, wasm = bug["repro"]["tfjs-cpu"], bug["repro"]["tfjs-wasm"]
    assert cpu.endswith("repro_tfjs_cpu.js") and wasm.endswith("repro_tfjs_wasm.js")
    assert f"tfjs/{OLD}" in Path(cpu).read_text()  # the reproducer loads the same release
    clean = _node_repro(cpu, OLD, None)
    assert clean.returncode == 0 and "OK" in clean.stdout, clean.stdout + clean.stderr
    patched = _node_repro(cpu, OLD, "planted_tfjs_add.js")
    assert patched.returncode == 1 and "BUG present" in patched.stdout, patched.stdout
    other = _node_repro(wasm, OLD, "planted_tfjs_add.js")
    assert other.returncode == 0, other.stdout + other.stderr


def test_planted_webgl_kernel_in_the_page(tmp_path: Path) -> None:
    bugs = _campaign(tmp_path / "c", "--backends", "tfjs-webgl",
                     "--preload", "tfjs-webgl=planted_tfjs_webgl_add")
    assert bugs and {b["guilty_backend"] for b in bugs} == {"tfjs-webgl"}, bugs
    bug = next(b for b in bugs if b["symptom"] == "numeric")
    assert bug["api"] == "tf.add" and bug["confirmed"], bug
    page = bug["repro"]["tfjs-webgl"]
    assert page.endswith("repro_tfjs_webgl.html")
    runner = [str(TFJS / "run_html.js"), page]
    clean = subprocess.run(["node", *runner], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0 and "OK" in clean.stdout, clean.stdout + clean.stderr
    patched = subprocess.run(["node", *runner, "--patch",
                              str(PLANTED / "planted_tfjs_webgl_add.js")],
                             capture_output=True, text=True, timeout=120)
    assert patched.returncode == 1 and "BUG present" in patched.stdout, patched.stdout


def test_planted_garbage_is_found_by_running_twice(tmp_path: Path) -> None:
    """A Relu that leaves one output element to stale memory: the determinism oracle's
    second run sees other bits; the bug is confirmed and its ``repro_tfjs_cpu.js`` (ten
    runs with memory dirtied between them) exits 1 with the patch and 0 without."""
    proc = dlfuzz_cli("run", "--engine", "api", "--backends", "tfjs-cpu", "--apis", "tf.relu",
                      "--seed", "2", "--out", str(tmp_path / "c"), "--quiet", "--budget", "60s",
                      "--max-cases", "150", "--batch-size", "50",
                      "--preload", "tfjs-cpu=planted_tfjs_garbage", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = dlfuzz_cli("findings", str(tmp_path / "c"), "--json", timeout=120)
    bugs = json.loads(listing.stdout)
    found = [b for b in bugs if b["symptom"] == "nondeterministic"]
    assert found, bugs
    bug = found[0]
    assert bug["guilty_backend"] == "tfjs-cpu" and bug["api"] == "tf.relu", bug
    assert bug["confirmed"], bug
    script = bug["repro"]["tfjs-cpu"]
    version = install.DEFAULT_VERSION
    clean = _node_repro(script, version, None)
    assert clean.returncode == 0 and "OK" in clean.stdout, clean.stdout + clean.stderr
    patched = _node_repro(script, version, "planted_tfjs_garbage.js")
    assert patched.returncode == 1 and "differs from run 1" in patched.stdout, patched.stdout

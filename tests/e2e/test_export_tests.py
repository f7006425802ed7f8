"""``dlfuzz export-tests``: the exported pytest files fail while a planted bug is present
and pass without it (``--xfail``: xfailed with it, a strict XPASS failure without).

One short campaign finds the planted ``torch.cumsum`` bug (``planted_torch_cumsum``). The
exported files are run by pytest in a subprocess, as a library team would run them. The
plant reaches that process (and any process it starts) through ``sitecustomize``: a
folder holding ``sitecustomize.py`` that imports the plant goes first on ``PYTHONPATH``,
with ``tests/planted``; Python imports ``sitecustomize`` at every start, so torch is
patched before any test runs.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import PLANTED, dlfuzz_cli

from dlfuzz.triage.regression_tests import ReproSource, RootCause, module_text

KEY = "torch/cumsum/wrong-result"
FILE = "test_torch_cumsum_wrong_result.py"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("camp") / "c"
    proc = dlfuzz_cli("run", "--engine", "numpy-api", "--backends", "numpy,torch",
                      "--apis", "numpy.cumsum", "--budget", "20s", "--seed", "1",
                      "--out", str(out), "--preload", "torch=planted_torch_cumsum", "--quiet",
                      timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Python process with the planted bug loaded at start-up."""
    folder = tmp_path_factory.mktemp("plant")
    (folder / "sitecustomize.py").write_text("import planted_torch_cumsum  # noqa: F401\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(PLANTED)])
    return env


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the e2e conftest puts tests/planted there; not needed
    return env


def _pytest(folder: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           str(folder)], capture_output=True, text=True, timeout=600,
                          cwd=folder, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def _export(campaign: Path, out: Path, *flags: str) -> Path:
    proc = dlfuzz_cli("export-tests", str(campaign), "--out", str(out), *flags, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (out / FILE).is_file(), (proc.stdout, sorted(p.name for p in out.iterdir()))
    return out / FILE


def _summary(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|xfailed)",
                                                               line)]
    return lines[-1] if lines else output[-2000:]


def test_exported_file_is_standalone_and_reads_as_the_check(campaign: Path,
                                                            tmp_path: Path) -> None:
    path = _export(campaign, tmp_path / "regressions")
    text = path.read_text()
    modules = {alias.name.partition(".")[0] for node in ast.walk(ast.parse(text))
               if isinstance(node, ast.Import) for alias in node.names}
    modules |= {node.module.partition(".")[0] for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.ImportFrom) and node.module}
    assert "dlfuzz" not in modules and modules <= set(sys.stdlib_module_names) | {
        "pytest", "torch", "numpy"}, modules
    assert not (tmp_path / "regressions" / "conftest.py").exists()
    assert KEY in text  # the docstring names the root cause
    # Inline: the reduced call and the reference check are the test's own code.
    assert "torch.cumsum(" in text and "EXPECTED = " in text and "pytest.fail(" in text
    assert "os._exit" not in text and "signal.alarm" not in text and "subprocess" not in text


def test_exported_tests_fail_with_the_bug_and_pass_without(campaign: Path, tmp_path: Path,
                                                           plant: dict[str, str]) -> None:
    folder = tmp_path / "regressions"
    _export(campaign, folder)
    # The same reproducer in the script shape (what a crash bug gets): run in a subprocess,
    # which must see the plant too.
    bug = next(p for p in (campaign / "bugs").iterdir() if (p / "repro_torch.py").is_file())
    source = ReproSource(bug_id=bug.name, backend="torch", title="planted cumsum",
                         version="", symptom="crash", case_kind="api",
                         script=bug / "repro_torch.py")
    text, inline = module_text(RootCause("planted/script", "crash", "numpy.cumsum", "m",
                                         "torch", 1, (source,)), "camp", xfail=False)
    assert inline == 0 and "subprocess.run" in text
    (folder / "test_planted_script.py").write_text(text)

    rc, out = _pytest(folder, _clean_env())
    assert rc == 0 and "2 passed" in _summary(out), out[-3000:]
    rc, out = _pytest(folder, plant)
    assert rc == 1 and "2 failed" in _summary(out), out[-3000:]
    assert "BUG present" in out, out[-3000:]


def test_xfail_export_is_strict(campaign: Path, tmp_path: Path, plant: dict[str, str]) -> None:
    path = _export(campaign, tmp_path / "known", "--xfail")
    assert "xfail(strict=True" in path.read_text()
    rc, out = _pytest(path.parent, plant)
    assert rc == 0 and "1 xfailed" in _summary(out), out[-3000:]
    rc, out = _pytest(path.parent, _clean_env())  # fixed: the strict mark fails the run
    assert rc == 1 and "XPASS(strict)" in out, out[-3000:]


def test_inline_shapes_of_rejects_and_runs(tmp_path: Path) -> None:
    """The other expectations' reproducers as inline tests: numpy.sqrt returns normally,
    so a "must reject" test fails (the bug shape) and a "must run" test passes."""
    import numpy as np

    from dlfuzz import registry
    from dlfuzz.cases import ApiCase, Call, Expectation, Ref, Tensor
    from dlfuzz.triage.repro import reproducer

    backend = registry.load("backend", "numpy")()
    case = ApiCase("numpy.sqrt", (Tensor.from_numpy(np.array([4.0, 9.0])),),
                   (("numpy", Call("numpy.sqrt", (Ref(0),))),))
    sources = []
    for kind in ("rejects", "runs"):
        script = tmp_path / kind / "repro_numpy.py"
        script.parent.mkdir()
        script.write_text(reproducer(backend, case, Expectation(kind), f"{kind} sqrt"))
        sources.append(ReproSource(bug_id=kind, backend="numpy", title=kind, version="",
                                   symptom="status", case_kind="api", script=script))
    text, inline = module_text(RootCause("numpy/sqrt/validation", "validation", "numpy.sqrt",
                                         "m", "numpy", 1, tuple(sources)), "camp", False)
    assert inline == 2 and "subprocess" not in text and "os._exit" not in text
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "test_numpy_sqrt.py").write_text(text)
    rc, out = _pytest(folder, _clean_env())
    assert rc == 1 and "1 failed, 1 passed" in _summary(out), out[-3000:]
    assert "FAILED test_numpy_sqrt.py::test_numpy_rejects" in out, out[-3000:]
    assert "accepted the invalid input" in out, out[-3000:]

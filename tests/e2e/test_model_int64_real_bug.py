"""A real bug of the pinned ONNX Runtime (1.31.1), found unaided by synthesized integer
graphs: its CPU int64 Max, Min, Clip, ReduceMax and ReduceMin compare values beyond
int32 as int32 (``Max([3000000000, -5], [9, -3000000000])`` gives ``[9, -3000000000]``).

Nothing points the campaign at it: synth draws int64 graphs (10 %), half of their wide
input sets sit around int32's edge, and the compare-and-select layers are a fifth of the
integer kinds. The campaign must file it as one wrong result of ORT (the
``int64-as-int32`` family, every layer a place of it) with an ORT reproducer that shows
it, and blame nothing on torch. If ONNX Runtime fixes the kernels, the first assertion
says so; the mechanism stays tested by tests/unit/test_root_cause.py.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("camp") / "c"
    proc = dlfuzz_cli("run", "--engine", "model", "--method", "synth", "--backends",
                      "torch,ort", "--budget", "60s", "--seed", "1", "--out", str(out),
                      "--quiet", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_ort_int64_compare_as_int32_is_one_wrong_result(campaign):
    bugs = json.loads(dlfuzz_cli("findings", str(campaign), "--json", timeout=120).stdout)
    found = [b for b in bugs if b["root_cause"] == "ort/min-max-clip/int64-as-int32"]
    assert found, ("ONNX Runtime's int64 compare-and-select bug was not found: fixed "
                   f"upstream, or the search lost it? {[b['root_cause'] for b in bugs]}")
    (bug,) = found
    assert bug["severity"] == "wrong-result" and bug["confirmed"]
    assert all(p["dtypes"] == "int64" for p in bug["places"])
    assert not [b for b in bugs if b["guilty_backend"] == "torch"
                and b["severity"] == "wrong-result"]
    script = bug["repro"]["ort"]
    shown = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           timeout=300)
    assert shown.returncode == 1 and "BUG present" in shown.stdout, shown.stdout
    torch = subprocess.run([sys.executable, bug["repro"]["torch"]], capture_output=True,
                           text=True, timeout=300)
    assert torch.returncode == 0, torch.stdout + torch.stderr
    case = json.loads((Path(bug["dir"]) / "case.json").read_text())
    assert case["dtype"] == "int64" and len(case["nodes"]) <= 2, case["nodes"]

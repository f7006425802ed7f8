"""A NaN-handling bug and an infinity bug of one op are two root causes, from the CLI on
real libraries: ``planted_torch_cumsum_nan_zero`` makes torch's cumsum count NaN as 0
(NaN inputs, no infinity), ``planted_torch_cumsum_inf`` makes it all NaN wherever an
input is infinite. Before NaN handling had its own key, the first was a place of the
second (or the reverse), and its report showed the other mechanism's case."""

from __future__ import annotations

import json
from pathlib import Path

from executor_support import dlfuzz_cli


def test_nan_handling_and_infinite_input_bugs_are_two_root_causes(tmp_path: Path) -> None:
    out = tmp_path / "c"
    proc = dlfuzz_cli(
        "run", "--engine", "numpy-api", "--backends", "numpy,torch,jax",
        "--apis", "numpy.cumsum", "--seed", "1", "--budget", "90s", "--max-cases", "800",
        "--batch-seconds", "0", "--out", str(out),
        "--preload", "torch=planted_torch_cumsum_inf",
        "--preload", "torch=planted_torch_cumsum_nan_zero", "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listing = dlfuzz_cli("findings", str(out), "--json", timeout=120)
    assert listing.returncode == 0, listing.stderr
    bugs = [b for b in json.loads(listing.stdout) if b["guilty_backend"] == "torch"]
    keys = {b["root_cause"] for b in bugs}
    assert {"torch/cumsum/nan-propagation", "torch/cumsum/special-value"} <= keys, bugs
    nan_bug = next(b for b in bugs if b["root_cause"] == "torch/cumsum/nan-propagation")
    assert nan_bug["confirmed"] and nan_bug["severity"] == "special-value"
    meta = json.loads((Path(nan_bug["dir"]) / "meta.json").read_text())
    assert "NaN inputs handled differently" in meta["details"]["special_values"], meta

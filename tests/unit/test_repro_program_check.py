"""The program reproducer's check: NaN equals NaN, a different count of values is its own
verdict, and a numeric verdict names the first differing value, on one last line."""

import subprocess
import sys
from pathlib import Path

from dlfuzz.kinds.program_repro import _CHECK_VALUES
from dlfuzz.triage.repro_verdict import VERDICT


def _run(tmp_path: Path, result: str, expected: str) -> tuple[int, list[str]]:
    script = tmp_path / "repro_program.py"
    script.write_text("import os\nimport sys\nimport numpy as np\n" + VERDICT
                      + f"\nRESULT = {result}\n"
                      + _CHECK_VALUES.format(expected=expected, rtol=0.01))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, [line for line in proc.stdout.splitlines() if line.strip()]


def test_nan_where_the_others_computed_nan_passes(tmp_path: Path) -> None:
    rc, lines = _run(tmp_path, "{'loss': [float('nan'), 1.0]}",
                     "{'loss': [float('nan'), 1.0]}")
    assert rc == 0 and lines[-1] == "OK: the results match the other backends within RTOL 0.01"


def test_a_differing_value_is_named(tmp_path: Path) -> None:
    rc, lines = _run(tmp_path, "{'loss': [1.0, 5.0, 3.0]}", "{'loss': [1.0, 2.0, 3.0]}")
    assert rc == 1, lines
    assert lines[-1] == ("BUG present: loss: 1 of 3 values off beyond RTOL 0.01 x 3; first at "
                         "[1]: got 5.0, expected 2.0 (against the other backends)"), lines
    assert lines[:-1] == ["  loss at [1]: got 5.0, expected 2.0"]


def test_a_different_count_of_values_is_its_own_verdict(tmp_path: Path) -> None:
    rc, lines = _run(tmp_path, "{'outputs': [1.0]}", "{'outputs': [1.0, 2.0]}")
    assert rc == 1 and lines[-1] == ("BUG present: outputs has 1 values, the other backends' 2 "
                                     "(against the other backends)"), lines

"""issue.md: title, versions, severity, repro inline, expected vs actual, assert_close."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np

from dlfuzz.cases import Expectation, Outcome, Tensor
from dlfuzz.triage.issue_report import IssueFacts, issue_markdown


def facts(actual: np.ndarray, expected: np.ndarray, note: str, **kw) -> IssueFacts:
    outcomes = {"tf": Outcome("tf", "ok", (Tensor.from_numpy(actual),)),
                "numpy": Outcome("numpy", "ok", (Tensor.from_numpy(expected),))}
    base = dict(title="numeric in tf: tf.math.hypot", guilty_backend="tf",
                library="TensorFlow", severity="wrong-result", root_cause="tf/hypot/wrong-result",
                message="1/3 elements off", details={}, versions={"tf": "2.99", "numpy": "2.4"},
                expectation=Expectation("values", (expected,), (np.zeros_like(expected),), note),
                outcomes=outcomes, case_text="Call: `tf.math.hypot(x0, x1)`.",
                repro="print('repro')\n", repro_name="repro_tf.py")
    return IssueFacts(**{**base, **kw})


def test_a_wrong_value_issue_names_call_values_versions_and_assert_close() -> None:
    expected = np.array([206.0, 306.5], np.float16)
    actual = np.array([206.0, np.inf], np.float16)
    text = issue_markdown(facts(actual, expected, "EXPECTED: float64 result agreed by "
                                "numpy, torch (float64); ALLOWED: tolerance"))
    first = text.splitlines()[0]
    assert first == ("# [TensorFlow] tf.math.hypot returns inf where the float64 reference "
                     "gives 306.5 (float16)")
    assert "**Severity:** wrong-result" in text and "`tf/hypot/wrong-result`" in text
    assert "- tf: 2.99" in text and "- numpy: 2.4" in text
    # Kernels depend on the CPU's instruction sets: the report names them.
    cpu = next(line for line in text.splitlines() if line.startswith("- CPU: "))
    if platform.machine() == "x86_64" and "avx2" in Path("/proc/cpuinfo").read_text():
        assert "AVX2" in cpu
    assert "```python\nprint('repro')\n```" in text
    assert "Output, numpy: [206, 306.5]" in text
    assert "rtol=0.001, atol=1e-05" in text and "fails (1 of 2 elements)" in text


def test_within_assert_close_defaults_is_said_so_and_a_program_names_its_baseline() -> None:
    expected = np.array([1.0, 2.0], np.float32)
    actual = np.array([1.0, 2.0000005], np.float32)
    text = issue_markdown(facts(actual, expected, "EXPECTED: what keras-tf computed; x"))
    assert "returns 2.0000005 where keras-tf gives 2 (float32)" in text.splitlines()[0]
    assert "Expected: what keras-tf computed." in text
    assert ": passes." in text  # dlfuzz's own allowance was 0 here; assert_close's is not


def test_a_crash_issue_says_what_happened_instead_of_values() -> None:
    crashed = {"tf": Outcome("tf", "crash", exc_type="SIGSEGV", message="worker killed"),
               "numpy": Outcome("numpy", "ok")}
    text = issue_markdown(facts(np.zeros(1), np.zeros(1), "", severity="crash",
                                expectation=Expectation("runs"), outcomes=crashed,
                                details={"special_values": "inputs hold -inf"}))
    assert text.startswith("# [TensorFlow] tf.math.hypot crashes (SIGSEGV)\n")
    assert "- Actual (tf): crash (SIGSEGV: worker killed)" in text
    assert "- Note: inputs hold -inf" in text
    assert "numpy: ok" in text


def test_an_abort_issue_shows_its_crash_state_and_the_top_of_its_output() -> None:
    log = ("F0000 00:00:1.5    3395 tensor_shape.cc:362] Check failed: d < dims() (1 vs. 1)\n"
           "*** Check failure stack trace: ***\n"
           + "".join(f"    @     0x7f2b{k:04x}  tensorflow::Frame{k}()\n" for k in range(40)))
    crashed = {"tf": Outcome("tf", "crash", exc_type="SIGABRT", message="worker killed")}
    state = "Frame0 < Frame1 < Frame2"
    text = issue_markdown(facts(np.zeros(1), np.zeros(1), "", severity="crash",
                                expectation=Expectation("runs"), outcomes=crashed,
                                details={"crash_state": state, "log_tail": log}))
    assert f"- Crash state (top native frames, callee first): `{state}`" in text
    block = text.split("## Output of the crashed process (from its fatal message)\n\n```\n")[1]
    shown = block.split("```")[0].splitlines()
    assert shown[0].endswith("Check failed: d < dims() (1 vs. 1)") and len(shown) == 16
    plain = issue_markdown(facts(np.zeros(1), np.zeros(1), "", severity="crash",
                                 expectation=Expectation("runs"), outcomes=crashed,
                                 details={"log_tail": log}))
    assert "Output of the crashed process" not in plain  # no state: no native message

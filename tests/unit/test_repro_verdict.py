"""API reproducers judge outputs shape-exactly and end with one verdict line.

A 0-d reference compares with a 0-d output (slogdet/det-like scalars), a NaN in the
reference is matched by a NaN, a shape mismatch is a verdict of its own, and a numeric
verdict names the differing elements by index instead of dumping arrays. These cases run
numpy reproducers (the cheapest library) in a fresh interpreter, as users run them.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.backends.tf_backend import TfBackend
from dlfuzz.cases import ApiCase, Call, Expectation, Ref, Tensor
from dlfuzz.triage.repro import reproducer


def _case(api: str, *arrays: np.ndarray, **kwargs) -> ApiCase:
    refs = tuple(Ref(i) for i in range(len(arrays)))
    call = Call(f"numpy.{api}", refs, tuple(kwargs.items()))
    return ApiCase(api, tuple(Tensor.from_numpy(a) for a in arrays), (("numpy", call),))


def _values(expected: list[np.ndarray], rtol: float = 1.3e-6, atol: float = 1e-5
            ) -> Expectation:
    allowed = [atol + rtol * np.abs(np.nan_to_num(e.astype(np.float64))) for e in expected]
    return Expectation("values", tuple(expected), tuple(allowed))


def _run(tmp_path: Path, case: ApiCase, expectation: Expectation) -> tuple[int, list[str]]:
    script = tmp_path / "repro_numpy.py"
    script.write_text(reproducer(NumpyBackend(), case, expectation, "t"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, proc.stderr
    return proc.returncode, lines


def test_scalar_output_matches_a_scalar_reference(tmp_path: Path) -> None:
    """det/slogdet of a matrix are 0-d: the 0-d reference (NaN here) must pass."""
    x = np.array([[np.nan, 1.0], [2.0, 3.0]], np.float32)
    case = _case("linalg.det", x)
    rc, lines = _run(tmp_path, case, _values([np.array(np.nan, np.float32)]))
    assert rc == 0, lines
    assert lines[-1].startswith("OK: numpy.linalg.det matches the float64 reference"), lines
    assert "float32 rtol 1.3e-06 atol 1e-05" in lines[-1]
    # slogdet: two 0-d outputs (sign, log|det|) against two 0-d references.
    y = np.array([[2.0, 0.0], [0.0, 3.0]], np.float32)
    ref = [np.array(1.0, np.float32), np.array(np.log(6.0), np.float32)]
    rc, lines = _run(tmp_path, _case("linalg.slogdet", y), _values(ref))
    assert rc == 0 and lines[-1].startswith("OK:"), lines


def test_scalar_output_that_differs_names_the_value(tmp_path: Path) -> None:
    y = np.array([[2.0, 0.0], [0.0, 3.0]], np.float32)
    rc, lines = _run(tmp_path, _case("linalg.det", y), _values([np.array(5.0, np.float32)]))
    assert rc == 1, lines
    assert lines[-1] == ("BUG present: numpy.linalg.det output 0: 1 of 1 elements off beyond "
                         "tolerance (float32 rtol 1.3e-06 atol 1e-05, plus input-rounding "
                         "sensitivity); the value: got 6.0, expected 5.0"), lines


def test_nan_in_the_reference_equals_nan(tmp_path: Path) -> None:
    x = np.array([1.0, np.nan, 2.0, 4.0], np.float32)
    ref = np.array([1.0, np.nan, np.nan, np.nan], np.float32)
    rc, lines = _run(tmp_path, _case("cumsum", x), _values([ref]))
    assert rc == 0 and lines[-1].startswith("OK:"), lines
    # ... but a number where the reference is NaN (or the reverse) is a difference.
    rc, lines = _run(tmp_path, _case("cumsum", x),
                     _values([np.array([1.0, np.nan, np.nan, 7.0], np.float32)]))
    assert rc == 1 and "first at [3]: got nan, expected 7.0" in lines[-1], lines


def test_shape_mismatch_is_its_own_verdict(tmp_path: Path) -> None:
    y = np.array([[2.0, 0.0], [0.0, 3.0]], np.float32)
    rc, lines = _run(tmp_path, _case("linalg.det", y), _values([np.array([6.0], np.float32)]))
    assert rc == 1, lines
    assert lines[-1] == ("BUG present: numpy.linalg.det output 0: shape [], the reference's "
                         "is [1]"), lines
    x = np.arange(6, dtype=np.float32).reshape(2, 3)  # same elements, transposed shape
    rc, lines = _run(tmp_path, _case("cumsum", x, axis=1),
                     _values([np.cumsum(x, axis=1).reshape(3, 2)]))
    assert rc == 1 and "shape [2, 3], the reference's is [3, 2]" in lines[-1], lines


def test_numeric_verdict_marks_elements_not_arrays(tmp_path: Path) -> None:
    x = np.ones((4, 6), np.float32)
    ref = np.cumsum(x, axis=1)
    ref[2, 1] += 1.0
    ref[3, 5] -= 2.0
    rc, lines = _run(tmp_path, _case("cumsum", x, axis=1), _values([ref]))
    assert rc == 1, lines
    assert lines[-1] == ("BUG present: numpy.cumsum output 0: 2 of 24 elements off beyond "
                         "tolerance (float32 rtol 1.3e-06 atol 1e-05, plus input-rounding "
                         "sensitivity); first at [2, 1]: got 2.0, expected 3.0"), lines
    assert lines[:-1] == ["  output 0 at [2, 1]: got 2.0, expected 3.0 (allowed error 1.39e-05)",
                          "  output 0 at [3, 5]: got 6.0, expected 4.0 (allowed error 1.52e-05)"]


def test_wrong_number_of_outputs(tmp_path: Path) -> None:
    y = np.array([[2.0, 0.0], [0.0, 3.0]], np.float32)
    rc, lines = _run(tmp_path, _case("linalg.det", y), _values([np.array(6.0, np.float32)] * 2))
    assert rc == 1 and lines[-1] == ("BUG present: numpy.linalg.det returned 1 outputs, the "
                                     "reference has 2"), lines


def test_tf_logs_are_silenced_before_the_import() -> None:
    case = ApiCase("abs", (Tensor.from_numpy(np.ones(2, np.float32)),),
                   (("tf", Call("tensorflow.math.abs", (Ref(0),))),))
    text = reproducer(TfBackend(), case, Expectation("runs"), "t")
    assert 'os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")' in text
    assert text.index("TF_CPP_MIN_LOG_LEVEL") < text.index("import tensorflow")
    compile(text, "repro.py", "exec")


def test_runs_and_rejects_end_with_one_verdict_line(tmp_path: Path) -> None:
    x = np.ones(3, np.float32)
    rc, lines = _run(tmp_path, _case("cumsum", x), Expectation("runs"))
    assert rc == 0 and lines[-1] == "OK: numpy.cumsum returned normally", lines
    rc, lines = _run(tmp_path, _case("cumsum", x, axis=5), Expectation("runs"))
    assert rc == 1 and lines[-1].startswith("BUG present: numpy.cumsum raised AxisError"), lines
    rc, lines = _run(tmp_path, _case("cumsum", x, axis=5), Expectation("rejects"))
    assert rc == 0 and lines[-1].startswith("OK: rejected with AxisError"), lines
    rc, lines = _run(tmp_path, _case("cumsum", x), Expectation("rejects"))
    assert rc == 1 and lines[-1] == ("BUG present: numpy.cumsum accepted the invalid input "
                                     "and returned a result"), lines


def test_a_crash_reproducer_takes_an_exception_for_the_fix(tmp_path: Path) -> None:
    """A crash found on an input the library may refuse (a rank outside its bound):
    once fixed, the call raises; the reproducer must say OK then, and show the crash
    (killed, no verdict) while it is there."""
    from dlfuzz.triage.confirm import judge_reproducer

    x = np.ones(3, np.float32)
    rc, lines = _run(tmp_path, _case("cumsum", x, axis=5), Expectation("survives"))
    assert rc == 0 and lines[-1].startswith("OK: numpy.cumsum raised AxisError"), lines
    rc, lines = _run(tmp_path, _case("cumsum", x), Expectation("survives"))
    assert rc == 0 and lines[-1] == "OK: numpy.cumsum returned normally", lines
    dying = ApiCase("abort", (), (("numpy", Call("os.abort", ())),))
    script = tmp_path / "repro_numpy.py"
    script.write_text(reproducer(NumpyBackend(), dying, Expectation("survives"), "t"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    verdict = judge_reproducer("crash", proc.returncode, proc.stdout, proc.stderr, 60)
    assert verdict.reproduced and verdict.verdict == "killed by SIGABRT", (verdict, proc)


def test_a_jax_hang_reproducer_waits_for_the_computation(tmp_path: Path) -> None:
    """JAX dispatches asynchronously: ``jax.numpy.lcm`` on int32 inputs holding INT_MIN
    never ends, yet a script that only calls it returns at once. The reproducer waits for
    the result (``Backend.repro_wait``), so it hangs until its alarm, which is the
    verdict of a hang; on ordinary inputs it says OK."""
    from dlfuzz.backends.jax_backend import JaxBackend
    from dlfuzz.triage.confirm import judge_reproducer

    def lcm(x: np.ndarray, y: np.ndarray) -> ApiCase:
        return ApiCase("lcm", (Tensor.from_numpy(x), Tensor.from_numpy(y)),
                       (("jax", Call("jax.numpy.lcm", (Ref(0), Ref(1)))),))

    def run(case: ApiCase) -> subprocess.CompletedProcess:
        script = tmp_path / "repro_jax.py"
        script.write_text(reproducer(JaxBackend(), case, Expectation("runs", timeout_s=3), "t"))
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120)

    low, high = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    # The inputs of the campaign's finding (smaller ones were computed at dispatch).
    x = np.array([high - 1, low, 10, 4, low, -1], np.int32).reshape(2, 1, 1, 3)
    y = np.array([-8, -4, 9, -1, low, -1, 7, 4, low, -4, 3, 8, -9, 4, -10, low],
                 np.int32).reshape(1, 4, 4, 1)
    hang = run(lcm(x, y))
    verdict = judge_reproducer("timeout", hang.returncode, hang.stdout, hang.stderr, 3)
    assert verdict.reproduced and verdict.verdict == "killed by SIGALRM", (
        verdict, hang.stdout, hang.stderr[-500:])
    ok = run(lcm(np.array([4, 6, 10], np.int32), np.array([[3], [5]], np.int32)))
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == \
        "OK: jax.numpy.lcm returned normally", ok.stdout

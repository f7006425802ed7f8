"""What every Python reproducer ends with: a quiet header, a shape-exact check and ONE verdict.

A reproducer is pasted into upstream issues and run by ``dlfuzz reproduce``; both read its
last line. So the pieces here are the same for API, model and program reproducers:

* ``quiet_header``: environment variables set before the library's import, so TF/XLA/absl
  C++ logs do not bury the verdict;
* ``VERDICT``: ``_verdict(status, text)`` prints the one verdict line, flushes and leaves
  with ``os._exit`` (a library's teardown can neither print after it nor change the exit
  status);
* ``values_check``: compares each output with the float64 reference the oracle used,
  shape first (a 0-d reference wants a 0-d output; a different shape is a verdict of its
  own), then element by element within the documented per-dtype allowance, NaN equal to
  NaN where the reference is NaN; the first few differing elements are listed by index
  (got / expected), never whole arrays.

The check is plain Python (no numpy), because an API reproducer needs only its library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# Libraries whose C++ runtime (TensorFlow, XLA, absl) logs to stderr at import and run time.
_TF_LOGGING = ("tf", "keras", "jax", "onnx")

SHOWN = 5  # differing elements listed by index before the verdict

VERDICT = '''
def _one_line(text):
    """A message on one line: the verdict is the script's last line."""
    return " ".join(str(text).split())


def _verdict(status, text):
    """Print the verdict as the last line and exit with ``status`` at once (no teardown)."""
    sys.stderr.flush()
    print(_one_line(text))
    sys.stdout.flush()
    os._exit(status)
'''

_VALUES = '''
def _outputs(value):
    """The call's outputs in order, as the fuzzer saw them (nested tuples flattened)."""
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _outputs(item)]
    return [] if value is None else [value]


def _shape(t):
    return tuple(int(d) for d in getattr(t, "shape", ()))


def _cells(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _cells(item)]
    return [v]


def _index(k, shape):
    idx = []
    for n in reversed(shape):
        idx.append(k % n)
        k //= n
    return list(reversed(idx))


def _is_nan(z):
    return math.isnan(z.real) or math.isnan(z.imag)


def _off(got, want, allowed):
    """True when ``got`` is not ``want`` within ``allowed`` (NaN equals NaN)."""
    g, w = complex(got), complex(want)
    if _is_nan(w) or _is_nan(g):
        return _is_nan(w) != _is_nan(g)
    if math.isinf(abs(w)) or math.isinf(abs(g)):
        return g != w
    return abs(g - w) > allowed


def _show(x):
    return repr(x) if not isinstance(x, complex) else f"({x.real!r}{x.imag:+}j)"


def _check(result):
    """(problems, detail lines) of the outputs against EXPECTED/SHAPES/ALLOWED."""
    outs = _outputs(result)
    if len(outs) != len(EXPECTED):
        return [f"{TARGET} returned {len(outs)} outputs, the reference has {len(EXPECTED)}"], []
    problems, details = [], []
    for i, out in enumerate(outs):
        shape, want_shape = _shape(out), tuple(SHAPES[i])
        if shape != want_shape:
            problems.append(f"{TARGET} output {i}: shape {list(shape)}, the reference's "
                            f"is {list(want_shape)}")
            continue
        got, want, allowed = _cells(_as_list(out)), _cells(EXPECTED[i]), _cells(ALLOWED[i])
        bad = [k for k in range(len(want)) if _off(got[k], want[k], allowed[k])]
        if not bad:
            continue
        k = bad[0]
        where = f"first at {_index(k, shape)}" if shape else "the value"
        problems.append(f"{TARGET} output {i}: {len(bad)} of {len(want)} elements off beyond "
                        f"tolerance ({TOLERANCE[i]}); {where}: got {_show(got[k])}, "
                        f"expected {_show(want[k])}")
        for k in bad[:SHOWN]:
            details.append(f"  output {i} at {_index(k, shape)}: got {_show(got[k])}, "
                           f"expected {_show(want[k])} (allowed error {allowed[k]:.3g})")
        if len(bad) > SHOWN:
            details.append(f"  output {i}: {len(bad) - SHOWN} more differing elements")
    return problems, details


problems, details = _check(result)
for line in details:
    print(line)
if problems:
    _verdict(1, "BUG present: " + "; ".join(problems))
_verdict(0, f"OK: {TARGET} matches the float64 reference within tolerance "
            f"({'; '.join(dict.fromkeys(TOLERANCE))})")
'''


def quiet_header(backend_name: str) -> list[str]:
    """Lines (before any library import) that silence C++ runtime logs of TF/XLA/absl."""
    lines = ["import os"]
    if backend_name.startswith(_TF_LOGGING):
        lines += ['os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TF/XLA C++ logs',
                  'os.environ.setdefault("ABSL_MIN_LOG_LEVEL", "3")  # absl C++ logs',
                  'os.environ.setdefault("GLOG_minloglevel", "3")',
                  'os.environ.setdefault("GRPC_VERBOSITY", "ERROR")']
    return lines


def tolerance_text(dtype: str) -> str:
    """The documented per-dtype tolerance, as the verdict names it."""
    from dlfuzz.oracles.tolerances import tolerance_for

    tol = tolerance_for(dtype)
    if tol.rtol == 0 and tol.atol == 0:
        return f"{dtype}: exact"
    return f"{dtype} rtol {tol.rtol:.3g} atol {tol.atol:.3g}, plus input-rounding sensitivity"


def nested(array: np.ndarray) -> Any:
    """An array as nested lists (bfloat16 as float64, exact); a 0-d array as a scalar."""
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float64)
    return array.tolist()


def _allowance(allowed: Any, expected: np.ndarray) -> np.ndarray:
    """The per-element allowance in the reference's shape (a scalar or a stray shape is
    spread as its largest value, so the check never indexes past it)."""
    w = np.asarray(allowed, np.float64)
    if w.shape == expected.shape:
        return w
    return np.full(expected.shape, float(np.max(w)) if w.size else 0.0)


def values_check(target: str, expected: Sequence[np.ndarray], allowed: Sequence[np.ndarray],
                 literal: Any) -> str:
    """The script's tail judging ``result``: data literals, the check and the verdict.

    ``literal`` writes exact Python literals (``triage.repro.literal``); the script must
    already define ``math``, ``os``, ``sys``, ``_as_list`` and ``_verdict``.
    """
    exp = [np.asarray(e) for e in expected]
    lines = [
        f"TARGET = {target!r}",
        "EXPECTED = " + literal([nested(e) for e in exp]),
        "SHAPES = " + repr([tuple(int(d) for d in e.shape) for e in exp]),
        "ALLOWED = " + literal([nested(_allowance(w, e)) for w, e in zip(allowed, exp,
                                                                          strict=True)]),
        "TOLERANCE = " + repr([tolerance_text(e.dtype.name) for e in exp]),
        f"SHOWN = {SHOWN}",
        _VALUES,
    ]
    return "\n".join(lines)

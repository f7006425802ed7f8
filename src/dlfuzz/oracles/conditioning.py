"""Condition numbers of linear-algebra inputs (and of sin/cos/tan arguments): when a
disagreement is the input's fault.

A correct float32 ``inv`` of a matrix with condition number 1e6 may be off by ~10 %;
the float64 reference is right and the float32 backend is not wrong. For the APIs of
``conditioning.json`` the input's condition number is computed in float64 on the host
(numpy, cheap at fuzzing sizes); past the table's threshold on ``cond * eps(dtype)`` the
finding is marked ``ill_conditioned`` (special-value class, never a wrong result).
sin, cos and tan of x have a condition number of about |x|: a float32 x past 1e5 no
longer fixes the angle to the digits a report shows (``periodic_pattern``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from dlfuzz.cases import COMPLEX_DTYPES, FLOAT_DTYPES, ApiCase
from dlfuzz.errors import UsageError
from dlfuzz.oracles.tolerances import epsilon

TABLE = Path(__file__).with_name("conditioning.json")


@dataclass(frozen=True)
class Conditioning:
    condition_number: float
    ill_conditioned: bool


@cache
def _table() -> tuple[re.Pattern[str], float, re.Pattern[str]]:
    try:
        data = json.loads(TABLE.read_text())
        return (re.compile(data["pattern"]), float(data["max_cond_eps"]),
                re.compile(data["periodic_pattern"]))
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"{TABLE}: cannot read 'pattern', 'periodic_pattern' and "
                         f"'max_cond_eps' ({exc}); restore the file from the "
                         "repository") from exc


def _names(case: ApiCase) -> list[str]:
    return [case.api] + [c.target for _, c in getattr(case, "calls", ())]


def is_linalg(case: ApiCase) -> bool:
    pattern, _, _ = _table()
    return any(pattern.search(n) for n in _names(case))


def is_periodic(case: ApiCase) -> bool:
    _, _, pattern = _table()
    return any(pattern.search(n) for n in _names(case))


def _periodic(case: ApiCase, dtype: str, threshold: float) -> Conditioning | None:
    """sin/cos/tan: the condition number is about the largest finite |x| of the input."""
    worst: float | None = None
    eps = epsilon(dtype)
    for t in case.tensors:
        if t.dtype not in FLOAT_DTYPES:
            continue
        wide = t.to_numpy().astype(np.float64)
        finite = np.abs(wide[np.isfinite(wide)])
        if finite.size:
            worst = max(worst or 0.0, float(finite.max()))
            eps = eps or epsilon(t.dtype)
    if worst is None or not eps:
        return None
    return Conditioning(worst, worst * eps >= threshold)


def condition_number(array: np.ndarray) -> float | None:
    """The largest 2-norm condition number over the matrices of a batch (inf if singular);
    None when the input holds NaN/inf (its conditioning is not a number)."""
    wide = array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
    if wide.ndim < 2 or 0 in wide.shape[-2:]:
        return None
    if not np.all(np.isfinite(wide)):
        return None
    try:
        s = np.linalg.svd(wide, compute_uv=False)
    except np.linalg.LinAlgError:
        return float("inf")
    top, bottom = s[..., 0], s[..., -1]
    # A singular value below the float64 rounding of the largest one is a zero that the
    # SVD's own rounding made positive: the matrix is singular.
    zero = bottom <= top * max(wide.shape[-2:]) * np.finfo(np.float64).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(zero, np.inf, top / np.where(zero, 1.0, bottom))
    return float(np.max(cond))


def conditioning(case: ApiCase, dtype: str) -> Conditioning | None:
    """The case's conditioning for results in ``dtype``; None if not linear algebra or no
    floating matrix input."""
    if is_periodic(case):
        return _periodic(case, dtype, _table()[1])
    if not is_linalg(case):
        return None
    _, threshold, _ = _table()
    eps = epsilon(dtype)
    matrices = [t.to_numpy() for t in case.tensors if len(t.shape) >= 2 and
                (t.dtype in FLOAT_DTYPES or t.dtype in COMPLEX_DTYPES)]
    # The operator is the square matrix (A of solve(A, b), whichever argument it is);
    # a right-hand side's conditioning says nothing. Without one (lstsq, svd of a tall
    # matrix) the first matrix is the operator.
    square = [a for a in matrices if a.shape[-1] == a.shape[-2]]
    worst: float | None = None
    for a in square or matrices[:1]:
        eps = eps or epsilon(a.dtype.name)
        c = condition_number(a)
        if c is not None:
            worst = c if worst is None else max(worst, c)
    if worst is None or not eps:
        return None
    return Conditioning(worst, worst * eps >= threshold)

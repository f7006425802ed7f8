"""Condition numbers of linear-algebra inputs: when a disagreement is the matrix's fault.

A correct float32 ``inv`` of a matrix with condition number 1e6 may be off by ~10 %;
the float64 reference is right and the float32 backend is not wrong. For the APIs of
``conditioning.json`` the input's condition number is computed in float64 on the host
(numpy, cheap at fuzzing sizes); past the table's threshold on ``cond * eps(dtype)`` the
finding is marked ``ill_conditioned`` (special-value class, never a wrong result).
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
def _table() -> tuple[re.Pattern[str], float]:
    try:
        data = json.loads(TABLE.read_text())
        return re.compile(data["pattern"]), float(data["max_cond_eps"])
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"{TABLE}: cannot read 'pattern' and 'max_cond_eps' ({exc}); "
                         "restore the file from the repository") from exc


def is_linalg(case: ApiCase) -> bool:
    pattern, _ = _table()
    names = [case.api] + [c.target for _, c in getattr(case, "calls", ())]
    return any(pattern.search(n) for n in names)


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
    if not is_linalg(case):
        return None
    _, threshold = _table()
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

"""Where a backend's output differs from the expected one, element by element.

``compare.deviation`` sums a comparison up (worst ratio, count); a person reading a
report, and the special-value analysis, need the elements themselves: which ones are
off, the first of them with its actual and expected values. Which elements are off is
``compare.bad_elements``, the test ``deviation`` counts with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dlfuzz.oracles.compare import Deviation
from dlfuzz.oracles.tolerances import Tolerance, as_comparable


@dataclass(frozen=True)
class Discrepancy:
    """The first disagreeing element of one output, and how many disagree."""

    output: int
    outputs: int
    index: tuple[int, ...]
    actual: complex
    expected: complex
    bad: int
    total: int
    max_abs: float
    dtype: str
    tolerance: Tolerance

    @property
    def non_finite(self) -> bool:
        """The first bad element holds NaN/inf on one side (a kind, not a size, differs)."""
        return not (_finite(self.actual) and _finite(self.expected))


def _finite(x: complex) -> bool:
    return math.isfinite(x.real) and math.isfinite(x.imag)


def first_discrepancy(actuals: tuple[np.ndarray, ...], expecteds: tuple[np.ndarray, ...],
                      masks: tuple[np.ndarray, ...], deviations: tuple[Deviation, ...],
                      tolerances: tuple[Tolerance, ...]) -> Discrepancy | None:
    """The first bad element of the first output that has one."""
    for i, (x, e, m) in enumerate(zip(actuals, expecteds, masks, strict=True)):
        if m.shape != x.shape or not m.any():
            continue
        flat = int(np.flatnonzero(m)[0])
        index = tuple(int(k) for k in np.unravel_index(flat, x.shape))
        a_val = as_comparable(x).reshape(-1)[flat]
        e_val = as_comparable(e).reshape(-1)[flat]
        dev = deviations[i] if i < len(deviations) else None
        return Discrepancy(i, len(actuals), index, complex(a_val), complex(e_val),
                           int(m.sum()), int(m.size), dev.max_abs if dev else 0.0,
                           x.dtype.name, tolerances[i])
    return None


def fmt(value: complex) -> str:
    """A value as a person reads it: nan, -inf, -0, 0.31, 1.5e+08; complex as a+bj."""
    if value.imag != 0:
        return f"({fmt(complex(value.real))}{'+' if value.imag >= 0 else '-'}" \
               f"{fmt(complex(abs(value.imag)))}j)"
    x = value.real
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    return f"{x:.6g}"


def tolerance_text(tol: Tolerance, dtype: str) -> str:
    if tol.rtol == 0 and tol.atol == 0:
        return f"exact for {dtype}"
    return f"tolerance rtol {tol.rtol:.2g} + atol {tol.atol:.2g} for {dtype}"

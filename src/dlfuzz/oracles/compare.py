"""Elementwise comparison of outputs, aware of NaN, infinities, dtypes and sensitivity.

``deviation`` returns, per output element, how far an actual value is from an expected
one in units of what was allowed: <= 1 is fine. What is allowed is the dtype's tolerance
(rtol * |expected| + atol) plus ``sensitivity`` — how much the true result moves when the
inputs move by one rounding of their own dtype. That last term is what a library of that
dtype cannot avoid; it makes ill-conditioned inputs (cancellation, sin of 1e30) harmless
without loosening the well-conditioned ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlfuzz.oracles.tolerances import Tolerance, as_comparable, tolerance_for


@dataclass(frozen=True)
class Deviation:
    """How one output compares with what was expected."""

    ratio: float  # the worst element's deviation in tolerance units (inf: mismatch of kind)
    bad: int  # elements over tolerance
    total: int
    non_finite: bool  # some bad element is NaN/Inf where the expected value is finite
    max_abs: float  # largest finite absolute difference, for reports
    shape_mismatch: bool = False


def structure(outputs: tuple[np.ndarray, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(o.shape) for o in outputs)


def deviation(actual: np.ndarray, expected: np.ndarray, tol: Tolerance,
              sensitivity: np.ndarray | None = None) -> Deviation:
    """Compare one output; ``expected`` is already rounded to ``actual``'s dtype if wanted."""
    if actual.shape != expected.shape:
        return Deviation(float("inf"), actual.size, max(actual.size, expected.size), False,
                         float("inf"), shape_mismatch=True)
    if actual.size == 0:
        return Deviation(0.0, 0, 0, False, 0.0)
    a, e = as_comparable(actual), as_comparable(expected)
    if a.dtype.kind in "iu" and e.dtype.kind in "iu":
        bad = a != e
        n_bad = int(np.count_nonzero(bad))
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        return Deviation(float("inf") if n_bad else 0.0, n_bad, a.size, False,
                         float(diff.max()) if n_bad else 0.0)
    ratio, diff, a_fin, e_fin = _float_ratios(a, e, tol, sensitivity)
    bad = ratio > 1.0
    n_bad = int(np.count_nonzero(bad))
    non_finite = bool(np.any(bad & ~a_fin & e_fin))
    finite_diff = diff[a_fin & e_fin]
    return Deviation(
        ratio=float(ratio.max()), bad=n_bad, total=int(a.size), non_finite=non_finite,
        max_abs=float(finite_diff.max()) if finite_diff.size else 0.0)


def bad_elements(actual: np.ndarray, expected: np.ndarray, tol: Tolerance,
                 sensitivity: np.ndarray | None = None) -> np.ndarray:
    """True where ``actual`` is off ``expected`` (same shapes; ``expected`` already
    rounded to ``actual``'s dtype): the elements ``deviation`` counts as bad."""
    a, e = as_comparable(actual), as_comparable(expected)
    if a.dtype.kind in "iu" and e.dtype.kind in "iu":
        return np.asarray(a != e)
    return np.asarray(_float_ratios(a, e, tol, sensitivity)[0] > 1.0)


def _float_ratios(a: np.ndarray, e: np.ndarray, tol: Tolerance,
                  sensitivity: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per element: the deviation in tolerance units (inf where NaN-ness or an
    infinity's sign differs), the finite absolute difference, and which actual and
    expected values are finite."""
    a = a.astype(np.complex128) if (a.dtype.kind == "c" or e.dtype.kind == "c") else \
        a.astype(np.float64)
    e = e.astype(a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        a_nan, e_nan = np.isnan(a), np.isnan(e)
        a_fin, e_fin = np.isfinite(a), np.isfinite(e)
        both_fin = a_fin & e_fin
        # Same NaN-ness and, for infinities, the same value (sign); complex infs compare parts.
        kind_mismatch = (a_nan != e_nan) | (~a_fin & ~a_nan & ~e_fin & ~e_nan & (a != e)) \
            | (a_fin != e_fin) & ~(a_nan | e_nan)
        diff = np.where(both_fin, np.abs(a - e), 0.0)
        allowed = tol.atol + tol.rtol * np.abs(np.where(both_fin, e, 0.0))
        if sensitivity is not None:
            allowed = allowed + np.where(np.isfinite(sensitivity), sensitivity, np.inf)
        with np.errstate(divide="ignore"):
            ratio = np.where(diff > 0, diff / np.where(allowed > 0, allowed, 1e-300), 0.0)
    if sensitivity is not None:
        # Where nudging the inputs by one rounding flips the result's finiteness, the
        # element is unstable: a NaN/Inf difference there is the dtype's, not a bug.
        kind_mismatch = kind_mismatch & np.isfinite(sensitivity)
    return np.where(kind_mismatch, np.inf, ratio), diff, a_fin, e_fin


def round_to(expected: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The expected values as the actual output's dtype can hold them (overflow to inf)."""
    if like.dtype == expected.dtype:
        return expected
    like_kind = "f" if like.dtype.name == "bfloat16" else like.dtype.kind
    if like_kind in "fc" and expected.dtype.kind in "fciub":
        if like_kind == "f" and expected.dtype.kind == "c":
            return expected
        with np.errstate(over="ignore", invalid="ignore"):
            return expected.astype(like.dtype)
    return expected


def loosest(x: np.ndarray, y: np.ndarray) -> Tolerance:
    """The looser of two outputs' dtype tolerances (float16 vs float32: float16's)."""
    tx, ty = tolerance_for(x.dtype.name), tolerance_for(y.dtype.name)
    return Tolerance(max(tx.rtol, ty.rtol), max(tx.atol, ty.atol))


def agree(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...], tol: Tolerance | None = None,
          sensitivity: tuple[np.ndarray, ...] | None = None) -> bool:
    """Same structure and every output close: under ``tol``, or else the looser of each
    pair's dtype tolerances; plus the per-element ``sensitivity`` where its shape fits."""
    if structure(a) != structure(b):
        return False
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        s = sensitivity[i] if sensitivity is not None and sensitivity[i].shape == x.shape \
            else None
        if deviation(x, y, tol or loosest(x, y), s).ratio > 1.0:
            return False
    return True

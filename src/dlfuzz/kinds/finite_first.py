"""Finite-first reduction: NaN and infinities in a case's inputs become ordinary numbers
whenever the bug survives that.

Most disagreements on NaN/inf inputs are about special values (what a library does with
them); a wrong result hiding behind them is a different, more valuable report. Run
first, this pass offers the same case with non-finite input elements replaced by 0, 1 or
a large finite value of the same sign (all at once, per tensor, then one element at a
time); the reducer keeps the first whose finding is the same bug, so the report shows
ordinary inputs when the bug has them.
"""

from __future__ import annotations

from collections.abc import Iterator

import ml_dtypes
import numpy as np

# Per tensor, how many single non-finite elements are offered one by one.
MAX_SINGLE = 16


def _floating(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc" or a.dtype.name == "bfloat16"


def _nonfinite(a: np.ndarray) -> np.ndarray:
    if not _floating(a):
        return np.zeros(a.shape, bool)
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    return ~np.isfinite(wide)


def _large(a: np.ndarray) -> float:
    """Large but far from overflow: half the square root of the dtype's max (128 in
    float16, ~9e18 in float32), so a square, or a sum of a few squares, stays finite."""
    dtype = np.float32 if a.dtype.kind == "c" and a.dtype.itemsize <= 8 else \
        (np.float64 if a.dtype.kind == "c" else a.dtype)
    return float(np.sqrt(float(ml_dtypes.finfo(dtype).max))) / 2


def _fill(a: np.ndarray, where: np.ndarray, how: str) -> np.ndarray:
    """``a`` with the elements ``where`` replaced: "0", "1" or "large" (sign kept)."""
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    if how == "large":
        sign = np.where(np.isnan(wide.real), 1.0, np.sign(wide.real))
        value: np.ndarray | float = sign * _large(a)
    else:
        value = float(how)
    out = np.where(where, value, wide)
    return out.astype(a.dtype)


def finite_variants(arrays: list[np.ndarray]) -> Iterator[list[np.ndarray]]:
    """The arrays with fewer non-finite elements, boldest first."""
    masks = [_nonfinite(a) for a in arrays]
    holders = [i for i, m in enumerate(masks) if m.any()]
    if not holders:
        return
    hows = ("0", "1", "large")
    if len(holders) > 1:
        for how in hows:
            yield [_fill(a, m, how) if m.any() else a for a, m in zip(arrays, masks,
                                                                     strict=True)]
    for i in holders:
        for how in hows:
            yield [*arrays[:i], _fill(arrays[i], masks[i], how), *arrays[i + 1:]]
    for i in holders:
        flat = np.flatnonzero(masks[i])
        if flat.size < 2:
            continue  # the whole-tensor candidates above were this one already
        for k in flat[:MAX_SINGLE]:
            one = np.zeros(masks[i].size, bool)
            one[k] = True
            for how in hows:
                yield [*arrays[:i], _fill(arrays[i], one.reshape(masks[i].shape), how),
                       *arrays[i + 1:]]

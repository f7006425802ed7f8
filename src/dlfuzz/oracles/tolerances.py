"""Per-dtype tolerances and the numeric metrics of the papers, by name.

The default table is ``torch.testing.assert_close``'s. The metrics LEMON (D_MAD),
DLJSFuzzer (max-abs) and TensorJSFuzz (mean-abs) used are here so a campaign can report
them or select them; dlfuzz's own verdicts use the tolerance-plus-sensitivity judge of
``reference.py``, which is tighter where the computation is well conditioned and looser
exactly where the dtype cannot promise more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# torch.testing.assert_close defaults; complex types follow their component type.
ASSERT_CLOSE: dict[str, Tolerance] = {
    "float16": Tolerance(1e-3, 1e-5),
    "bfloat16": Tolerance(1.6e-2, 1e-5),
    "float32": Tolerance(1.3e-6, 1e-5),
    "float64": Tolerance(1e-7, 1e-7),
    "complex64": Tolerance(1.3e-6, 1e-5),
    "complex128": Tolerance(1e-7, 1e-7),
}
EXACT = Tolerance(0.0, 0.0)


# The narrow floating dtypes: judged against float64 with their own (loose) tolerance,
# and by the dtype oracle against their library's float64 run.
LOW_PRECISION = frozenset({"float16", "bfloat16"})


def tolerance_for(dtype: str) -> Tolerance:
    """Integers and bools compare exactly."""
    return ASSERT_CLOSE.get(dtype, EXACT)


def epsilon(dtype: str) -> float:
    """Machine epsilon of a floating dtype (of its component for complex); 0 otherwise."""
    if dtype in ("complex64",):
        return float(np.finfo(np.float32).eps)
    if dtype in ("complex128",):
        return float(np.finfo(np.float64).eps)
    if dtype in ASSERT_CLOSE:
        return float(ml_dtypes.finfo(DTYPES[dtype]).eps)  # numpy's finfo lacks bfloat16
    return 0.0


def as_comparable(array: np.ndarray) -> np.ndarray:
    """Values in a dtype every library's output converts to exactly (float64/complex128)."""
    if array.dtype.kind == "c":
        return array.astype(np.complex128)
    if array.dtype.kind == "b":
        return array.astype(np.int64)
    if array.dtype.kind in "iu":
        return array  # exact integer comparison; no float rounding of int64
    return array.astype(np.float64)


# ---- the papers' metrics, by name -----------------------------------------------------

def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    """DLJSFuzzer: the largest absolute difference (threshold 0.15 in the paper)."""
    d = _finite_diff(a, b)
    return float(d.max()) if d.size else 0.0


def mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    """TensorJSFuzz: the mean absolute difference (threshold 1000 in the paper)."""
    d = _finite_diff(a, b)
    return float(d.mean()) if d.size else 0.0


def d_mad(a: np.ndarray, b: np.ndarray, truth: np.ndarray) -> float:
    """LEMON's D_MAD of two outputs against a ground truth (threshold 0.4)."""
    ta = float(np.mean(np.abs(as_comparable(a) - as_comparable(truth))))
    tb = float(np.mean(np.abs(as_comparable(b) - as_comparable(truth))))
    return 0.0 if ta + tb == 0 else abs(ta - tb) / (ta + tb)


def _finite_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = np.abs(as_comparable(a).astype(np.complex128) - as_comparable(b).astype(np.complex128))
    return d[np.isfinite(d)]


METRICS: dict[str, Callable[..., float]] = {
    "max_abs": max_abs,
    "mean_abs": mean_abs,
    "d_mad": d_mad,
}


def moved_counts(low: np.ndarray, wide: np.ndarray) -> bool:
    """Whole numbers on both sides with the same total: counts of which some moved to
    another bin (a bfloat16 histogram of one value: ``[0, 0, 0, 0, 1, 0, ...]``, whose
    float64 middle edge is 1.4e-17 where bfloat16's is 0, so 0 is counted one bin
    later). A wrong count changes the total; a rounding of a bin edge moves it."""
    a, b = as_comparable(low), as_comparable(wide)
    if a.shape != b.shape or a.dtype.kind != "f" or b.dtype.kind != "f" or not a.size:
        return False
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return False
    whole = bool(np.all(a == np.round(a))) and bool(np.all(b == np.round(b)))
    return whole and bool(np.any(a != b)) and float(a.sum()) == float(b.sum())


# Roundings of the largest input a low-precision evaluation may cost an element
# (cancellation: ``x - tanh(x)`` in bfloat16), see ``low_evaluation_limit``.
EVALUATION_STEPS = 8.0


# Float64 roundings of the largest input below which a float64 reference resolves
# nothing, see ``reference_resolution``.
REFERENCE_STEPS = 8.0


def reference_resolution(tensors: Sequence[Any], shape: tuple[int, ...]) -> float:
    """What a float64 reference cannot resolve in an output of ``shape``:
    ``REFERENCE_STEPS`` roundings of float64 at the largest finite input magnitude. A
    result that mixes its inputs (a sum, a product of matrices, an FFT) is computed in
    float64 with an absolute error of about that size in every element, however small
    the element: TF's and JAX's float64 ``irfft`` of a row holding 9.2e18 among numbers
    of order 1 gave exactly 0 for an element whose exact value is 1/12, and torch's
    float32 result, exactly 1/12, was filed as wrong. Elements of the size of the largest
    input are judged as before: the floor is 1e-15 of it, far below any dtype's
    tolerance there.

    0 for an output shaped like an input or like their broadcast: an elementwise
    result's element depends on its own inputs only, and a float64 reference resolves it
    to its own size (a huge element beside a wrong small one excuses nothing). A mixing
    result of the same shape (``cumsum``, a square ``matmul``) keeps the judgement it had
    without the floor."""
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shapes.append(tuple(np.broadcast_shapes(*shapes)))
    except ValueError:
        pass
    if not shapes or tuple(shape) in shapes:
        return 0.0
    scale = max((m for _, m in largest_inputs(tensors, lambda dtype: dtype != "bool")),
                default=0.0)
    return REFERENCE_STEPS * float(np.finfo(np.float64).eps) * scale


def largest_inputs(tensors: Sequence[Any], dtypes: Callable[[str], bool]
                   ) -> list[tuple[str, float]]:
    """(dtype, largest finite magnitude) of each non-empty input whose dtype ``dtypes``
    accepts (in float64: ``abs`` of an integer minimum stays negative in its dtype; a
    complex input by its modulus)."""
    out = []
    for t in tensors:
        if not dtypes(t.dtype):
            continue
        arr = t.to_numpy()
        wide = np.abs(arr.astype(np.complex128)) if arr.dtype.kind == "c" else \
            arr.astype(np.float64)
        finite = np.abs(wide[np.isfinite(wide)])
        if finite.size:
            out.append((t.dtype, float(finite.max())))
    return out


def low_evaluation_limit(tensors: Sequence[Any]) -> float:
    """What computing float16/bfloat16 inputs in their own dtype may cost an element:
    ``EVALUATION_STEPS`` roundings of the largest input (0 without low-precision inputs).
    ``x - tanh(x)`` (tanhshrink) and ``exp(x) - 1`` (elu) of a small x cancel, and a
    bfloat16 layer norm of one element gives -1.3e-05 for 0 (``x * rstd - mean * rstd``,
    two terms of 462): the intermediates are of the inputs' size times what the result
    divides out, and libraries do not promise to compute low-precision inputs in float32.
    Integer inputs join the low-precision computation too (``histogram2d`` of int32 x and
    float16 y computes x's bin edges in float16)."""
    low = largest_inputs(tensors, lambda dtype: dtype in LOW_PRECISION)
    if not low:
        return 0.0
    integers = largest_inputs(tensors, lambda dtype: dtype.startswith(("int", "uint")))
    scale = max(m for _, m in low + integers)
    return EVALUATION_STEPS * max(epsilon(d) for d, _ in low) * scale

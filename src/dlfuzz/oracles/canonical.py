"""Outputs whose order or sign is not part of the answer, put in one canonical form.

Element-by-element comparison is wrong for some outputs: ``eig`` returns its eigenvalues
in no promised order (LAPACK's and Eigen's orders differ), an eigenvector is one only up
to a scalar factor, the indices of ``argmax``/``argsort``/``top_k``/non-max suppression
depend on how ties are broken, and ``unique`` is a set. Reported as wrong results, these
are closed upstream as "not a bug" (PyTorch's own fuzzing guidance: no argmax
comparisons). An API's spec says how each such output compares (``"compare":
{"<output index>": mode}``, ``libspecs.COMPARE_MODES``); before any comparison, every
backend's outputs and the float64 reference runs' outputs are rewritten here so that
element-by-element comparison means the right thing:

* ``sorted``: a multiset along the last axis (eigenvalues): sorted by real part, then by
  imaginary part; real parts within a relative ``CLUSTER_RTOL`` of each other count as
  equal, so a conjugate pair whose real parts differ by a rounding keeps one order.
* ``spectrum``: eigenvalues of a Hermitian matrix or singular values, already in a
  promised order: compared element by element, with an absolute allowance of
  ``SPECTRUM_FACTOR · n · eps · max|value|`` along the last axis (``spectrum_floor``). A
  backward-stable eigensolver or SVD promises each value within about ``n · eps · ‖A‖₂``
  (Weyl), however small the value: a 28 x 28 complex64 ``eigvalsh`` gave an eigenvalue
  12.698 off by 4e-5 (3e-6 relative), past the element-wise float32 tolerance and within
  the guarantee. ``sorted`` outputs (eigenvalues of general matrices) get the same
  allowance after sorting.
* ``set``: the whole output as a set of values (``unique``): flattened and sorted alike.
* ``skip-on-ties``: compared as is when no input tensor holds a repeated value (or a NaN,
  whose place in an order is a convention); otherwise not compared.
* ``residual``: eigenvectors (the columns of this output) of the case's first tensor with
  the eigenvalues in output 0: replaced by, per eigenvector, whether ``‖A v − λ v‖ <=
  RESIDUAL_FACTOR · n · eps · ‖A‖ · ‖v‖`` in the output's dtype, which holds for every
  right answer whatever its scaling or phase.
* ``skip``: not compared (singular vectors, whose signs are free).

The entries apply only to a call that returned more outputs than the highest index named
(so ``svd`` with ``{"0": "skip", "2": "skip"}`` compares a lone singular-value output).
The modes come from the case's kind (``CaseKind.output_modes``); for API cases, from the
built-in spec files (an API of a spec file given on the command line compares element by
element).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Outcome, Tensor, kind_of
from dlfuzz.oracles.tolerances import as_comparable, epsilon

CLUSTER_RTOL = 1e-4      # real parts this close (relative to the largest |value|) tie
RESIDUAL_FACTOR = 100.0  # backward-stable eigensolvers: residual ~ n * eps * ||A||
SPECTRUM_FACTOR = 10.0   # their eigen/singular values: |error| ~ n * eps * ||A||_2
SPECTRAL_MODES = ("spectrum", "sorted")
SKIPPED = np.zeros((0,), dtype=np.float64)  # what a skipped output becomes, on every side


def modes_for(case: ApiCase) -> dict[int, str]:
    """Output index -> compare mode, as the case's kind says (an API: its spec)."""
    return kind_of(case).output_modes(case)


def canonical(case: ApiCase, outputs: Sequence[np.ndarray],
              modes: dict[int, str] | None = None) -> tuple[np.ndarray, ...]:
    """The outputs of ``case`` (any backend's, or a reference run's) in canonical form."""
    modes = modes_for(case) if modes is None else modes
    out = list(outputs)
    if not modes or len(out) <= max(modes):
        # The entries describe the call's fullest form: svd without vectors (one
        # output) compares its singular values elementwise.
        return tuple(out)
    for i, mode in sorted(modes.items()):
        if i >= len(out):
            continue
        if mode == "sorted":
            out[i] = sort_values(out[i])
        elif mode == "set":
            out[i] = sort_values(out[i].reshape(-1))
        elif mode == "skip" or (mode == "skip-on-ties" and has_ties(case)):
            out[i] = SKIPPED
        elif mode == "residual" and case.tensors and outputs:
            out[i] = eigen_residual_ok(case.tensors[0].to_numpy(), outputs[0], outputs[i])
    return tuple(out)


def spectrum_floor(case: ApiCase, n_outputs: int, index: int, reference: np.ndarray,
                   dtype: str, modes: dict[int, str] | None = None) -> np.ndarray | float:
    """The absolute allowance of output ``index`` (of ``n_outputs``) of ``case`` in
    ``dtype`` beyond the element-wise tolerance: ``SPECTRUM_FACTOR · n · eps(dtype) ·
    max|value|`` along the last axis of the float64 ``reference`` (for a Hermitian
    matrix or a singular-value vector, ``max|value|`` is ``‖A‖₂``) where the spec says
    the output is a spectrum; 0 elsewhere. The entries apply as in ``canonical``
    (``modes``: the case's, where the caller has them)."""
    modes = modes_for(case) if modes is None else modes
    if not modes or n_outputs <= max(modes) or modes.get(index) not in SPECTRAL_MODES:
        return 0.0
    if reference.ndim == 0 or reference.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        wide = np.abs(reference.astype(np.complex128)) if reference.dtype.kind == "c" \
            else np.abs(reference.astype(np.float64))
        wide = np.where(np.isfinite(wide), wide, 0.0)
    scale = wide.max(axis=-1, keepdims=True)
    n = reference.shape[-1]
    return np.broadcast_to(SPECTRUM_FACTOR * n * epsilon(dtype) * scale, reference.shape)


def canonical_outcomes(case: ApiCase, outcomes: dict[str, Outcome]) -> dict[str, Outcome]:
    """Every ok outcome of ``case`` with its outputs in canonical form (the differential
    oracle's and the reference judge's one hook)."""
    modes = modes_for(case)
    if not modes:
        return outcomes
    result = {}
    for backend, o in outcomes.items():
        if o.ok and o.outputs:
            arrays = canonical(case, [t.to_numpy() for t in o.outputs], modes)
            o = replace(o, outputs=tuple(Tensor.from_numpy(a) for a in arrays))
        result[backend] = o
    return result


def sort_values(x: np.ndarray) -> np.ndarray:
    """Sorted along the last axis; complex values by real part (clustered within
    ``CLUSTER_RTOL``), then imaginary part; NaN last."""
    if x.ndim == 0 or x.size == 0:
        return x
    if x.dtype.kind != "c":
        return np.sort(x, axis=-1)
    flat = x.reshape(-1, x.shape[-1])
    rows = [_sort_complex(row) for row in flat]
    return np.stack(rows).reshape(x.shape)


def _sort_complex(row: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(row)
        scale = float(np.max(np.abs(row[finite]))) if finite.any() else 0.0
        real = np.where(np.isnan(row.real), np.inf, row.real)
        order = np.argsort(real, kind="stable")
        ranked = real[order]
        # Chains of real parts closer than the cluster width share one cluster number.
        gap = np.diff(ranked) > CLUSTER_RTOL * scale
        cluster = np.concatenate([[0], np.cumsum(gap)]) if row.size else np.zeros(0)
        imag = np.where(np.isnan(row.imag), np.inf, row.imag)[order]
        within = np.lexsort((ranked, imag, cluster))
    return row[order][within]


def has_ties(case: ApiCase) -> bool:
    """Whether any input tensor holds a repeated value or a NaN (conservative: a tie
    anywhere means an index output may have several right answers)."""
    for t in case.tensors:
        # as_comparable widens bfloat16 (kind "V" to numpy) too: its NaNs must count as
        # they do in the float64 reference run, else only the reference is skipped.
        a = as_comparable(t.to_numpy()).reshape(-1)
        if a.size < 2:
            continue
        if a.dtype.kind in "fc":
            with np.errstate(invalid="ignore"):
                if np.isnan(a).any():
                    return True
        if np.unique(a).size < a.size:
            return True
    return False


def eigen_residual_ok(a: np.ndarray, values: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Per eigenvector (column of ``vectors``), whether ``A v ≈ λ v`` within what a
    backward-stable solver in ``vectors``' dtype promises. Shapes that do not fit are
    returned unchanged, so a structure difference is still one."""
    n = a.shape[-1] if a.ndim >= 2 else 0
    if (a.ndim < 2 or a.shape[-2] != n or vectors.shape != a.shape
            or values.shape != a.shape[:-1]):
        return vectors
    if vectors.size == 0:
        return np.zeros(values.shape, dtype=bool)
    eps = epsilon(vectors.dtype.name) or float(np.finfo(np.float64).eps)
    wide: Any = np.complex128
    with np.errstate(all="ignore"):
        aa, v, lam = a.astype(wide), vectors.astype(wide), values.astype(wide)
        residual = np.linalg.norm(aa @ v - v * lam[..., None, :], axis=-2)
        norm_a = np.linalg.norm(aa, axis=(-2, -1))[..., None]
        norm_v = np.linalg.norm(v, axis=-2)
        ok = residual <= RESIDUAL_FACTOR * n * eps * norm_a * norm_v
    return np.asarray(ok, dtype=bool)

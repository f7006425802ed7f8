"""Tensor values: ordinary numbers most of the time, special ones with modest probability.

A signature fixes a *profile* (scale, integer width, special-value mode) and every value
set of its group is drawn from that profile, so a group stays one compiled signature
while its values vary. Special values (NaN, +-Inf, -0.0, the largest and the smallest
normal and subnormal numbers, integer extremes) are where libraries disagree and crash;
they replace a random fraction of the elements so that ordinary arithmetic stays around
them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES

SPECIAL_MODES = ("none", "specials", "extreme")
SPECIAL_P = (0.80, 0.15, 0.05)
_SCALES = (1.0, 1.0, 1.0, 3.0, 10.0, 100.0, 0.01)
_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
_COMPLEX = frozenset({"complex64", "complex128"})


@dataclass(frozen=True)
class Profile:
    """How one signature's values are drawn (shared by every value set of the group)."""

    specials: str = "none"   # one of SPECIAL_MODES
    extremes: bool = True    # +-max and tiny among the specials
    subnormals: bool = False  # denormals among the specials (see special_pool)
    scale: float = 1.0       # standard deviation of ordinary floats
    wide_ints: bool = False  # integers over the dtype's whole range (overflow paths)
    use_domain: bool = True  # follow a tensor's domain hint (log of positives...)


def draw_profile(rng: np.random.Generator, allow_specials: bool = True,
                 allow_extremes: bool = True, subnormals: bool = False) -> Profile:
    """A profile; ``allow_extremes=False`` for reductions and linear algebra, whose
    overflow behaviour depends on each library's accumulation strategy (numpy's std of
    [3e38, 3e38] is inf, torch's is 0: neither is a bug)."""
    mode = SPECIAL_MODES[int(np.searchsorted(np.cumsum(SPECIAL_P), rng.random(),
                                             side="right"))] if allow_specials else "none"
    if mode == "extreme" and not allow_extremes:
        mode = "specials"
    scale = _SCALES[int(rng.integers(len(_SCALES)))]
    if not allow_extremes:
        scale = min(scale, 10.0)
    return Profile(specials=mode, extremes=allow_extremes, subnormals=subnormals, scale=scale,
                   wide_ints=bool(rng.random() < 0.08) and allow_extremes,
                   use_domain=bool(rng.random() < 0.85))


def _finfo(dtype: str) -> ml_dtypes.finfo | np.finfo:
    return ml_dtypes.finfo(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.finfo(DTYPES[dtype])


@functools.cache
def special_pool(dtype: str, extremes: bool = True, subnormals: bool = False) -> np.ndarray:
    """The special values of a dtype, as an array of that dtype.

    Subnormals only on request: TensorFlow and XLA (so jax too) flush them to zero on CPU
    by design, so with either library among the compared ones every subnormal input would
    be reported as a difference nobody considers a bug (sign(1e-45) is 0 in jax).
    """
    if dtype in _FLOATS or dtype in _COMPLEX:
        base = "float32" if dtype == "complex64" else ("float64" if dtype in _COMPLEX
                                                        else dtype)
        fi = _finfo(base)
        values = [np.nan, np.inf, -np.inf, -0.0, 0.0, float(fi.eps), 1.0, -1.0]
        if extremes:
            values += [float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny)]
            if subnormals:
                values += [float(fi.smallest_subnormal), -float(fi.smallest_subnormal)]
        if dtype in _COMPLEX:
            # Signed zeros and units only: complex NaN/Inf (C99 Annex G) and overflow in
            # complex division are handled differently by every library, by design.
            finite = np.array([-0.0, 0.0, 1.0, -1.0, float(fi.eps)])
            out = np.empty((len(finite), len(finite)), dtype=DTYPES[dtype])
            out.real = finite[:, None]
            out.imag = finite[None, :]
            return out.ravel()
        return np.array(values, dtype=np.float64).astype(DTYPES[dtype])
    if dtype == "bool":
        return np.array([False, True])
    ii = np.iinfo(DTYPES[dtype])
    ints = {0, 1} | ({-1} if ii.min < 0 else set())
    if extremes:
        ints |= {int(ii.min), int(ii.max), int(ii.max) - 1, int(ii.min) + 1}
    return np.array(sorted(ints), dtype=DTYPES[dtype])


def _int_range(dtype: str, domain: tuple[float, float] | None, profile: Profile
               ) -> tuple[int, int]:
    ii = np.iinfo(DTYPES[dtype])
    if domain is not None:  # strict for integers: shift counts, exponents
        lo, hi = int(np.ceil(domain[0])), int(np.floor(domain[1]))
    elif profile.wide_ints:
        lo, hi = int(ii.min), int(ii.max)
    else:
        lo, hi = (-20, 20) if ii.min < 0 else (0, 40)
    return max(lo, int(ii.min)), min(hi, int(ii.max))


def _floats(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
            domain: tuple[float, float] | None, profile: Profile) -> np.ndarray:
    if domain is not None and profile.use_domain:
        lo = max(domain[0], -1e30)
        hi = min(domain[1], 1e30)
        arr = rng.uniform(lo, hi, shape)
    elif profile.specials == "extreme" and dtype not in _COMPLEX:
        fi = _finfo(dtype)
        smallest = fi.smallest_subnormal if profile.subnormals else fi.tiny
        lo_exp, hi_exp = np.log10(float(smallest)), np.log10(float(fi.max))
        arr = np.sign(rng.standard_normal(shape)) * 10.0 ** rng.uniform(lo_exp, hi_exp, shape)
    else:
        arr = rng.standard_normal(shape) * profile.scale
    return arr


def make_tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, *,
                profile: Profile, domain: tuple[float, float] | None = None,
                transform: str | None = None, specials_ok: bool = True) -> np.ndarray:
    """One tensor of ``dtype`` and ``shape`` drawn from ``profile``."""
    np_dtype = DTYPES[dtype]
    # np.asarray throughout: a draw of shape () is a scalar, and tensors must be arrays.
    if dtype == "bool":
        arr = np.asarray(rng.random(shape) < 0.5)
    elif dtype in _FLOATS:
        with np.errstate(over="ignore"):
            arr = np.asarray(_floats(rng, shape, dtype, domain, profile)).astype(np_dtype)
    elif dtype in _COMPLEX:
        arr = np.empty(shape, dtype=np_dtype)
        with np.errstate(over="ignore"):
            arr.real = _floats(rng, shape, dtype, domain, profile)
            arr.imag = _floats(rng, shape, dtype, domain, profile)
    else:
        lo, hi = _int_range(dtype, domain, profile)
        arr = np.asarray(rng.integers(lo, hi, shape, dtype=np_dtype, endpoint=True))
        specials_ok = specials_ok and domain is None
    if transform in ("symmetric", "spd"):
        arr = _matrix_transform(arr, transform, np_dtype)
        specials_ok = False
    if specials_ok and profile.specials == "specials" and arr.size and dtype != "bool":
        frac = rng.uniform(0.05, 0.5)
        mask = rng.random(arr.shape) < frac
        count = int(mask.sum())
        if count:
            pool = special_pool(dtype, profile.extremes, profile.subnormals)
            arr[mask] = pool[rng.integers(len(pool), size=count)]
    if transform == "sorted":
        arr = np.sort(arr, axis=-1) if arr.ndim else arr
    elif transform == "nonzero":
        arr[arr == 0] = 1
    return arr


def filled(arr: np.ndarray, fill: str) -> np.ndarray:
    """``arr`` with a parameter's ``fill`` applied after its elements were drawn (a
    per-library spec's tensor: ``sorted`` along the last axis for a search sequence,
    ``nonzero``, ``symmetric``, ``spd``); ``any`` leaves it. A rule spec's tensors get
    the same through ``make_tensor``."""
    if fill in ("symmetric", "spd"):
        return _matrix_transform(arr, fill, arr.dtype)
    if fill == "sorted" and arr.ndim and arr.dtype.kind != "c":
        return np.sort(arr, axis=-1)
    if fill == "nonzero":
        arr = arr.copy()
        arr[arr == 0] = 1
    return arr


def _matrix_transform(arr: np.ndarray, transform: str, np_dtype: np.dtype) -> np.ndarray:
    """Symmetric (Hermitian) or symmetric positive definite matrices in the last two axes."""
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        return arr
    work = arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)
    herm = np.conj(np.swapaxes(work, -1, -2))
    if transform == "symmetric":
        out = (work + herm) / 2
    else:
        n = arr.shape[-1]
        out = work @ herm + n * np.eye(n)
    with np.errstate(all="ignore"):
        return out.astype(np_dtype)


def make_index(rng: np.random.Generator, shape: tuple[int, ...], bounds: tuple[int, int]
               ) -> np.ndarray:
    """Valid indices in [lo, hi): out-of-range behaviour differs by design across libraries."""
    lo, hi = bounds
    if hi <= lo:
        return np.zeros(shape, dtype=np.int64)
    return np.asarray(rng.integers(lo, hi, shape, dtype=np.int64))

"""A gradient case: the backward pass of one API case, in every library with autodiff.

Every library already runs the forward pass of an API case; a ``GradCase`` asks each
backend of an autodiff library for the reverse-mode gradient of that same call at the same
input, with a cotangent drawn from the case's ``seed``: ``J^T c`` per floating input (the
vector-Jacobian product, what a training step's backward computes). Beside the gradients,
each backend reports a float64 check of itself (``GradientChecks``): its own reverse mode
and forward mode along a random direction ``v``, against central finite differences of its
own forward pass. The gradient oracle (``oracles/gradient.py``) compares the gradients
across libraries and reads the checks.

Cotangents and directions are drawn on a grid of quarter steps (±0.25 ... ±2), exactly
representable in every floating dtype down to bfloat16, so the float64 reference runs of a
float32 case use the very same cotangent; the draw depends only on the seed, the output or
input index and its shape, so it is the same in every worker and in every reproducer.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlfuzz.cases.api import ApiCase
from dlfuzz.cases.core import FLOAT_DTYPES, Call, Tensor
from dlfuzz.libraries import get, is_known

# Floating dtypes differentiated: half types round the gradient too coarsely for the
# finite differences to judge it; complex gradients follow different conventions
# (PyTorch's conjugate Wirtinger derivative, JAX's non-conjugated one).
GRAD_DTYPES = ("float32", "float64")
_GRID = np.array([-2.0, -1.5, -1.0, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])

# The layout of the last output of every backend's run of a gradient case: its float64
# self-check (``Backend.run_grad``). Names, in order:
CHECKS = ("reverse", "forward", "fd", "fd_wide", "kink", "scale", "value", "flat", "step")


@dataclass(frozen=True)
class GradCase:
    """The backward pass of ``base`` (an API case), cotangents drawn from ``seed``.

    ``still``: indices of the call's outputs that get no cotangent (outputs not compared
    element by element, such as eigenvectors, whose sign is free). ``structure``: inputs
    (by index) whose documented gradient lives in a structured subspace, and how the
    direction of the checks is kept in it (``structured``).
    """

    base: ApiCase
    seed: int
    still: tuple[int, ...] = ()
    structure: tuple[tuple[int, str], ...] = ()
    kind: str = field(default="grad", init=False)

    # ---- the API case's face (oracles, triage and the executor read these) -------------
    @property
    def api(self) -> str:
        return self.base.api

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return self.base.tensors

    @property
    def calls(self) -> tuple[tuple[str, Call], ...]:
        return self.base.calls

    @property
    def params(self) -> tuple[tuple[str, Any], ...]:
        return self.base.params

    @property
    def expect(self) -> str:
        return self.base.expect

    @property
    def invalid(self) -> bool:
        return False

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(lib for lib, _ in self.base.calls if has_autodiff(lib))

    def call_for(self, library: str) -> Call | None:
        """The API call of ``library``, for a library with autodiff only: numpy or ONNX
        Runtime do not run gradient cases."""
        return self.base.call_for(library) if has_autodiff(library) else None

    @property
    def wrt(self) -> tuple[int, ...]:
        return differentiated(self.base.tensors)

    def gradient_shapes(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """(label, shape) of each gradient output, in order: one per ``wrt`` input."""
        return tuple((f"x{i}", self.base.tensors[i].shape) for i in self.wrt)

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(f"grad:{self.seed}:{self.still}:{self.structure}:{self.base.id}".encode())
        return h.hexdigest()

    def with_tensors(self, tensors: tuple[Tensor, ...]) -> GradCase:
        return self.with_base(self.base.with_tensors(tensors))

    def with_base(self, base: ApiCase) -> GradCase:
        return GradCase(base, self.seed, self.still, self.structure)

    def structure_of(self, index: int) -> str:
        return dict(self.structure).get(index, "")


def checks_of(outcome: Any) -> dict[str, float] | None:
    """The self-check a backend returned with its gradients (its last output), by name;
    None for a failed run or one without that vector."""
    if not outcome.ok or not outcome.outputs:
        return None
    last = outcome.outputs[-1]
    if last.dtype != "float64" or last.shape != (len(CHECKS),):
        return None
    return dict(zip(CHECKS, (float(x) for x in last.to_numpy()), strict=True))


def has_self_check(checks: dict[str, float] | None) -> bool:
    """Whether a backend checked itself in float64: TF.js, float32 only, returns a vector
    of NaN (its gradients are judged against the other libraries' only)."""
    return checks is not None and not all(math.isnan(v) for v in checks.values())


def has_autodiff(library: str) -> bool:
    return is_known(library) and get(library).autodiff


def checks_itself(library: str) -> bool:
    """Whether the library's gradients come with the float64 self-check that tells the
    gradient oracle a point is smooth: a gradient case or training step is worth running
    only where one such library takes part."""
    return has_autodiff(library) and get(library).gradient_self_check


def differentiated(tensors: tuple[Tensor, ...]) -> tuple[int, ...]:
    """Indices of the inputs a gradient is taken for: the real floating ones (a float64
    reference run upcasts float32 inputs, so float64 counts as well)."""
    return tuple(i for i, t in enumerate(tensors) if t.dtype in GRAD_DTYPES)


def differentiable_dtypes(tensors: tuple[Tensor, ...]) -> bool:
    """Whether a gradient case of these inputs makes sense: one input of ``GRAD_DTYPES``
    and no floating input of another precision (a half input would be differentiated by
    one library and not compared by the others)."""
    floats = [t.dtype for t in tensors if t.dtype in FLOAT_DTYPES]
    return bool(floats) and all(d in GRAD_DTYPES for d in floats)


_MASK = 0xFFFFFFFF
_GOLDEN = 0x9E3779B9


def mix32(h: Any) -> Any:
    """MurmurHash3's 32-bit finalizer (a bijection), on ints or uint64 arrays < 2^32."""
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & _MASK
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def grid_draw(seed: int, salt: int, index: int, shape: tuple[int, ...]) -> np.ndarray:
    """Float64 values on the quarter-step grid, fixed by (seed, salt, index, shape).

    A hash of the key and each element's flat position, in 32-bit integer arithmetic a
    few lines of JavaScript repeat exactly (``backends/tfjs/grad.js``), so TF.js and
    every reproducer draw the very same cotangents without NumPy's generator."""
    key = 0
    for part in (seed & _MASK, salt, index, len(shape), *shape):
        key = mix32(((key ^ (part & _MASK)) + _GOLDEN) & _MASK)
    n = int(np.prod(shape, dtype=np.int64))
    position = np.arange(n, dtype=np.uint64)
    hashed = mix32((np.uint64(key) + position * np.uint64(_GOLDEN)) & np.uint64(_MASK))
    return _GRID[(hashed % np.uint64(len(_GRID))).astype(np.int64)].reshape(shape)


def cotangent(seed: int, index: int, shape: tuple[int, ...]) -> np.ndarray:
    """The cotangent of floating output ``index``: how the loss weighs each element."""
    return grid_draw(seed, 1, index, shape)


def direction(seed: int, index: int, shape: tuple[int, ...], how: str = "") -> np.ndarray:
    """The direction ``v`` in which input ``index`` moves for the forward-mode and finite
    difference checks, kept in the input's structure (``structured``)."""
    return structured(grid_draw(seed, 2, index, shape), how)


STRUCTURES = ("symmetric-lower", "symmetric-upper", "lower", "upper")


def structured(array: np.ndarray, how: str) -> np.ndarray:
    """``array`` (a batch of square matrices in its last two axes) kept in a structure:
    ``symmetric-lower`` reflects the lower triangle onto the upper one (what an API that
    reads the lower triangle of a symmetric matrix sees), ``symmetric-upper`` the
    reverse, ``lower``/``upper`` zero the other triangle. Anything else (or no square
    matrix) leaves it as it is."""
    if how not in STRUCTURES or array.ndim < 2 or array.shape[-1] != array.shape[-2]:
        return array
    lower = how.endswith("lower")
    if not how.startswith("symmetric"):
        return np.tril(array) if lower else np.triu(array)
    strict = np.tril(array, -1) if lower else np.triu(array, 1)
    diagonal = array * np.eye(array.shape[-1], dtype=array.dtype)
    return strict + np.swapaxes(strict, -1, -2) + diagonal

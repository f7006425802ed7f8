"""DLJSFuzzer's tensor mutations (Table 1): new input shapes and dtypes for the same model.

They target the cache reuse of JavaScript frameworks, which may mistake a tensor of a new
shape or dtype for a cached one. A rule changes the inputs *and* the model's input types
together: ``graph.with_nodes(..., inputs=new types)`` re-runs shape inference and
``Model.check`` re-checks every weight's shape (a Dense after Flatten fixes the size), so
a model that cannot take the new shape makes the rule raise ``Rejected``. The returned
inputs always match the returned model.

Axes, channels-last, counted from the right so every rank has a sensible meaning:
batch B = axis 0, channels C = the last axis (rank >= 2), width W = the one before it
(rank >= 3) and height H = the one before that (rank >= 4). So (N, H, W, C) has
H=1, W=2, C=3; (N, L, C) has W=1 (its length) and no H; (N, D, H, W, C) has H=2, W=3.
A rule whose axis a rank lacks rejects. Every input of a model gets the same change
(same amounts), so inputs that must agree (merges) still do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.errors import InternalError, Rejected
from dlfuzz.ir.graph import TensorType
from dlfuzz.ir.model import Model


@dataclass(frozen=True)
class TensorRuleSettings:
    """Our defaults (the paper gives no numbers).

    max_pad: padding rules add 1..max_pad zeros along their axis (split randomly between
        before and after): a smaller growth than the copies, as the paper intends.
    crop_attempts: random crops RC tries before rejecting (a crop of the channels fails
        on any model with weights, a crop of the spatial axes often fits).
    """

    max_pad: int = 3
    crop_attempts: int = 4


SETTINGS = TensorRuleSettings()

TensorRule = Callable[[Model, list[np.ndarray], np.random.Generator],
                      tuple[Model, list[np.ndarray]]]


def axis_of(name: str, rank: int) -> int | None:
    """The axis called ``name`` (B, H, W, C) in a channels-last tensor of ``rank``."""
    offset = {"B": None, "C": 1, "W": 2, "H": 3}[name]
    if offset is None:
        return 0 if rank >= 1 else None
    return rank - offset if rank >= offset + 1 else None


def _axis(name: str, x: np.ndarray) -> int:
    axis = axis_of(name, x.ndim)
    if axis is None:
        raise Rejected(f"a rank-{x.ndim} input has no {name} axis")
    return axis


def _check(model: Model, inputs: list[np.ndarray]) -> None:
    """Inputs that do not match the model are the caller's bug, not a rejection."""
    g = model.graph
    if len(inputs) != len(g.inputs) or any(
            tuple(x.shape) != t.shape or x.dtype != DTYPES[t.dtype]
            for x, t in zip(inputs, g.inputs, strict=False)):
        raise InternalError(f"inputs {[(x.shape, str(x.dtype)) for x in inputs]} do not "
                            f"match the model's {[str(t) for t in g.inputs]}")


def retarget(model: Model, inputs: list[np.ndarray]) -> Model:
    """``model`` taking ``inputs``' shapes: re-inferred and weight-checked, or Rejected."""
    g = model.graph
    types = [TensorType(tuple(int(d) for d in x.shape), g.dtype) for x in inputs]
    mutant = Model(g.with_nodes(g.nodes, inputs=types), model.weights).check()
    _check(mutant, inputs)
    return mutant


def _reshaping(change: Callable[[np.ndarray, Any], np.ndarray], doc: str,
               draw: Callable[[np.random.Generator], Any] = lambda rng: None) -> TensorRule:
    """A rule applying ``change(x, params)`` to every input, ``params`` drawn once."""
    def rule(model: Model, inputs: list[np.ndarray], rng: np.random.Generator
             ) -> tuple[Model, list[np.ndarray]]:
        _check(model, inputs)
        params = draw(rng)
        new = [np.ascontiguousarray(change(x, params)) for x in inputs]
        return retarget(model, new), new

    rule.__doc__ = doc
    return rule


def _copy(name: str) -> TensorRule:
    return _reshaping(lambda x, _: np.concatenate([x, x], axis=_axis(name, x)),
                      f"{name}DC: concatenate the input with a copy of itself along {name}.")


def _pad(name: str, settings: TensorRuleSettings = SETTINGS) -> TensorRule:
    def draw(rng: np.random.Generator) -> tuple[int, int]:
        total = int(rng.integers(1, settings.max_pad + 1))
        before = int(rng.integers(0, total + 1))
        return before, total - before

    def change(x: np.ndarray, amounts: tuple[int, int]) -> np.ndarray:
        widths = [(0, 0)] * x.ndim
        widths[_axis(name, x)] = amounts
        return np.pad(x, widths)  # zeros

    return _reshaping(change, f"{name}DP: zero-pad the input along {name} by 1..max_pad "
                              "elements, split randomly before and after.", draw)


def _hw_transpose(x: np.ndarray, _: Any) -> np.ndarray:
    return np.swapaxes(x, _axis("H", x), _axis("W", x))


def rc(model: Model, inputs: list[np.ndarray], rng: np.random.Generator,
       settings: TensorRuleSettings = SETTINGS) -> tuple[Model, list[np.ndarray]]:
    """RC: crop to a random smaller shape: a random non-empty set of axes longer than 1
    (the batch too) each shrinks to a random length at a random offset. Inputs of one shape
    get the same crop. Up to ``crop_attempts`` crops are tried until the model takes one."""
    _check(model, inputs)
    why = "every axis of the input has length 1"
    for _ in range(settings.crop_attempts):
        windows: dict[tuple[int, ...], tuple[slice, ...]] = {}
        for x in inputs:
            if x.shape in windows:
                continue
            long = [a for a, d in enumerate(x.shape) if d > 1]
            if not long:
                raise Rejected(f"RC: {why}")
            chosen = [a for a in long if rng.random() < 0.5] or [long[rng.integers(len(long))]]
            window = []
            for a, d in enumerate(x.shape):
                size = int(rng.integers(1, d)) if a in chosen else d
                start = int(rng.integers(0, d - size + 1))
                window.append(slice(start, start + size))
            windows[x.shape] = tuple(window)
        new = [np.ascontiguousarray(x[windows[x.shape]]) for x in inputs]
        try:
            return retarget(model, new), new
        except Rejected as exc:
            why = str(exc)
    raise Rejected(f"RC: no crop fits the model ({why})")


def _cast(dtype: str) -> TensorRule:
    def rule(model: Model, inputs: list[np.ndarray], rng: np.random.Generator
             ) -> tuple[Model, list[np.ndarray]]:
        _check(model, inputs)
        if model.graph.dtype == dtype:
            raise Rejected(f"the model already computes in {dtype}")
        mutant = model.astype(dtype)
        new = [x.astype(DTYPES[dtype]) for x in inputs]
        _check(mutant, new)
        return mutant, new

    rule.__doc__ = f"Cast the inputs (and the model with them) to {dtype}."
    return rule


TENSOR_RULES: dict[str, TensorRule] = {
    "WDC": _copy("W"), "HDC": _copy("H"), "CDC": _copy("C"), "BDC": _copy("B"),
    "WDP": _pad("W"), "HDP": _pad("H"), "CDP": _pad("C"), "BDP": _pad("B"),
    "HWDT": _reshaping(_hw_transpose, "HWDT: swap the height and width axes."),
    "RC": rc,
    "FT": _cast("float32"), "DT": _cast("float64"), "BFT": _cast("bfloat16"),
}

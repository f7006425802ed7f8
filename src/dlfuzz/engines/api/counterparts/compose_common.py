"""Library-free helpers of the hand-written compositions (shapes, padding, registry).

The ``compose_<library>.py`` modules implement other libraries' APIs with their own
library's functions; what is only arithmetic on shapes and argument conventions (a torch
pooling window's output size with ``ceil_mode``, TF's ``SAME`` padding split, torch's
implicit softmax dimension) lives here once, so the three modules agree on it and their
differences are only in the tensor operations they call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Composition:
    """A composition function registered as a counterpart of ``api``."""

    api: str
    library: str        # the library the function computes with (its worker)
    target: str         # dotted path of the function
    requires_default: tuple[tuple[str, Any], ...] = ()


REGISTRY: list[Composition] = []


def composes(*apis: str, requires_default: dict[str, Any] | None = None
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as a composition counterpart of ``apis``.

    Its parameters are the API's parameter names: the counterpart passes every value by
    keyword. ``requires_default`` lists parameters it cannot express (only at that value).
    """
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        library = fn.__module__.rsplit("compose_", 1)[-1].split("_")[0]
        for api in apis:
            REGISTRY.append(Composition(api, library, f"{fn.__module__}.{fn.__name__}",
                                        tuple(sorted((requires_default or {}).items()))))
        return fn
    return register


def ntuple(value: Any, n: int) -> tuple[int, ...]:
    """torch-style int-or-sequence argument as an n-tuple (a 1-list repeats)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (int(value),) * n
    items = tuple(int(v) for v in value)
    if len(items) == 1:
        return items * n
    if len(items) != n:
        raise ValueError(f"expected {n} values, got {items}")
    return items


def tf_ntuple(value: Any, n: int, channels_last: bool = True) -> tuple[int, ...]:
    """TF ``strides``/``ksize``/``dilations``: an int, n values, or n + 2 with batch and
    channel entries (which must be 1)."""
    if value is None:
        return (1,) * n
    if isinstance(value, int):
        return (value,) * n
    items = tuple(int(v) for v in value)
    if len(items) == 1:
        return items * n
    if len(items) == n:
        return items
    if len(items) == n + 2:
        return items[1:-1] if channels_last else items[2:]
    raise ValueError(f"expected 1, {n} or {n + 2} values, got {items}")


def pool_geometry(size: int, kernel: int, stride: int, pad: int, dilation: int,
                  ceil_mode: bool) -> tuple[int, int]:
    """torch pooling along one axis: (output length, padding after the input).

    The padding after may be more than ``pad`` (``ceil_mode`` adds a partial window) or
    less (the floor drops the tail); what lies beyond it is never read.
    """
    span = dilation * (kernel - 1) + 1
    room = size + 2 * pad - span
    if ceil_mode:
        out = -(-room // stride) + 1
        if (out - 1) * stride >= size + pad:  # the last window must start inside
            out -= 1
    else:
        out = room // stride + 1
    after = (out - 1) * stride + span - size - pad
    return out, after


def window_count(size: int, kernel: int, stride: int, dilation: int, before: int,
                 after: int) -> int:
    """Windows of a padded axis (TF/XLA convolution and pooling output length, >= 0)."""
    room = size + before + after - (dilation * (kernel - 1) + 1)
    return room // stride + 1 if room >= 0 else 0


def same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF/XLA ``SAME`` padding of one axis: (before, after), the extra one after."""
    span = dilation * (kernel - 1) + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def torch_softmax_dim(ndim: int, dim: int | None) -> int:
    """torch's implicit softmax dimension when ``dim`` is None (a legacy rule)."""
    if dim is not None:
        return dim
    return 0 if ndim in (0, 1, 3) else 1


def torch_pad_pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int]]:
    """``F.pad``'s flat list (last axis first) as (before, after) per axis of the input."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return pairs


def tf_explicit_padding(padding: Any, n: int, channels_last: bool = True
                        ) -> list[tuple[int, int]] | None:
    """TF explicit padding ``[[0, 0], [t, b], [l, r], [0, 0]]`` as spatial pairs."""
    if isinstance(padding, str):
        return None
    pairs = [tuple(int(v) for v in p) for p in padding]
    if len(pairs) == n + 2:
        pairs = pairs[1:-1] if channels_last else pairs[2:]
    if len(pairs) != n:
        raise ValueError(f"explicit padding needs {n + 2} pairs, got {padding}")
    return [(a, b) for a, b in pairs]

"""Worker-side runners of "precision" counterparts: the API computed in float64.

``run_<library>(target, *args, **kwargs)`` upcasts every floating tensor argument
(float16, bfloat16, float32; complex64) to float64 (complex128), calls the API and rounds
floating outputs back to the widest floating dtype of the inputs. Compared with the API's
own output under that dtype's tolerance, this is a check that the low-precision kernel is
as accurate as its dtype promises. Each function imports its library inside (it runs in
that library's worker only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlfuzz.libraries import ResolveError, resolve

_LOW = ("float16", "bfloat16", "float32")
_ORDER = {"float16": 0, "bfloat16": 0, "float32": 1, "complex64": 1}


def _walk(value: Any, leaf: Callable[[Any], Any], is_tensor: Callable[[Any], bool]) -> Any:
    if is_tensor(value):
        return leaf(value)
    if isinstance(value, tuple):
        return tuple(_walk(v, leaf, is_tensor) for v in value)
    if isinstance(value, list):
        return [_walk(v, leaf, is_tensor) for v in value]
    return value


def _run(target: str, args: tuple[Any, ...], kwargs: dict[str, Any],
         is_tensor: Callable[[Any], bool], name_of: Callable[[Any], str],
         cast: Callable[[Any, str], Any]) -> Any:
    seen: list[str] = []

    def up(t: Any) -> Any:
        name = name_of(t)
        if name in _LOW:
            seen.append(name)
            return cast(t, "float64")
        if name == "complex64":
            seen.append(name)
            return cast(t, "complex128")
        return t

    args = _walk(args, up, is_tensor)
    kwargs = {k: _walk(v, up, is_tensor) for k, v in kwargs.items()}
    try:
        fn = resolve(target)
    except ResolveError as exc:  # the library's own ImportError/AttributeError, as before
        raise (exc.__cause__ or exc) from None
    result = fn(*args, **kwargs)
    if not seen:
        return result
    low = max(seen, key=lambda n: _ORDER.get(n, 0))
    real = "float32" if low == "complex64" else low

    def down(t: Any) -> Any:
        name = name_of(t)
        if name == "float64":
            return cast(t, real)
        if name == "complex128":
            return cast(t, "complex64")
        return t

    return _walk(result, down, is_tensor)


def run_torch(target: str, *args: Any, **kwargs: Any) -> Any:
    import torch

    return _run(target, args, kwargs, lambda v: isinstance(v, torch.Tensor),
                lambda t: str(t.dtype).removeprefix("torch."),
                lambda t, name: t.to(getattr(torch, name)))


def run_jax(target: str, *args: Any, **kwargs: Any) -> Any:
    import jax
    import jax.numpy as jnp

    return _run(target, args, kwargs, lambda v: isinstance(v, jax.Array),
                lambda t: str(t.dtype), lambda t, name: t.astype(getattr(jnp, name)))


def run_tf(target: str, *args: Any, **kwargs: Any) -> Any:
    import tensorflow as tf

    return _run(target, args, kwargs, lambda v: isinstance(v, tf.Tensor | tf.Variable),
                lambda t: t.dtype.name, lambda t, name: tf.cast(t, getattr(tf, name)))

"""validation.py on small functions written in the idioms of torch/TF/JAX wrappers.

The functions below are parsed, never called: their bodies name ``torch``/``np`` the way
library code does. Real library sources are covered in tests/backends.
"""

# ruff: noqa: F821 - the checked functions name library modules they never import

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dlfuzz.engines.api.constraints import Env, holds, make, parse
from dlfuzz.specgen.validation import constraints_from_source

_MODES = ("constant", "reflect")
_SIZES = {"small": 1, "large": 2}


def dropout_like(input: Any, p: float = 0.5) -> Any:
    if has_torch_function_unary(input):
        return handle_torch_function(dropout_like, (input,), input, p=p)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return input


def nested(input: Any, weight: Any, padding_idx: int | None = None) -> Any:
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if padding_idx > 3:  # padding_idx was reassigned: no longer the parameter
        raise ValueError("unreachable for the extractor")
    return input


def aliases(x: Any, groups: int, mode: str = "constant", size: str = "small") -> Any:
    ndim = x.dim()
    if ndim != 4:
        raise ValueError("expected 4D input")
    n, c, h, w = x.shape
    if c % groups != 0:
        raise ValueError("channels must be divisible by groups")
    if mode not in _MODES:
        raise ValueError(mode)
    if size not in _SIZES:
        raise ValueError(size)
    x = x.reshape(-1)
    if x.dim() != 1:
        raise ValueError("after reshape: not a parameter condition")
    return x


def chained(x: Any, dim: int) -> Any:
    if x.ndim == 0:
        raise ValueError("scalar")
    elif dim >= x.ndim or dim < -x.ndim:
        raise IndexError(dim)
    elif len(x.shape) > 5:
        raise ValueError("too many dims")
    return x


def types_and_dtypes(x: Any, y: Any, k: Any = None, out: Any = None) -> Any:
    if not isinstance(k, (int, type(None))):
        raise TypeError(k)
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError("float only")
    if not y.is_floating_point():
        raise TypeError("y must be floating")
    if out is not None:
        raise NotImplementedError("out")
    assert x.dtype == y.dtype, "same dtype"
    torch._check(x.numel() > 0, lambda: "empty")
    torch._check_with(IndexError, np.ndim(y) >= 1, lambda: "scalar y")
    return x


def guarded(x: Any, axis: int) -> Any:
    if compute_something(x):  # unknown: what follows is conditional on it
        return x
    if axis > 2:
        raise ValueError(axis)
    return x


def tf_and_jax_idioms(images: Any, a: Any, axis: int, size: Any = None) -> Any:
    images = ops.convert_to_tensor(images, name="images")
    images.get_shape().with_rank_at_least(3)
    axis = canonicalize_axis(axis, np.ndim(a))
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError("square matrices")
    if size is not None and len(size) != 2:
        raise ValueError("two sizes")
    value = None if size is None else check_sizes(size, len(size) == 2)
    return value


@functools.wraps(dropout_like)
def decorated(input: Any, p: float = 0.5) -> Any:
    return dropout_like(input, p)


def test_raise_conditions_are_negated() -> None:
    assert constraints_from_source(dropout_like, ["input", "p"]) == [
        "not (p < 0.0 or p > 1.0)"]


def test_nested_conditions_and_reassigned_parameters() -> None:
    got = constraints_from_source(nested, ["input", "weight", "padding_idx"])
    assert got == [
        "not (padding_idx is not None and padding_idx > 0 and "
        "(padding_idx >= weight.shape[0]))",
        "not (padding_idx is not None and padding_idx <= 0 and (padding_idx < 0) and "
        "(padding_idx < -weight.shape[0]))"]


def test_aliases_globals_and_taint() -> None:
    got = constraints_from_source(aliases, ["x", "groups", "mode", "size"])
    assert got == ["x.ndims == 4", "x.shape[1] % groups == 0",
                   "mode in ('constant', 'reflect')", "size in ('small', 'large')"]


def test_elif_chains_conjoin_earlier_negations_only_when_needed() -> None:
    got = constraints_from_source(chained, ["x", "dim"])
    assert got == ["x.ndims != 0", "not (dim >= x.ndims or dim < -x.ndims)",
                   "x.ndims <= 5"]


def test_types_dtypes_asserts_and_checks() -> None:
    got = constraints_from_source(types_and_dtypes, ["x", "y", "k", "out"])
    assert got == [
        "k.type in ('int', 'none')",
        "x.dtype in ('float32', 'float64')",
        "y.dtype in ('float16', 'bfloat16', 'float32', 'float64')",
        "out is None",
        "x.dtype == y.dtype",
        "x.num_element > 0",
        "y.ndims >= 1"]


def test_isinstance_becomes_a_structure_test() -> None:
    got = constraints_from_source(types_and_dtypes, ["x", "y", "k", "out"])[0]
    tree = parse(got, frozenset({"x", "y", "k", "out"}))
    assert holds(tree, Env({"k": 3})) and holds(tree, Env({"k": None}))
    assert not holds(tree, Env({"k": 2.5}))


def test_unknown_early_return_guards_the_rest() -> None:
    assert constraints_from_source(guarded, ["x", "axis"]) == []


def test_tf_rank_jax_axis_conversions_and_shape_aliases() -> None:
    got = constraints_from_source(tf_and_jax_idioms, ["images", "a", "axis", "size"])
    assert got == ["images.ndims >= 3", "-a.ndims <= axis < a.ndims",
                   "not (a.ndims < 2 or a.shape[-1] != a.shape[-2])",
                   "not (size is not None and len(size) != 2)"]


def test_every_result_parses_and_evaluates() -> None:
    for fn, params in ((aliases, ["x", "groups", "mode", "size"]),
                       (chained, ["x", "dim"]), (nested, ["input", "weight", "padding_idx"])):
        for text in constraints_from_source(fn, params):
            make(text, "validation", frozenset(params))
    ok = Env({"x": np.zeros((2, 4, 3, 3), np.float32), "groups": 2, "mode": "reflect",
              "size": "large"})
    for text in constraints_from_source(aliases, ["x", "groups", "mode", "size"]):
        assert holds(parse(text), ok), text
    bad = Env({"x": np.zeros((2, 3, 3, 3), np.float32), "groups": 2, "mode": "reflect",
               "size": "large"})
    assert not holds(parse("x.shape[1] % groups == 0"), bad)


def test_no_source_or_no_params() -> None:
    assert constraints_from_source(len, ["obj"]) == []          # a builtin
    assert constraints_from_source(np.add, ["x1", "x2"]) == []   # a ufunc (C)
    assert constraints_from_source(dropout_like, ["input"]) == []  # p is not a parameter
    # functools.wraps: the wrapped function's source is read (its checks, its names)
    assert constraints_from_source(decorated, ["input", "p"]) == [
        "not (p < 0.0 or p > 1.0)"]

"""The constraint language: parsing, errors with columns, evaluation, negation."""

from __future__ import annotations

import numpy as np
import pytest

from dlfuzz.engines.api.constraints import (
    ConstraintError,
    Env,
    TensorProps,
    evaluate,
    holds,
    make,
    names_in,
    negate,
    normalize,
    parse,
    unparse,
)


def env(**values: object) -> Env:
    return Env(values)


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("x.ndims == 2", {"x": np.zeros((2, 3))}, True),
    ("x.shape[-1] == 3 and x.shape[0] == 2", {"x": np.zeros((2, 3))}, True),
    ("x.num_element == 6", {"x": TensorProps((2, 3), "float32")}, True),
    ("x.dtype in ('float32', 'float64')", {"x": np.zeros(2, np.float32)}, True),
    ("x.dtype == y.dtype", {"x": np.zeros(2, np.float32), "y": np.zeros(2)}, False),
    ("0 <= p <= 1", {"p": 0.5}, True),
    ("0 <= p <= 1", {"p": 1.5}, False),
    ("len(s) == x.ndims - 2", {"s": [1, 2], "x": np.zeros((1, 1, 3, 3))}, True),
    ("s[1] > 0", {"s": [0, 1]}, True),
    ("b is None or b.shape[0] == w.shape[0]", {"b": None, "w": np.zeros((3, 2))}, True),
    ("b is None or b.shape[0] == w.shape[0]", {"b": np.zeros(2), "w": np.zeros((3, 2))},
     False),
    ("x.shape[0] % g == 0", {"x": np.zeros((6,)), "g": 4}, False),
    ("(2 if mode == 'same' else 1) == k", {"mode": "same", "k": 2}, True),
    ("max(a, b) < 3 and abs(c) == 2", {"a": 1, "b": 2, "c": -2}, True),
    ("x.min >= 0", {"x": np.array([0.0, 2.0])}, True),
    ("x.type == 'ints'", {"x": [1, 2]}, True),
])
def test_evaluates(text: str, values: dict, expected: bool) -> None:
    assert holds(make(text), Env(values)) is expected


def test_undefined_is_not_satisfied_either_way() -> None:
    c = make("x.shape[3] == 1")
    assert not holds(c, env(x=np.zeros((2, 2))))
    assert not holds(negate(c.tree), env(x=np.zeros((2, 2))))


def test_normalize_pushes_negation_and_expands_ternary() -> None:
    tree = normalize(parse("not (x.ndims == 2 or x.dtype in ('int32',))"))
    assert unparse(tree) == "((x.ndims != 2) and (x.dtype not in ('int32',)))"
    tern = normalize(parse("(x.ndims == 4) if fmt == 'NHWC' else (x.ndims == 3)"))
    values = {"x": np.zeros((1, 2, 3)), "fmt": "NCHW"}
    assert holds(tern, Env(values)) and not holds(tern, Env({**values, "fmt": "NHWC"}))


def test_unparse_round_trips() -> None:
    text = "(w.shape[0] % groups == 0) and (b is None or b.shape[0] == w.shape[0])"
    tree = parse(text)
    assert parse(unparse(tree)) == tree


def test_names_and_param_check() -> None:
    assert names_in(parse("x.shape[0] == len(s) + k")) == {"x", "s", "k"}
    with pytest.raises(ConstraintError) as err:
        parse("x.ndims == y.ndims", frozenset({"x"}))
    assert "unknown parameter 'y'" in str(err.value) and err.value.column == 11


@pytest.mark.parametrize(("text", "column", "words"), [
    ("x.ndims >> 1", 0, "arithmetic"),
    ("x.foo == 1", 0, "unknown property"),
    ("x.shape == (1, 2)", 0, "index the shape"),
    ("x.ndims == )", 11, "not a Python expression"),
    ("f(x) == 1", 0, "functions are"),
    ("x.dtype in y.ndims", 11, "'in' needs a tuple"),
    ("x is 3", 5, "None only"),
])
def test_parse_errors_say_where(text: str, column: int, words: str) -> None:
    with pytest.raises(ConstraintError) as err:
        parse(text)
    assert words in str(err.value)
    assert err.value.column == column


def test_evaluate_arithmetic() -> None:
    assert evaluate(parse("(x.shape[0] + 2 * p - 3) // 2 + 1"), env(
        x=TensorProps((9,), "float32"), p=1)) == 5

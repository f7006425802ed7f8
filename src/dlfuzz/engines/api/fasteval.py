"""Constraint trees compiled to Python closures: ``constraints.evaluate``, without the
per-node dispatch.

Generation checks every constraint several times per draw (before and after each
adjustment round, and on every side Algorithm 2 tries), and tree walking was three
quarters of a draw's time. A closure per node does the same work with the dispatch done
once per spec. Semantics are ``constraints.evaluate``'s exactly: the leaf helpers
(property lookup, comparison, arithmetic) are the constraint module's own, and
``tests/unit/test_libgen.py`` checks both agree on thousands of generated states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.engines.api import constraints as C
from dlfuzz.engines.api.constraints import (
    Arith,
    Compare,
    Cond,
    Const,
    Env,
    Func,
    Index,
    Logic,
    Node,
    Prop,
    TensorProps,
    Unary,
    Undefined,
    Var,
)

Fn = Callable[[Env], Any]
_CACHE: dict[int, tuple[Node, Fn]] = {}
_FUNCS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": lambda *a: abs(a[0])}
_INT_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
# what a value of the wrong kind makes numpy or Python raise (the Random baseline passes
# arrays where ints are expected): the constraint does not hold
QUIET = (Undefined, ValueError, TypeError, ArithmeticError, IndexError)


def compiled(node: Node) -> Fn:
    """The closure of a tree, cached by identity (trees are immutable)."""
    hit = _CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if len(_CACHE) > 200_000:
        _CACHE.clear()
    fn = _compile(node)
    _CACHE[id(node)] = (node, fn)
    return fn


def holds(node: Node, env: Env) -> bool:
    """``constraints.holds``, also False where a value has the wrong kind altogether."""
    try:
        return bool(compiled(node)(env))
    except QUIET:
        return False


def _get(env: Env, name: str) -> Any:
    values = env.values
    if name not in values:
        raise Undefined(f"{name} is not set")
    return values[name]


def _compile(node: Node) -> Fn:  # noqa: C901 - one case per node type
    if isinstance(node, Const):
        value = node.value
        return lambda env: value
    if isinstance(node, Var):
        name = node.name

        def var(env: Env) -> Any:
            value = _get(env, name)
            if type(value) is np.ndarray and value.ndim == 0:
                return value.item()
            if C._is_tensor(value) and not isinstance(value, TensorProps) \
                    and np.ndim(value) == 0:
                return np.asarray(value).item()
            return value
        return var
    if isinstance(node, Prop):
        return _prop(node)
    if isinstance(node, Index):
        return _index(node)
    if isinstance(node, Unary):
        operand = _compile(node.operand)
        if node.op == "not":
            return lambda env: not operand(env)
        return lambda env: -C._num(operand(env))
    if isinstance(node, Arith):
        left, right, op = _compile(node.left), _compile(node.right), node.op
        fn = C._ARITH[op]
        divides = op in ("/", "//", "%")

        def arith(env: Env) -> Any:
            a, b = left(env), right(env)
            if type(a) is not int or type(b) is not int:
                a, b = C._num(a), C._num(b)
            if divides and b == 0:
                raise Undefined("division by zero")
            return fn(a, b)
        return arith
    if isinstance(node, Compare):
        left, right, op = _compile(node.left), _compile(node.right), node.op
        fast = _INT_OPS.get(op)
        if fast is None:
            return lambda env: C._compare(op, left(env), right(env))

        def compare(env: Env) -> bool:
            a, b = left(env), right(env)
            if type(a) is int and type(b) is int:  # shapes, ranks, scalars: most checks
                return fast(a, b)
            return C._compare(op, a, b)
        return compare
    if isinstance(node, Logic):
        items = tuple(_compile(i) for i in node.items)
        if node.op == "and":
            return lambda env: all(i(env) for i in items)

        def any_quiet(env: Env) -> bool:
            for i in items:
                try:
                    if i(env):
                        return True
                except QUIET:  # as constraints.holds: an undefined branch is not taken
                    pass
            return False
        return any_quiet
    if isinstance(node, Cond):
        test, then, other = _compile(node.test), _compile(node.then), _compile(node.other)
        return lambda env: then(env) if test(env) else other(env)
    if isinstance(node, Func):
        args = tuple(_compile(a) for a in node.args)
        fn = _FUNCS[node.name]
        name = node.name

        def func(env: Env) -> Any:
            vals = [a(env) for a in args]
            if len(vals) == 1 and isinstance(vals[0], list | tuple):
                vals = list(vals[0])
            if not vals:
                raise Undefined(f"{name} of nothing")
            return fn(*vals)
        return func
    raise TypeError(node)


def _prop(node: Prop) -> Fn:
    name, prop = node.name, node.prop

    def fast(env: Env) -> Any:
        value = _get(env, name)
        if type(value) is TensorProps:  # the common case while generating
            if prop == "ndims":
                return len(value.shape)
            if prop == "dtype":
                return value.dtype
            if prop == "num_element":
                n = 1
                for d in value.shape:
                    n *= d
                return n
        return C._prop(value, prop, env.structures.get(name))
    return fast


def _index(node: Index) -> Fn:
    name, shape = node.name, node.shape
    index = _compile(node.index)

    def fn(env: Env) -> Any:
        value = _get(env, name)
        i = index(env)
        if not isinstance(i, int) or isinstance(i, bool):
            raise Undefined("index is not an integer")
        if shape:
            if type(value) is not TensorProps and not C._is_tensor(value):
                raise Undefined(f"shape of {type(value).__name__}")
            seq = value.shape
        else:
            seq = value
        if not isinstance(seq, list | tuple) or not -len(seq) <= i < len(seq):
            raise Undefined(f"index {i} out of range")
        return seq[i]
    return fn

"""Editing a spec under construction: add a constraint once, narrow parameter dtypes.

TensorFlow extraction (``tf_apis``) adds constraints from signatures, docstrings,
validation code and hand hints, and calibration (``tf_calibrate``) adds those that
execution taught and narrows dtypes; both go through here, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dlfuzz.engines.api.constraints import (
    Compare,
    Constraint,
    ConstraintError,
    Index,
    Node,
    Prop,
    make,
    unparse,
    walk,
)
from dlfuzz.engines.api.libspecs import LibParam, LibSpec


def add_constraint(cons: list[Constraint], text: str, source: str,
                   params: list[LibParam]) -> None:
    """Append one constraint unless it does not parse over ``params``, reads a tensor
    property of a non-tensor parameter (``frame_length.ndims`` where ``frame_length`` is
    generated as an int: never defined, so never satisfiable) or repeats one already there
    (``x.dtype == y.dtype`` and ``y.dtype == x.dtype`` are one constraint)."""
    names = frozenset(p.name for p in params)
    try:
        c = make(text, source, names)
    except ConstraintError:
        return
    if not _defined_props(c.tree, params):
        return
    c = _oriented(c, [p.name for p in params])
    key = _key(c.tree)
    if all(key != _key(old.tree) for old in cons):
        cons.append(c)


_TENSOR_ONLY = frozenset({"ndims", "dtype", "num_element"})


def _defined_props(tree: Node, params: list[LibParam]) -> bool:
    by_name = {p.name: p for p in params}
    for n in walk(tree):
        p = by_name.get(getattr(n, "name", ""))
        if p is None or p.tensor_like:
            continue
        if (isinstance(n, Prop) and n.prop in _TENSOR_ONLY) or (
                isinstance(n, Index) and n.shape):
            return False
    return True


def _side_param(node: Node) -> str | None:
    if isinstance(node, Prop) and node.prop == "dtype":
        return node.name
    if isinstance(node, Index) and node.shape:
        return node.name
    return None


def _oriented(c: Constraint, order: list[str]) -> Constraint:
    """``P.x == Q.y`` with the later parameter on the left. Algorithm 2 repairs an
    equality by writing its left side, so a later (dependent) parameter follows an
    earlier one; written the other way round, two constraints on one parameter
    (``chol.shape[-1] == chol.shape[-2]``, ``chol.shape[-1] == rhs.shape[-2]``) undo each
    other every round."""
    t = c.tree
    if not (isinstance(t, Compare) and t.op == "=="):
        return c
    a, b = _side_param(t.left), _side_param(t.right)
    if a is None or b is None or a == b or a not in order or b not in order:
        return c
    if order.index(a) >= order.index(b):
        return c
    flipped = Compare("==", t.right, t.left)
    return Constraint(unparse(flipped).removeprefix("(").removesuffix(")"), flipped, c.source)


def _key(tree: Node) -> Any:
    """Equal for ``a == b`` and ``b == a``."""
    if isinstance(tree, Compare) and tree.op in ("==", "!="):
        return (tree.op, frozenset({unparse(tree.left), unparse(tree.right)}))
    return unparse(tree)


def with_dtypes(spec: LibSpec, dtypes: Mapping[str, Sequence[str]]) -> LibSpec:
    """A copy with some parameters' dtypes replaced (what calibration narrows)."""
    params = tuple(replace(p, dtypes=tuple(dtypes[p.name])) if p.name in dtypes else p
                   for p in spec.params)
    return replace(spec, params=params)

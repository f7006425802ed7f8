"""Constraints of JAX APIs found in JAX's own code (used by ``jax_apis``).

* ``axis_constraints`` (source ``signature``): a parameter named and typed as an axis
  (``axis: int``, ``Axis``, ``axes: Sequence[int]``) indexes the first tensor; jax.numpy
  takes negative axes, jax.lax does not.
* ``validation_constraints`` (``validation``): ``validation.constraints_from_source`` over
  the function (it follows the helpers the parameters are passed to, where most of
  jax.numpy's checks live: ``_reduction``, ``_take``, ``_cumulative_reduction``...).
* ``lax_rules`` (``validation``): the primitive a jax.lax function binds has its shape
  rule in Python (``_conv_general_dilated_shape_rule``, ``_reduce_op_shape_rule``, ...)
  and a dtype rule whose arguments list the accepted dtypes per operand and whether
  operands must share one dtype.
* ``promotion_constraints`` (``validation``): jnp functions that promote or broadcast
  arguments together end in lax's broadcasting rule: the tensors must broadcast.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from collections.abc import Iterator
from typing import Any

from dlfuzz.specgen import jax_hints

RANK_MAX = 4
# dtypes the jax worker runs (x64 enabled by dlfuzz.backends.jax_backend).
CANDIDATE_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint32",
                    "float16", "bfloat16", "float32", "float64", "complex64", "complex128")


# ---- constraints from the signature (axis conventions) --------------------------------
def axis_constraints(params: list[dict[str, Any]], lax: bool, axes: tuple[str, ...] = (),
                     skip: tuple[str, ...] = ()) -> list[str]:
    """Axis parameters index the first tensor: ``axis >= -t.ndims and axis < t.ndims``
    (jax.lax: ``axis >= 0``); axis lists hold distinct in-range axes.

    The axis is written on the left and the escape clauses (None, the other structure,
    a shorter list) last: Algorithm 2 repairs a comparison through its left side and an
    ``or`` through its first branch, so a bad axis is moved into range rather than the
    tensor's rank changed. ``axes`` names more axis-list parameters (``lax.rev``'s
    ``dimensions``), ``skip`` axis parameters whose range a hint states instead."""
    tensors = [p["name"] for p in params if {"tensor", "tensors"} & set(p["type"])
               and "dtypes" not in jax_hints.NAME_KINDS.get(p["name"], {})]  # not indices
    if not tensors:
        return []
    t = tensors[0]
    out: list[str] = []
    for p in params:
        name, s = p["name"], p["type"]
        listed = name in jax_hints.AXES_NAMES or name in axes
        if name in skip or (name not in jax_hints.AXIS_NAMES and not listed):
            continue
        if "int" in s:
            escapes = [e for e, ok in ((f"{name} is None", "none" in s),
                                       (f"{name}.type == 'ints'", "ints" in s)) if ok]
            out.append(" or ".join([_in_range(name, t, lax), *escapes]))
        if "ints" in s:
            p.setdefault("length", [0, 2] if listed else [1, 2])
            guard = f" or {name}.type != 'ints'" if len(s) > 1 else ""
            out.append(f"len({name}) <= {t}.ndims{guard}")
            for i in range(p["length"][1]):
                item = f"{name}[{i}]"
                parts = [_in_range(item, t, lax)]
                for j in range(i):
                    other = f"{name}[{j}]"
                    parts.append(f"{item} != {other}")
                    if not lax:
                        parts += [f"{item} != {other} + {t}.ndims",
                                  f"{item} != {other} - {t}.ndims"]
                out.append(f"({' and '.join(parts)}) or len({name}) <= {i}{guard}")
    return out


def _in_range(item: str, t: str, lax: bool) -> str:
    return f"{item} >= {'0' if lax else f'-{t}.ndims'} and {item} < {t}.ndims"


def broadcast_constraints(a: str, b: str, same_rank: bool = False) -> list[str]:
    """NumPy broadcasting between tensors a and b (lax: equal ranks, size-1 dims stretch);
    the dimension equality first, so that Algorithm 2 repairs a dimension."""
    out = [f"{a}.ndims == {b}.ndims or {a}.ndims == 0 or {b}.ndims == 0"] if same_rank else []
    for i in range(1, RANK_MAX + 1):
        out.append(f"{a}.shape[-{i}] == {b}.shape[-{i}] or {a}.shape[-{i}] == 1 or "
                   f"{b}.shape[-{i}] == 1 or {a}.ndims < {i} or {b}.ndims < {i}")
    return out


# ---- constraints from validation code --------------------------------------------------
def _tree(fn: Any) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None


def _arg_name(node: ast.AST, params: set[str]) -> str | None:
    """The parameter an argument passes on: ``x``, ``tuple(x)``, ``np.asarray(x)``."""
    if isinstance(node, ast.Name) and node.id in params:
        return node.id
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _arg_name(node.args[0], params)
    return None


def _callee_map(call: ast.Call, callee: Any, params: set[str]) -> dict[str, str]:
    """callee parameter -> our parameter, for arguments passed straight through."""
    try:
        names = [p.name for p in inspect.signature(callee).parameters.values()]
    except (TypeError, ValueError):
        return {}
    out: dict[str, str] = {}
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        ours = _arg_name(arg, params)
        if ours and i < len(names):
            out[names[i]] = ours
    for kw in call.keywords:
        ours = _arg_name(kw.value, params) if kw.arg else None
        if ours and kw.arg in names:
            out[kw.arg] = ours
    return out


def rename(text: str, mapping: dict[str, str]) -> str:
    """A constraint text with parameter names replaced (a helper's names -> the API's)."""
    out = []
    for tok in re.split(r"(\b[A-Za-z_]\w*\b|'[^']*')", text):
        out.append(mapping.get(tok, tok) if tok and not tok.startswith("'") else tok)
    return "".join(out)


def _from_source(fn: Any, mapping: dict[str, str]) -> list[str]:
    """``validation``'s constraints of ``fn`` over ``mapping``'s keys, in our names."""
    from dlfuzz.specgen import validation

    try:
        found = validation.constraints_from_source(fn, list(mapping))
    except Exception:  # noqa: BLE001 - foreign source: take what parses, never crash
        return []
    return [rename(t, mapping) for t in found]


def helpers(fn: Any, names: list[str], depth: int = 2
            ) -> Iterator[tuple[Any, ast.AST, dict[str, str]]]:
    """(function, its AST, its parameter -> our parameter) for ``fn`` and the jax-internal
    helpers it passes its parameters to (``_reduction(a, ..., axis=axis)``), ``depth``
    calls deep: JAX's checks mostly live in such helpers."""
    tree = _tree(fn)
    if tree is None:
        return
    yield fn, tree, {n: n for n in names}
    if depth == 0:
        return
    glb = getattr(inspect.unwrap(fn), "__globals__", {})
    seen: set[int] = set()
    guarded = _caught(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in guarded:
            continue
        callee = None
        if isinstance(node.func, ast.Name):
            callee = glb.get(node.func.id)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            callee = getattr(glb.get(node.func.value.id), node.func.attr, None)
        callee = inspect.unwrap(callee) if callable(callee) else None
        if callee is None or id(callee) in seen or not inspect.isfunction(callee) \
                or not str(callee.__module__).startswith("jax"):
            continue
        seen.add(id(callee))
        mapping = _callee_map(node, callee, set(names))
        if not mapping:
            continue
        for sub, sub_tree, sub_map in helpers(callee, list(mapping), depth - 1):
            yield sub, sub_tree, {k: mapping[v] for k, v in sub_map.items()}


def _caught(tree: ast.AST) -> set[int]:
    """Nodes inside a ``try`` body that has handlers: what they raise is caught, so
    their checks are no rejection (``jnp.array_equiv`` returns False instead)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and node.handlers:
            for stmt in node.body:
                out.update(id(n) for n in ast.walk(stmt))
    return out


def validation_constraints(fn: Any, names: list[str]) -> list[str]:
    """``validation.constraints_from_source`` over ``fn`` (it follows the helpers itself)."""
    return _from_source(fn, {n: n for n in names})


_BROADCASTERS = re.compile(r"^(?:promote_args\w*|_broadcast_arrays|broadcast_arrays|"
                           r"promote_shapes)$")


def promotion_constraints(fn: Any, tensors: list[str]) -> list[str]:
    """jnp functions that promote or broadcast arguments together (``promote_args*``,
    ``_broadcast_arrays``, a ufunc) need them broadcast-compatible: lax's broadcasting
    rule, reached through those calls, raises otherwise."""
    import jax.numpy as jnp

    groups: list[list[str]] = []
    if isinstance(fn, jnp.ufunc):
        groups.append(tensors)
    for _, tree, mapping in helpers(fn, tensors):
        guarded = _caught(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in guarded:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                f, ast.Attribute) else ""
            if not _BROADCASTERS.match(name):
                continue
            args = [_arg_name(a, set(mapping)) for a in node.args]
            group = [mapping[a] for a in args if a]
            if len(group) >= 2:
                groups.append(group)
    out: list[str] = []
    for group in groups:
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a != b:
                    out += broadcast_constraints(a, b)
    return out


def _dtype_set(accepted: Any) -> list[str]:
    import numpy as np
    from jax._src import dtypes

    from dlfuzz.cases import DTYPES

    return [d for d in CANDIDATE_DTYPES
            if any(dtypes.issubdtype(np.dtype(DTYPES[d]), t) for t in accepted)]


def lax_rules(fn: Any, names: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Constraints and per-parameter dtypes from the primitives a jax.lax function binds:
    the shape rule's checks (run through ``validation``), broadcasting rules, and the
    dtype rule's accepted dtypes / same-dtype requirement."""
    tree = _tree(fn)
    if tree is None:
        return [], {}
    glb = getattr(inspect.unwrap(fn), "__globals__", {})
    cons: list[str] = []
    dtypes: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "bind" and isinstance(node.func.value, ast.Name)):
            continue
        prim = glb.get(node.func.value.id)
        eval_rule = getattr(prim, "abstract_eval", None)
        parts = None
        for cell in getattr(eval_rule, "__closure__", None) or ():
            v = cell.cell_contents
            if isinstance(v, functools.partial) and len(v.args) >= 3:
                parts = v.args
        if parts is None:
            continue
        shape_rule, dtype_rule = parts[1], parts[2]
        operands = [_arg_name(a, set(names)) for a in node.args]
        keywords = {kw.arg: _arg_name(kw.value, set(names)) for kw in node.keywords if kw.arg}
        tensors = [o for o in operands if o]
        if isinstance(shape_rule, functools.partial) and \
                shape_rule.func.__name__ == "broadcasting_shape_rule":
            for i, a in enumerate(tensors):
                for b in tensors[i + 1:]:
                    cons += broadcast_constraints(a, b, same_rank=True)
        elif inspect.isfunction(shape_rule):
            rule_names = [p.name for p in inspect.signature(shape_rule).parameters.values()]
            mapping = {r: o for r, o in zip(rule_names, operands, strict=False) if o}
            mapping.update({k: v for k, v in keywords.items() if v and k in rule_names})
            cons += _from_source(shape_rule, mapping)
        if isinstance(dtype_rule, functools.partial):
            rule, args, kw = dtype_rule.func.__name__, dtype_rule.args, dtype_rule.keywords
            if rule == "unop_dtype_rule" and operands and operands[0]:
                dtypes[operands[0]] = _dtype_set(args[1])
            elif rule == "naryop_dtype_rule":
                for o, accepted in zip(operands, args[1], strict=False):
                    if o:
                        dtypes[o] = _dtype_set(accepted)
                if kw.get("require_same", True):
                    cons += [f"{a}.dtype == {b}.dtype" for a, b in zip(tensors, tensors[1:],
                                                                       strict=False)]
    return cons, dtypes

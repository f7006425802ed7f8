"""The op behind a TensorFlow Python function, and what its ``OpDef`` and registered CPU
kernels say about the function's parameters (``tf_apis`` step 1).

Generated wrappers (``gen_math_ops.atan2``) are the op itself; hand-written wrappers
(``math_ops.add``) are linked through their source: the ``gen_*_ops.<op>(...)`` call whose
arguments are the wrapper's own parameters tells which parameter feeds which op input or
attr. Imports TensorFlow lazily (functions run offline, in the extractor's process).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.cases import DTYPES

# dtypes a generator may build; TF's string/quantized/resource types are not tensors here.
TENSOR_DTYPES = tuple(d for d in DTYPES if d not in ("uint16", "uint32", "uint64"))


def _tree(fn: Callable[..., Any]) -> ast.AST | None:
    """The AST of a function's source, or None for builtins and lambdas without source."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(fn))))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None


def _is_gen(fn: Callable[..., Any]) -> bool:
    module = getattr(inspect.unwrap(fn), "__module__", "") or ""
    return module.rsplit(".", 1)[-1].startswith("gen_")


def op_name(gen_fn: Callable[..., Any]) -> str | None:
    """``"Atan2"`` for ``gen_math_ops.atan2``: the literal of its ``_apply_op_helper`` call."""
    tree = _tree(gen_fn)
    for node in ast.walk(tree) if tree is not None else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "_apply_op_helper" and node.args
                and isinstance(node.args[0], ast.Constant)):
            return str(node.args[0].value)
    return None


@dataclass
class OpLink:
    """The op behind a Python function and which Python parameter feeds which op arg."""

    op: str
    mapping: dict[str, str] = field(default_factory=dict)  # python param -> op arg/attr


def _call_target(node: ast.Call, module: Any) -> Any:
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        owner = getattr(module, f.value.id, None)
        return getattr(owner, f.attr, None) if inspect.ismodule(owner) else None
    if isinstance(f, ast.Name):
        return getattr(module, f.id, None)
    return None


def _mapping(node: ast.Call, gen_fn: Callable[..., Any], params: list[str]) -> dict[str, str]:
    """Wrapper parameter -> gen-function parameter, where the call passes it unchanged."""
    try:
        gen_params = list(inspect.signature(gen_fn).parameters)
    except (TypeError, ValueError):
        return {}
    out: dict[str, str] = {}
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Name) and arg.id in params and i < len(gen_params):
            out.setdefault(arg.id, gen_params[i])
    for kw in node.keywords:
        if kw.arg and isinstance(kw.value, ast.Name) and kw.value.id in params:
            out.setdefault(kw.value.id, kw.arg)
    return {k: v for k, v in out.items() if v != "name"}


def link(fn: Callable[..., Any], params: list[str]) -> OpLink | None:
    """The op a function runs: itself for a generated wrapper, else the ``gen_*`` call in
    its own source that passes the most of its parameters through unchanged (ties: the op
    with more CPU dtypes, e.g. ``AddV2`` over the string-only ``Add``). Calls inside
    helpers are not followed: their arguments are not the wrapper's parameters, and
    matching by name links ``angle`` to ``Where`` (both have an ``input``)."""
    if _is_gen(fn):
        name = op_name(fn)
        return OpLink(name, {p: p for p in params}) if name else None
    fn = inspect.unwrap(fn)
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    tree = _tree(fn)
    if module is None or tree is None:
        return None
    best: tuple[int, int, OpLink] | None = None
    called: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = _call_target(node, module)
        if target is None or inspect.isclass(target) or not callable(target) \
                or not _is_gen(target):
            continue
        name = op_name(target)
        if not name:
            continue
        mapping = _mapping(node, target, params)
        called.append(name)
        if not mapping:
            continue
        key = (len(mapping), len(kernel_dtypes(name).get("T", ())), OpLink(name, mapping))
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None and called:  # arguments transformed first: the op, no mapping
        return OpLink(called[-1], {})
    return best[2] if best else None


def op_def(name: str) -> Any:
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(name)


def _dtype_names(enums: Any) -> tuple[str, ...]:
    from tensorflow.python.framework import dtypes

    out = []
    for enum in enums:
        try:
            name = dtypes.as_dtype(enum).name
        except TypeError:
            continue
        if name in TENSOR_DTYPES and name not in out:
            out.append(name)
    return tuple(out)


def kernel_dtypes(name: str) -> dict[str, tuple[str, ...]]:
    """Type attr -> dtypes some registered CPU kernel of the op accepts."""
    from tensorflow.python.framework import kernels

    od = op_def(name)
    if od is None:
        return {}
    type_attrs = {a.name: a for a in od.attr if a.type == "type"}
    found: dict[str, list[str]] = {a: [] for a in type_attrs}
    for kernel in kernels.get_registered_kernels_for_op(name).kernel:
        if kernel.device_type != "CPU":
            continue
        constrained = {c.name: c for c in kernel.constraint}
        for attr, a in type_attrs.items():
            enums = (constrained[attr].allowed_values.list.type if attr in constrained
                     else a.allowed_values.list.type)
            names = _dtype_names(enums) if len(enums) else TENSOR_DTYPES
            found[attr].extend(d for d in names if d not in found[attr])
    return {a: tuple(d for d in TENSOR_DTYPES if d in v) for a, v in found.items()}


def op_params(link_: OpLink) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Python param -> LibParam fields the op implies, and ``signature`` constraints."""
    od = op_def(link_.op)
    if od is None:
        return {}, []
    kdt = kernel_dtypes(link_.op)
    attrs = {a.name: a for a in od.attr}
    inputs = {a.name: a for a in od.input_arg}
    out: dict[str, dict[str, Any]] = {}
    by_type_attr: dict[str, list[str]] = {}
    for py, arg in link_.mapping.items():
        if arg in inputs:
            a = inputs[arg]
            info: dict[str, Any] = {"structures": ("tensor",)}
            if a.number_attr or a.type_list_attr:
                info["structures"] = ("tensors",)
                n = attrs.get(a.number_attr)
                if n is not None and n.has_minimum:
                    info["count"] = (max(1, n.minimum), max(3, n.minimum))
            if a.type_attr:
                dts = kdt.get(a.type_attr, ())
                if dts:
                    info["dtypes"] = dts
                by_type_attr.setdefault(a.type_attr, []).append(py)
            elif a.type:
                info["dtypes"] = _dtype_names([a.type]) or ()
            out[py] = info
        elif arg in attrs:
            info = _attr_info(attrs[arg], kdt.get(arg, ()))
            if info:
                out[py] = info
    cons = [f"{group[0]}.dtype == {other}.dtype"
            for group in by_type_attr.values() if len(group) > 1 for other in group[1:]]
    return out, cons


def _attr_info(a: Any, type_choices: tuple[str, ...]) -> dict[str, Any]:
    if a.type == "type":
        return {"structures": ("dtype",), "dtypes": type_choices} if type_choices else {}
    if a.type == "int":
        lo = a.minimum if a.has_minimum else 0
        return {"structures": ("int",), "range": (lo, max(lo + 4, 4))}
    if a.type == "float":
        return {"structures": ("float",), "range": (0.0, 1.0)}
    if a.type == "bool":
        return {"structures": ("bool",)}
    if a.type == "string":
        values = tuple(s.decode() for s in a.allowed_values.list.s)
        return {"structures": ("str",), "values": values} if values else {}
    if a.type == "list(int)":
        lo = a.minimum if a.has_minimum else 1
        return {"structures": ("ints",), "length": (lo, max(lo, 4)), "range": (1, 3)}
    if a.type == "list(float)":
        return {"structures": ("floats",)}
    return {}


def has_type_attr(name: str) -> bool:
    od = op_def(name)
    return od is not None and any(a.type == "type" for a in od.attr)

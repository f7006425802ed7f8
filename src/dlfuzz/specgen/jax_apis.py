"""JAX API specs (``data/jax.json``): TensorJSFuzz's type information for JAX's public APIs.

Run offline (``python -m dlfuzz.specgen jax [--refine]``); it imports JAX in
this process. Every public function of ``jax.numpy`` (with ``linalg`` and ``fft``),
``jax.lax``, ``jax.scipy.special`` and ``jax.nn`` is listed once (an alias such as
``jax.nn.tanh is jax.numpy.tanh`` under its first path). Parameters come from, in order:

1. **the signature** (``inspect.signature``): JAX annotates nearly everything
   (``ArrayLike``, ``Axis``, ``Sequence[int]``, ``DTypeLike | None``, ``int | None``), so
   an annotation maps to TensorJSFuzz structures (tensor, ints, dtype, none, ...);
   axis-like parameters get their range relative to the first tensor (``signature``);
2. **the docstring** (``docstrings.hints`` / ``constraints_from_doc``): ranks ("1D array"),
   enumerated strings ("one of 'left' or 'right'"), bounds;
3. **the Python validation code** (``jax_rules``): the ``if ...: raise`` checks of the
   function and of the helpers it calls (``validation.constraints_from_source``); for
   ``jax.lax`` the *primitive* bound in the source, whose registered shape rule
   (``_conv_general_dilated_shape_rule``, ``_reduce_op_shape_rule``, ...) is Python and
   whose dtype rule (``naryop_dtype_rule``/``unop_dtype_rule``) carries the accepted
   dtypes and whether the operands must share one dtype; ``jax.numpy`` functions that
   promote or broadcast arguments together (``promote_args*``, ``_broadcast_arrays``,
   ufuncs) need them broadcast-compatible;
4. **the hand hints** of ``jax_hints`` (tables in ``hints/jax.json``: skips, name conventions, checks
   XLA makes in C++, structured arguments restricted to simple forms);
5. **dtype calibration** (``jax_calibrate``): tensors the above leave untyped run with
   each probe dtype in the sandboxed jax worker; ``--refine`` then adds constraints from
   error messages (``refine``, source ``error``).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from dlfuzz.engines.api.constraints import (
    Compare,
    Cond,
    Constraint,
    ConstraintError,
    Logic,
    Node,
    Unary,
    make,
)
from dlfuzz.engines.api.libspecs import LibParam, LibSpec, expand_dtypes
from dlfuzz.errors import UsageError
from dlfuzz.specgen import docstrings, jax_hints
from dlfuzz.specgen.jax_rules import (
    CANDIDATE_DTYPES,
    RANK_MAX,
    axis_constraints,
    broadcast_constraints,
    lax_rules,
    promotion_constraints,
    validation_constraints,
)

# First path wins for aliases: jnp before lax/special/nn.
GROUPS: tuple[tuple[str, str], ...] = (
    ("numpy", "jax.numpy"), ("linalg", "jax.numpy.linalg"), ("fft", "jax.numpy.fft"),
    ("lax", "jax.lax"), ("special", "jax.scipy.special"), ("nn", "jax.nn"))


def _jax() -> Any:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)  # as the worker does
    return jax


# ---- enumeration ----------------------------------------------------------------------
def public_functions() -> Iterator[tuple[str, str, Any]]:
    """(api path, group, callable) once per function object."""
    import importlib

    _jax()
    seen: set[int] = set()
    for group, module_name in GROUPS:
        module = importlib.import_module(module_name)
        deprecated = set(getattr(module, "_deprecations", {}))
        for attr in sorted(dir(module)):
            if attr.startswith("_") or attr in deprecated:
                continue
            fn = getattr(module, attr)
            if inspect.isclass(fn) or inspect.ismodule(fn) or not callable(fn):
                continue
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            yield f"{module_name}.{attr}", group, fn


# ---- annotations -> structures --------------------------------------------------------
_ARRAY = {"ArrayLike", "Array", "np.ndarray", "jax.Array", "jax.jaxlib._jax.Array",
          "numpy.ndarray", "DuckTypedArray", "ArrayLike | DuckTypedArray", "SupportsShape",
          "SupportsNdim", "SupportsSize", "T", "jax._src.typing.DuckTypedArray"}
_INT = {"int", "DimSize", "operator.index"}
_INTS = re.compile(r"^(?:Sequence\[(?:int|DimSize)\]|tuple\[int(?:, \.\.\.|, int)*\]|"
                   r"list\[int\]|Shape|core\.Shape|collections\.abc\.Sequence\[int\])$")
_TENSORS = re.compile(r"^(?:Sequence|list|tuple|collections\.abc\.Sequence)\[(?:ArrayLike|"
                      r"Array|typing\.Union\[jax.*)(?:, \.\.\.)?\]$")


def annotation_text(ann: Any) -> str:
    if ann is inspect.Parameter.empty:
        return ""
    return ann if isinstance(ann, str) else inspect.formatannotation(ann)


def _split(text: str, sep: str) -> list[str]:
    """Top-level split (outside brackets)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[(" and 1 or 0
        depth -= ch in "])" and 1 or 0
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [p for p in [*parts, cur.strip()] if p]


def union_members(text: str) -> list[str]:
    out: list[str] = []
    for part in _split(text, "|"):
        m = re.fullmatch(r"(?:typing\.)?(Union|Optional)\[(.*)\]", part)
        if m:
            inner = union_members_list(m.group(2))
            out += inner + (["None"] if m.group(1) == "Optional" else [])
        else:
            out.append(part)
    return out


def union_members_list(text: str) -> list[str]:
    return [m for p in _split(text, ",") for m in union_members(p)]


def structures_of(text: str) -> tuple[list[str], list[str]]:
    """(structures, members not understood) of an annotation text."""
    members = union_members(text)
    if "numpy.ndarray" in members and "numpy.number" in members:
        members = ["ArrayLike"] + (["None"] if "NoneType" in members else [])
    if "numpy.dtype" in members or any("SupportsDType" in m for m in members):
        members = ["DTypeLike"] + (["None"] if "NoneType" in members else [])
    found: list[str] = []
    unknown: list[str] = []
    for m in members:
        m = m.strip("'\"")
        if m in ("None", "NoneType"):
            s = ["none"]
        elif m in _ARRAY:
            s = ["tensor"]
        elif m in _INT:
            s = ["int"]
        elif m in ("float", "StaticScalar"):
            s = ["float"]
        elif m == "bool":
            s = ["bool"]
        elif m == "str":
            s = ["str"]
        elif m == "Axis":
            s = ["int", "ints", "none"]
        elif m in ("DTypeLike", "DType"):
            s = ["dtype"]
        elif _INTS.match(m):
            s = ["ints"]
        elif _TENSORS.match(m):
            s = ["tensors"]
        else:
            unknown.append(m)
            continue
        found += [x for x in s if x not in found]
    if "ints" in found and "tensor" in found:
        found.remove("tensor")  # "int | Sequence[int] | ArrayLike": the ints are meant
    if "tensors" in found and "tensor" in found:
        found.remove("tensor")  # "Array | Sequence[ArrayLike]": a stacked array or a list
    return found, unknown


def _json_default(value: Any) -> tuple[bool, Any]:
    """(representable, JSON value) of a signature default."""
    if value is None or isinstance(value, bool | int | float | str):
        return True, value
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return True, list(value)
    return False, None


def _guess(p: inspect.Parameter) -> list[str]:
    """Structures of an unannotated parameter: its default's type, else its name."""
    d = p.default
    if isinstance(d, bool):
        return ["bool"]
    if isinstance(d, int):
        return ["int"]
    if isinstance(d, float):
        return ["float"]
    if isinstance(d, str):
        return ["str"]
    if p.name in ("a", "b", "x", "y", "x1", "x2", "condition", "operand", "lhs", "rhs",
                  "arr", "v", "m", "z", "val", "elems"):
        return ["tensor"] + (["none"] if d is None else [])
    return []


# ---- parameters -----------------------------------------------------------------------
def _signature(fn: Any) -> list[inspect.Parameter] | None:
    jnp = _jax().numpy
    if isinstance(fn, jnp.ufunc):
        kind = inspect.Parameter.POSITIONAL_ONLY
        names = ["x"] if fn.nin == 1 else [f"x{i + 1}" for i in range(fn.nin)]
        return [inspect.Parameter(n, kind, annotation="ArrayLike") for n in names]
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


_PASSING = {inspect.Parameter.POSITIONAL_ONLY: "positional",
            inspect.Parameter.KEYWORD_ONLY: "keyword",
            inspect.Parameter.POSITIONAL_OR_KEYWORD: "either",
            inspect.Parameter.VAR_POSITIONAL: "variadic"}


def _doc_hints(fn: Any) -> dict[str, dict[str, Any]]:
    """``docstrings.hints`` per parameter, with two JAX phrasings corrected: "array or
    scalar" is not rank 0, and a shape with ``...``/``*batch`` has no upper rank."""
    out = {}
    for name, text in docstrings.param_docs(inspect.getdoc(fn)).items():
        h = dict(docstrings.hints(text))
        if h.get("rank") == (0, 0) and re.search(r"\b(?:arrays?|arraylike)\b", text, re.I):
            del h["rank"]
        if "rank" in h and re.search(r"\.\.\.|\(\*|\bor\s+higher\b", text):
            h["rank"] = (h["rank"][0], RANK_MAX)
        if h:
            out[name] = h
    return out


def _merge_doc(fields: dict[str, Any], doc: dict[str, Any]) -> None:
    """Docstring hints refine what the signature left open; never widen its types."""
    s = fields["type"]
    if "rank" in doc and "tensor" in s:
        lo, hi = doc["rank"]
        fields.setdefault("rank", [min(lo, RANK_MAX), min(max(hi, lo), RANK_MAX)])
    if doc.get("values") and "str" in s and all(isinstance(v, str) for v in doc["values"]):
        fields.setdefault("values", list(doc["values"]))
    if "dtypes" in doc and "tensor" in s and all(
            d == "bool" or d.startswith(("int", "uint")) for d in doc["dtypes"]):
        if "dtypes" not in fields:  # others: calibration decides
            fields["dtypes"], fields["dtypes_from"] = list(doc["dtypes"]), "doc"
    if "range" in doc and {"int", "float", "ints"} & set(s):
        integer = not {"float", "floats"} & set(s)
        fields.setdefault("range", [int(v) if integer else v for v in doc["range"]])
    if "domain" in doc and "tensor" in s:
        fields.setdefault("domain", list(doc["domain"]))


def _kind_applies(kind: dict[str, Any], structures: list[str]) -> bool:
    """A name convention applies where the annotation agrees or says only 'array': an
    ``alpha: ArrayLike`` is a float, but ``m`` the matrix is not ``m`` the int count."""
    if "type" in kind:
        return not structures or bool(set(kind["type"]) & set(structures)) \
            or set(structures) <= {"tensor", "none"}
    return bool({"int", "float", "ints"} & set(structures))


def build_params(api: str, fn: Any, hint: dict[str, Any]
                 ) -> tuple[list[dict[str, Any]], str]:
    """Parameter field dicts (LibParam names, 'type' for structures) and a skip reason."""
    sig = _signature(fn)
    if sig is None:
        return [], "no inspectable signature"
    docs = _doc_hints(fn)
    overrides = hint.get("params", {})
    drop = set(hint.get("drop", ()))
    out: list[dict[str, Any]] = []
    for p in sig:
        if p.kind is p.VAR_KEYWORD:
            continue
        required = p.default is p.empty and p.kind is not p.VAR_POSITIONAL
        if not required and (p.name in jax_hints.DROP or p.name in drop) \
                and p.name not in overrides:
            continue
        text = annotation_text(p.annotation)
        structures, unknown = structures_of(text) if text else (_guess(p), [])
        if text in ("Any", "Any | None") or (not text and not structures):
            structures = _guess(p)
        if p.kind is p.VAR_POSITIONAL:
            if structures != ["tensor"] and "tensors" not in structures:
                continue  # extra positionals of no known type: left out
            structures = ["tensors"]
        fields: dict[str, Any] = {"name": p.name, "type": structures,
                                  "pass": _PASSING[p.kind]}
        kind = jax_hints.NAME_KINDS.get(p.name)
        if kind and _kind_applies(kind, structures):
            fields.update({k: list(v) for k, v in kind.items()})
            if "none" in structures and "none" not in fields["type"]:
                fields["type"] = [*fields["type"], "none"]
        if "dtype" in fields["type"]:
            fields.setdefault("dtypes", list(CANDIDATE_DTYPES))
        if p.name in jax_hints.AXIS_NAMES and "int" in fields["type"]:
            fields["type"] = [s for s in fields["type"] if s != "tensor"]
        fields.update({k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in overrides.get(p.name, {}).items()})
        if p.name not in overrides:
            _merge_doc(fields, docs.get(p.name, {}))
        if "values" in fields and "str" not in fields["type"] and all(
                isinstance(v, str) for v in fields["values"]):
            fields["type"] = [*fields["type"], "str"]
        if not required:
            ok, default = _json_default(p.default)
            fields.setdefault("optional", True)
            if ok:
                fields.setdefault("default", default)
            if p.default is None and "none" not in fields["type"]:
                fields["type"] = [*fields["type"], "none"]
        fields["type"] = [s for s in fields["type"] if s != "str" or fields.get("values")]
        if p.name not in overrides and (not [s for s in fields["type"] if s != "none"]
                                        or "callable" in text.lower()):
            if required:
                why = "Callable" if "callable" in text.lower() else (text or "?")
                return [], f"parameter {p.name!r} of type {why} cannot be generated"
            continue
        out.append(fields)
    out += [dict(a) for a in hint.get("add", ())]
    return out, ""


def to_param(f: dict[str, Any]) -> LibParam:
    kw: dict[str, Any] = {"name": f["name"], "structures": tuple(f["type"])}
    for key, attr in (("optional", "optional"), ("default", "default"), ("pass", "passing"),
                      ("doc", "doc")):
        if key in f:
            kw[attr] = f[key]
    for key in ("rank", "length", "count"):
        if key in f:
            kw[key] = (int(f[key][0]), int(f[key][1]))
    for key in ("domain", "range"):
        if key in f:
            kw[key] = tuple(f[key])
    if f.get("dtypes"):
        kw["dtypes"] = expand_dtypes(f["dtypes"]) or ()
    if f.get("values"):
        kw["values"] = tuple(f["values"])
    if f.get("fill"):
        kw["fill"] = f["fill"]
    return LibParam(**kw)


# ---- assembly -------------------------------------------------------------------------
def _add(cons: list[Constraint], text: str, source: str, names: frozenset[str]) -> None:
    try:
        c = make(text, source, names)
    except ConstraintError as exc:
        if source == "hand":  # a typo in jax_hints: say so, extraction goes on
            print(f"jax_hints: {text!r}: {exc}", file=sys.stderr)
        return
    if not _boolean(c.tree):
        return  # ``len(x) and ...``: truthiness of a number, not a condition on x
    if all(c.text != d.text for d in cons):
        cons.append(c)


def _boolean(node: Node) -> bool:
    """Every operand of and/or/not is itself a condition (comparison or logic)."""
    if isinstance(node, Logic):
        return all(_boolean(i) for i in node.items)
    if isinstance(node, Unary) and node.op == "not":
        return _boolean(node.operand)
    if isinstance(node, Cond):
        return _boolean(node.then) and _boolean(node.other)
    return isinstance(node, Compare)


def build_spec(api: str, group: str, fn: Any) -> LibSpec:
    """One API's spec (skipped ones carry their reason)."""
    reason = jax_hints.SKIP.get(api, "")
    hint = jax_hints.HINTS.get(api, {})
    fields: list[dict[str, Any]] = []
    if not reason:
        fields, reason = build_params(api, fn, hint)
    if reason or not fields:
        return LibSpec(library="jax", api=api, params=(), group=group,
                       skip=reason or "no parameters to generate")
    names = [f["name"] for f in fields]
    tensors = [f["name"] for f in fields if "tensor" in f["type"]]
    found: list[tuple[str, str]] = []
    is_lax = api.startswith("jax.lax.")
    # Axis ranges follow dlfuzz's convention for parameters named like axes, not a check
    # JAX makes (lax.split takes a negative axis): "hand", so violate mode leaves them.
    found += [(t, "hand") for t in axis_constraints(
        fields, lax=is_lax, axes=tuple(hint.get("axes", ())), skip=tuple(hint.get("own_axes", ())))]
    found += [(t, "doc") for t in docstrings.constraints_from_doc(inspect.getdoc(fn), names)]
    found += [(t, "validation") for t in validation_constraints(fn, names)]
    if is_lax:
        lax_cons, lax_dtypes = lax_rules(fn, names)
        found += [(t, "validation") for t in lax_cons]
        for f in fields:
            if lax_dtypes.get(f["name"]) and ("dtypes" not in f or f.get("dtypes_from")):
                f["dtypes"] = lax_dtypes[f["name"]]
    else:
        found += [(t, "validation") for t in promotion_constraints(fn, tensors)]
    for group_ in hint.get("broadcast", ()):
        found += [(t, "hand") for i, a in enumerate(group_) for b in group_[i + 1:]
                  for t in broadcast_constraints(a, b)]
    found += [(t, "hand") for t in hint.get("constraints", ())]
    params = [to_param(f) for f in fields]
    names_set = frozenset(names)
    cons: list[Constraint] = []
    for text, source in found:
        _add(cons, text, source, names_set)
    extra = {k: hint[k] for k in ("random", "specials", "notes") if k in hint}
    return LibSpec(library="jax", api=api, params=tuple(params), constraints=tuple(cons),
                   group=group, **extra)


def extract(calibration: str | None = None) -> list[LibSpec]:
    """Every public API's spec: static extraction, then dtype calibration.

    ``calibration`` (default: env ``DLFUZZ_JAX_CALIBRATION`` or ``reuse``): ``reuse`` takes
    the calibrated dtypes of ``data/jax.json`` when it was written by the same JAX
    version and calibrates only APIs it does not cover; ``fresh`` calibrates every API
    (about 20 minutes: JAX compiles each new shape); ``off`` leaves free dtypes unset."""
    specs = [build_spec(api, group, fn) for api, group, fn in public_functions()]
    mode = calibration or os.environ.get("DLFUZZ_JAX_CALIBRATION", "reuse")
    if mode not in ("reuse", "fresh", "off"):
        raise UsageError(f"DLFUZZ_JAX_CALIBRATION={mode!r}: use reuse, fresh or off")
    if mode == "off":
        return specs
    from dlfuzz.specgen import jax_calibrate

    cached = jax_calibrate.cached_dtypes(version()) if mode == "reuse" else {}
    return jax_calibrate.calibrate(specs, cached)


def version() -> dict[str, str]:
    return {"jax": _jax().__version__}

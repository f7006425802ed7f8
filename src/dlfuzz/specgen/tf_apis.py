"""TensorFlow API specs (``data/tf.json``): TensorJSFuzz's type information for tf APIs.

Run offline (``python -m dlfuzz.specgen tf [--refine]``); it imports
TensorFlow in this process. For every public function of ``tf``, ``tf.math``, ``tf.nn``,
``tf.linalg``, ``tf.signal``, ``tf.image`` and ``tf.quantization`` (one entry per
function object, under its most specific public path) the parameters come from, in order
of trust:

1. **the op definition** behind the Python function (``tf_ops``: the op is found through
   the wrapper's source; its ``OpDef`` gives tensor and list inputs, attr types, minimums
   and string enums, its registered CPU kernels the dtypes; inputs sharing a type attr
   must have equal dtypes, a ``signature`` constraint);
2. **the docstring** (``docstrings``): "Must be one of the following types", "An optional
   `string` from: ...", "A 4-D tensor", relational sentences;
3. **the Python validation code** of the wrapper (``validation``; plus tf.image's
   ``_CheckAtLeast3DImage`` helpers, which the generic reader does not follow);
4. **the name table and the hand hints** (``tf_hints``, tables in ``hints/tf.json``) for what none
   of these can see (C++ shape checks: matmul's inner dimensions, conv channel counts);
5. **execution** (``tf_calibrate``): dtypes, empty or scalar tensors and NaN/Inf inputs
   that no generated input ran with are excluded; ``--refine`` then adds EXT0's
   message-driven error feedback (``refine``).

Equalities are written with the dependent parameter on the left (``rhs.shape[-2] ==
chol.shape[-1]``): Algorithm 2 repairs an equality by writing its left side.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from dlfuzz.cases import DTYPES
from dlfuzz.engines.api.constraints import (
    Constraint,
    ConstraintError,
    make,
    names_in,
)
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.errors import UsageError
from dlfuzz.specgen import tf_hints
from dlfuzz.specgen.spec_edit import add_constraint
from dlfuzz.specgen.tf_ops import (
    TENSOR_DTYPES,
    has_type_attr,
    kernel_dtypes,
    link,
    op_params,
)

# Most specific first: an API exported as both tf.add and tf.math.add is listed once,
# as tensorflow.math.add.
GROUPS: tuple[tuple[str, str], ...] = (
    ("math", "tensorflow.math"), ("nn", "tensorflow.nn"), ("linalg", "tensorflow.linalg"),
    ("signal", "tensorflow.signal"), ("image", "tensorflow.image"),
    ("quantization", "tensorflow.quantization"), ("tf", "tensorflow"))
_DROP_PARAMS = frozenset({"name"})


def _tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


# ---- enumeration ----------------------------------------------------------------------
def public_functions() -> Iterator[tuple[str, str, Callable[..., Any]]]:
    """(api path, group, function) once per function object, most specific path first."""
    tf = _tf()
    seen: set[int] = set()
    for group, module_name in GROUPS:
        module = tf if module_name == "tensorflow" else getattr(tf, module_name.split(".")[1])
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            fn = getattr(module, attr)
            if inspect.isclass(fn) or inspect.ismodule(fn) or not callable(fn):
                continue
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            yield f"{module_name}.{attr}", group, fn


# ---- parameters -----------------------------------------------------------------------
_FIELDS = frozenset({"structures", "optional", "default", "passing", "rank", "dtypes",
                     "domain", "range", "length", "count", "values", "doc"})


def _json_default(value: Any) -> tuple[bool, Any]:
    """(usable, value) for a signature default: JSON literals, tuples as lists, tf dtypes."""
    if value is None or isinstance(value, bool | int | float | str):
        return True, value
    if isinstance(value, tuple | list) and all(isinstance(v, int | float) for v in value):
        return True, list(value)
    name = getattr(value, "name", None)
    if type(value).__name__ == "DType" and name in DTYPES:
        return True, name
    return False, None


def _doc_hints(fn: Callable[..., Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Param -> fields its Google-style ``Args:`` entry states, and the raw entries."""
    from dlfuzz.specgen import docstrings

    docs = docstrings.param_docs(inspect.getdoc(fn) or "")
    out: dict[str, dict[str, Any]] = {}
    for name, text in docs.items():
        try:
            found = docstrings.hints(text)
        except Exception:  # noqa: BLE001 - one odd docstring must not stop extraction
            continue
        out[name] = {k: (tuple(v) if isinstance(v, list) else v)
                     for k, v in found.items() if k in _FIELDS}
    return out, docs


def _clean(fields: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in fields.items() if k in _FIELDS}
    for key in ("structures", "dtypes", "values"):
        if key in out and isinstance(out[key], list):
            out[key] = tuple(out[key])
    for key in ("rank", "range", "length", "count", "domain"):
        if key in out and isinstance(out[key], list):
            out[key] = tuple(out[key])
    if "dtypes" in out:
        out["dtypes"] = tuple(d for d in out["dtypes"] if d in TENSOR_DTYPES)
        if not out["dtypes"]:
            del out["dtypes"]
    return out


def build_params(api: str, fn: Callable[..., Any], hint: dict[str, Any]
                 ) -> tuple[list[LibParam], list[Constraint], list[str]]:
    """The parameters of one API, constraints implied by the op, and notes."""
    sig = inspect.signature(fn)
    names = [p.name for p in sig.parameters.values()
             if p.kind is not p.VAR_KEYWORD and p.name not in _DROP_PARAMS]
    link_ = link(fn, names)
    from_op, sig_cons = op_params(link_) if link_ is not None else ({}, [])
    from_doc, docs = _doc_hints(fn)
    overrides = hint.get("params", {})
    notes = [f"op {link_.op}"] if link_ is not None and link_.mapping else []
    if link_ is not None and not link_.mapping:
        notes.append(f"calls {link_.op}")
    params: list[LibParam] = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD or p.name in _DROP_PARAMS or p.name in hint.get(
                "drop", ()):
            continue
        fields: dict[str, Any] = {}
        fields.update(_clean(from_doc.get(p.name, {})))
        op_fields = _clean(from_op.get(p.name, {}))
        if "dtypes" in fields and "dtypes" in op_fields:  # doc and kernels: both must hold
            both = tuple(d for d in op_fields["dtypes"] if d in fields["dtypes"])
            op_fields["dtypes"] = both or op_fields["dtypes"]
        fields.update(op_fields)
        named = tf_hints.NAMES.get(p.name)
        if named is not None and (named.get("force") or "structures" not in fields):
            if named.get("omit") and p.name not in overrides:
                if p.default is p.empty:
                    raise _NoType(p.name)
                continue
            fields.update(_clean(named))
        fields.update(_clean(overrides.get(p.name, {})))
        if "structures" not in fields:
            if p.default is p.empty:
                raise _NoType(p.name)
            notes.append(f"{p.name}: no type information, not passed")
            continue
        if p.kind is p.VAR_POSITIONAL:
            fields["passing"] = "variadic"
            fields["structures"] = ("tensors",)
        elif p.kind is p.KEYWORD_ONLY:
            fields["passing"] = "keyword"
        if p.default is p.empty:  # the signature decides, not prose ("optional list")
            fields["optional"] = False
            fields.pop("default", None)
        elif "optional" not in overrides.get(p.name, {}):
            usable, value = _json_default(p.default)
            fields["optional"] = True
            if usable:  # the signature's default is what the call really gets
                fields["default"] = value
            if value is None and usable and "none" not in fields["structures"]:
                fields["structures"] = (*fields["structures"], "none")
        if not {"tensor", "tensors"} & set(fields["structures"]):
            fields.pop("rank", None)
            fields.pop("domain", None)
            fields.pop("count", None)
            if "dtype" not in fields["structures"]:
                fields.pop("dtypes", None)
        if "doc" not in fields and p.name in docs:
            fields["doc"] = " ".join(docs[p.name].split())[:200]
        params.append(LibParam(name=p.name, **fields))
    cons: list[Constraint] = []
    for text in sig_cons:
        add_constraint(cons, text, "signature", params)
    return params, cons, notes


class _NoType(Exception):  # noqa: N818 - a reason to skip, carried up
    """A required parameter nothing tells the type of."""


def _templated(text: str, params: list[LibParam]) -> str:
    first = next((p.name for p in params if "tensor" in p.structures), "")
    return text.replace("{t}", first)


# ---- constraints ---------------------------------------------------------------------
def _none_guarded(text: str, params: list[LibParam]) -> str:
    """``axis >= -x.ndims`` -> ``axis is None or (axis >= -x.ndims)`` when ``axis`` may be
    None: prose states the rule for given values ("If None (the default), reduces all
    dimensions" sits in another sentence), and an unguarded rule would forbid None."""
    try:
        tree = make(text).tree
    except ConstraintError:
        return text
    if "is None" in text or "is not None" in text:
        return text
    nullable = [p.name for p in params if "none" in p.structures and p.name in names_in(tree)]
    for name in nullable:
        text = f"{name} is None or ({text})"
    return text


def _extracted(fn: Callable[..., Any], params: list[LibParam]) -> list[tuple[str, str]]:
    """(text, source) from the docstring and the Python validation code (EXT0's modules)."""
    names = [p.name for p in params]
    out: list[tuple[str, str]] = []
    try:
        from dlfuzz.specgen import docstrings
        from_doc = getattr(docstrings, "constraints_from_doc", None)
        if from_doc is not None:
            out.extend((t, "doc") for t in from_doc(inspect.getdoc(fn) or "", names))
    except Exception:  # noqa: BLE001,S110 - an odd docstring: no doc constraints
        pass
    if _checks_image(fn) and params and params[0].tensor_like:
        out.extend((f"{params[0].name}.shape[{i}] > 0", "validation") for i in (-1, -2, -3))
    try:
        from dlfuzz.specgen import validation

        out.extend((t, "validation") for t in validation.constraints_from_source(
            inspect.unwrap(fn), names))
    except Exception:  # noqa: BLE001,S110 - no source or EXT0's module missing
        pass
    return out


_IMAGE_CHECK = re.compile(r"\b_(?:Check|Assert)(?:AtLeast)?3DImage\(")


def _checks_image(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` (or a helper of its module that it calls) runs tf.image's
    ``_CheckAtLeast3DImage``-style checks, which reject an image whose inner three
    dimensions are not all positive. The generic validation reader sees only ``fn``'s own
    body, not helpers."""
    fn = inspect.unwrap(fn)
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    if _IMAGE_CHECK.search(source):
        return True
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    for name in set(re.findall(r"\b([A-Za-z_]\w*)\(", source)):
        helper = getattr(module, name, None)
        try:
            if callable(helper) and _IMAGE_CHECK.search(inspect.getsource(helper)):
                return True
        except (OSError, TypeError):
            continue
    return False


def build_spec(api: str, group: str, fn: Callable[..., Any]) -> LibSpec | None:
    """The spec of one API; None when the API is not a tensor computation at all."""
    short = api.rsplit(".", 1)[1]
    if short in tf_hints.EXCLUDE or api in tf_hints.EXCLUDE:
        return None
    key = api.removeprefix("tensorflow.")
    hint = HINTS.get(key, {})
    skip = hint.get("skip", tf_hints.SKIP.get(short, ""))
    try:
        params, cons, notes = build_params(api, fn, hint)
    except _NoType as exc:
        return LibSpec("tf", api, (), group=group, skip=skip or
                       f"no type information for required parameter {exc.args[0]!r}")
    except (TypeError, ValueError) as exc:
        return LibSpec("tf", api, (), group=group, skip=skip or f"no signature ({exc})")
    if not skip and link_op(notes) and not any(kernel_dtypes(link_op(notes)).values()) \
            and has_type_attr(link_op(notes)):
        skip = f"op {link_op(notes)} has no CPU kernel"
    if not skip:
        for p in params:  # name-table constraints ({p}: this parameter, {t}: first tensor)
            for text in tf_hints.NAMES.get(p.name, {}).get("cons", ()):
                if p.name not in hint.get("params", {}):
                    add_constraint(cons, _templated(text.replace("{p}", p.name), params),
                                   "hand", params)
        for text, source in _extracted(fn, params):
            add_constraint(cons, _none_guarded(text, params), source, params)
        for text in hint.get("constraints", ()):
            add_constraint(cons, _templated(text, params), "hand", params)
        for text in _op_rules(notes, params):
            add_constraint(cons, text, "hand", params)
        if not any(p.tensor_like for p in params) and not hint.get("params"):
            skip = "no tensor parameter"
    drop = set(hint.get("drop_constraints", ()))
    cons = [c for c in cons if c.text not in drop]
    return LibSpec("tf", api, tuple(params), tuple(cons), group=group,
                   random=bool(hint.get("random", tf_hints.is_random(api))),
                   specials=hint.get("specials", True), notes="; ".join(notes),
                   skip=skip)


HINTS: dict[str, dict[str, Any]] = tf_hints.HINTS


def link_op(notes: list[str], calls: bool = True) -> str:
    """The linked op named in the notes ("op X"; "calls X" too unless ``calls`` is off)."""
    for n in notes:
        if n.startswith("op ") or (calls and n.startswith("calls ")):
            return n.split(" ", 1)[1]
    return ""


def _op_rules(notes: list[str], params: list[LibParam]) -> list[str]:
    """Constraints every API over a broadcasting binary op shares (``tf_hints``' op sets)."""
    op = link_op(notes, calls=False)
    tensors = [p.name for p in params if p.structures == ("tensor",)]
    out: list[str] = []
    if op in tf_hints.BROADCAST_OPS and len(tensors) >= 2:
        out.extend(tf_hints.broadcast(tensors[0], tensors[1]))
    if op in tf_hints.NONZERO_DIVISOR and len(tensors) >= 2:
        out.append(f"{tensors[1]}.min >= 1")
    return out


def extract(calibration: str | None = None) -> list[LibSpec]:
    """Specs for every public function of the seven modules (infrastructure left out):
    static extraction, then calibration by execution (``tf_calibrate``).

    ``calibration`` (default: env ``DLFUZZ_TF_CALIBRATION`` or ``reuse``): ``reuse`` takes
    what calibration and refinement learned (narrowed dtypes, ``error`` constraints,
    ``specials`` off) from ``data/tf.json`` when the same TensorFlow version wrote it;
    ``fresh`` runs ``tf_calibrate.calibrate`` on every API (about 8 minutes on 2 cores); ``off`` is the
    static extraction only."""
    specs = []
    for api, group, fn in public_functions():
        spec = build_spec(api, group, fn)
        if spec is not None:
            specs.append(spec)
    mode = calibration or os.environ.get("DLFUZZ_TF_CALIBRATION", "reuse")
    if mode not in ("reuse", "fresh", "off"):
        raise UsageError(f"DLFUZZ_TF_CALIBRATION={mode!r}: use reuse, fresh or off")
    if mode == "off":
        return specs
    from dlfuzz.specgen import tf_calibrate

    if mode == "fresh":
        return tf_calibrate.calibrate(specs)
    cache = tf_calibrate.cached(version())
    return [tf_calibrate.reuse(s, cache[s.api]) if s.api in cache else s for s in specs]


def version() -> dict[str, str]:
    return {"tensorflow": _tf().__version__}

"""Extract per-API specs (format 2) for PyTorch: torch, nn.functional, linalg, special, fft.

TensorJSFuzz reads type information from a function signature's AST; PyTorch's richest
signatures are its TorchScript operator schemas (``aten::conv2d(Tensor input, Tensor
weight, Tensor? bias=None, SymInt[2] stride=[1, 1], ...)``), which every builtin and most
``nn.functional`` wrappers sit on. So, per API, in this order:

1. **names**: the Python signature (``inspect`` for Python functions, the signature lines
   at the top of a builtin's docstring otherwise): which parameters exist, their order,
   keyword-only markers, defaults;
2. **types**: each name's declared schema type over all non-``out`` overloads whose first
   argument is a tensor (``Tensor other`` and ``Scalar other`` overloads give
   ``other: tensor | int | float``), else the Python annotation;
3. **doc**: ``specgen.docstrings`` (dtypes, ranks, enum values the text states) and
   its constraints, when that module is present;
4. **validation code**: ``specgen.validation`` over a Python function's source;
5. **hand hints** (``torch_hints``): parameter-name conventions (``dim`` indexes the input)
   and what only the C++ kernels check (conv channel relations), merged last.

Error feedback (``specgen.refine``) and dtype probing run on the result separately
(``refine_specs``), because they execute generated inputs in sandboxed workers.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from dlfuzz.engines.api.constraints import (
    Compare,
    Const,
    Constraint,
    ConstraintError,
    Index,
    Prop,
    Var,
    make,
    parse,
    walk,
)
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.libraries import ResolveError, resolve
from dlfuzz.specgen import torch_hints as hints
from dlfuzz.specgen.torch_signatures import (
    NO_DEFAULT,
    PyParam,
    SArg,
    Typed,
    aten_names,
    doc_shape,
    doc_signatures,
    python_params,
    schema_params,
    schema_types,
    shape_facts,
    structures_of,
    unwrap,
)

NAMESPACES = ("torch.nn.functional", "torch.linalg", "torch.special", "torch.fft", "torch")
REFS = {"torch": "torch._refs", "torch.special": "torch._refs.special",
        "torch.linalg": "torch._refs.linalg", "torch.fft": "torch._refs.fft",
        "torch.nn.functional": "torch._refs.nn.functional"}


# ---- enumeration -----------------------------------------------------------------------
def candidates() -> Iterator[tuple[str, Callable[..., Any]]]:
    """(dotted API path, function) for every public API the namespaces offer, minus
    in-place variants, private names and what ``torch_hints.EXCLUDE`` says (I/O,
    distributed, autograd, sparse/quantized-only internals); one path per function."""
    import importlib

    import torch

    seen: set[int] = set()
    overridable = torch.overrides.get_overridable_functions()
    for module_name in NAMESPACES:
        module = importlib.import_module(module_name)
        if module_name == "torch":
            pool = list(overridable.get(torch, [])) + list(
                overridable.get(torch.functional, []))
            names = sorted({f.__name__ for f in pool if hasattr(torch, f.__name__)})
        else:
            names = sorted(dir(module))
        for name in names:
            fn = getattr(module, name)
            api = f"{module_name}.{name}"
            if (name.startswith("_") or name.endswith("_") or isinstance(fn, type)
                    or not callable(fn) or isinstance(fn, types.ModuleType)
                    or hints.excluded(api) or id(fn) in seen):
                continue
            if module_name != "torch" and not _defined_here(fn, module_name):
                continue
            seen.add(id(fn))
            yield api, fn


def _defined_here(fn: Any, module_name: str) -> bool:
    """Skip helpers a namespace merely imports (``Optional``, ``handle_torch_function``)."""
    owner = getattr(fn, "__module__", None) or ""
    return owner.startswith(("torch._C", module_name, "torch.nn.functional",
                             "torch._jit_internal")) or owner == "" or owner == "torch"


# ---- spec assembly ---------------------------------------------------------------------
def _json_default(value: Any) -> Any:
    if value is NO_DEFAULT:
        return None
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, tuple | list) and all(isinstance(v, int | float) for v in value):
        return list(value)
    return None


@dataclass
class Draft:
    """A spec under construction: what each source contributed, for the report."""

    api: str
    params: list[LibParam]
    constraints: list[Constraint]
    skip: str = ""
    random: bool = False
    notes: list[str] | None = None


def draft(api: str, fn: Callable[..., Any]) -> Draft:
    """Type information for one API from schemas, signature and annotations."""
    name = api.rpartition(".")[2]
    fn = unwrap(fn)
    builtin = not inspect.isfunction(fn)
    by_name: dict[str, list[SArg]] = {}
    py: list[PyParam] | None = None
    if builtin:  # the schema *is* the Python binding's signature (self -> input)
        found = schema_params(getattr(fn, "__name__", name), hints.DROP_PARAMS)
        if found is not None:
            py = [PyParam(a.name, "keyword" if a.kwarg_only else "either", a.default)
                  for a, _ in found]
            by_name = {a.name: same for a, same in found}
        else:
            sigs = doc_signatures(fn, name)
            py = max(sigs, key=len) if sigs else None
    else:
        py = python_params(fn, name)
        by_name = schema_types(aten_names(api, fn), first_only=True)
    if py is None:
        return Draft(api, [], [], skip="no signature found (schema, docstring or inspect)")
    params: list[LibParam] = []
    notes: list[str] = []
    skip = ""
    random = any(a.decl.startswith("Generator") for args in by_name.values() for a in args)
    for p in py:
        if p.name in hints.DROP_PARAMS and p.default is not NO_DEFAULT:
            random = random or p.name == "generator"
            continue
        typed, _how = structures_of(p.name, p, by_name.get(p.name, []), builtin)
        if p.name == "dtype" and "dtype" not in typed.structures:
            typed = Typed(("dtype", "none"))  # annotated `int | None` in nn.functional
        if (typed.ungenerated or not typed.structures) and p.name in hints.NAME_TYPES:
            structures, length = hints.NAME_TYPES[p.name]
            typed = Typed(structures, length)
        optional = p.default is not NO_DEFAULT
        if typed.ungenerated or not typed.structures:
            if optional:
                notes.append(f"{p.name}: not generated ({typed.ungenerated or 'no type'})")
                continue
            skip = f"required parameter {p.name!r} has type {typed.ungenerated!r}"
            break
        structures = typed.structures
        if p.passing == "variadic":
            structures = ("tensors",)
        if optional and p.default is None and "none" not in structures:
            structures = structures + ("none",)
        kw: dict[str, Any] = {"name": p.name, "structures": structures,
                              "optional": optional, "default": _json_default(p.default),
                              "passing": p.passing}
        if typed.length:
            kw["length"] = typed.length
        params.append(LibParam(**kw))
    return Draft(api, params, [], skip=skip, random=random, notes=notes)


def _constraint(text: str, source: str, params: list[LibParam] | frozenset[str]
                ) -> Constraint | None:
    """A constraint over the parameters, or None when it does not fit them: a name used
    as a truth value must be a bool parameter (``not stride`` means "no list" to a
    kernel mirror); ``len(p)``/``p[i]`` of a parameter that may also be an int or None
    is guarded with ``p.type != 'ints'`` (the kernel saw the canonical list)."""
    by_name = {p: None for p in params} if isinstance(params, frozenset) else {
        p.name: p for p in params}
    names = frozenset(by_name)
    try:
        tree = parse(text, names)
    except ConstraintError:
        return None
    for name in hints.bare_names(tree):
        p = by_name[name]
        if p is not None and not set(p.structures) <= {"bool", "none"}:
            return None
    for n in walk(tree):  # a tensor compared with a string: a mis-mapped argument
        if isinstance(n, Compare) and isinstance(n.left, Var) and isinstance(
                n.right, Const) and isinstance(n.right.value, str):
            p = by_name[n.left.name]
            if p is not None and "str" not in p.structures:
                return None
    listy = {n.name for n in walk(tree) if (isinstance(n, Prop) and n.prop == "len") or (
        isinstance(n, Index) and not n.shape)}
    guards = [f"{x}.type != 'ints'" for x in sorted(listy) if (p := by_name[x]) is not None
              and not p.tensor_like and set(p.structures) - {"ints", "floats"}]
    text = hints.explicit_bools(text)
    if guards:
        text = " or ".join(guards + [f"({text})"])
    try:
        return make(text, source, names)
    except ConstraintError:
        return None


def doc_names(fn: Callable[..., Any], name: str, params: list[str]) -> dict[str, str]:
    """Doc spelling -> Python name where they differ by position (``linalg.cholesky(A)``
    documents ``A``; the binding takes ``input``)."""
    sigs = doc_signatures(fn, name)
    if not sigs:
        return {}
    doc = [p.name for p in max(sigs, key=len)]
    return {d: p for d, p in zip(doc, params, strict=False) if d != p and d not in params}


def _doc_sources(d: Draft, fn: Callable[..., Any]) -> None:
    """Merge what the docstring says into the draft: per-parameter hints and relational
    sentences (EXT0's ``docstrings``), shapes (``(*, n, n)`` makes a square matrix), and
    "broadcast" (the tensor operands broadcast)."""
    from dlfuzz.specgen import docstrings

    target = unwrap(fn)
    doc = inspect.getdoc(target) or ""
    names = [p.name for p in d.params]
    rename = doc_names(target, d.api.rpartition(".")[2], names)
    per_param = {rename.get(k, k): v for k, v in docstrings.param_docs(doc).items()}
    shapes: dict[str, list[str]] = {}
    for i, p in enumerate(d.params):
        text = per_param.get(p.name)
        if not text:
            continue
        d.params[i] = hints.merge_param(p, docstrings.hints(text), keep_structures=True,
                                        doc=text)
        shape = doc_shape(text) if p.structures[0] == "tensor" else None
        if shape:
            shapes[p.name] = shape
    texts = [_renamed(t, rename) for t in docstrings.constraints_from_doc(doc, list(
        rename) + names)]
    scalars = frozenset(p.name for p in d.params if set(p.structures) & {"int"})
    guards = {p.name: f"{p.name} is None or " if "none" in p.structures else
              f"{p.name}.type != 'tensor' or " for p in d.params
              if p.tensor_like and set(p.structures) - {"tensor", "tensors"}}
    ranks, shape_texts = shape_facts(shapes, scalars, guards)
    for i, p in enumerate(d.params):
        if p.name in ranks:
            d.params[i] = replace(p, rank=ranks[p.name])
    tensors = [p for p in d.params if p.tensor_like and "tensors" not in p.structures
               and p.name not in shapes]
    if hints.says_broadcast(doc) and len(tensors) >= 2:
        for p in tensors[1:]:
            shape_texts += hints.broadcast_constraints(tensors[0].name, p.name,
                                                       guards.get(p.name, ""))
    for text in texts + shape_texts:
        c = _constraint(text, "doc", d.params)
        if c is not None and c.text not in {k.text for k in d.constraints}:
            d.constraints.append(c)


def _renamed(text: str, rename: dict[str, str]) -> str:
    """Parameter names replaced in one pass (never an attribute: ``a.shape`` stays)."""
    if not rename:
        return text
    pattern = re.compile(r"(?<![.\w'\"])(" + "|".join(map(re.escape, rename)) + r")\b")
    return pattern.sub(lambda m: rename[m.group(1)], text)


def _validation_source(d: Draft, fn: Callable[..., Any]) -> None:
    """Constraints from a Python function's checks (EXT0's ``validation``)."""
    try:
        from dlfuzz.specgen import validation
    except ImportError:
        return
    target = unwrap(fn)
    if not inspect.isfunction(target):
        return
    names = frozenset(p.name for p in d.params)
    for text in validation.constraints_from_source(target, sorted(names)):
        c = _constraint(text, "validation", d.params)
        if c is not None:
            d.constraints.append(c)


def kernel_functions(api: str, fn: Callable[..., Any]) -> list[tuple[Any, list[str]]]:
    """Python mirrors of the C++ kernels' checks, each with the schema argument names its
    parameters stand for: ATen's meta functions (``meta_mm`` checks ``a.dim() == 2``),
    its Python decompositions, and the ``torch._refs`` reference implementation."""
    import torch
    import torch._meta_registrations  # noqa: F401 - fills meta_table
    from torch._decomp import decomposition_table, meta_table

    found: list[tuple[Any, list[str]]] = []
    for op in aten_names(api, unwrap(fn)):
        packet = getattr(torch.ops.aten, op, None)
        if packet is None or not hasattr(packet, "overloads"):
            continue
        for name in packet.overloads():
            overload = getattr(packet, name)
            kernel = meta_table.get(overload) or decomposition_table.get(overload)
            schema = overload._schema
            if kernel is None or any(a.alias_info is not None and a.alias_info.is_write
                                     for a in schema.arguments):
                continue
            names = ["input" if a.name == "self" else a.name for a in schema.arguments]
            found.append((kernel, names))
    module, _, name = api.rpartition(".")
    try:
        ref = resolve(f"{REFS[module]}:{name}")
    except ResolveError:
        ref = None
    if callable(ref):
        found.append((ref, []))  # positional: the ref's parameters are the API's
    return found


def _kernel_sources(d: Draft, fn: Callable[..., Any]) -> None:
    """Constraints from the kernel mirrors (``validation.constraints_from_source`` over
    each, its parameters renamed to the API's by position), and broadcasting among the
    operands a reference implementation type-promotes together (elementwise)."""
    from dlfuzz.specgen import validation

    names = [p.name for p in d.params]
    known = frozenset(names)
    for kernel, schema_names in kernel_functions(d.api, fn):
        try:
            params = [p for p in inspect.signature(kernel).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        except (TypeError, ValueError):
            continue
        targets = schema_names or names
        rename = {p.name: t for p, t in zip(params, targets, strict=False)}
        if any(t not in known for t in rename.values()):
            rename = {k: v for k, v in rename.items() if v in known}
        texts = validation.constraints_from_source(kernel, [p.name for p in params])
        for text in texts:
            c = _constraint(_renamed(text, rename), "validation", d.params)
            if c is not None and c.text not in {k.text for k in d.constraints}:
                d.constraints.append(c)
        promoted = _promoted(kernel)
        if promoted and not schema_names:
            renamed = [rename.get(n) for n in promoted]
            tensors = [t for t in renamed if t and (p := _param(d, t)) and p.tensor_like]
            for other in tensors[1:]:
                other_param = _param(d, other)  # found: tensors holds parameters only
                guard = "" if other_param is not None and \
                    other_param.structures == ("tensor",) else \
                    f"{other}.type != 'tensor' or "
                for text in hints.broadcast_constraints(tensors[0], other, guard):
                    c = _constraint(text, "validation", known)
                    if c is not None and c.text not in {k.text for k in d.constraints}:
                        d.constraints.append(c)


def _param(d: Draft, name: str) -> LibParam | None:
    return next((p for p in d.params if p.name == name), None)


def _promoted(fn: Any) -> tuple[str, ...]:
    """Arguments an ``elementwise_type_promotion_wrapper`` promotes together."""
    from torch._prims_common.wrappers import elementwise_type_promotion_wrapper

    stack: list[Any] = [fn]
    seen: set[int] = set()
    while stack:
        g = stack.pop()
        if id(g) in seen or len(seen) > 64:
            continue
        seen.add(id(g))
        for cell in getattr(g, "__closure__", None) or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if isinstance(v, elementwise_type_promotion_wrapper):
                return tuple(v.type_promoting_arg_names)
            if callable(v):
                stack.append(v)
        if getattr(g, "__wrapped__", None) is not None:
            stack.append(g.__wrapped__)
    return ()


def build(api: str, fn: Callable[..., Any]) -> LibSpec:
    """One API's spec from every static source (no execution)."""
    d = draft(api, fn)
    if not d.skip:
        _doc_sources(d, fn)
        _validation_source(d, fn)
        _kernel_sources(d, fn)
    spec = LibSpec(library="torch", api=api, params=tuple(d.params),
                   constraints=tuple(d.constraints), group=group_of(api),
                   random=d.random or hints.is_random(api), skip=d.skip,
                   notes="; ".join(d.notes or []))
    return hints.apply(spec, inspect.getdoc(unwrap(fn)) or "")


def group_of(api: str) -> str:
    module = api.rpartition(".")[0]
    return {"torch.nn.functional": "nn", "torch.linalg": "linalg",
            "torch.special": "special", "torch.fft": "fft"}.get(module, "torch")


def extract(calibrate: bool = True) -> list[LibSpec]:
    """Specs for every candidate API (skipped ones included, with the reason); with
    ``calibrate``, dtypes measured in sandboxed torch workers (``torch_calibrate``)."""
    import warnings

    specs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for api, fn in candidates():
            specs.append(build(api, fn))
    if calibrate:
        from dlfuzz.specgen.torch_calibrate import calibrate as run

        specs = run(specs)
    return specs

"""Hand-written knowledge for the torch extractor (``torch_apis``): what extraction misses.

Kept small on purpose; everything else comes from schemas, signatures, docstrings, the
Python validation code and error feedback. Four kinds of entries:

* ``EXCLUDE``: APIs not listed at all (internal kernels, quantized/sparse-only ops, RNN
  cells taking flat weight lists, view-copy duplicates of listed view ops, top-level
  duplicates of ``nn.functional`` functions) and ``SKIP``: listed but not fuzzed.
* ``DROP_PARAMS``: parameters never generated (output buffers, devices, deprecated
  ``size_average``/``reduce``, ``inplace``: in-place variants are out of scope).
* name conventions: ``NAME_TYPES`` (structures of a parameter no signature types),
  ``NAME_FIELDS`` (generation windows for common scalars: ``kernel_size`` 1-3) and
  ``DIM_NAMES`` (a ``dim`` indexes the first tensor: ``-max(x.ndims, 1) <= dim <
  max(x.ndims, 1)``, the exact rule of ``maybe_wrap_dim`` in ATen).
* ``API``: per-API fields and constraints (``"from": "hand"``) for checks that live in C++
  kernels (conv channel/group relations, matmul inner dimensions, index bounds).

The tables are data, in ``hints/torch.json`` (read and checked by ``hintfiles``); this
module holds the logic that applies them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from dlfuzz.engines.api.constraints import (
    Compare,
    Cond,
    Const,
    ConstraintError,
    Logic,
    Node,
    Unary,
    Var,
    make,
    parse,
    unparse,
    walk,
)
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.specgen import hintfiles

# ---- what is listed (tables: hints/torch.json) -------------------------------------------
_TABLES = hintfiles.load("torch")
_EXCLUDE_PREFIXES: tuple[str, ...] = _TABLES["exclude_prefixes"]
_EXCLUDE: frozenset[str] = _TABLES["exclude"]
# Top-level spellings of functions listed under torch.nn.functional (raw kernel arguments
# such as cudnn_enabled): the nn.functional path is the public one.
_NN_DUPLICATES: frozenset[str] = _TABLES["nn_duplicates"]
API: dict[str, dict[str, Any]] = _TABLES["apis"]
SKIP: dict[str, str] = _TABLES["skip"]


def excluded(api: str) -> bool:
    module, _, name = api.rpartition(".")
    if api in _EXCLUDE or api.startswith(_EXCLUDE_PREFIXES):
        return True
    if module == "torch" and (name in _NN_DUPLICATES or name.endswith("_copy")):
        return True
    return False


_RANDOM = re.compile(r"dropout|rrelu|bernoulli|multinomial|poisson$|^rand|normal$|binomial|"
                     r"gumbel|fractional_max_pool|_lowrank$")


def is_random(api: str) -> bool:
    """Output depends on the RNG state (also detected from a ``Generator?`` argument)."""
    return bool(_RANDOM.search(api.rpartition(".")[2]))


_DEPRECATED = re.compile(r"(?:This function|`(?:torch\.)?(?:[\w.]+\.)?(\w+)`|\b(\w+)) is "
                         r"deprecated (?:in favor of|and will be removed)")


def deprecated(api: str, doc: str) -> str:
    """The doc's own words when it says the function itself is deprecated (and names a
    replacement): such aliases are listed but not fuzzed."""
    name = api.rpartition(".")[2]
    for m in _DEPRECATED.finditer(" ".join(doc.split())):
        if m.group(0).startswith("This function") or name in (m.group(1), m.group(2)):
            return "deprecated (docstring): " + m.group(0)
    return ""


# ---- parameters ---------------------------------------------------------------------------
DROP_PARAMS: frozenset[str] = _TABLES["drop_params"]
NAME_TYPES: dict[str, tuple[tuple[str, ...], tuple[int, int] | None]] = _TABLES["name_types"]
# Generation windows for scalars by name (TensorJSFuzz's "range" type information where
# the signature gives none): small sizes keep outputs small, positive where zero is an
# error in every API using the name.
NAME_FIELDS: dict[str, dict[str, Any]] = _TABLES["name_fields"]
DIM_NAMES: frozenset[str] = _TABLES["dim_names"]
DIMS_NAMES: frozenset[str] = _TABLES["dims_names"]
INDEX_NAMES: frozenset[str] = _TABLES["index_names"]
UNKNOWN_INT = (0, 3)  # an int nothing describes: small and non-negative
UNKNOWN_NUMBER = (-3, 3)  # a Scalar (int or float) nothing describes


def merge_param(p: LibParam, fields: dict[str, Any], keep_structures: bool,
                doc: str = "") -> LibParam:
    """``fields`` (LibParam attribute -> value) over ``p``; with ``keep_structures`` the
    signature's structures stay authoritative (a doc may only narrow them)."""
    kw: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "structures":
            if keep_structures:
                narrowed = tuple(s for s in p.structures if s in value)
                if narrowed and "none" in p.structures and "none" not in narrowed:
                    narrowed += ("none",)
                if narrowed:
                    kw["structures"] = narrowed
            else:
                kw["structures"] = tuple(value)
        elif key in ("optional", "default") and keep_structures:
            continue  # the signature knows these exactly
        elif key == "values" and keep_structures and not set(p.structures) & {"str"}:
            continue
        elif key in ("rank", "count", "domain", "dtypes") and not p.tensor_like and not (
                key == "dtypes" and "dtype" in p.structures):
            continue  # a doc's "0-dimensional" or dtype list says nothing about a scalar
        elif key in ("range", "length") and keep_structures and p.tensor_like and not set(
                p.structures) & {"int", "float", "ints", "floats"}:
            continue
        elif key in ("rank", "range", "length", "count", "domain"):
            kw[key] = tuple(value) if value is not None else None
        elif key in ("dtypes", "values"):
            kw[key] = tuple(value)
        elif key == "fill":
            kw[key] = value
    if doc and not p.doc:
        kw["doc"] = " ".join(doc.split())[:200]
    return replace(p, **kw) if kw else p


def _name_defaults(p: LibParam) -> LibParam:
    """Windows by name convention for what no other source bounded."""
    fields = dict(NAME_FIELDS.get(p.name, {}))
    if "values" in fields and not set(p.structures) & {"str", "int"}:
        fields.pop("values")
    fields = {k: v for k, v in fields.items() if getattr(p, k) in (None, ())}
    if p.name in INDEX_NAMES and p.tensor_like and not p.dtypes:
        fields["dtypes"] = ("int64",)
    if (p.name in DIM_NAMES or p.name in DIMS_NAMES) and p.range is None:
        fields["range"] = (-4, 3)
        if "ints" in p.structures and p.length == (1, 4):
            fields["length"] = (1, 2)
    if p.range is None and "range" not in fields and set(p.structures) & {"int", "ints"}:
        fields["range"] = UNKNOWN_NUMBER if "float" in p.structures else UNKNOWN_INT
    if "dtype" in p.structures and not p.dtypes:
        fields["dtypes"] = ("float32", "float64")
    return merge_param(p, fields, keep_structures=False) if fields else p


def dim_constraints(params: tuple[LibParam, ...]) -> list[str]:
    """ATen's ``maybe_wrap_dim``: a dim of an n-d tensor lies in [-max(n,1), max(n,1));
    a list of dims holds distinct dims (``dim_list_to_bitset``)."""
    tensors = [p.name for p in params if p.tensor_like]
    if not tensors:
        return []
    t = tensors[0]
    lim = f"max({t}.ndims, 1)"
    out = []
    for p in params:
        n = p.name
        if n not in DIM_NAMES and n not in DIMS_NAMES:
            continue
        guards = [f"{n} is None"] if "none" in p.structures else []
        if "int" in p.structures:
            kind = [f"{n}.type == 'ints'"] if "ints" in p.structures else []
            out.append(" or ".join(guards + kind + [f"-{lim} <= {n} < {lim}"]))
        if "ints" in p.structures:
            kind = [f"{n}.type != 'ints'"] if len(set(p.structures) - {"none"}) > 1 else []
            out.append(" or ".join(guards + kind + [f"len({n}) <= {lim}"]))
            for i in range(p.length[1]):
                distinct = "".join(f" and ({n}[{j}] - {n}[{i}]) % {lim} != 0"
                                   for j in range(i))
                out.append(" or ".join(guards + kind + [
                    f"len({n}) <= {i}", f"(-{lim} <= {n}[{i}] < {lim}{distinct})"]))
    return out


def broadcast_constraints(a: str, b: str, guard: str = "") -> list[str]:
    """Broadcasting of two tensors, one dimension per constraint (from the right)."""
    return [f"{guard}{a}.ndims < {i} or {b}.ndims < {i} or {a}.shape[-{i}] == {b}.shape[-{i}]"
            f" or {a}.shape[-{i}] == 1 or {b}.shape[-{i}] == 1" for i in range(1, 5)]


def says_broadcast(doc: str) -> bool:
    """The doc says the tensor operands broadcast (and not that they do not)."""
    flat = " ".join(doc.split())
    if re.search(r"(?:does|do|will) not broadcast|not broadcastable|no broadcasting", flat,
                 re.I):
        return False
    return bool(re.search(r"broadcast", flat, re.I))


def explicit_bools(text: str) -> str:
    """``not flag`` / a bare ``flag`` as comparisons (``flag == False``): the generator's
    normalization handles comparisons, and a negated bare name loops there."""
    tree = parse(text)
    if not any(_bare(n) for n in walk(tree)) and not isinstance(tree, Var):
        return text
    return unparse(_compare_bools(tree))


def bare_names(tree: Node) -> set[str]:
    """Parameters used as truth values (``not flag``, ``a or flag``)."""
    found = {tree.name} if isinstance(tree, Var) else set()
    for n in walk(tree):
        items = n.items if isinstance(n, Logic) else (
            (n.operand,) if isinstance(n, Unary) and n.op == "not" else
            (n.test,) if isinstance(n, Cond) else ())
        found |= {i.name for i in items if isinstance(i, Var)}
    return found


def _bare(node: Node) -> bool:
    items = node.items if isinstance(node, Logic) else (
        (node.operand,) if isinstance(node, Unary) and node.op == "not" else
        (node.test,) if isinstance(node, Cond) else ())
    return any(isinstance(i, Var) for i in items)


def _compare_bools(node: Node) -> Node:
    if isinstance(node, Var):
        return Compare("==", node, Const(True))
    if isinstance(node, Unary) and node.op == "not":
        if isinstance(node.operand, Var):
            return Compare("==", node.operand, Const(False))
        return Unary("not", _compare_bools(node.operand))
    if isinstance(node, Logic):
        return Logic(node.op, tuple(_compare_bools(i) for i in node.items))
    if isinstance(node, Cond):
        return Cond(_compare_bools(node.test), _compare_bools(node.then),
                    _compare_bools(node.other))
    return node


def _add(constraints: list[Any], text: str, source: str, names: frozenset[str]) -> None:
    if any(c.text == text for c in constraints):
        return
    try:
        constraints.append(make(explicit_bools(text), source, names))
    except ConstraintError as exc:
        raise ValueError(f"torch_hints: bad constraint {text!r}: {exc.reason}") from None


def apply(spec: LibSpec, doc: str = "") -> LibSpec:
    """Name conventions, the doc's broadcasting statement and the API table, merged."""
    if spec.skip:
        return spec
    entry = API.get(spec.api, {})
    skip = SKIP.get(spec.api, "") or deprecated(spec.api, doc)
    params = []
    drop = set(entry.get("drop", ()))
    fields = entry.get("params", {})
    unknown = (drop | set(fields)) - {p.name for p in spec.params}
    if unknown:
        raise ValueError(f"torch_hints: {spec.api} has no parameter(s) {sorted(unknown)}; "
                         f"it has {[p.name for p in spec.params]}")
    for p in spec.params:
        if p.name in drop:
            continue
        if p.name in fields:
            p = merge_param(p, fields[p.name], keep_structures=False)
        p = _name_defaults(p)
        if "str" in p.structures and not p.values:
            rest = tuple(s for s in p.structures if s != "str")
            if not rest and not p.optional:
                skip = skip or f"str parameter {p.name!r} has no known values"
            if not rest:
                continue
            p = replace(p, structures=rest)
        params.append(p)
    names = frozenset(p.name for p in params)
    reject = set(entry.get("reject", ()))
    stale = reject - {c.text for c in spec.constraints}
    if stale:
        raise ValueError(f"torch_hints: {spec.api} rejects constraints it does not have: "
                         f"{sorted(stale)}")
    constraints = [c for c in spec.constraints if c.names <= names and c.text not in reject]
    for text in dim_constraints(tuple(params)) if not entry.get("no_dim_rule") else ():
        _add(constraints, text, "signature", names)
    for text in entry.get("constraints", ()):
        _add(constraints, text, "hand", names)
    return replace(spec, params=tuple(params), constraints=tuple(constraints),
                   skip=skip or spec.skip, random=spec.random or entry.get("random", False),
                   specials=entry.get("specials", spec.specials))

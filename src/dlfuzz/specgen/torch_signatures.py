"""PyTorch signatures as TensorJSFuzz type information: schemas, docstrings, annotations.

The richest typed signature of a PyTorch builtin is its TorchScript operator schema
(``aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1],
...)``); the Python binding accepts exactly those argument names (``self`` spelled
``input``). Python wrappers (most of ``nn.functional``) have ``inspect`` signatures whose
annotations are partly lost (``BroadcastingList2[int]`` evaluates to None), so their
types come from the schemas of the ops their source calls. This module turns each of
these into ``Typed`` structures; ``torch_apis`` assembles specs from them.
"""

from __future__ import annotations

import ast
import collections.abc
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

NO_DEFAULT = inspect.Parameter.empty
PREFIXES = {"torch.linalg": "linalg_", "torch.special": "special_", "torch.fft": "fft_"}


# ---- TorchScript schemas ---------------------------------------------------------------
@dataclass(frozen=True)
class SArg:
    """One schema argument: the Python-visible name and its declared type text."""

    name: str
    decl: str          # e.g. "SymInt[2]", "Tensor?", "int[1]?", "ScalarType?"
    default: Any       # NO_DEFAULT when required
    kwarg_only: bool


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets, parentheses and quotes."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def schema_args(schema: Any) -> tuple[SArg, ...] | None:
    """The arguments of one overload; None for ``out=``/in-place overloads."""
    text = str(schema)
    start = text.index("(")
    depth = 0
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            break
    tokens = [t for t in _split_top(text[start + 1:end]) if t != "*"]
    if any("!" in t for t in tokens) or len(tokens) != len(schema.arguments):
        return None  # writes into an argument (out=, in-place) or takes varargs
    out = []
    for token, arg in zip(tokens, schema.arguments, strict=True):
        decl = re.sub(r"\([^)]*\)", "", token.split("=")[0]).rsplit(" ", 1)[0].strip()
        default = arg.default_value if arg.has_default_value() else NO_DEFAULT
        name = "input" if arg.name == "self" else arg.name
        out.append(SArg(name, decl, default, bool(arg.kwarg_only)))
    return tuple(out)


def overloads(op: str) -> list[tuple[SArg, ...]]:
    """Usable overloads of ``aten::op``: no out= or Dimname variant, some tensor argument;
    when some overload starts with a tensor, only those (``pow(Scalar self, Tensor
    exponent)`` would otherwise let both operands be numbers)."""
    import torch

    found = []
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{op}"):
        if schema.overload_name.endswith("out") or "Dimname" in str(schema):
            continue
        args = schema_args(schema)
        if args and any(a.decl.startswith("Tensor") for a in args):
            found.append(args)
    first_tensor = [a for a in found if a[0].decl.startswith("Tensor")]
    if not found:  # a factory such as fft_fftfreq(int n, float d=1.0, ...)
        found = [a for a in (schema_args(s) for s in torch._C._jit_get_schemas_for_operator(
            f"aten::{op}") if not s.overload_name.endswith("out")) if a]
    return first_tensor or found


def schema_params(op: str, avoid: frozenset[str] = frozenset()
                  ) -> list[tuple[SArg, list[SArg]]] | None:
    """A builtin's Python parameters from its schemas: the overload with the most
    arguments, each argument with its namesakes in overloads whose names it covers
    (``div(input, other, *, rounding_mode)`` takes ``other`` from ``div.Tensor`` and
    ``div.Scalar`` too). Overloads with other names (``max(input, other)`` beside
    ``max(input, dim, keepdim)``) are alternatives the spec does not mix in, and an
    overload that requires an ``avoid`` argument (``mm.dtype``'s ``out_dtype``, a CUDA
    variant) is taken only when there is no other."""
    found = overloads(op)
    if not found:
        return None
    plain = [o for o in found if not any(a.name in avoid and a.default is NO_DEFAULT
                                         for a in o)]
    best = max(plain or found, key=len)
    names = {a.name for a in best}
    compatible = [o for o in found if {a.name for a in o} <= names]
    return [(arg, [a for o in compatible for a in o if a.name == arg.name]) for arg in best]


# ---- declared types -> structures ------------------------------------------------------
@dataclass(frozen=True)
class Typed:
    """What a declared type says: structures, list length, an ungenerated kind."""

    structures: tuple[str, ...]
    length: tuple[int, int] | None = None
    ungenerated: str = ""


_DECL = re.compile(r"(?P<base>\w+)(?P<inner>\?)?(?:\[(?P<n>\d*)\])?(?P<opt>\?)?")


def from_decl(decl: str) -> Typed:
    """``SymInt[2]`` -> int | ints of length 2; ``Scalar?`` -> int | float | none."""
    m = _DECL.fullmatch(decl.replace(" ", ""))
    if m is None:
        return Typed((), ungenerated=decl)
    base, is_list, n = m["base"], m["n"] is not None, m["n"]
    none = ("none",) if m["opt"] or (m["inner"] and not is_list) else ()
    if base in ("int", "SymInt"):
        if not is_list:
            return Typed(("int",) + none)
        if n:
            size = int(n)
            return Typed((("int", "ints") if size <= 4 else ("ints",)) + none,
                         (size, size) if size > 1 else (1, 1))
        return Typed(("ints",) + none)
    if base == "Tensor":
        return Typed((("tensors",) if is_list else ("tensor",)) + none)
    if base == "float":
        return Typed((("floats",) if is_list else ("float",)) + none)
    if base == "Scalar":
        return Typed((("floats",) if is_list else ("int", "float")) + none)
    if base == "bool":
        return Typed(("bool",) + none) if not is_list else Typed((), ungenerated="bool[]")
    if base == "str":
        return Typed(("str",) + none) if not is_list else Typed((), ungenerated="str[]")
    if base == "ScalarType":
        return Typed(("dtype",) + none)
    return Typed(none, ungenerated=base)


def from_annotation(ann: Any) -> Typed | None:
    """A Python annotation as structures; None when it says nothing (missing, ``None``)."""
    import torch

    if ann is NO_DEFAULT or ann is None or isinstance(ann, str):
        return None
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        parts = [from_annotation(a) for a in args]
        usable = [p for p in parts if p is not None and not p.ungenerated]
        if not usable:
            return next((p for p in parts if p is not None), None)
        structures = tuple(dict.fromkeys(s for p in usable for s in p.structures))
        return Typed(structures, next((p.length for p in usable if p.length), None))
    if origin in (list, tuple, collections.abc.Sequence) or ann in (list, tuple):
        inner = args[0] if args else None
        if inner is torch.Tensor:
            return Typed(("tensors",))
        if inner is float:
            return Typed(("floats",))
        if inner is int:
            n = len(args) if origin is tuple and Ellipsis not in args else 0
            return Typed(("ints",), (n, n) if n else None)
        return Typed((), ungenerated=str(ann))
    simple = {torch.Tensor: ("tensor",), int: ("int",), float: ("float",), bool: ("bool",),
              str: ("str",), type(None): ("none",), torch.dtype: ("dtype",)}
    if ann in simple:
        return Typed(simple[ann])
    return Typed((), ungenerated=getattr(ann, "__name__", str(ann)))


# ---- Python-visible parameters ---------------------------------------------------------
@dataclass(frozen=True)
class PyParam:
    name: str
    passing: str
    default: Any
    annotation: Any = NO_DEFAULT


_SIG_LINE = re.compile(r"^\s*(?:torch\.)?(?:[\w.]+\.)?(?P<name>\w+)\((?P<args>.*)\)\s*->",
                       re.M)


def doc_signatures(fn: Callable[..., Any], name: str) -> list[list[PyParam]]:
    """The signature lines of a builtin's docstring (``max(input, dim, keepdim=False, *,
    out=None) -> ...``), each as parameters; several lines mean several overloads."""
    found = []
    for m in _SIG_LINE.finditer(fn.__doc__ or ""):
        if m["name"] != name:
            continue
        try:
            tree = ast.parse(f"def f({m['args']}): pass").body[0]
        except SyntaxError:
            continue
        a = tree.args  # type: ignore[attr-defined]
        params: list[PyParam] = []
        plain = a.posonlyargs + a.args
        defaults = [NO_DEFAULT] * (len(plain) - len(a.defaults)) + list(a.defaults)
        for arg, d in zip(plain, defaults, strict=True):
            params.append(PyParam(arg.arg, "either", _literal(d)))
        if a.vararg is not None:
            params.append(PyParam(a.vararg.arg, "variadic", NO_DEFAULT))
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            params.append(PyParam(arg.arg, "keyword", _literal(d) if d else NO_DEFAULT))
        found.append(params)
    return found


def _literal(node: Any) -> Any:
    if node is NO_DEFAULT:
        return NO_DEFAULT
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None  # a default such as torch.contiguous_format: not generated anyway


def python_params(fn: Callable[..., Any], name: str) -> list[PyParam] | None:
    """Parameters from ``inspect`` (Python functions) or the docstring (builtins)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sigs = doc_signatures(fn, name)
        return max(sigs, key=len) if sigs else None
    out = []
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "positional",
             inspect.Parameter.POSITIONAL_OR_KEYWORD: "either",
             inspect.Parameter.VAR_POSITIONAL: "variadic",
             inspect.Parameter.KEYWORD_ONLY: "keyword"}
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            if len(sig.parameters) == 2:
                return None  # (*args, **kwargs): a dispatcher, not a signature
            continue
        out.append(PyParam(p.name, kinds[p.kind], p.default, p.annotation))
    return out


def aten_names(api: str, fn: Callable[..., Any]) -> list[str]:
    """Operator names whose schemas may describe ``fn``: its own (``linalg_norm``) and,
    for a Python wrapper, the ``torch.*``/``torch._C._nn.*``/``_VF.*`` ops it calls."""
    module, _, name = api.rpartition(".")
    prefix = PREFIXES.get(module, "")
    names = [getattr(fn, "__name__", name) if not inspect.isfunction(fn) else prefix + name]
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return names
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        callee = ""
        if isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) in (
                "torch", "torch._C._nn", "_VF", "torch._C._VariableFunctions",
                "torch._C._linalg", "torch._C._special", "torch._C._fft"):
            callee = node.func.attr
        elif isinstance(node.func, ast.Name):  # a sibling: lp_pool2d calls avg_pool2d
            callee = node.func.id
        if callee and callee not in names:
            names.append(callee)
    return names


def schema_types(ops: list[str], first_only: bool) -> dict[str, list[SArg]]:
    """name -> the schema arguments called so (all overloads; only the first op that
    has the name when ``first_only``)."""
    found: dict[str, list[SArg]] = {}
    for op in ops:
        seen_here: dict[str, list[SArg]] = {}
        for args in overloads(op):
            for arg in args:
                seen_here.setdefault(arg.name, []).append(arg)
        for name, sargs in seen_here.items():
            if name not in found or not first_only:
                found.setdefault(name, []).extend(sargs)
    return found


def unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``boolean_dispatch`` wrappers (max_pool2d): the variant with the full signature."""
    from torch._jit_internal import boolean_dispatched

    while fn in boolean_dispatched:  # unique dispatches twice
        fn = boolean_dispatched[fn]["if_true"]
    return fn



def structures_of(name: str, py: PyParam, sargs: list[SArg], builtin: bool
                ) -> tuple[Typed, str]:
    """A parameter's structures and where they came from ('schema'/'annotation'/...)."""
    ann = from_annotation(py.annotation) if not builtin else None
    decl = [from_decl(a.decl) for a in sargs]
    if ann is not None and not ann.ungenerated and ann.structures:
        if decl and set(ann.structures) <= {"int", "ints", "none"}:
            lengths = [d.length for d in decl if d.length]
            if lengths:  # the schema knows the list length (int[2]) the annotation lost
                return replace(ann, length=lengths[0]), "annotation+schema"
        return ann, "annotation"
    usable = [d for d in decl if not d.ungenerated]
    if usable:
        structures = tuple(dict.fromkeys(s for d in usable for s in d.structures))
        length = next((d.length for d in usable if d.length), None)
        return Typed(structures, length), "schema"
    if decl:
        return decl[0], "schema"
    if ann is not None:
        return ann, "annotation"
    if py.default is not NO_DEFAULT:
        return from_default(py.default), "default"
    return Typed((), ungenerated="untyped"), "none"


def from_default(value: Any) -> Typed:
    if value is None:
        return Typed(("none",))
    for typ, s in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if isinstance(value, typ):
            return Typed((s,))
    if isinstance(value, tuple | list) and value and all(isinstance(v, int) for v in value):
        return Typed(("int", "ints"), (len(value), len(value)))
    return Typed((), ungenerated=type(value).__name__)


# ---- shapes stated in parameter docs ---------------------------------------------------
_SHAPE_GROUP = re.compile(r"\(\s*:math:`([^`]*)`\s*\)|:math:`\s*\(([^`]*)\)\s*`|`\(([^`]*)\)`"
                          r"|\(([^()`]*)\)")
_TOKEN = re.compile(r"^(?:\*|\d+|[A-Za-z]\w*|[A-Za-z]\w*/[A-Za-z]\w*)$")
RANK_CAP = 4


def _clean_latex(text: str) -> str:
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", text.replace("\\_", "_"))
    text = re.sub(r"\\(?:text|mathrm|mathit)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", text)
    text = text.replace("\\times", ",").replace("\\ldots", "*").replace("...", "*")
    return text.replace("{", "").replace("}", "").replace("\\", "")


def doc_shape(text: str) -> list[str] | None:
    """The tokens of the richest shape a parameter's doc states after "shape"
    (``(*, n, n)``, ``(minibatch, in_channels/groups, iH, iW)``); None if none parses."""
    m = re.search(r"\b(?:shape|size)\b", text)
    if m is None:
        return None
    best: list[str] | None = None
    for g in _SHAPE_GROUP.finditer(text[m.end():m.end() + 400]):
        raw = _clean_latex(next(x for x in g.groups() if x is not None))
        tokens = [t.replace(" ", "") for t in raw.split(",")]
        tokens = [t for t in tokens if t]
        if not tokens or not all(_TOKEN.match(t) for t in tokens) or tokens.count("*") > 1:
            continue
        if best is None or len(tokens) > len(best):
            best = tokens
    return best


def shape_facts(shapes: dict[str, list[str]], scalars: frozenset[str],
                guards: dict[str, str]) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Ranks and constraints from the shapes of several parameters: a symbol named twice
    is one size, ``a/groups`` is a size divided by the parameter ``groups``, a number is a
    fixed size, ``*`` is zero or more batch dimensions (sizes after it count from the
    right). ``guards``: text that makes a constraint vacuous (``bias is None or``)."""
    ranks: dict[str, tuple[int, int]] = {}
    seen: dict[str, list[tuple[str, int, str]]] = {}
    fixed: list[str] = []
    for name, tokens in shapes.items():
        star = tokens.index("*") if "*" in tokens else -1
        n = len(tokens) - (star >= 0)
        ranks[name] = (n, n) if star < 0 else (n, max(n, min(n + 2, RANK_CAP)))
        for j, tok in enumerate(tokens):
            if tok == "*":
                continue
            index = j if star < 0 or j < star else j - len(tokens)
            sym, _, div = tok.partition("/")
            if sym.isdigit():
                fixed.append(f"{guards.get(name, '')}{name}.shape[{index}] == {sym}")
            elif not div or div in scalars:
                seen.setdefault(sym, []).append((name, index, div))
    out = list(fixed)
    for sym, where in seen.items():
        plain = [w for w in where if not w[2]]
        if sym in scalars:
            plain = [("", 0, "")]
        if not plain:
            continue
        ref = plain[0]
        ref_text = sym if not ref[0] else f"{ref[0]}.shape[{ref[1]}]"
        for name, index, div in where:
            if (name, index, div) == ref:
                continue
            rhs = f"{name}.shape[{index}]" + (f" * {div}" if div else "")
            guard = guards.get(name, "") or (guards.get(ref[0], "") if ref[0] else "")
            if guards.get(name) and ref[0] and guards.get(ref[0]) and ref[0] != name:
                guard = f"{ref[0]} is None or {guard}"
            out.append(f"{guard}{ref_text} == {rhs}")
    return ranks, out

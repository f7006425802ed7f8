"""Cross-library name matching: "same-name" counterpart candidates with argument adapters.

For each API of a spec file, candidates in each other library are the functions of that
library's public namespaces whose leaf name is the API's leaf name or a known synonym of
it (``clamp`` ~ ``clip`` ~ ``clip_by_value``, ``expit`` ~ ``sigmoid``). Aliases (one
function object under two paths) count once. The argument adapter is derived from the two
signatures: parameters match by name, then by a synonym table (``dim`` ~ ``axis``,
``keepdim`` ~ ``keepdims``, ``input`` ~ ``x``/``a``/``input_tensor``), then remaining
tensors by position. An API parameter the candidate lacks is kept in
``requires_default`` (the counterpart only applies while the draw leaves it at the API's
default), ``out``/``name`` are dropped, and a matched parameter whose API default is a
literal is also passed as that default (``extra``), since the two libraries' defaults
may differ (``torch.std``'s correction 1 vs ``jax.numpy.std``'s ddof 0).

Candidates are only candidates: ``validate`` accepts or rejects each on real inputs.
Names and signatures come from the libraries themselves (imported in this process, which
is why this runs offline, from ``python -m dlfuzz.specgen.counterparts``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dlfuzz.engines.api.counterparts.model import Counterpart
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.libraries import get

# library -> its public function namespaces, in search order (from the library records)
NAMESPACES: dict[str, tuple[str, ...]] = {n: get(n).namespaces for n in ("torch", "tf", "jax")}
MAX_PER_LIBRARY = 3  # candidates kept per API and other library

# Leaf names that mean the same computation across libraries (beyond equal names).
_NAME_GROUPS = [
    "clamp clip clip_by_value", "expit sigmoid", "abs absolute", "neg negative",
    "mul multiply", "div divide true_divide truediv", "sub subtract", "pow power",
    "atan2 arctan2", "asin arcsin", "acos arccos", "atan arctan", "asinh arcsinh",
    "acosh arccosh", "atanh arctanh", "sum reduce_sum", "mean reduce_mean",
    "prod reduce_prod", "amax max reduce_max", "amin min reduce_min", "all reduce_all",
    "any reduce_any", "logsumexp reduce_logsumexp", "std reduce_std",
    "var reduce_variance", "eq equal", "ne not_equal", "lt less", "le less_equal",
    "gt greater", "ge greater_equal", "floor_divide floordiv", "remainder floormod mod",
    "fmod truncatemod", "lgamma gammaln", "i0 bessel_i0", "i0e bessel_i0e", "i1 bessel_i1",
    "i1e bessel_i1e", "gammainc igamma", "gammaincc igammac", "softsign soft_sign",
    "hardtanh hard_tanh", "hardswish hard_swish", "hardsigmoid hard_sigmoid",
    "logsigmoid log_sigmoid", "silu swish", "isnan is_nan", "isinf is_inf",
    "isfinite is_finite", "concat concatenate cat", "expand_dims unsqueeze",
    "permute transpose", "swapaxes swapdims", "moveaxis movedim", "ravel flatten",
    "digamma psi", "deg2rad radians", "rad2deg degrees", "diagonal diag_part",
    "logcumsumexp cumulative_logsumexp cumlogsumexp", "trunc fix", "bitwise_not invert",
    "bitwise_left_shift left_shift", "bitwise_right_shift right_shift",
    "matrix_exp expm", "trapezoid trapz", "conj conjugate", "angle", "erfinv",
    "reciprocal", "rsqrt", "log_softmax", "softmax", "count_nonzero",
    "argmax", "argmin", "square", "sign", "matmul", "det", "inv", "norm", "outer",
    "searchsorted", "top_k topk",
]
SYNONYMS: dict[str, frozenset[str]] = {}
for _group in _NAME_GROUPS:
    _names = frozenset(_group.split())
    for _n in _names:
        SYNONYMS[_n] = SYNONYMS.get(_n, frozenset()) | _names

# Parameter names that mean the same argument.
_PARAM_GROUPS = [
    "input x a arr array features logits tensor input_tensor operand self data x1 image "
    "images t value A",
    "other y b x2 exponent",
    "dim axis dims axes", "keepdim keepdims", "min clip_value_min a_min",
    "max clip_value_max a_max", "correction ddof", "decimals ndigits", "num_classes depth",
    "diagonal k", "shifts shift", "eps epsilon", "size shape", "fill_value value",
    "p ord", "equation subscripts", "dim1 axis1", "dim2 axis2", "dtype", "n",
    "norm", "offset", "source", "destination", "negative_slope alpha",
]
PARAM_SYNONYMS: dict[str, frozenset[str]] = {}
for _group in _PARAM_GROUPS:
    _names = frozenset(_group.split())
    for _n in _names:
        PARAM_SYNONYMS[_n] = PARAM_SYNONYMS.get(_n, frozenset()) | _names
ALWAYS_DROP = frozenset({"out", "name"})   # never passed on (no effect on the result)
IGNORED_TARGET = frozenset({"out", "name"})
_UNKNOWN = object()


@dataclass(frozen=True)
class Param:
    """A parameter as the matcher sees it, from a spec or a Python signature."""

    name: str
    positional: bool            # may be passed by position
    keyword: bool               # may be passed by keyword
    variadic: bool = False
    required: bool = True
    default: Any = _UNKNOWN
    tensor: bool | None = None  # None: not known


def spec_params(spec: LibSpec) -> list[Param]:
    out = []
    for p in spec.params:
        out.append(Param(
            p.name, positional=p.passing in ("positional", "either", "variadic"),
            keyword=p.passing in ("keyword", "either"), variadic=p.passing == "variadic",
            required=not p.optional, default=p.default if p.optional else _UNKNOWN,
            tensor=p.tensor_like))
    return out


_DOC_SIGNATURE = re.compile(r"^\s*[\w.]+\((?P<params>.*?)\)\s*->", re.M)


def function_params(fn: Callable[..., Any]) -> list[Param] | None:
    """A library function's parameters: its signature, else torch's docstring line
    ``sin(input, *, out=None) -> Tensor``; None when neither says."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return _doc_params(getattr(fn, "__doc__", "") or "")
    out = []
    for p in sig.parameters.values():
        default = _UNKNOWN if p.default is inspect.Parameter.empty else p.default
        out.append(Param(
            p.name, positional=p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                          p.VAR_POSITIONAL),
            keyword=p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY),
            variadic=p.kind == p.VAR_POSITIONAL, required=default is _UNKNOWN and p.kind
            not in (p.VAR_POSITIONAL, p.VAR_KEYWORD), default=default))
    return [p for p in out if not p.name.startswith("**") and p.name != "kwargs"]


def _doc_params(doc: str) -> list[Param] | None:
    m = _DOC_SIGNATURE.search(doc)
    if m is None:
        return None
    out, keyword_only = [], False
    for raw in m.group("params").split(","):
        raw = raw.strip()
        if not raw:
            continue
        if raw == "*":
            keyword_only = True
            continue
        if raw.startswith("*"):
            out.append(Param(raw.lstrip("*"), True, False, variadic=True, required=False))
            keyword_only = True
            continue
        name, _, default = raw.partition("=")
        name = name.split(":")[0].strip()
        if not name.isidentifier():
            return None
        value = _literal(default.strip()) if default else _UNKNOWN
        out.append(Param(name, positional=not keyword_only, keyword=True,
                         required=not default, default=value))
    return out


def _literal(text: str) -> Any:
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _UNKNOWN


def _same_param(a: str, b: str) -> bool:
    return a == b or b in PARAM_SYNONYMS.get(a, ())


def _is_literal(value: Any) -> bool:
    return value is not _UNKNOWN and value is not None and isinstance(
        value, bool | int | float | str)


def adapt(spec: LibSpec, target: str, library: str, tparams: list[Param],
          positions: list[Param] | None = None, need_values: bool = False
          ) -> Counterpart | None:
    """The same-name counterpart calling ``target`` for ``spec``; None if no adapter.

    ``positions``: the target's parameters in its real signature's order, where
    ``tparams`` come from its spec, which may leave some out (``out``): only the real
    order says which positions can be filled (``jnp.sum(a, axis, dtype, out, keepdims)``
    from a spec without ``out`` passed ``keepdims`` fourth, as ``out``).

    A required target parameter matched to an optional API parameter without a literal
    default is given None where the API's default is None (its "all axes"); with
    ``need_values`` the counterpart instead applies only where the API parameter has a
    value (``requires_value``): ``torch.cumsum`` for ``jnp.cumsum`` takes no
    ``dim=None``, and the candidate passing it was rejected on every dtype."""
    src = spec_params(spec)
    tgt = [t for t in tparams if t.name not in IGNORED_TARGET]
    match: dict[str, Param] = {}
    used: set[str] = set()
    for rule in (lambda s, t: s.name == t.name, lambda s, t: _same_param(s.name, t.name)):
        for s in src:
            if s.name in match or s.name in ALWAYS_DROP:
                continue
            for t in tgt:
                if t.name not in used and rule(s, t) and not (t.variadic and not s.tensor):
                    match[s.name] = t
                    used.add(t.name)
                    break
    # Required tensors still unmatched go to the target's free required positional
    # parameters, in order (``torch.add(input, other)`` -> ``tf.math.add(x, y)``).
    free = [t for t in tgt if t.positional and t.name not in used and t.required
            and t.tensor is not False]
    for s in src:
        if s.name in match or not s.tensor or not s.required or not free:
            continue
        t = free.pop(0)
        match[s.name] = t
        used.add(t.name)
    required_free = [t for t in tgt if t.name not in used and t.required and not t.variadic]
    if required_free:
        return None
    src_by = {s.name: s for s in src}
    pass_none = []
    needs: list[str] = []
    for name, t in match.items():  # a required target parameter needs a value every time
        s = src_by[name]
        if need_values and not s.required and s.default is None and (
                t.required or t.default is not None):
            needs.append(name)  # None means something else there, or nothing
            continue
        if t.required and not s.required and not _is_literal(s.default):
            if s.default is not None or not t.keyword:
                return None
            pass_none.append((t.name, None))  # the API's None ("all axes"), said explicitly
    lost = [s for s in src if s.name not in match and s.name not in ALWAYS_DROP]
    if any(s.required for s in lost):
        return None
    by_target = {t.name: src_by[n] for n, t in match.items()}
    args: list[str] = []
    for t in positions or tparams:  # the leading run of positional parameters we can fill
        if not t.positional or t.name not in by_target:
            break
        s = by_target[t.name]
        args.append(("*" if t.variadic else "") + s.name)
        if t.variadic:
            break
    in_args = {a.lstrip("*") for a in args}
    for name, t in match.items():
        if name not in in_args and not t.keyword:
            return None  # a positional-only parameter we could not reach by position
    rename = tuple((s, t.name) for s, t in match.items() if s != t.name and t.keyword)
    extra = []
    for name, t in match.items():
        s = src_by[name]
        if not s.required and _is_literal(s.default) and t.keyword and (
                t.default is _UNKNOWN or t.default != s.default
                or type(t.default) is not type(s.default)):
            extra.append((t.name, s.default))
    extra += pass_none
    drop = tuple(s.name for s in src if s.name in ALWAYS_DROP)
    requires = tuple((s.name, None if s.default is _UNKNOWN else s.default) for s in lost)
    return Counterpart(spec.api, library, "same-name", target, args=tuple(args), rename=rename,
                       extra=tuple(extra), drop=drop, requires_default=requires,
                       requires_value=tuple(needs))


# ---- namespaces ------------------------------------------------------------------------
def namespace_functions(library: str) -> dict[str, list[tuple[str, Any]]]:
    """leaf name -> [(dotted path, function)] of a library's public namespaces, one path
    per function object (the first namespace in ``NAMESPACES`` order wins)."""
    seen: set[int] = set()
    out: dict[str, list[tuple[str, Any]]] = {}
    for module_name in NAMESPACES[library]:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for leaf in sorted(dir(module)):
            if leaf.startswith("_"):
                continue
            try:
                obj = getattr(module, leaf)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to load
                continue
            if not callable(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out.setdefault(leaf, []).append((f"{module_name}.{leaf}", obj))
    return out


def _leaf_names(api: str) -> frozenset[str]:
    leaf = api.rsplit(".", 1)[-1]
    return SYNONYMS.get(leaf, frozenset()) | {leaf}


def candidates(specs: Mapping[str, Mapping[str, LibSpec]],
               libraries: Iterable[str] | None = None) -> list[Counterpart]:
    """Same-name candidates for every spec of ``specs`` (library -> api -> spec) in each
    other library of ``NAMESPACES``."""
    wanted = set(libraries) if libraries is not None else set(specs)
    tables = {lib: namespace_functions(lib) for lib in NAMESPACES}
    out: list[Counterpart] = []
    for lib, table in specs.items():
        if lib not in wanted:
            continue
        for spec in table.values():
            if spec.skip or spec.random:
                continue
            for other in NAMESPACES:
                if other == lib:
                    continue
                out.extend(_for_library(spec, other, tables[other], specs.get(other, {})))
    return out


def _for_library(spec: LibSpec, other: str, table: Mapping[str, list[tuple[str, Any]]],
                 other_specs: Mapping[str, LibSpec]) -> list[Counterpart]:
    found: list[Counterpart] = []
    for leaf in sorted(_leaf_names(spec.api)):
        for path, fn in table.get(leaf, ()):
            tspec = other_specs.get(path)
            real = function_params(fn)
            tparams = spec_params(tspec) if tspec is not None else real
            if tparams is None:
                continue
            positions = real if tspec is not None else None
            for need_values in (False, True):
                cp = adapt(spec, path, other, tparams, positions, need_values)
                if cp is not None and cp not in found:
                    found.append(cp)
    # Prefer targets with a spec of their own, then exact leaf names, then fewer losses.
    leaf = spec.api.rsplit(".", 1)[-1]
    found.sort(key=lambda c: (c.target not in other_specs,
                              c.target.rsplit(".", 1)[-1] != leaf,
                              len(c.requires_default), len(c.requires_value), c.target))
    return found[:MAX_PER_LIBRARY]

"""API specs: what a numpy-like function takes, and how each library spells the call.

The JSON files under ``data/`` are the source of truth and are meant to be edited by
hand, so loading validates everything and every error names the file, the spec, the key,
the bad value and how to fix it (``UsageError``: a bad spec file is the user's to fix).

A spec is library-neutral: canonical parameter names are numpy's, parameter *kinds* say
how to generate a value (``PARAM_KINDS``), and a shape *rule* says how the tensors'
shapes relate (``SHAPE_RULES``) so that most generated inputs are valid. A ``Binding``
per library says which function to call and how to adapt the canonical arguments
(renaming ``axis`` to ``dim``, adding ``correction=0``...). Only argument-level adapters
exist on purpose: the call a worker makes is exactly the call a reproducer shows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlfuzz.cases import DTYPES, DType
from dlfuzz.errors import UsageError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_SPEC_FILE = DATA_DIR / "numpy_like.json"
FORMAT = 1

# Parameter kinds: how a value is generated. Keys a kind accepts are in KIND_KEYS.
PARAM_KINDS: dict[str, str] = {
    "tensor": "one array argument",
    "tensors": "a sequence of arrays passed as one argument (or spread with '*name')",
    "axis": "one axis of the tensor named by 'of' (negative allowed)",
    "axes": "a tuple of distinct axes of 'of'",
    "perm": "a permutation of all axes of 'of'",
    "int": "an integer in 'range' (inclusive)",
    "float": "a float in 'range'",
    "bool": "True or False",
    "enum": "one of 'values'",
    "ints": "a tuple of 'length' integers in 'range'",
    "shape": "a shape (tuple of small non-negative ints), usually set by the shape rule",
    "dtype": "a dtype from 'values' (default: the signature's dtype), passed as a DType",
    "str": "a string set by the shape rule (einsum subscripts)",
}
TENSOR_KINDS = frozenset({"tensor", "tensors"})

_COMMON_KEYS = frozenset({"name", "kind", "optional", "default", "requires", "doc"})
KIND_KEYS: dict[str, frozenset[str]] = {
    "tensor": frozenset({"role", "rank", "domain", "values", "nonempty"}),
    "tensors": frozenset({"role", "rank", "domain", "values", "nonempty", "count"}),
    "axis": frozenset({"of", "insert", "distinct"}),
    "axes": frozenset({"of", "size"}),
    "perm": frozenset({"of"}),
    "int": frozenset({"range"}),
    "float": frozenset({"range"}),
    "bool": frozenset(),
    "enum": frozenset({"values"}),
    "ints": frozenset({"range", "length"}),
    "shape": frozenset({"rank"}),
    "dtype": frozenset({"values"}),
    "str": frozenset(),
}

# Tensor roles: which dtype a tensor gets. "main" follows the signature's chosen dtype.
TENSOR_ROLES = ("main", "bool", "index")
# Value transforms applied after drawing a tensor (domain knowledge a shape cannot carry).
TENSOR_VALUES = ("any", "sorted", "symmetric", "spd", "nonzero", "shift")

# Shape rules and the canonical parameters each one sets (those get no generic value).
SHAPE_RULES: dict[str, tuple[str, ...]] = {
    "any": (),                 # every tensor independent (within its rank limits)
    "same": (),                # all tensors one shape
    "broadcast": (),           # tensors mutually broadcastable
    "matmul": (),              # (..., n, k) @ (..., k, m), 1-D operands allowed
    "vectors": (),             # 1-D tensors of one length (dot, vdot)
    "outer": (),               # 1-D tensors of any lengths
    "inner": (),               # last dimensions equal
    "tensordot": ("axes",),    # a's last `axes` dims == b's first `axes` dims
    "cross": (),               # equal ranks, broadcastable, last dimension 3
    "square": (),              # (..., n, n), every tensor the same
    "solve": (),               # a (..., n, n), b (..., n, k)
    "take": (),                # indices within a flattened
    "take_along_axis": ("axis",),
    "searchsorted": (),        # 1-D sorted a, 1-D v
    "concat": ("axis",),       # equal shapes except along axis
    "stack": ("axis",),        # equal shapes, axis in [-(r+1), r]
    "same_list": (),           # a list of equal shapes (hstack, vstack, dstack)
    "broadcast_list": (),      # a list of broadcastable shapes
    "reshape": ("shape",),
    "broadcast_to": ("shape",),
    "squeeze": ("axis",),      # axis of a dimension of size 1
    "split": ("indices_or_sections", "axis"),
    "hsplit": ("indices_or_sections",),
    "vsplit": ("indices_or_sections",),
    "dsplit": ("indices_or_sections",),
    "einsum": ("subscripts",),
    "diag": (),                # 1-D or 2-D
    "meshgrid": (),            # a list of 1-D tensors
    "arange": ("start", "stop", "step"),
    "clip": ("a_min", "a_max"),  # scalar bounds, a_min <= a_max
    "none": (),                # no tensors (creation functions)
}

# Dtype families usable in "dtypes" lists; expanded at load time.
DTYPE_FAMILIES: dict[str, tuple[str, ...]] = {
    "float": ("float16", "bfloat16", "float32", "float64"),
    "int": ("int8", "int16", "int32", "int64"),
    "uint": ("uint8",),
    "complex": ("complex64",),
    "bool": ("bool",),
}
DTYPE_FAMILIES["all"] = tuple(d for fam in ("float", "int", "uint", "complex", "bool")
                              for d in DTYPE_FAMILIES[fam])

CONVERSIONS = ("tuple", "list")  # Binding.convert: int -> (int,), tuple -> list

_SPEC_KEYS = frozenset({"name", "group", "shapes", "dtypes", "params", "bindings", "specials",
                        "unsupported", "notes"})
_BINDING_KEYS = frozenset({"target", "args", "rename", "extra", "convert", "drop"})


@dataclass(frozen=True)
class Param:
    """One canonical parameter. Unused keys keep their defaults."""

    name: str
    kind: str
    optional: bool = False
    default: Any = None
    role: str = "main"
    rank: tuple[int, int] = (0, 5)
    domain: tuple[float, float] | None = None  # value hint; strict for integer tensors
    nonempty: bool = False    # no zero-size dimension (reductions without identity)
    values: Any = None        # tensor: a TENSOR_VALUES name; enum/dtype: the choices
    count: tuple[int, int] = (1, 3)
    of: str = ""
    insert: bool = False      # axis: may name the position of a new axis (r + 1 choices)
    distinct: str = ""        # axis: must differ from this other axis parameter
    size: tuple[int, int] = (1, 5)
    range: tuple[float, float] = (0, 3)
    length: tuple[int, int] = (1, 3)
    requires: str = ""        # only given when this earlier parameter is given too
    doc: str = ""

    @property
    def is_tensor(self) -> bool:
        return self.kind in TENSOR_KINDS


@dataclass(frozen=True)
class Binding:
    """How one library calls the function.

    ``args``: canonical names passed positionally, in order (``*name`` spreads a tensor
    list); ``None`` means "every tensor parameter, in spec order". Other parameters that
    are present go as keywords, renamed by ``rename`` and converted by ``convert``;
    ``extra`` adds constant keywords (overridden by a parameter of the same name);
    ``drop`` lists canonical parameters this library is not given at all.
    """

    target: str
    args: tuple[str, ...] | None = None
    rename: tuple[tuple[str, str], ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    convert: tuple[tuple[str, str], ...] = ()
    drop: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApiSpec:
    """A function that exists, with the same meaning, in every bound library."""

    name: str
    group: str
    shapes: str
    dtypes: tuple[str, ...]
    params: tuple[Param, ...]
    bindings: tuple[tuple[str, Binding], ...]
    specials: bool = True  # False: libraries differ by design on NaN/Inf/singular inputs
    # "backend" or "backend:dtype" -> why it cannot run this API (tf-xla has no kernel for
    # some ops or dtypes): running it there would only report a known limitation.
    unsupported: tuple[tuple[str, str], ...] = ()
    notes: str = ""
    source: str = field(default="", compare=False)

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @property
    def tensor_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.is_tensor)

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(lib for lib, _ in self.bindings)

    def supports(self, backend: str, dtype: str | None = None) -> bool:
        """False for a backend listed in ``unsupported``, alone or with ``dtype``."""
        keys = {backend} if dtype is None else {backend, f"{backend}:{dtype}"}
        return all(key not in keys for key, _ in self.unsupported)

    def binding(self, library: str) -> Binding | None:
        for lib, b in self.bindings:
            if lib == library:
                return b
        return None


# ---- loading ----------------------------------------------------------------------------
class _Ctx:
    """Where we are in a file, so that every error can say it."""

    def __init__(self, path: Path, spec: str = "") -> None:
        self.path, self.spec = path, spec

    def fail(self, key: str, value: Any, fix: str) -> UsageError:
        where = f"{self.path}: spec {self.spec!r}" if self.spec else f"{self.path}"
        return UsageError(f"{where}: key {key!r} has bad value {value!r}; {fix}")


def _tuplify(value: Any) -> Any:
    """JSON lists become tuples (specs are frozen, calls hashable); {"$dtype": n} a DType."""
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    if isinstance(value, dict):
        if set(value) == {"$dtype"} and value["$dtype"] in DTYPES:
            return DType(value["$dtype"])
        return {k: _tuplify(v) for k, v in value.items()}
    return value


def _pair(ctx: _Ctx, key: str, value: Any, cast: type, *, ordered: bool = True
          ) -> tuple[Any, Any]:
    ok = (isinstance(value, list) and len(value) == 2
          and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value))
    if not ok or (ordered and value[0] > value[1]):
        raise ctx.fail(key, value, "write [low, high] with low <= high")
    return cast(value[0]), cast(value[1])


def _check_keys(ctx: _Ctx, where: str, obj: Any, allowed: Iterable[str]) -> None:
    if not isinstance(obj, dict):
        raise ctx.fail(where, obj, "write a JSON object")
    allowed = frozenset(allowed)
    for key in obj:
        if key not in allowed:
            raise ctx.fail(f"{where}.{key}" if where else key, obj[key],
                           f"unknown key; allowed keys: {', '.join(sorted(allowed))}")


def _expand_dtypes(ctx: _Ctx, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ctx.fail(key, value, "write a non-empty list of dtype names or families")
    out: list[str] = []
    for item in value:
        names = DTYPE_FAMILIES.get(item, (item,) if item in DTYPES else None)
        if names is None:
            raise ctx.fail(key, item, "use a dtype of " + ", ".join(DTYPES)
                           + " or a family of " + ", ".join(DTYPE_FAMILIES))
        out.extend(n for n in names if n not in out)
    return tuple(out)


def _param(ctx: _Ctx, index: int, raw: Any) -> Param:
    where = f"params[{index}]"
    if not isinstance(raw, dict):
        raise ctx.fail(where, raw, "write a JSON object with 'name' and 'kind'")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ctx.fail(f"{where}.name", name, "write a Python identifier")
    kind = raw.get("kind")
    if kind not in PARAM_KINDS:
        raise ctx.fail(f"{where}.kind", kind, "use one of " + ", ".join(PARAM_KINDS))
    _check_keys(ctx, where, raw, _COMMON_KEYS | KIND_KEYS[kind])
    kw: dict[str, Any] = {"name": name, "kind": kind}
    if "optional" in raw:
        if not isinstance(raw["optional"], bool):
            raise ctx.fail(f"{where}.optional", raw["optional"], "write true or false")
        kw["optional"] = raw["optional"]
    if "default" in raw:
        kw["default"] = _tuplify(raw["default"])
    if "doc" in raw:
        kw["doc"] = str(raw["doc"])
    if "role" in raw:
        if raw["role"] not in TENSOR_ROLES:
            raise ctx.fail(f"{where}.role", raw["role"], "use one of " + ", ".join(TENSOR_ROLES))
        kw["role"] = raw["role"]
    for key in ("rank", "count", "size", "length"):
        if key in raw:
            lo, hi = _pair(ctx, f"{where}.{key}", raw[key], int)
            if lo < 0:
                raise ctx.fail(f"{where}.{key}", raw[key], "use non-negative bounds")
            kw[key] = (lo, hi)
    for key in ("domain", "range"):
        if key in raw:
            kw[key] = _pair(ctx, f"{where}.{key}", raw[key], int if kind in ("int", "ints")
                            else float)
    if "values" in raw:
        values = raw["values"]
        if kind in TENSOR_KINDS:
            if values not in TENSOR_VALUES:
                raise ctx.fail(f"{where}.values", values,
                               "use one of " + ", ".join(TENSOR_VALUES))
            kw["values"] = values
        elif kind == "dtype":
            kw["values"] = _expand_dtypes(ctx, f"{where}.values", values)
        else:
            if not isinstance(values, list) or not values:
                raise ctx.fail(f"{where}.values", values, "write a non-empty list of choices")
            kw["values"] = _tuplify(values)
    elif kind == "enum":
        raise ctx.fail(f"{where}.values", None, "an enum parameter needs a 'values' list")
    for key in ("of", "distinct", "requires"):
        if key in raw:
            if not isinstance(raw[key], str):
                raise ctx.fail(f"{where}.{key}", raw[key], "write a parameter name")
            kw[key] = raw[key]
    for key in ("insert", "nonempty"):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise ctx.fail(f"{where}.{key}", raw[key], "write true or false")
            kw[key] = raw[key]
    return Param(**kw)


def _binding(ctx: _Ctx, lib: str, raw: Any, names: dict[str, Param]) -> Binding:
    where = f"bindings.{lib}"
    _check_keys(ctx, where, raw, _BINDING_KEYS)
    target = raw.get("target")
    if not isinstance(target, str) or "." not in target or not all(
            part.isidentifier() for part in target.split(".")):
        raise ctx.fail(f"{where}.target", target,
                       "write the dotted path of a function, e.g. 'torch.cumsum'")
    kw: dict[str, Any] = {"target": target}
    if "args" in raw:
        args = raw["args"]
        if not isinstance(args, list):
            raise ctx.fail(f"{where}.args", args, "write a list of parameter names")
        for a in args:
            base = a[1:] if isinstance(a, str) and a.startswith("*") else a
            if base not in names:
                raise ctx.fail(f"{where}.args", a, "name a parameter of this spec: "
                               + ", ".join(names))
            if a.startswith("*") and names[base].kind != "tensors":
                raise ctx.fail(f"{where}.args", a, "only a 'tensors' parameter can be spread")
        kw["args"] = tuple(args)
    for key in ("rename", "extra", "convert"):
        if key not in raw:
            continue
        mapping = raw[key]
        if not isinstance(mapping, dict):
            raise ctx.fail(f"{where}.{key}", mapping, "write a JSON object")
        for k, v in mapping.items():
            if key in ("rename", "convert") and k not in names:
                raise ctx.fail(f"{where}.{key}", k, "name a parameter of this spec: "
                               + ", ".join(names))
            if key == "rename" and not (isinstance(v, str) and v.isidentifier()):
                raise ctx.fail(f"{where}.rename.{k}", v, "write the library's keyword name")
            if key == "convert" and v not in CONVERSIONS:
                raise ctx.fail(f"{where}.convert.{k}", v, "use one of " + ", ".join(CONVERSIONS))
        kw[key] = tuple((k, _tuplify(v)) for k, v in mapping.items())
    if "drop" in raw:
        drop = raw["drop"]
        if not isinstance(drop, list) or any(d not in names for d in drop):
            raise ctx.fail(f"{where}.drop", drop, "write a list of parameter names of this spec")
        kw["drop"] = tuple(drop)
    return Binding(**kw)


def _spec(path: Path, index: int, raw: Any) -> ApiSpec:
    ctx = _Ctx(path, f"#{index}")
    if not isinstance(raw, dict):
        raise ctx.fail(f"specs[{index}]", raw, "write a JSON object per spec")
    name = raw.get("name")
    if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
        raise ctx.fail("name", name, "write the canonical numpy name, e.g. 'cumsum'")
    ctx.spec = name
    _check_keys(ctx, "", raw, _SPEC_KEYS)
    group = raw.get("group")
    if not isinstance(group, str) or not group:
        raise ctx.fail("group", group, "write a group name such as 'reduction'")
    rule = raw.get("shapes", "any")
    if rule not in SHAPE_RULES:
        raise ctx.fail("shapes", rule, "use one of " + ", ".join(SHAPE_RULES))
    dtypes = _expand_dtypes(ctx, "dtypes", raw.get("dtypes", ["all"]))
    raw_params = raw.get("params")
    if not isinstance(raw_params, list):
        raise ctx.fail("params", raw_params, "write a list of parameter objects")
    params = tuple(_param(ctx, i, p) for i, p in enumerate(raw_params))
    names: dict[str, Param] = {}
    for p in params:
        if p.name in names:
            raise ctx.fail("params", p.name, "give every parameter a distinct name")
        names[p.name] = p
    for i, p in enumerate(params):
        for key in ("of", "distinct"):
            other = getattr(p, key)
            if not other:
                continue
            want = TENSOR_KINDS if key == "of" else frozenset({"axis"})
            if other not in names or names[other].kind not in want:
                raise ctx.fail(f"params.{p.name}.{key}", other,
                               f"name a {'/'.join(sorted(want))} parameter of this spec")
        if p.requires and p.requires not in [q.name for q in params[:i] if not q.is_tensor]:
            raise ctx.fail(f"params.{p.name}.requires", p.requires,
                           "name a non-tensor parameter listed before this one")
        if p.requires and not p.optional:
            raise ctx.fail(f"params.{p.name}.requires", p.requires,
                           "only an optional parameter can require another")
    if sum(p.kind == "tensors" for p in params) > 1:
        raise ctx.fail("params", [p.name for p in params if p.kind == "tensors"],
                       "use at most one 'tensors' parameter per spec")
    for p in params:
        if p.kind in ("axis", "axes", "perm") and not p.of and p.name not in SHAPE_RULES[rule]:
            raise ctx.fail(f"params.{p.name}.of", None,
                           f"a {p.kind} parameter needs 'of': the name of its tensor")
    for needed in SHAPE_RULES[rule]:
        if needed not in names:
            raise ctx.fail("shapes", rule, f"rule {rule!r} sets parameter {needed!r}; "
                           "add it to params or choose another rule")
    raw_bindings = raw.get("bindings")
    if not isinstance(raw_bindings, dict) or not raw_bindings:
        raise ctx.fail("bindings", raw_bindings,
                       "write an object: library -> {'target': 'module.function', ...}")
    bindings = []
    for lib, b in raw_bindings.items():
        if b is None:  # library lacks the function: no call for it
            continue
        bindings.append((lib, _binding(ctx, lib, b, names)))
    if not bindings:
        raise ctx.fail("bindings", raw_bindings, "bind at least one library")
    specials = raw.get("specials", True)
    if not isinstance(specials, bool):
        raise ctx.fail("specials", specials, "write true or false")
    unsupported = raw.get("unsupported", {})
    if not isinstance(unsupported, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in unsupported.items()):
        raise ctx.fail("unsupported", unsupported, 'write an object: "backend" or '
                       '"backend:dtype" -> reason, e.g. {"tf-xla": "no XLA kernel"}')
    for key in unsupported:
        dtype = key.partition(":")[2]
        if dtype and dtype not in DTYPES:
            raise ctx.fail(f"unsupported.{key}", dtype, "use a dtype of " + ", ".join(DTYPES))
    notes = raw.get("notes", "")
    return ApiSpec(name=name, group=group, shapes=rule, dtypes=dtypes, params=params,
                   bindings=tuple(bindings), specials=specials,
                   unsupported=tuple(sorted(unsupported.items())), notes=str(notes),
                   source=str(path))


def load_file(path: Path) -> list[ApiSpec]:
    """Every spec of one JSON file."""
    ctx = _Ctx(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the spec file ({exc.strerror}); "
                         "check the path") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
                         "fix the syntax there") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("specs"), list):
        raise ctx.fail("specs", type(raw).__name__,
                       "the file must be an object with a 'specs' list")
    if raw.get("format", FORMAT) != FORMAT:
        raise ctx.fail("format", raw.get("format"), f"this dlfuzz reads format {FORMAT}")
    return [_spec(path, i, s) for i, s in enumerate(raw["specs"])]


def load_specs(path: str | Path | None = None) -> dict[str, ApiSpec]:
    """Specs by canonical name from a JSON file or a directory of them (default: built-in)."""
    if path is None:
        return dict(_load_default())
    return _load(Path(path))


@functools.lru_cache(maxsize=1)
def _load_default() -> tuple[tuple[str, ApiSpec], ...]:
    return tuple(_load(DEFAULT_SPEC_FILE).items())


def _load(path: Path) -> dict[str, ApiSpec]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise UsageError(f"{path}: no *.json spec files in this directory; "
                         "point to a spec file or a directory holding some")
    specs: dict[str, ApiSpec] = {}
    for file in files:
        for spec in load_file(file):
            if spec.name in specs:
                raise UsageError(f"{file}: spec {spec.name!r}: key 'name' has bad value "
                                 f"{spec.name!r}; already defined in {specs[spec.name].source}"
                                 "; rename or remove one of them")
            specs[spec.name] = spec
    return specs

"""API specs (format 2, the one spec format): one spec per API, with dependency constraints.

A format-2 file describes the APIs of *one* library as that library spells them
(``torch.nn.functional.conv2d``, ``tensorflow.nn.conv2d``, ``jax.lax.conv``): TensorJSFuzz's
type information per parameter (structures, rank, dtype, enum values, range, default,
optional) plus dependency constraints in the language of ``constraints.py``, each with
where it came from (signature, doc, validation code, error feedback, LLM, hand). How other
libraries compute the same API are its counterparts (``counterparts/``).

An API may also name a *shape rule* (``"shapes"``, one of ``SHAPE_RULES``): a relation
between its tensors' shapes and the parameters tied to them (broadcasting, matmul,
einsum subscripts, a concatenation axis...) that constraints over single dimensions
cannot say. Such an API is drawn by the rule (``rulegen``) in signature groups over
``dtypes``; its parameters may use the structures that only a rule or a tensor gives a
meaning (``RULE_STRUCTURES``: an axis ``of`` a tensor, a permutation, a shape, an enum).
The numpy-like spec set (``data/numpy.json``, the ``numpy-api`` engine) is written so:
numpy's functions with the same function in torch, jax and tf as counterparts.

Files live in ``data/<library>.json`` and are meant to be read and edited by hand; every
error names the file, the line (and column for constraints), the API, the key, the bad
value and the fix.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlfuzz.cases import DTYPES
from dlfuzz.engines.api.constraints import (
    Constraint,
    ConstraintError,
    broken_by_defaults,
    parse,
)
from dlfuzz.errors import UsageError
from dlfuzz.libraries import get

FORMAT = 2
DATA_DIR = Path(__file__).resolve().parent / "data"
# library -> its built-in spec file in DATA_DIR (the records' ``api_spec``)
LIBRARY_FILES = {n: get(n).api_spec for n in ("torch", "tf", "jax", "tfjs")}
# Spec sets run by name rather than per library (``--engine numpy-api``).
SPEC_SETS = {"numpy": "numpy.json"}

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

# TensorJSFuzz's structures: how a parameter's value is built.
# Shape rules (drawn by ``shapes.py``) and the canonical parameters each one sets (those
# get no generic value): the spec format names them, the drawing code implements them.
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

STRUCTURES: dict[str, str] = {
    "tensor": "one array (rank, dtypes, domain)",
    "tensors": "a list of arrays (count, plus the tensor keys)",
    "int": "an integer in range",
    "float": "a float in range",
    "bool": "True or False",
    "str": "a string of values",
    "none": "None",
    "dtype": "a dtype object of the library (dtypes)",
    "ints": "a list of integers (length, range)",
    "floats": "a list of floats (length, range)",
    # only in an API with a shape rule:
    "axis": "one axis of the tensor named by 'of' (negative allowed)",
    "axes": "a tuple of 'size' distinct axes of 'of'",
    "perm": "a permutation of all axes of 'of'",
    "shape": "a shape (tuple of small non-negative ints), usually set by the shape rule",
    "enum": "one of 'values'",
}
RULE_STRUCTURES = frozenset({"axis", "axes", "perm", "shape", "enum"})
# Tensor roles (rule APIs): which dtype a tensor gets; "main" is the signature's dtype.
TENSOR_ROLES = ("main", "bool", "index")
# Value transforms applied after drawing a tensor (domain knowledge a shape cannot carry).
TENSOR_FILLS = ("any", "sorted", "symmetric", "spd", "nonzero", "shift")
SOURCES = ("signature", "doc", "validation", "error", "llm", "hand")
PASSING = ("positional", "keyword", "either", "variadic")
_PARAM_KEYS = frozenset({"name", "type", "optional", "default", "pass", "rank", "dtypes",
                         "domain", "range", "length", "count", "values", "doc",
                         "of", "insert", "distinct", "size", "role", "nonempty", "fill",
                         "requires"})
_API_KEYS = frozenset({"api", "group", "params", "constraints", "random", "specials",
                       "unsupported", "notes", "skip", "shapes", "dtypes", "compare"})
# How an output is compared across libraries and modes ("compare": {"<output index>":
# mode}); elementwise unless named. The oracles' meaning of each: oracles/canonical.py.
COMPARE_MODES = ("elementwise", "sorted", "spectrum", "set", "skip-on-ties", "residual", "skip")


@dataclass(frozen=True)
class LibParam:
    name: str
    structures: tuple[str, ...]
    optional: bool = False
    default: Any = None
    passing: str = "either"          # how the call passes it (see PASSING)
    rank: tuple[int, int] = (0, 4)
    dtypes: tuple[str, ...] = ()     # tensor / dtype: allowed dtype names (empty: any)
    domain: tuple[float, float] | None = None
    range: tuple[float, float] | None = None
    length: tuple[int, int] = (1, 4)
    count: tuple[int, int] = (1, 3)
    values: tuple[Any, ...] = ()     # enum choices (str or int or float)
    doc: str = ""
    # Keys of APIs with a shape rule (see the module docstring):
    of: str = ""             # axis/axes/perm: the tensor parameter they index
    insert: bool = False     # axis: may name the position of a new axis (r + 1 choices)
    distinct: str = ""       # axis: must differ from this other axis parameter
    size: tuple[int, int] = (1, 5)   # axes: how many
    role: str = "main"       # tensor: main (signature dtype), bool or index
    nonempty: bool = False   # tensor: no zero-size dimension
    fill: str = "any"        # tensor: value transform (TENSOR_FILLS)
    requires: str = ""       # only given when this earlier parameter is given too

    @property
    def tensor_like(self) -> bool:
        return bool({"tensor", "tensors"} & set(self.structures))

    @property
    def kind(self) -> str:
        """The structure a shape rule draws (rule APIs give every parameter one)."""
        return self.structures[0]

    @property
    def is_tensor(self) -> bool:
        return self.kind in ("tensor", "tensors")


@dataclass(frozen=True)
class LibSpec:
    """One API of one library."""

    library: str
    api: str                                  # dotted path the worker calls
    params: tuple[LibParam, ...]
    constraints: tuple[Constraint, ...] = ()
    group: str = ""
    random: bool = False    # output depends on a random state: no differential testing
    specials: bool = True   # NaN/Inf inputs meaningful
    unsupported: tuple[tuple[str, str], ...] = ()
    notes: str = ""
    skip: str = ""          # non-empty: listed but not fuzzed (why)
    shapes: str = ""        # a shape rule (shapes.SHAPE_RULES): drawn by rulegen
    dtypes: tuple[str, ...] = ()  # rule APIs: the dtypes a signature is drawn in
    # outputs not compared element by element: (output index, COMPARE_MODES entry)
    compare: tuple[tuple[int, str], ...] = ()
    source: str = field(default="", compare=False)
    # Constraints of the file that the API's own default call breaks (mined wrong):
    # dropped at load, kept here so ``specs validate`` and tests can name them.
    rejected: tuple[str, ...] = field(default=(), compare=False)

    def param(self, name: str) -> LibParam | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @property
    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params)

    @property
    def tensor_params(self) -> tuple[LibParam, ...]:
        return tuple(p for p in self.params if p.is_tensor)


# ---- loading ----------------------------------------------------------------------------
class _Where:
    """File text and position lookup, so each error can say the line."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text, self.api = path, text, ""
        self._api_line = 1

    def at_api(self, api: str) -> None:
        self.api = api
        pos = self.text.find(json.dumps(api))
        self._api_line = self.text.count("\n", 0, pos) + 1 if pos >= 0 else 1

    def line_of(self, needle: str) -> tuple[int, int]:
        """(line, column) of a JSON-encoded string at or after the current API."""
        start = 0
        lines = self.text.split("\n")
        start = sum(len(line) + 1 for line in lines[: self._api_line - 1])
        pos = self.text.find(json.dumps(needle), start)
        if pos < 0:
            pos = self.text.find(json.dumps(needle))
        if pos < 0:
            return self._api_line, 1
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def fail(self, key: str, value: Any, fix: str, line: int | None = None) -> UsageError:
        line = self._api_line if line is None else line
        api = f": api {self.api!r}" if self.api else ""
        return UsageError(f"{self.path}:{line}{api}: key {key!r} has bad value {value!r}; {fix}")


def _pair(w: _Where, key: str, value: Any, cast: type) -> tuple[Any, Any]:
    ok = (isinstance(value, list) and len(value) == 2
          and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value))
    if not ok or value[0] > value[1]:
        raise w.fail(key, value, "write [low, high] with low <= high")
    return cast(value[0]), cast(value[1])


def expand_dtypes(names: Iterable[str]) -> tuple[str, ...] | None:
    """Dtype names and families (float, int, ...) as dtype names; None if one is unknown."""
    out: list[str] = []
    for item in names:
        group = DTYPE_FAMILIES.get(item, (item,) if item in DTYPES else None)
        if group is None:
            return None
        out.extend(d for d in group if d not in out)
    return tuple(out)


def _param(w: _Where, i: int, raw: Any) -> LibParam:
    where = f"params[{i}]"
    if not isinstance(raw, dict):
        raise w.fail(where, raw, "write an object with 'name' and 'type'")
    for key in raw:
        if key not in _PARAM_KEYS:
            raise w.fail(f"{where}.{key}", raw[key], "unknown key; allowed: "
                         + ", ".join(sorted(_PARAM_KEYS)))
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise w.fail(f"{where}.name", name, "write the parameter's Python name")
    where = f"params.{name}"
    structures = raw.get("type")
    if isinstance(structures, str):
        structures = [structures]
    if not isinstance(structures, list) or not structures or any(
            s not in STRUCTURES for s in structures):
        raise w.fail(f"{where}.type", structures, "write a list of structures from "
                     + ", ".join(STRUCTURES))
    kw: dict[str, Any] = {"name": name, "structures": tuple(structures)}
    if "optional" in raw:
        if not isinstance(raw["optional"], bool):
            raise w.fail(f"{where}.optional", raw["optional"], "write true or false")
        kw["optional"] = raw["optional"]
    if "default" in raw:
        kw["default"] = raw["default"]
    if "pass" in raw:
        if raw["pass"] not in PASSING:
            raise w.fail(f"{where}.pass", raw["pass"], "use one of " + ", ".join(PASSING))
        kw["passing"] = raw["pass"]
    for key in ("rank", "length", "count"):
        if key in raw:
            lo, hi = _pair(w, f"{where}.{key}", raw[key], int)
            if lo < 0:
                raise w.fail(f"{where}.{key}", raw[key], "use non-negative bounds")
            kw[key] = (lo, hi)
    for key in ("domain", "range"):
        if key in raw:
            ints = all(isinstance(v, int) for v in raw[key]) if isinstance(raw[key], list) \
                else False
            kw[key] = _pair(w, f"{where}.{key}", raw[key], int if ints else float)
    if "dtypes" in raw:
        dtypes = raw["dtypes"]
        expanded = expand_dtypes(dtypes) if isinstance(dtypes, list) else None
        if not expanded:
            raise w.fail(f"{where}.dtypes", dtypes, "write a non-empty list of dtypes ("
                         + ", ".join(DTYPES) + ") or families (" + ", ".join(DTYPE_FAMILIES)
                         + ")")
        kw["dtypes"] = expanded
    if "values" in raw:
        values = raw["values"]
        if not isinstance(values, list) or not values or any(
                isinstance(v, list | dict) for v in values):
            raise w.fail(f"{where}.values", values, "write a non-empty list of literals")
        kw["values"] = tuple(values)
    if "doc" in raw:
        kw["doc"] = str(raw["doc"])
    for key in ("of", "distinct", "requires"):
        if key in raw:
            if not isinstance(raw[key], str) or not raw[key].isidentifier():
                raise w.fail(f"{where}.{key}", raw[key], "write a parameter name")
            kw[key] = raw[key]
    for key in ("insert", "nonempty"):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise w.fail(f"{where}.{key}", raw[key], "write true or false")
            kw[key] = raw[key]
    if "size" in raw:
        kw["size"] = _pair(w, f"{where}.size", raw["size"], int)
    for key, allowed in (("role", TENSOR_ROLES), ("fill", TENSOR_FILLS)):
        if key in raw:
            if raw[key] not in allowed:
                raise w.fail(f"{where}.{key}", raw[key], "use one of " + ", ".join(allowed))
            kw[key] = raw[key]
    return LibParam(**kw)


def _check_rule(w: _Where, raw: dict[str, Any], params: tuple[LibParam, ...]
                ) -> tuple[str, tuple[str, ...]]:
    """An API's shape rule and signature dtypes, checked against its parameters."""
    rule = raw.get("shapes", "")
    if not rule:
        for p in params:
            extra = set(p.structures) & RULE_STRUCTURES
            if extra:
                raise w.fail(f"params.{p.name}.type", sorted(extra), "only an API with a "
                             "shape rule ('shapes') can use " + ", ".join(sorted(RULE_STRUCTURES)))
        if "dtypes" in raw:
            raise w.fail("dtypes", raw["dtypes"], "only an API with a shape rule ('shapes') "
                         "has signature dtypes; give tensor parameters 'dtypes' instead")
        return "", ()
    if rule not in SHAPE_RULES:
        raise w.fail("shapes", rule, "use one of " + ", ".join(SHAPE_RULES))
    dtypes = expand_dtypes(raw["dtypes"]) if isinstance(raw.get("dtypes"), list) else None
    if not dtypes:
        raise w.fail("dtypes", raw.get("dtypes"), "an API with a shape rule needs a non-empty "
                     "'dtypes' list (dtypes or families: " + ", ".join(DTYPE_FAMILIES) + ")")
    names = {p.name: p for p in params}
    for i, p in enumerate(params):
        if len(p.structures) != 1:
            raise w.fail(f"params.{p.name}.type", list(p.structures), "a parameter of an API "
                         "with a shape rule has one structure")
        for key, want in (("of", ("tensor", "tensors")), ("distinct", ("axis",))):
            other = getattr(p, key)
            if other and (other not in names or names[other].kind not in want):
                raise w.fail(f"params.{p.name}.{key}", other,
                             f"name a {'/'.join(want)} parameter of this API")
        if p.kind in ("axis", "axes", "perm") and not p.of and p.name not in SHAPE_RULES[rule]:
            raise w.fail(f"params.{p.name}.of", None,
                         f"a {p.kind} parameter needs 'of': the name of its tensor")
        if p.requires and (not p.optional or p.requires not in
                           [q.name for q in params[:i] if not q.is_tensor]):
            raise w.fail(f"params.{p.name}.requires", p.requires, "name a non-tensor "
                         "parameter listed before this optional one")
        if p.kind == "enum" and not p.values:
            raise w.fail(f"params.{p.name}.values", None, "an enum parameter needs 'values'")
    for needed in SHAPE_RULES[rule]:
        if needed not in names:
            raise w.fail("shapes", rule, f"rule {rule!r} sets parameter {needed!r}; "
                         "add it to params or choose another rule")
    if sum(p.kind == "tensors" for p in params) > 1:
        raise w.fail("params", [p.name for p in params if p.kind == "tensors"],
                     "an API with a shape rule has at most one 'tensors' parameter")
    return rule, dtypes


def _constraint(w: _Where, i: int, raw: Any, names: frozenset[str]) -> Constraint:
    source = "hand"
    text = raw
    why = ""
    if isinstance(raw, dict):
        text, source, why = raw.get("expr"), raw.get("from", "hand"), raw.get("why", "")
        extra = set(raw) - {"expr", "from", "why"}
        if extra:
            raise w.fail(f"constraints[{i}]", sorted(extra), "a constraint object has only "
                         "'expr', 'from' and 'why' (a documentation quote or link)")
        if not isinstance(why, str):
            raise w.fail(f"constraints[{i}].why", why, "write the quote or link as a string")
        if source not in SOURCES:
            raise w.fail(f"constraints[{i}].from", source, "use one of " + ", ".join(SOURCES))
    if not isinstance(text, str):
        raise w.fail(f"constraints[{i}]", raw, "write an expression string or "
                     "{'expr': ..., 'from': ...}")
    try:
        tree = parse(text, names)
    except ConstraintError as exc:
        line, col = w.line_of(text)
        api = f": api {w.api!r}" if w.api else ""
        raise UsageError(f"{w.path}:{line}:{col + 1 + len(text) - len(text.lstrip()) + exc.column}"
                         f"{api}: constraint {text!r}: {exc.reason}") from None
    return Constraint(text.strip(), tree, source, why)


def _api(w: _Where, i: int, raw: Any, library: str) -> LibSpec:
    if not isinstance(raw, dict):
        raise w.fail(f"apis[{i}]", raw, "write one object per API")
    api = raw.get("api")
    if not isinstance(api, str) or "." not in api or not all(
            p.isidentifier() for p in api.split(".")):
        raise w.fail(f"apis[{i}].api", api, "write the dotted path, e.g. 'torch.nn.functional.relu'")
    w.at_api(api)
    for key in raw:
        if key not in _API_KEYS:
            raise w.fail(key, raw[key], "unknown key; allowed: " + ", ".join(sorted(_API_KEYS)))
    raw_params = raw.get("params", [])
    if not isinstance(raw_params, list):
        raise w.fail("params", raw_params, "write a list of parameter objects")
    params = tuple(_param(w, j, p) for j, p in enumerate(raw_params))
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise w.fail("params", names, "give every parameter a distinct name")
    raw_cons = raw.get("constraints", [])
    if not isinstance(raw_cons, list):
        raise w.fail("constraints", raw_cons, "write a list of constraint strings")
    constraints = tuple(_constraint(w, j, c, frozenset(names)) for j, c in enumerate(raw_cons))
    defaults = {p.name: p.default for p in params if p.optional and p.default is not None}
    rejected = tuple(c.text for c in constraints if broken_by_defaults(c, defaults))
    constraints = tuple(c for c in constraints if c.text not in rejected)
    unsupported = raw.get("unsupported", {})
    if not isinstance(unsupported, dict) or not all(
            isinstance(v, str) for v in unsupported.values()):
        raise w.fail("unsupported", unsupported, 'write {"backend" or "backend:dtype": reason}')
    for key in ("random", "specials"):
        if key in raw and not isinstance(raw[key], bool):
            raise w.fail(key, raw[key], "write true or false")
    rule, dtypes = _check_rule(w, raw, params)
    compare = _compare(w, raw.get("compare", {}))
    return LibSpec(library=library, api=api, params=params, constraints=constraints,
                   group=str(raw.get("group", "")), random=raw.get("random", False),
                   specials=raw.get("specials", True),
                   unsupported=tuple(sorted(unsupported.items())),
                   notes=str(raw.get("notes", "")), skip=str(raw.get("skip", "")),
                   shapes=rule, dtypes=dtypes, compare=compare, source=str(w.path),
                   rejected=rejected)


def _compare(w: _Where, raw: Any) -> tuple[tuple[int, str], ...]:
    """``"compare": {"0": "sorted", "1": "residual"}``: output index -> COMPARE_MODES."""
    fix = ('write {"<output index>": mode} with modes from ' + ", ".join(COMPARE_MODES)
           + ', e.g. {"0": "sorted"} for eigenvalues')
    if not isinstance(raw, dict):
        raise w.fail("compare", raw, fix)
    out = []
    for key, mode in raw.items():
        if not str(key).isdigit() or mode not in COMPARE_MODES:
            raise w.fail(f"compare.{key}", mode, fix)
        out.append((int(key), str(mode)))
    return tuple(sorted(out))


def load_file(path: str | Path) -> list[LibSpec]:
    """Every spec of one format-2 file, validated."""
    path = Path(path)
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
    w = _Where(path, text)
    if not isinstance(raw, dict) or not isinstance(raw.get("apis"), list):
        raise w.fail("apis", type(raw).__name__, "the file must be an object with an 'apis' list")
    if raw.get("format") != FORMAT:
        raise w.fail("format", raw.get("format"), f"write \"format\": {FORMAT}")
    library = raw.get("library")
    if not isinstance(library, str) or not library:
        raise w.fail("library", library, "name the library these APIs belong to, e.g. 'torch'")
    specs = [_api(w, i, a, library) for i, a in enumerate(raw["apis"])]
    seen: dict[str, int] = {}
    for i, s in enumerate(specs):
        if s.api in seen:
            w.at_api(s.api)
            raise w.fail("api", s.api, f"defined twice (apis[{seen[s.api]}] and apis[{i}]); "
                         "keep one")
        seen[s.api] = i
    return specs


def load_library(library: str, path: str | Path | None = None) -> dict[str, LibSpec]:
    """A library's specs by API path: the built-in file, or ``path``."""
    if path is not None:
        return {s.api: s for s in load_file(path)}
    if library not in LIBRARY_FILES:
        raise UsageError(f"no built-in API specs for library {library!r}; built-in: "
                         + ", ".join(LIBRARY_FILES) + " (or give a spec file)")
    return dict(_builtin(LIBRARY_FILES[library]))


@functools.lru_cache(maxsize=1)
def _compare_table() -> dict[str, tuple[tuple[int, str], ...]]:
    """API -> its ``compare`` entries, from every built-in spec file (read as plain JSON:
    the oracles ask this for every suspicious case, the full parse is not needed)."""
    out: dict[str, tuple[tuple[int, str], ...]] = {}
    for name in (*LIBRARY_FILES.values(), *SPEC_SETS.values()):
        path = DATA_DIR / name
        if not path.exists():
            continue
        for api in json.loads(path.read_text(encoding="utf-8")).get("apis", ()):
            compare = api.get("compare") if isinstance(api, dict) else None
            if isinstance(compare, dict) and compare:
                out[str(api.get("api"))] = tuple(sorted(
                    (int(k), str(v)) for k, v in compare.items()
                    if str(k).isdigit() and v in COMPARE_MODES))
    return out


def compare_modes(api: str) -> dict[int, str]:
    """Output index -> compare mode of a built-in API (empty: every output elementwise)."""
    return dict(_compare_table().get(api, ()))


def load_set(name: str) -> dict[str, LibSpec]:
    """A built-in spec set by name (``SPEC_SETS``: ``numpy``), specs by API path."""
    if name not in SPEC_SETS:
        raise UsageError(f"no built-in spec set {name!r}; spec sets: " + ", ".join(SPEC_SETS))
    return dict(_builtin(SPEC_SETS[name]))


@functools.lru_cache(maxsize=8)
def _builtin(file: str) -> tuple[tuple[str, LibSpec], ...]:
    return tuple((s.api, s) for s in load_file(DATA_DIR / file))


def to_json(spec: LibSpec) -> dict[str, Any]:
    """The file form of a spec (what ``load_file`` reads back)."""
    out: dict[str, Any] = {"api": spec.api}
    if spec.group:
        out["group"] = spec.group
    out["params"] = [_param_json(p) for p in spec.params]
    out["constraints"] = [c.text if c.source == "hand" and not c.why
                          else {"expr": c.text, "from": c.source, **({"why": c.why} if c.why
                                                                    else {})}
                          for c in spec.constraints]
    if spec.shapes:
        out["shapes"] = spec.shapes
        out["dtypes"] = list(spec.dtypes)
    for key, default in (("random", False), ("specials", True), ("notes", ""), ("skip", "")):
        if getattr(spec, key) != default:
            out[key] = getattr(spec, key)
    if spec.unsupported:
        out["unsupported"] = dict(spec.unsupported)
    if spec.compare:
        out["compare"] = {str(i): mode for i, mode in spec.compare}
    return out


def _param_json(p: LibParam) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, "type": list(p.structures)}
    defaults = LibParam(p.name, p.structures)
    for attr, key in (("optional", "optional"), ("default", "default"), ("passing", "pass"),
                      ("rank", "rank"), ("dtypes", "dtypes"), ("domain", "domain"),
                      ("range", "range"), ("length", "length"), ("count", "count"),
                      ("values", "values"), ("of", "of"), ("insert", "insert"),
                      ("distinct", "distinct"), ("size", "size"), ("role", "role"),
                      ("nonempty", "nonempty"), ("fill", "fill"), ("requires", "requires"),
                      ("doc", "doc")):
        value = getattr(p, attr)
        if value != getattr(defaults, attr) or (attr == "default" and p.optional):
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def dump(library: str, specs: Iterable[LibSpec], path: str | Path,
         versions: Mapping[str, str] | None = None) -> None:
    """Write specs one API per block, one constraint per line (diff- and hand-friendly)."""
    head = {"format": FORMAT, "library": library}
    if versions:
        head["versions"] = dict(versions)
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
             + ', "apis": [']
    blocks = []
    for spec in specs:
        d = to_json(spec)
        parts = [f'  {{"api": {json.dumps(d.pop("api"))}']
        params = d.pop("params")
        cons = d.pop("constraints")
        for k, v in d.items():
            parts.append(f'   {json.dumps(k)}: {json.dumps(v)}')
        parts.append('   "params": [' + ("\n    " if params else "")
                     + ",\n    ".join(json.dumps(p) for p in params) + "]")
        parts.append('   "constraints": [' + ("\n    " if cons else "")
                     + ",\n    ".join(json.dumps(c) for c in cons) + "]}")
        blocks.append(",\n".join(parts))
    lines.append(",\n".join(blocks))
    lines.append("]}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_table(libraries: Sequence[str], spec_files: Sequence[str]) -> dict[str, LibSpec]:
    """The specs a campaign draws from: those of ``spec_files`` if any are given, else the
    built-in files of ``libraries``."""
    table: dict[str, LibSpec] = {}
    if spec_files:
        for path in spec_files:
            for spec in load_file(Path(path)):
                table[spec.api] = spec
        return table
    for lib in libraries:
        if lib in LIBRARY_FILES:
            table.update(load_library(lib))
    return table


def select_apis(table: Mapping[str, LibSpec], wanted: list[str]) -> dict[str, LibSpec]:
    """APIs by full path, by leaf name (every library's), or ``group:NAME``."""
    out: dict[str, LibSpec] = {}
    for item in wanted:
        if item.startswith("group:"):
            members = {k: s for k, s in table.items() if s.group == item[6:]}
            if not members:
                groups = sorted({s.group for s in table.values() if s.group})
                raise UsageError(f"unknown API group {item[6:]!r}; groups: {', '.join(groups)}")
            out.update(members)
            continue
        hits = {k: s for k, s in table.items() if k == item or k.endswith("." + item)}
        if not hits:
            names = list(table) + [k.split(".", 1)[1] for k in table if "." in k]
            close = difflib.get_close_matches(item, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"unknown API {item!r}{hint}")
        out.update(hits)
    return out

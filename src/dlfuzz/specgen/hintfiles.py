"""The hand hint tables of spec extraction, read from ``hints/<library>.json``.

What extraction cannot see (checks in C++ kernels, parameter-name conventions, APIs to
leave out) is written by hand. It is data, not code, so it lives in JSON files beside this
module, one per library, and is edited there; the ``<library>_hints`` and
``<library>_apis`` modules keep only the logic that applies it.

``load(library)`` reads one file, checks every section, entry and field against
``SCHEMAS`` and returns the sections in the Python shapes the extractors use (name sets
as ``frozenset``; for torch and TensorFlow, list-valued parameter fields as tuples, as
``LibParam`` holds them). A mistake raises ``UsageError`` naming the file, the key path,
the bad value and what is expected there. Files are read once per process.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError

HINTS_DIR = Path(__file__).resolve().with_name("hints")
FORMAT = 1


# ---- field checks -----------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v)


def _int_pair(v: Any) -> bool:
    return _pair(v) and all(isinstance(x, int) for x in v)


def _scalars(v: Any) -> bool:
    return isinstance(v, list) and all(x is None or isinstance(x, str | bool) or _is_number(x)
                                       for x in v)


def _str_groups(v: Any) -> bool:
    return isinstance(v, list) and all(_strs(g) for g in v)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _objects(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


def _name_pair(v: Any) -> bool:
    return _strs(v) and len(v) == 2


def _any(v: Any) -> bool:
    return True


Check = tuple[Callable[[Any], bool], str]  # (test, what is expected, for the message)
STRS: Check = (_strs, "a list of strings")
PAIR: Check = (_pair, "a list of two numbers [low, high]")
INT_PAIR: Check = (_int_pair, "a list of two integers [low, high]")
SCALARS: Check = (_scalars, "a list of strings, numbers, booleans or null")
STR_GROUPS: Check = (_str_groups, "a list of lists of parameter names")
BOOL: Check = (_bool, "true or false")
STR: Check = (_str, "a string")
OBJECTS: Check = (_objects, "a list of objects")
NAME_PAIR: Check = (_name_pair, "a list of two parameter names")
ANY: Check = (_any, "any JSON value")

# Parameter fields (LibParam's, in the extractors' spelling).
PARAM_FIELDS: dict[str, Check] = {
    "structures": STRS, "type": STRS, "dtypes": STRS, "rank": INT_PAIR, "domain": PAIR,
    "range": PAIR, "length": INT_PAIR, "count": INT_PAIR, "values": SCALARS,
    "optional": BOOL, "pass": STR, "fill": STR}
# TensorFlow's parameter-name conventions: fields plus how the convention applies.
TF_NAME_FIELDS: dict[str, Check] = {**PARAM_FIELDS, "cons": STRS, "force": BOOL, "omit": BOOL}
# TF.js hints may also set a parameter's JS default.
TFJS_PARAM_FIELDS: dict[str, Check] = {**PARAM_FIELDS, "default": ANY}


# ---- sections ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Section:
    """One top-level key of a hint file.

    ``kind``: ``names`` (a list of strings, returned as a frozenset), ``prefixes`` (a
    list of strings, returned as a tuple), ``reasons`` (name -> why, a string),
    ``pairs`` (name -> two parameter names, returned as a tuple), ``targets`` (name ->
    a function path), ``calls`` (API -> how a counterpart calls its target: ``target``,
    ``args``, ``rename``, ``extra``, ``requires_default``),
    ``fields`` (name -> parameter fields), ``name_types`` (name -> {"structures", "length"},
    returned as the pair (structures, length or None)) or ``apis`` (API -> entry with
    ``params`` and the keys in ``entry``). ``tuples`` says whether list-valued fields are
    returned as tuples; ``tuple_keys`` lists entry keys returned as tuples as well.
    """

    kind: str
    fields: dict[str, Check] | None = None
    entry: dict[str, Check] | None = None
    tuples: bool = False
    tuple_keys: frozenset[str] = frozenset()


_TORCH_API = {"constraints": STRS, "drop": STRS, "reject": STRS, "no_dim_rule": BOOL,
              "specials": BOOL, "random": BOOL}
_TF_API = {"constraints": STRS, "drop": STRS, "drop_constraints": STRS, "random": BOOL,
           "skip": STR, "specials": BOOL}
_TFJS_API = {"constraints": STRS, "drop": STRS, "skip": STR, "axis": BOOL, "random": BOOL}
_JAX_API = {"constraints": STRS, "drop": STRS, "add": OBJECTS, "broadcast": STR_GROUPS,
            "axes": STRS, "own_axes": STRS, "random": BOOL, "specials": BOOL, "notes": STR}

SCHEMAS: dict[str, dict[str, Section]] = {
    "torch": {
        "exclude_prefixes": Section("prefixes"),
        "exclude": Section("names"),
        "nn_duplicates": Section("names"),
        "drop_params": Section("names"),
        "name_types": Section("name_types"),
        "name_fields": Section("fields", PARAM_FIELDS, tuples=True),
        "dim_names": Section("names"),
        "dims_names": Section("names"),
        "index_names": Section("names"),
        "skip": Section("reasons"),
        "apis": Section("apis", PARAM_FIELDS, _TORCH_API, tuples=True),
    },
    "tf": {
        "exclude": Section("names"),
        "skip": Section("reasons"),
        "random": Section("names"),
        "names": Section("fields", TF_NAME_FIELDS, tuples=True),
        "broadcast_ops": Section("names"),
        "nonzero_divisor": Section("names"),
        "apis": Section("apis", PARAM_FIELDS, _TF_API, tuples=True,
                        tuple_keys=frozenset({"drop"})),
    },
    "tfjs": {
        "int_names": Section("names"),
        "random": Section("names"),
        "name_fields": Section("fields", PARAM_FIELDS, tuples=True),
        "apis": Section("apis", TFJS_PARAM_FIELDS, _TFJS_API, tuples=True,
                        tuple_keys=frozenset({"drop"})),
        "broadcast": Section("pairs"),
        "not_broadcast": Section("names"),
    },
    # Same-name counterpart candidates of TF.js ops in TensorFlow (specgen.counterparts.tfjs).
    "tfjs_counterparts": {
        "unary": Section("targets"),
        "binary": Section("targets"),
        "reduce": Section("targets"),
        "special": Section("calls"),
    },
    "jax": {
        "skip": Section("reasons"),
        "drop": Section("names"),
        "name_kinds": Section("fields", PARAM_FIELDS),
        "axis_names": Section("names"),
        "axes_names": Section("names"),
        "apis": Section("apis", PARAM_FIELDS, _JAX_API),
    },
}


# ---- loading ----------------------------------------------------------------------------
class _Reader:
    """Checks one file's sections and converts them; every error names file and key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, value: Any, expected: str) -> UsageError:
        shown = json.dumps(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return UsageError(f"{self.path}: {where} is {shown}; expected {expected} "
                          "(fix the hint file; see dlfuzz/specgen/hintfiles.py for the format)")

    def mapping(self, where: str, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise self.fail(where, raw, "an object")
        return raw

    def checked(self, where: str, raw: dict[str, Any], checks: dict[str, Check],
                tuples: bool, tuple_keys: frozenset[str] = frozenset()) -> dict[str, Any]:
        out = {}
        for key, value in raw.items():
            check = checks.get(key)
            if check is None:
                raise self.fail(f"{where}: key {key!r}", key,
                                "one of " + ", ".join(sorted(checks)))
            test, expected = check
            if not test(value):
                raise self.fail(f"{where}.{key}", value, expected)
            if isinstance(value, list) and (tuples or key in tuple_keys):
                value = tuple(value)
            out[key] = value
        return out

    def section(self, name: str, spec: Section, raw: Any) -> Any:
        if spec.kind in ("names", "prefixes"):
            if not _strs(raw):
                raise self.fail(name, raw, "a list of strings")
            return frozenset(raw) if spec.kind == "names" else tuple(raw)
        table = self.mapping(name, raw)
        if spec.kind == "reasons":
            for key, why in table.items():
                if not isinstance(why, str) or not why:
                    raise self.fail(f"{name}[{key!r}]", why, "a non-empty reason string")
            return dict(table)
        if spec.kind == "targets":
            for key, target in table.items():
                if not isinstance(target, str) or not target:
                    raise self.fail(f"{name}[{key!r}]", target, "a function path (a string)")
            return dict(table)
        if spec.kind == "calls":
            return {api: self.call(f"{name}[{api!r}]", value) for api, value in table.items()}
        if spec.kind == "pairs":
            for key, pair in table.items():
                if not _name_pair(pair):
                    raise self.fail(f"{name}[{key!r}]", pair, "a list of two parameter names")
            return {key: tuple(pair) for key, pair in table.items()}
        if spec.kind == "name_types":
            return {key: self.name_type(f"{name}[{key!r}]", value)
                    for key, value in table.items()}
        assert spec.fields is not None
        if spec.kind == "fields":
            return {key: self.checked(f"{name}[{key!r}]", self.mapping(f"{name}[{key!r}]", v),
                                      spec.fields, spec.tuples)
                    for key, v in table.items()}
        assert spec.kind == "apis" and spec.entry is not None
        return {api: self.api(f"{name}[{api!r}]", spec, entry) for api, entry in table.items()}

    def name_type(self, where: str, raw: Any) -> tuple[tuple[str, ...], tuple[int, int] | None]:
        value = self.mapping(where, raw)
        if set(value) != {"structures", "length"}:
            raise self.fail(where, value, 'an object with "structures" and "length" (or null)')
        if not _strs(value["structures"]):
            raise self.fail(f"{where}.structures", value["structures"], "a list of strings")
        rng = value["length"]
        if rng is not None and not _int_pair(rng):
            raise self.fail(f"{where}.length", rng, "null or a list of two integers")
        return tuple(value["structures"]), None if rng is None else tuple(rng)

    def call(self, where: str, raw: Any) -> dict[str, Any]:
        value = self.mapping(where, raw)
        keys = {"target", "args", "rename", "extra", "requires_default"}
        if set(value) != keys:
            raise self.fail(where, sorted(value), "the keys " + ", ".join(sorted(keys)))
        if not isinstance(value["target"], str) or not value["target"]:
            raise self.fail(f"{where}.target", value["target"], "a function path (a string)")
        if not _strs(value["args"]):
            raise self.fail(f"{where}.args", value["args"], STRS[1])
        rename = self.mapping(f"{where}.rename", value["rename"])
        if not all(isinstance(v, str) for v in rename.values()):
            raise self.fail(f"{where}.rename", rename, "an object of parameter -> tf name")
        self.mapping(f"{where}.extra", value["extra"])
        self.mapping(f"{where}.requires_default", value["requires_default"])
        return value

    def api(self, where: str, spec: Section, raw: Any) -> dict[str, Any]:
        assert spec.fields is not None and spec.entry is not None
        entry = self.mapping(where, raw)
        params = entry.get("params")
        rest = {k: v for k, v in entry.items() if k != "params"}
        out = self.checked(where, rest, spec.entry, False, spec.tuple_keys)
        if params is None:
            return {k: out[k] for k in entry if k in out}
        table = self.mapping(f"{where}.params", params)
        fields = {name: self.checked(f"{where}.params[{name!r}]",
                                     self.mapping(f"{where}.params[{name!r}]", value),
                                     spec.fields, spec.tuples)
                  for name, value in table.items()}
        return {k: fields if k == "params" else out[k] for k in entry}


def read(library: str, path: Path | None = None) -> dict[str, Any]:
    """The checked sections of ``path`` (default: the built-in file ``<library>.json``;
    ``library`` names the schema: a library, or ``tfjs_counterparts``)."""
    if library not in SCHEMAS:
        raise UsageError(f"no hint schema for library {library!r}; known: "
                         + ", ".join(sorted(SCHEMAS)))
    path = path or HINTS_DIR / f"{library}.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the hint file ({exc.strerror})") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}); fix the syntax there") from exc
    reader = _Reader(path)
    top = reader.mapping("the file", raw)
    if top.get("format") != FORMAT:
        raise reader.fail("format", top.get("format"), f"{FORMAT}")
    if not _strs(top.get("about", [])):
        raise reader.fail("about", top.get("about"), "a list of strings (what the file holds)")
    schema = SCHEMAS[library]
    out = {}
    for name, value in top.items():
        if name in ("format", "about"):
            continue
        if name not in schema:
            raise reader.fail(f"section {name!r}", name,
                              "one of " + ", ".join(["about", "format", *sorted(schema)]))
        out[name] = reader.section(name, schema[name], value)
    missing = sorted(set(schema) - set(out))
    if missing:
        raise reader.fail("the file", sorted(out), "also the sections " + ", ".join(missing))
    return out


@functools.cache
def load(library: str) -> dict[str, Any]:
    """``read(library)`` of the built-in file, once per process. Callers must not mutate
    what it returns (the sections are shared)."""
    return read(library)

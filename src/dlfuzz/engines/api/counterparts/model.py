"""Counterparts (DLLens §III-A): another implementation of an API's computation.

A ``Counterpart`` says how to compute what API ``api`` computes with something else:

* ``same-name``: a function of another library with the same meaning (``torch.sin`` ↔
  ``jax.numpy.sin``), called with adapted arguments;
* ``composition``: a hand-written function of ``compose_<library>.py`` that takes the API's
  parameter names and composes that library's functions (NCHW conv via NHWC ``tf.nn``);
* ``mode``: the same API on a compiled backend of its own library (``library`` is that
  backend: ``torch-compile``, ``jax-jit``, ``tf-xla``; ``target`` is the API);
* ``precision``: the same API computed in float64 from upcast inputs, rounded back;
* ``llm``: code written by an LLM (stored in ``code``), run by ``llm_exec.run``.

``call(mapping)`` turns the API's parameter values (tensors already replaced by ``Ref``)
into the counterpart's ``Call``: ``args`` are the API parameters passed by position (a
leading ``*`` spreads a list), every other present parameter is passed by keyword under
its ``rename`` name, ``convert`` adapts a value (int → tuple, ...), ``extra`` adds constant
keywords (a parameter that maps to the same keyword wins), ``drop`` lists parameters that
are never passed. ``requires_default`` maps parameters the counterpart cannot express to
the only value it is valid for (absent or equal to the API's default): ``applies`` is
False otherwise, and so it is when the input's dtype is not one of the ``dtypes`` the
counterpart was validated on. ``requires_value`` lists the API's optional parameters
that the counterpart needs a value for (present and not None): its own parameter is
required and takes no None (``torch.cumsum``'s ``dim`` for ``jnp.cumsum``'s ``axis``,
whose None flattens).

``not_on`` lists the degenerate shapes (``SHAPE_EDGES``: a rank-0 tensor, a tensor with
a zero-size dimension) where validation saw the counterpart fail or differ while the
API returned: ``applies`` is False for an input holding one. Libraries part ways there
by design (``jnp.cumsum`` has no axis 0 on a scalar, which torch's ``cumsum`` accepts;
a composed NCHW convolution has nothing to compute with zero channels), and a dtype
excluded for such an input alone took the counterpart away from every ordinary input of
that dtype: torch's float32 ``cumsum`` and ``conv2d`` had no counterpart at all.

A counterpart dlfuzz wrote itself (``composition``, ``llm``) is trusted on IEEE special
inputs only where a check showed it computes what the native API computes there:
``specials`` lists the kinds of special value (``SPECIAL_KINDS``: NaN, +inf, -inf, -0.0,
large finite) on which ``python -m dlfuzz.specgen.counterparts specials`` found it equal to
the API (``specgen/counterparts/specials.py``; a disagreement is kept in its evidence,
``specials_disagree``). An input holding any other kind makes ``applies`` False, so an
untrusted re-implementation never judges it: a ``hardshrink`` written as ``where(|x| >
lambd, x, 0)`` maps NaN to 0 where torch propagates it, and would blame torch.

Files ``data/counterparts/<library>.json`` hold the validated counterparts of one
library's APIs (one JSON object per line, with the validation evidence) plus the rejected
candidates with why, so a refresh is a readable diff.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import Call, DType, Ref
from dlfuzz.errors import DlfuzzError, UsageError
from dlfuzz.libraries import all_libraries, get

FORMAT = 1
KINDS = ("same-name", "composition", "mode", "precision", "llm")
# compiled-mode backend -> the library it runs (from the library records)
MODE_BACKENDS: dict[str, str] = {b: lib.name for b in ("torch-compile", "jax-jit", "tf-xla")
                                 for lib in all_libraries() if b in lib.backend_names}
LIBRARIES = ("torch", "tf", "jax")
FILE_LIBRARIES = (*LIBRARIES, "tfjs", "numpy")  # spec libraries with a counterparts file
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "counterparts"
_PACKAGE = "dlfuzz.engines.api.counterparts"
PRECISION_RUNNERS = {lib: f"{_PACKAGE}.precision.run_{lib}" for lib in LIBRARIES}
LLM_RUNNER = f"{_PACKAGE}.llm_exec.run"
_KEYS = frozenset({"api", "library", "kind", "target", "args", "rename", "extra", "drop",
                   "convert", "requires_default", "requires_value", "dtypes", "not_on",
                   "specials", "code", "evidence"})
# Degenerate input shapes a counterpart may be kept off (``not_on``), as
# ``shape_edges`` names them.
SHAPE_EDGES = ("rank0", "empty")
# Kinds of IEEE special value a dlfuzz-written counterpart must be checked on before it
# may judge an input holding them (see the module docstring).
SPECIAL_KINDS = ("nan", "inf", "-inf", "-0", "large")
DLFUZZ_WRITTEN = frozenset({"composition", "llm"})


class NotApplicable(DlfuzzError):
    """The counterpart cannot express this input (a parameter away from its default)."""


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, list | tuple):
        return tuple(value)
    return (value,)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _pair(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    return _as_tuple(value)


def _scalar(value: Any) -> Any:
    if isinstance(value, list | tuple) and len(value) == 1:
        return value[0]
    return value


def _tuple_or_none(value: Any) -> Any:
    return None if value is None else _as_tuple(value)


# Value adapters by name: the file says "convert": {"dim": "tuple"}.
CONVERSIONS: dict[str, Callable[[Any], Any]] = {
    "tuple": _as_tuple,                 # 1 -> (1,), [1, 2] -> (1, 2)
    "tuple_or_none": _tuple_or_none,    # None stays None
    "list": _as_list,
    "pair": _pair,                      # 2 -> (2, 2)
    "scalar": _scalar,                  # [3] -> 3
    "bool": bool,
    "int": int,
    "float": float,
}


@dataclass(frozen=True)
class Counterpart:
    """One way to compute ``api`` with ``library`` (see the module docstring)."""

    api: str
    library: str
    kind: str
    target: str
    args: tuple[str, ...] = ()
    rename: tuple[tuple[str, str], ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    drop: tuple[str, ...] = ()
    convert: tuple[tuple[str, str], ...] = ()
    requires_default: tuple[tuple[str, Any], ...] = ()
    requires_value: tuple[str, ...] = ()  # API parameters it needs present, not None
    dtypes: tuple[str, ...] = ()     # validated input dtypes (empty: not restricted)
    # SHAPE_EDGES where it fails or differs (validation's finding, like ``specials`` kept
    # out of the repr that fingerprints candidate lists)
    not_on: tuple[str, ...] = field(default=(), repr=False)
    # special kinds checked equal to the API (dlfuzz-written; kept out of the repr that
    # fingerprints candidate lists, which never carry it)
    specials: tuple[str, ...] = field(default=(), repr=False)
    code: str = ""                   # kind "llm": the function's source
    evidence: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str, str, str, tuple[str, ...]]:
        """What identifies a candidate across validation runs (the same target may come
        twice: passing None for a parameter, and only where it has a value)."""
        return (self.api, self.library, self.kind, self.target, self.requires_value)

    @property
    def worker_library(self) -> str:
        """The library whose worker runs the call (a mode's backend belongs to its library)."""
        return MODE_BACKENDS.get(self.library, self.library)

    def evidence_dict(self) -> dict[str, Any]:
        return dict(self.evidence)

    @property
    def dlfuzz_written(self) -> bool:
        """Whether dlfuzz wrote this implementation (not a library's own function)."""
        return self.kind in DLFUZZ_WRITTEN

    def trusted_on(self, kinds: Iterable[str]) -> bool:
        """Whether this counterpart may judge an input holding these special kinds: a
        library's own function always may, a dlfuzz-written one where checked."""
        return not self.dlfuzz_written or set(kinds) <= set(self.specials)

    # ---- applicability --------------------------------------------------------------
    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether this counterpart can compute this draw (numpy values or Refs).

        Parameters in ``requires_default`` must be absent or at that value; with numpy
        arrays in ``values`` the input dtype must be one the counterpart was validated on, and
        the input must hold none of the shapes in ``not_on``.
        """
        if not self._defaults_ok(values):
            return False
        if self.dtypes:
            key = dtype_key(values)
            if key is not None and key not in self.dtypes:
                return False
        if self.not_on and shape_edges(values) & set(self.not_on):
            return False
        return not self.dlfuzz_written or self.trusted_on(special_kinds(values))

    def _defaults_ok(self, values: Mapping[str, Any]) -> bool:
        for name, default in self.requires_default:
            if name in values and not _same_value(values[name], default):
                return False
        return all(values.get(name) is not None for name in self.requires_value)

    # ---- the call -------------------------------------------------------------------
    def call(self, mapping: Mapping[str, Any]) -> Call:
        """The counterpart's Call for the API's parameter values (Refs for tensors).

        Raises ``NotApplicable`` when a ``requires_default`` parameter has another value.
        """
        if not self._defaults_ok(mapping):
            bad = [n for n, d in self.requires_default
                   if n in mapping and not _same_value(mapping[n], d)]
            unset = [n for n in self.requires_value if mapping.get(n) is None]
            raise NotApplicable(f"{self.target} for {self.api} cannot take "
                                f"{', '.join(bad)} away from the default" if bad else
                                f"{self.target} for {self.api} needs a value for "
                                f"{', '.join(unset)}")
        convert = dict(self.convert)
        rename = dict(self.rename)
        skip = set(self.drop) | {n for n, _ in self.requires_default}

        def value(name: str) -> Any:
            v = mapping[name]
            how = convert.get(name)
            return CONVERSIONS[how](v) if how else v

        args: list[Any] = []
        positional: set[str] = set()
        for item in self.args:
            name = item.lstrip("*")
            if name not in mapping:
                break  # later parameters go by keyword, under their counterpart name
            positional.add(name)
            if item.startswith("*"):
                args.extend(_as_list(value(name)))
            else:
                args.append(value(name))
        kwargs: dict[str, Any] = dict(self.extra)
        for name in positional:  # a default in extra must not repeat a positional value
            kwargs.pop(rename.get(name, name), None)
        for name in mapping:
            if name in positional or name in skip:
                continue
            kwargs[rename.get(name, name)] = value(name)
        if self.kind == "precision":
            return Call(PRECISION_RUNNERS[self.library], (self.target, *args),
                        tuple(kwargs.items()))
        if self.kind == "llm":
            return Call(LLM_RUNNER, (self.code, self.target, *args), tuple(kwargs.items()))
        return Call(self.target, tuple(args), tuple(kwargs.items()))


def _same_value(a: Any, b: Any) -> bool:
    """Equality of parameter values as a draw holds them (True is not 1, a tensor is never
    a default)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Ref | np.ndarray) or isinstance(b, Ref | np.ndarray):
        return False
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values are different values
        return False


def _large(dtype: np.dtype[Any]) -> float:
    """Magnitude from which a value's square overflows its dtype: 'large finite'."""
    try:
        return float(np.finfo(dtype).max) ** 0.5
    except (TypeError, ValueError):
        return float("inf")


def special_kinds(values: Mapping[str, Any]) -> frozenset[str]:
    """Which ``SPECIAL_KINDS`` the floating arrays among ``values`` hold (complex: either
    part). Refs and non-floating values hold none."""
    found: set[str] = set()
    for v in values.values():
        arrays = v if isinstance(v, list | tuple) else (v,)
        for a in arrays:
            if not isinstance(a, np.ndarray) or a.size == 0:
                continue
            kind = "f" if a.dtype.name == "bfloat16" else a.dtype.kind
            if kind not in "fc":
                continue
            large = _large(a.real.dtype if kind == "c" else a.dtype)
            parts = (a.real, a.imag) if kind == "c" else (a,)
            for part in parts:
                x = part.astype(np.float64)
                with np.errstate(invalid="ignore"):
                    if np.isnan(x).any():
                        found.add("nan")
                    if (x == np.inf).any():
                        found.add("inf")
                    if (x == -np.inf).any():
                        found.add("-inf")
                    if ((x == 0) & np.signbit(x)).any():
                        found.add("-0")
                    if (np.isfinite(x) & (np.abs(x) >= large)).any():
                        found.add("large")
    return frozenset(found)


def shape_edges(values: Mapping[str, Any]) -> frozenset[str]:
    """Which edge shapes the arrays among ``values`` have: ``rank0`` (a 0-d tensor),
    ``empty`` (a zero-size one), ``size1`` (a dimension of size 1)."""
    found: set[str] = set()
    for v in values.values():
        arrays = v if isinstance(v, list | tuple) else (v,)
        for a in arrays:
            if not isinstance(a, np.ndarray):
                continue
            if a.ndim == 0:
                found.add("rank0")
            if a.size == 0:
                found.add("empty")
            if 1 in a.shape:
                found.add("size1")
    return frozenset(found)


def dtype_key(values: Mapping[str, Any]) -> str | None:
    """The dtype an input is validated and selected by: its first tensor's (in parameter
    order), else a dtype argument's; None when the values hold neither (Refs only)."""
    for v in values.values():
        if isinstance(v, np.ndarray):
            return v.dtype.name
        if isinstance(v, list | tuple) and v and all(isinstance(x, np.ndarray) for x in v):
            return v[0].dtype.name
    for v in values.values():
        if isinstance(v, DType):
            return v.name
    return None


# ---- files ------------------------------------------------------------------------------
def _fail(path: Path, line: int, key: str, value: Any, fix: str, api: str = "") -> UsageError:
    where = f": api {api!r}" if api else ""
    return UsageError(f"{path}:{line}{where}: key {key!r} has bad value {value!r}; {fix}")


def _pairs(path: Path, line: int, api: str, key: str, raw: Any, strings: bool
           ) -> tuple[tuple[str, Any], ...]:
    if not isinstance(raw, dict) or (strings and not all(
            isinstance(v, str) for v in raw.values())):
        kind = "strings" if strings else "values"
        raise _fail(path, line, key, raw, f"write an object of parameter name -> {kind}", api)
    return tuple((str(k), _freeze(v)) for k, v in raw.items())


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict) and set(value) == {"dtype"}:
        return DType(str(value["dtype"]))
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, DType):
        return {"dtype": value.name}
    return value


def from_json(raw: Any, path: Path, line: int) -> Counterpart:
    """One counterpart object of a file, checked key by key."""
    if not isinstance(raw, dict):
        raise _fail(path, line, "counterparts[]", raw, "write one object per counterpart")
    api = raw.get("api")
    if not isinstance(api, str) or "." not in api:
        raise _fail(path, line, "api", api, "write the API's dotted path, e.g. 'torch.sin'")
    for key in raw:
        if key not in _KEYS:
            raise _fail(path, line, key, raw[key], "unknown key; allowed: "
                        + ", ".join(sorted(_KEYS)), api)
    kind = raw.get("kind")
    if kind not in KINDS:
        raise _fail(path, line, "kind", kind, "use one of " + ", ".join(KINDS), api)
    library = raw.get("library")
    allowed = tuple(MODE_BACKENDS) if kind == "mode" else LIBRARIES
    if library not in allowed:
        raise _fail(path, line, "library", library, "use one of " + ", ".join(allowed), api)
    target = raw.get("target")
    if not isinstance(target, str) or not target or not all(
            p.isidentifier() for p in target.split(".")):
        raise _fail(path, line, "target", target, "write the dotted path of the function "
                    "to call (for llm: the function's name in 'code')", api)
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(
            isinstance(a, str) and a.lstrip("*").isidentifier() for a in args):
        raise _fail(path, line, "args", args, "write a list of the API's parameter names "
                    "passed by position ('*name' spreads a list)", api)
    drop = raw.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(d, str) for d in drop):
        raise _fail(path, line, "drop", drop, "write a list of parameter names", api)
    convert = _pairs(path, line, api, "convert", raw.get("convert", {}), strings=True)
    for name, how in convert:
        if how not in CONVERSIONS:
            raise _fail(path, line, f"convert.{name}", how, "use one of "
                        + ", ".join(CONVERSIONS), api)
    dtypes = raw.get("dtypes", [])
    if not isinstance(dtypes, list) or not all(isinstance(d, str) for d in dtypes):
        raise _fail(path, line, "dtypes", dtypes, "write a list of dtype names", api)
    requires_value = raw.get("requires_value", [])
    if not isinstance(requires_value, list) or not all(
            isinstance(n, str) and n.isidentifier() for n in requires_value):
        raise _fail(path, line, "requires_value", requires_value, "write a list of the API "
                    "parameter names the counterpart needs a value (not None) for", api)
    not_on = raw.get("not_on", [])
    if not isinstance(not_on, list) or not all(e in SHAPE_EDGES for e in not_on):
        raise _fail(path, line, "not_on", not_on, "write a list of the shapes the "
                    "counterpart is kept off, from " + ", ".join(SHAPE_EDGES), api)
    specials = raw.get("specials", [])
    if not isinstance(specials, list) or not all(k in SPECIAL_KINDS for k in specials):
        raise _fail(path, line, "specials", specials, "write a list of special kinds the "
                    "check found equal to the API, from " + ", ".join(SPECIAL_KINDS), api)
    code = raw.get("code", "")
    if kind == "llm" and (not isinstance(code, str) or f"def {target}" not in code):
        raise _fail(path, line, "code", code, f"an llm counterpart needs the source of "
                    f"'def {target}(...)' in 'code'", api)
    evidence = raw.get("evidence", {})
    if not isinstance(evidence, dict):
        raise _fail(path, line, "evidence", evidence, "write an object", api)
    return Counterpart(
        api=api, library=library, kind=kind, target=target, args=tuple(args),
        rename=_pairs(path, line, api, "rename", raw.get("rename", {}), strings=True),
        extra=_pairs(path, line, api, "extra", raw.get("extra", {}), strings=False),
        drop=tuple(drop), convert=convert,
        requires_default=_pairs(path, line, api, "requires_default",
                                raw.get("requires_default", {}), strings=False),
        requires_value=tuple(requires_value),
        dtypes=tuple(dtypes), not_on=tuple(not_on), specials=tuple(specials),
        code=str(code),
        evidence=tuple(sorted((str(k), _freeze(v)) for k, v in evidence.items())))


def to_json(cp: Counterpart) -> dict[str, Any]:
    """The file form of a counterpart (what ``from_json`` reads back)."""
    out: dict[str, Any] = {"api": cp.api, "library": cp.library, "kind": cp.kind,
                           "target": cp.target}
    if cp.args:
        out["args"] = list(cp.args)
    for key in ("rename", "extra", "convert", "requires_default"):
        pairs = getattr(cp, key)
        if pairs:
            out[key] = {k: _thaw(v) for k, v in pairs}
    if cp.drop:
        out["drop"] = list(cp.drop)
    if cp.requires_value:
        out["requires_value"] = list(cp.requires_value)
    if cp.dtypes:
        out["dtypes"] = list(cp.dtypes)
    if cp.not_on:
        out["not_on"] = list(cp.not_on)
    if cp.specials:
        out["specials"] = list(cp.specials)
    if cp.code:
        out["code"] = cp.code
    if cp.evidence:
        out["evidence"] = {k: _thaw(v) for k, v in cp.evidence}
    return out


@dataclass(frozen=True)
class CounterpartFile:
    """A file's content: accepted counterparts, rejected candidates (with why), header."""

    library: str
    counterparts: tuple[Counterpart, ...]
    rejected: tuple[dict[str, Any], ...] = ()
    header: tuple[tuple[str, Any], ...] = ()


def load_file(path: str | Path) -> CounterpartFile:
    """Read and check one counterpart file; errors name the file, line, key and fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the counterpart file ({exc.strerror}); "
                         "check the path or run 'python -m dlfuzz.specgen.counterparts "
                         "validate'") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
                         "fix the syntax there") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("counterparts"), list):
        raise _fail(path, 1, "counterparts", type(raw).__name__,
                    "the file must be an object with a 'counterparts' list")
    if raw.get("format") != FORMAT:
        raise _fail(path, 1, "format", raw.get("format"), f"write \"format\": {FORMAT}")
    library = raw.get("library")
    if library not in FILE_LIBRARIES:
        raise _fail(path, 1, "library", library, "use one of " + ", ".join(FILE_LIBRARIES))
    lines = _object_lines(text, len(raw["counterparts"]))
    cps = tuple(from_json(item, path, lines[i]) for i, item in enumerate(raw["counterparts"]))
    for i, cp in enumerate(cps):
        if not cp.api.startswith(_PREFIX[library]):
            raise _fail(path, lines[i], "api", cp.api, f"a {library} file holds counterparts "
                        f"of {_PREFIX[library]}* APIs; move it to that library's file")
    rejected = raw.get("rejected", [])
    if not isinstance(rejected, list):
        raise _fail(path, 1, "rejected", rejected, "write a list of objects")
    header = tuple((k, v) for k, v in raw.items() if k not in ("counterparts", "rejected"))
    return CounterpartFile(library, cps, tuple(rejected), header)


_PREFIX = {n: get(n).prefixes[0] for n in FILE_LIBRARIES}  # what a file's APIs start with


def _object_lines(text: str, count: int) -> list[int]:
    """Line of each counterpart object, for errors (files keep one object per line)."""
    start = text.count("\n", 0, max(0, text.find('"counterparts"'))) + 1
    lines = [number for number, line in enumerate(text.splitlines(), 1)
             if number >= start and line.lstrip().startswith('{"api"')][:count]
    return lines + [1] * (count - len(lines))


def load_counterparts(library: str, path: str | Path | None = None
                      ) -> dict[str, list[Counterpart]]:
    """API path -> its validated counterparts, from the built-in file (or ``path``).

    A library without a built-in file yet has no counterparts (an empty table).
    """
    if path is not None:
        return _table(load_file(path).counterparts)
    if library not in FILE_LIBRARIES:
        raise UsageError(f"no counterparts for library {library!r}; libraries: "
                         + ", ".join(FILE_LIBRARIES))
    return _table(_builtin(library))


@functools.lru_cache(maxsize=4)
def _builtin(library: str) -> tuple[Counterpart, ...]:
    path = DATA_DIR / f"{library}.json"
    if not path.exists():
        return ()
    return load_file(path).counterparts


def _table(cps: Iterable[Counterpart]) -> dict[str, list[Counterpart]]:
    out: dict[str, list[Counterpart]] = {}
    for cp in cps:
        out.setdefault(cp.api, []).append(cp)
    return out


def dump(library: str, counterparts: Iterable[Counterpart], path: str | Path,
         rejected: Iterable[Mapping[str, Any]] = (), header: Mapping[str, Any] | None = None
         ) -> None:
    """Write a file: one counterpart (and one rejected candidate) per line."""
    head = {"format": FORMAT, "library": library, **dict(header or {})}
    cps = sorted(counterparts, key=lambda c: (c.api, KINDS.index(c.kind), c.library, c.target))
    parts = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
             + ","]
    parts.append(' "counterparts": [' + ("\n  " if cps else "")
                 + ",\n  ".join(json.dumps(to_json(c)) for c in cps) + "],")
    rej = sorted(rejected, key=lambda r: (str(r.get("api")), str(r.get("target"))))
    parts.append(' "rejected": [' + ("\n  " if rej else "")
                 + ",\n  ".join(json.dumps(dict(r)) for r in rej) + "]}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(parts) + "\n", encoding="utf-8")
    _builtin.cache_clear()

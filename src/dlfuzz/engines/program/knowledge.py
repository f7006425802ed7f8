"""API knowledge base of the program engine (MoCo §III-C): layer constructors and their values.

MoCo's three mutation operators need, per layer API, the parameter list with each
parameter's structure, legal range and enum values, plus the inter-parameter constraints:

* random generation (RG) changes ONE parameter to a value inside its legal range that keeps
  every constraint true given the block's other values (``random_value``);
* boundary checking (BC) sets ONE parameter just outside its legal range, producing a
  negative node that must raise (``boundary_value``);
* tree pruning groups nodes by the equivalence class of the mutated value
  (``value_class``): legal / boundary (equal to a bound) / illegal for numbers, True/False
  for bools, one class per option for enums.

The data are offline-extracted, hand-editable files under ``data/`` (written by
``dlfuzz.specgen.program_knowledge``): ``<lib>.json`` in the API engine's format 2 (``LibSpec``; the
``range`` of a parameter is the finite range random generation draws from) and
``<lib>_context.json`` with what format 2 has no key for: the true legal interval of each
parameter (``"[1, inf)"``, ``"(0, inf)"``, ``"[0, 1]"``), the constructor parameters that
must match the incoming tensor and the input axis they come from, accepted input ranks,
the output rank, the parameter setting the output channel count, tensor-input arity and
parameters the engine must not mutate in a slot (they change the output structure).

Ranks count the batch dimension. No deep learning library is imported here: the engine
runs in the campaign process, the layers run in sandboxed workers.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.engines.api.constraints import Env, evaluate, holds, names_in, parse
from dlfuzz.engines.api.libspecs import LibParam, LibSpec, load_file
from dlfuzz.errors import UsageError
from dlfuzz.libraries import LIBRARIES

DATA_DIR = Path(__file__).resolve().parent / "data"
# library -> (layer specs, layer context) under DATA_DIR, from the library records
FILES: dict[str, tuple[str, str]] = {
    lib.name: (lib.program_files["knowledge"], lib.program_files["context"])
    for lib in LIBRARIES if lib.program_files}
ATTEMPTS = 24          # random draws tried before random_value gives up
BAD_ENUM = "not_a_valid_option"
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^\s\])]+)\s*([\])])\s*$")


@dataclass(frozen=True)
class Bounds:
    """A legal interval; infinite sides are ``math.inf``."""

    lo: float
    hi: float
    lo_closed: bool = True
    hi_closed: bool = True

    def contains(self, x: float) -> bool:
        above = x >= self.lo if self.lo_closed else x > self.lo
        below = x <= self.hi if self.hi_closed else x < self.hi
        return above and below

    def on_bound(self, x: float) -> bool:
        return (math.isfinite(self.lo) and x == self.lo) or (
            math.isfinite(self.hi) and x == self.hi)


def parse_interval(text: str) -> Bounds:
    """``"[1, inf)"`` -> Bounds(1, inf, True, False); a UsageError names the bad text."""
    m = _INTERVAL.match(text)
    if not m:
        raise UsageError(f"legal interval {text!r} does not parse; write e.g. '[1, inf)' or "
                         "'(0, 1]'")
    try:
        lo, hi = float(m.group(2)), float(m.group(3))
    except ValueError:
        raise UsageError(f"legal interval {text!r}: bounds must be numbers or inf") from None
    return Bounds(lo, hi, m.group(1) == "[" and math.isfinite(lo),
                  m.group(4) == "]" and math.isfinite(hi))


# ---- loading --------------------------------------------------------------------------
def _files(library: str) -> tuple[Path, Path]:
    if library not in FILES:
        raise UsageError(f"no program knowledge base for library {library!r}; known: "
                         + ", ".join(FILES))
    spec_file, ctx_file = FILES[library]
    return DATA_DIR / spec_file, DATA_DIR / ctx_file


@functools.lru_cache(maxsize=4)
def _kb(library: str) -> tuple[tuple[str, LibSpec], ...]:
    return tuple((s.api, s) for s in load_file(_files(library)[0]))


def load_kb(library: str) -> dict[str, LibSpec]:
    """Every layer spec of ``library`` ("torch" | "keras") by API path."""
    return dict(_kb(library))


@functools.lru_cache(maxsize=4)
def _contexts(library: str) -> dict[str, dict[str, Any]]:
    path = _files(library)[1]
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the context file ({exc}); regenerate it with "
                         f"python -m dlfuzz.specgen.program_knowledge {library}") from exc
    apis = raw.get("apis") if isinstance(raw, dict) else None
    if not isinstance(apis, dict):
        raise UsageError(f"{path}: key 'apis' must map API paths to context objects")
    return apis


def context(library: str, api: str) -> dict[str, Any]:
    """The raw context entry of an API (empty when the API has none)."""
    return dict(_contexts(library).get(api, {}))


@functools.lru_cache(maxsize=1)
def _hand_rules() -> dict[str, Any]:
    return dict(json.loads((DATA_DIR / "hand_rules.json").read_text(encoding="utf-8")))


def legal_source(library: str, api: str, param: str) -> str:
    """Where the legal range (or option list) of ``param`` comes from, as a validation
    report names it: the hand rules (per API or per parameter name) or the API's
    docstring (the range ``specgen`` extracted from it)."""
    hand = _hand_rules().get(library, {})
    where = "src/dlfuzz/engines/program/data/hand_rules.json"
    rule = hand.get("apis", {}).get(api.rsplit(".", 1)[-1], {}).get("params", {}).get(param)
    if rule and ("legal" in rule or "values" in rule):
        return f"hand table: {where} ({api.rsplit('.', 1)[-1]}.{param})"
    rule = hand.get("params", {}).get(param)
    if rule and ("legal" in rule or "values" in rule):
        return f"hand table: {where} (rule for every parameter named {param!r})"
    return f"documentation: the range or options of {param!r} in {api}'s docstring"


def context_params(library: str, api: str) -> dict[str, str]:
    """Constructor params that must equal a size of the incoming tensor: param -> axis.

    The axis is a string: ``"1"`` = ``input.shape[1]`` (channels-first), ``"-1"`` = the last
    axis (features). Keras infers these sizes, so its APIs have none.
    """
    return dict(context(library, api).get("match", {}))


def accepts_rank(library: str, api: str, rank: int) -> bool:
    """Whether the layer accepts an input of this rank (batch dimension included)."""
    ranks = context(library, api).get("ranks")
    if not ranks:
        return True
    return int(ranks[0]) <= rank <= int(ranks[1])


def output_rank(library: str, api: str, in_rank: int,
                values: dict[str, Any] | None = None) -> int | None:
    """Rank of the (first) output for an input of ``in_rank``; None when unknown.

    The context stores an expression over ``rank`` and the constructor params
    (``"rank"``, ``"2"``, ``"3 if return_sequences else 2"``), evaluated with the spec's
    defaults overridden by ``values``.
    """
    entry = context(library, api)
    expr = entry.get("out_rank")
    if expr is None or not accepts_rank(library, api, in_rank):
        return None
    spec = load_kb(library).get(api)
    env = {**(defaults(spec) if spec else {}), **(values or {}), "rank": in_rank}
    try:
        got = evaluate(parse(str(expr)), Env(env))
    except Exception:  # noqa: BLE001 - an expression undefined for these values
        return None
    return int(got) if isinstance(got, int | float) and not isinstance(got, bool) else None


def fixed_params(library: str, api: str) -> frozenset[str]:
    """Params the engine must not mutate in a slot (they change the output structure)."""
    return frozenset(context(library, api).get("fixed", ()))


def legal(spec: LibSpec, param: str) -> Bounds | None:
    """The legal interval of a numeric param: the context's, else the spec's ``range``."""
    text = context(spec.library, spec.api).get("legal", {}).get(param) \
        if spec.library in FILES else None
    if text:
        return parse_interval(text)
    return None


def defaults(spec: LibSpec) -> dict[str, Any]:
    """Values of the params that have a default (what the constructor uses if not passed)."""
    return {p.name: _tuple(p.default) for p in spec.params if p.optional}


def _tuple(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


# ---- random generation ------------------------------------------------------------------
def _randint(rng: Any, lo: int, hi: int) -> int:
    if hasattr(rng, "integers"):
        return int(rng.integers(lo, hi + 1))
    return int(rng.randint(lo, hi))


def _uniform(rng: Any, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


def _pick(rng: Any, items: list[Any] | tuple[Any, ...]) -> Any:
    return items[_randint(rng, 0, len(items) - 1)]


def _round(x: float) -> float:
    """Four significant digits: readable literals in generated programs."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.4g}")


def _scalar(rng: Any, p: LibParam, kind: str, bounds: Bounds | None) -> Any:
    if p.range is None:
        return None
    lo, hi = p.range
    for _ in range(8):
        if kind == "int":
            v: Any = _randint(rng, math.ceil(lo), math.floor(hi))
        else:
            v = _round(_uniform(rng, float(lo), float(hi)))
        if bounds is None or bounds.contains(v):
            return v
    return None


def _draw(rng: Any, p: LibParam, current: Any, bounds: Bounds | None) -> Any:
    kinds = [s for s in p.structures if s in ("int", "float", "bool", "str", "ints", "floats")]
    if p.values and "str" not in kinds and not kinds:
        kinds = ["str"]
    if not kinds:
        return None
    kind = _pick(rng, kinds)
    if kind == "str":
        if not p.values:
            return None
        options = [v for v in p.values if v != current] or list(p.values)
        return _pick(rng, options)
    if kind == "bool":
        return bool(_randint(rng, 0, 1))
    if kind in ("int", "float"):
        return _scalar(rng, p, kind, bounds)
    lo, hi = p.length
    n = _randint(rng, lo, hi)
    items = [_scalar(rng, p, "int" if kind == "ints" else "float", bounds) for _ in range(n)]
    return None if any(i is None for i in items) else tuple(items)


def constraints_hold(spec: LibSpec, values: dict[str, Any], about: str | None = None) -> bool:
    """Every constraint whose params all have a value (given or default) holds; with
    ``about``, only those that mention that param (changing one param cannot repair a
    constraint it does not appear in, so those are not its business)."""
    env = {**defaults(spec), **{k: _tuple(v) for k, v in values.items()}}
    for c in spec.constraints:
        names = names_in(c.tree)
        if about is not None and about not in names:
            continue
        if names <= set(env) and not holds(c, Env(env)):
            return False
    return True


def random_value(rng: Any, spec: LibSpec, param: str, values: dict[str, Any]) -> Any:
    """A new value for ``param`` inside its legal range keeping the constraints true.

    ``values`` are the block's current arguments (the rest come from defaults). Returns
    None when no such value was found in ATTEMPTS draws (no range known, or the
    constraints pin the param); None is never drawn as a value itself.
    """
    p = spec.param(param)
    if p is None:
        return None
    bounds = legal(spec, param)
    current = values.get(param, p.default if p.optional else None)
    fallback = None
    for _ in range(ATTEMPTS):
        v = _draw(rng, p, current, bounds)
        if v is None:
            continue
        if constraints_hold(spec, {**values, param: v}, about=param):
            if v != _tuple(current):
                return v
            fallback = v
    return fallback


# ---- boundary checking ------------------------------------------------------------------
def boundary_value(rng: Any, spec: LibSpec, param: str) -> Any:
    """A value just outside the legal range of ``param``; None without a stated range.

    Numbers: ``lo - 1`` / ``hi + 1`` for ints, ``lo - 0.1`` / ``hi + 0.1`` for floats, and
    the bound itself for an open side (``eps = 0``). Enums: an unknown option or "".
    A param that only takes lists gets a list of the outside value.
    """
    p = spec.param(param)
    if p is None:
        return None
    kinds = set(p.structures)
    if p.values and "str" in kinds and not ({"int", "float", "ints", "floats"} & kinds):
        return _pick(rng, ["", BAD_ENUM])
    bounds = legal(spec, param)
    if bounds is None or not ({"int", "float", "ints", "floats"} & kinds):
        return None
    integer = bool({"int", "ints"} & kinds) and "float" not in kinds and "floats" not in kinds
    step = 1 if integer else 0.1
    candidates: list[Any] = []
    if math.isfinite(bounds.lo):
        candidates.append(bounds.lo - step if bounds.lo_closed else bounds.lo)
    if math.isfinite(bounds.hi):
        candidates.append(bounds.hi + step if bounds.hi_closed else bounds.hi)
    if not candidates:
        return None
    v = _pick(rng, candidates)
    v = int(v) if integer else _round(float(v))
    if not ({"int", "float"} & kinds):
        n = max(1, p.length[0])
        return tuple([v] * n)
    return v


# ---- equivalence classes ----------------------------------------------------------------
def value_class(spec: LibSpec, param: str, value: Any) -> str:
    """MoCo's pruning class of a mutated value (see the module doc)."""
    if isinstance(value, bool):
        return str(value)
    if value is None:
        return "None"
    p = spec.param(param)
    if isinstance(value, str):
        if p is not None and p.values:
            return value if value in p.values else "illegal"
        return "str"
    if isinstance(value, list | tuple):
        classes = {value_class(spec, param, v) for v in value}
        for worst in ("illegal", "boundary"):
            if worst in classes:
                return worst
        return "legal"
    if isinstance(value, int | float):
        bounds = legal(spec, param)
        if bounds is None:
            return "legal"
        if bounds.on_bound(value):
            return "boundary"
        return "legal" if bounds.contains(value) else "illegal"
    return type(value).__name__


# ---- rendering --------------------------------------------------------------------------
def literal(value: Any) -> str:
    """Python source of a literal value (tuples for lists, float('inf') for infinities)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, list | tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    raise UsageError(f"value {value!r} of type {type(value).__name__} has no literal form; "
                     "use int, float, bool, str, None or a tuple of those")


def render_args(spec: LibSpec, values: dict[str, Any]) -> str:
    """Source of the constructor's arguments: leading required params positionally (in
    signature order, as written in seeds: ``nn.Conv2d(1, 6, 5, padding=2)``), the rest as
    keywords; params the spec does not know go last as keywords."""
    parts: list[str] = []
    positional = True
    for p in spec.params:
        if p.name not in values:
            positional = positional and p.passing == "positional"
            continue
        if positional and (p.passing == "positional" or (
                p.passing == "either" and not p.optional)):
            parts.append(literal(values[p.name]))
            continue
        positional = False
        parts.append(f"{p.name}={literal(values[p.name])}")
    known = spec.names
    parts += [f"{k}={literal(v)}" for k, v in values.items() if k not in known]
    return ", ".join(parts)

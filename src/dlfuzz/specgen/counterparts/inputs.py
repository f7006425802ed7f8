"""Valid-input sets for counterpart validation: per dtype, with edge shapes, per variant.

DLLens validated a counterpart on at most three valid inputs and reports false positives
from counterparts that only hold for some shapes (§V). Here each API gets, for each dtype
it is validated on, ``PLAIN_DRAWS`` inputs from the generator (TensorJSFuzz Algorithm 1+2,
``LibGenerator(mode="adjust")``) plus targeted edge inputs: a size-1 dimension, a rank-0
tensor and a zero-size tensor on the API's first tensor parameter (the generator is given
the spec plus that one constraint; what it produces is classified by its actual shapes,
so an edge the generator could not reach is simply absent and recorded so).

A candidate that cannot express a parameter (``requires_default``) is validated on
*variants* of the inputs with those parameters left out, so a counterpart of
``torch.sum`` that lacks ``dtype`` is still tested on as many inputs as one that has it.
Which inputs are valid is decided by running the API itself, never assumed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from dlfuzz.cases import ApiCase
from dlfuzz.engines.api.constraints import make
from dlfuzz.engines.api.counterparts.model import dtype_key, shape_edges
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.errors import UsageError

PLAIN_DRAWS = 6        # generator draws per API and dtype ...
EXTRA_DRAWS = 12       # ... and once more this many where fewer than MIN_VALID were valid
MIN_VALID = 5          # valid inputs a candidate must pass per dtype (DLLens used <= 3)
MAX_DTYPES = 5         # dtypes validated per API (in DTYPE_ORDER preference)
EDGES = ("size1", "rank0", "empty")
DTYPE_ORDER = ("float32", "float64", "int32", "int64", "float16", "bfloat16", "complex64",
               "bool", "int8", "uint8", "int16", "complex128", "uint16", "uint32", "uint64")
NO_TENSOR = "none"     # the dtype group of APIs without tensor or dtype arguments
LOW = frozenset({"float16", "bfloat16", "float32", "complex64"})  # precision: upcast these


@dataclass(frozen=True, eq=False)
class Input:
    """One input of one API, with its own call; ``variant`` = parameters left out."""

    api: str
    dtype: str
    values: dict[str, Any]
    edges: frozenset[str]
    variant: frozenset[str]
    case: ApiCase


def primary(spec: LibSpec) -> LibParam | None:
    """The first tensor parameter (required ones first): whose dtype an input is."""
    tensors = [p for p in spec.params if p.tensor_like]
    required = [p for p in tensors if not p.optional]
    candidates = required or tensors
    return candidates[0] if candidates else None


def dtypes_for(spec: LibSpec) -> tuple[str, ...]:
    """The dtypes an API is validated on: its first tensor's, in preference order."""
    p = primary(spec)
    if p is None:
        return (NO_TENSOR,)
    allowed = p.dtypes or ("float32", "float64")
    ranked = [d for d in DTYPE_ORDER if d in allowed] + [d for d in allowed
                                                        if d not in DTYPE_ORDER]
    return tuple(ranked[:MAX_DTYPES])


def for_dtype(spec: LibSpec, dtype: str) -> LibSpec:
    """The spec with its tensors of that dtype family fixed to ``dtype``: every tensor
    parameter whose allowed dtypes include it (or are unrestricted) gets exactly it."""
    if dtype == NO_TENSOR:
        return spec
    params = []
    first = primary(spec)
    for p in spec.params:
        if p.tensor_like and (p is first or not p.dtypes or dtype in p.dtypes):
            p = replace(p, dtypes=(dtype,))
        params.append(p)
    return replace(spec, params=tuple(params))


def with_values(spec: LibSpec, names: Iterable[str]) -> LibSpec:
    """The spec with parameters ``names`` always given, never None: the inputs of a
    counterpart that needs them (``Counterpart.requires_value``)."""
    wanted = set(names)
    params = []
    for p in spec.params:
        if p.name in wanted:
            kept = tuple(st for st in p.structures if st != "none") or p.structures
            p = replace(p, structures=kept, optional=False)
        params.append(p)
    return replace(spec, params=tuple(params))


def with_constraint(spec: LibSpec, text: str) -> LibSpec | None:
    try:
        extra = make(text, "hand", spec.names)
    except UsageError:
        return None
    return replace(spec, constraints=spec.constraints + (extra,))


def edge_specs(spec: LibSpec) -> list[LibSpec]:
    """The spec plus one edge constraint on its first tensor (each edge it allows)."""
    p = primary(spec)
    if p is None or "tensor" not in p.structures:
        return []
    lo, hi = p.rank
    texts = []
    if hi >= 1:
        texts.append(f"{p.name}.ndims >= 2 and {p.name}.shape[-1] == 1")
        texts.append(f"{p.name}.ndims >= 1 and {p.name}.num_element == 0")
    if lo == 0:
        texts.append(f"{p.name}.ndims == 0")
    return [s for s in (with_constraint(spec, t) for t in texts) if s is not None]


def draws(gen: Any, spec: LibSpec, n: int) -> list[dict[str, Any]]:
    """``n`` draws' values; a draw the generator cannot make is skipped."""
    out = []
    for _ in range(n):
        try:
            out.append(dict(gen.draw(spec).values))
        except Exception:  # noqa: BLE001 - the generator's limits are not this run's failure
            continue
    return out


def make_input(spec: LibSpec, values: dict[str, Any], variant: frozenset[str]) -> Input:
    from dlfuzz.engines.api.libdraw import rebuild

    key = dtype_key(values) or NO_TENSOR
    return Input(spec.api, key, values, shape_edges(values), variant, rebuild(spec, values))


def inputs_for(spec: LibSpec, gen: Any, variants: Iterable[frozenset[str]],
               n: int = PLAIN_DRAWS, edge_tries: int = 1,
               dtypes: Iterable[str] | None = None) -> list[Input]:
    """Inputs of one API for every dtype of ``dtypes_for`` (or ``dtypes``), each plain
    draw also in every variant (parameters left out) that changes it."""
    out: list[Input] = []
    for dtype in (tuple(dtypes) if dtypes is not None else dtypes_for(spec)):
        typed = for_dtype(spec, dtype)
        values = draws(gen, typed, n)
        for edge in edge_specs(typed):
            values += draws(gen, edge, edge_tries)
        out.extend(expand(spec, values, variants))
    return out


def expand(spec: LibSpec, values: list[dict[str, Any]], variants: Iterable[frozenset[str]]
           ) -> list[Input]:
    """Each input as drawn, plus its variant for each set of parameters to leave out."""
    out: list[Input] = []
    variants = [v for v in variants if v]
    for v in values:
        out.append(make_input(spec, v, frozenset()))
        for strip in variants:
            if strip & set(v):
                out.append(make_input(spec, {k: x for k, x in v.items() if k not in strip},
                                      strip))
    return out

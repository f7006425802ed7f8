"""A generated input (``Draw``) and how it becomes an ``ApiCase``.

A Draw is library-neutral values by parameter name; the case holds its tensors once
(``case.tensors``) and one ``Call`` per library that refers to them by ``Ref``: the spec's
own API, and one call per counterpart (``cp.call(values_with_refs)``), so every library
sees bit-identical inputs.

How a parameter is passed follows the spec: ``positional`` parameters positionally, the
leading required ``either`` parameters positionally too (how people call APIs, and what
APIs whose first parameter is positional-only in C need), a ``variadic`` parameter spread
positionally, everything else by keyword. A positional parameter left out before one
that is passed gets its default passed explicitly, since a gap cannot be expressed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Call, DType, Ref, Tensor
from dlfuzz.engines.api.constraints import Env
from dlfuzz.engines.api.libspecs import LibSpec


@dataclass(frozen=True, eq=False)
class Draw:
    """One input for one API: values by parameter name (absent = not passed).

    values: numpy arrays (tensor), lists of arrays (tensors), int/float/bool/str/None,
    lists of ints/floats, ``DType`` (dtype parameters). ``structures`` names the
    structure each present parameter was generated with; ``violated`` is the text of the
    constraint or type bound a violate-mode draw breaks on purpose ("" when valid);
    ``edge`` names the edge mechanism and parameter of an edge input (``edges.py``), and
    ``outside`` a relation between parameters that the mechanism broke on the way.
    """

    spec: LibSpec
    values: dict[str, Any]
    structures: dict[str, str]
    violated: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    edge: str = ""
    outside: str = ""  # a relation the edge input broke on the way (no right answer)

    @property
    def expect(self) -> str:
        if self.violated:
            return f"invalid:{self.violated}"
        if self.outside:
            return f"outside:{self.edge}:{self.outside}"
        return f"edge:{self.edge}" if self.edge else "valid"

    def env(self) -> Env:
        """Constraint environment: defaults for absent optional parameters, dtype names
        for DType values (how constraints spell dtypes)."""
        return env_of(self.spec, self.values, self.structures)


def env_of(spec: LibSpec, values: Mapping[str, Any], structures: Mapping[str, str] | None
           = None) -> Env:
    merged: dict[str, Any] = {p.name: p.default for p in spec.params if p.optional}
    for k, v in values.items():
        merged[k] = v.name if isinstance(v, DType) else v
    return Env(merged, dict(structures or {}))


def _passing(spec: LibSpec) -> tuple[set[str], str | None]:
    """(names passed positionally when present, the variadic parameter)."""
    positional: set[str] = set()
    variadic = None
    leading = True
    for p in spec.params:
        if p.passing == "variadic":
            variadic = p.name
            leading = False
            continue
        if p.passing == "positional":
            positional.add(p.name)
            continue
        if leading and p.passing == "either" and not p.optional:
            positional.add(p.name)
            continue
        leading = False
    return positional, variadic


def call_for(spec: LibSpec, values_with_refs: Mapping[str, Any]) -> Call:
    """The spec's own call from values in which tensors are already Refs."""
    positional, variadic = _passing(spec)
    args: list[Any] = []
    kwargs: list[tuple[str, Any]] = []
    pending: list[Any] = []  # defaults of left-out positionals, passed if a later one is
    for p in spec.params:
        present = p.name in values_with_refs
        value = values_with_refs.get(p.name)
        if p.name == variadic:
            if present:
                args.extend(pending)
                pending = []
                args.extend(value if isinstance(value, tuple | list) else (value,))
            continue
        if p.name in positional:
            if present:
                args.extend(pending)
                pending = []
                args.append(value)
            else:
                pending.append(_frozen(p.default))
            continue
        if present:
            kwargs.append((p.name, value))
    return Call(spec.api, tuple(args), tuple(kwargs))


def _frozen(value: Any) -> Any:
    """Lists as tuples: Calls are immutable values (hashable, stable repr)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def with_refs(values: Mapping[str, Any], spec: LibSpec | None = None
              ) -> tuple[dict[str, Any], list[Tensor]]:
    """Values with every array replaced by a Ref into the returned tensor list."""
    tensors: list[Tensor] = []
    out: dict[str, Any] = {}
    order = [p.name for p in spec.params if p.name in values] if spec else list(values)
    order += [k for k in values if k not in order]
    for name in order:
        v = values[name]
        if isinstance(v, np.ndarray):
            tensors.append(Tensor.from_numpy(v))
            out[name] = Ref(len(tensors) - 1)
        elif isinstance(v, list | tuple) and v and all(isinstance(x, np.ndarray) for x in v):
            refs = []
            for x in v:
                tensors.append(Tensor.from_numpy(x))
                refs.append(Ref(len(tensors) - 1))
            out[name] = tuple(refs)
        else:
            out[name] = _frozen(v)
    return out, tensors


def rebuild(spec: LibSpec, values: Mapping[str, Any], counterparts: Iterable[Any] = (),
            expect: str = "valid") -> ApiCase:
    """An ApiCase from a values dict (what reducers call after shrinking values)."""
    refs, tensors = with_refs(values, spec)
    calls: list[tuple[str, Call]] = [(spec.library, call_for(spec, refs))]
    for cp in counterparts:
        calls.append((cp.library, cp.call(refs)))
    params = tuple((name, refs[name]) for name in refs
                   if not _has_ref(refs[name]))
    return ApiCase(spec.api, tuple(tensors), tuple(calls), params, expect)


def to_case(draw: Draw, counterparts: Iterable[Any] = ()) -> ApiCase:
    """The case of a draw: the spec's own call plus one call per counterpart."""
    return rebuild(draw.spec, draw.values, counterparts, draw.expect)


def _has_ref(value: Any) -> bool:
    if isinstance(value, Ref):
        return True
    return isinstance(value, tuple) and any(isinstance(v, Ref) for v in value)


def values_of(case: ApiCase, spec: LibSpec) -> dict[str, Any]:
    """The values dict of a case built by ``to_case``/``rebuild`` (its inverse, up to
    lists coming back as lists and explicitly passed positional defaults)."""
    call = case.call_for(spec.library)
    if call is None:
        raise ValueError(f"case {case.api} has no {spec.library} call")
    positional, variadic = _passing(spec)
    names = [p.name for p in spec.params if p.name in positional or p.name == variadic]
    out: dict[str, Any] = {}
    args = list(call.args)
    for name in names:
        if not args:
            break
        if name == variadic:
            fixed_after = sum(1 for n in names[names.index(name) + 1:])
            take = len(args) - fixed_after
            out[name], args = [_thaw(a, case) for a in args[:take]], args[take:]
        else:
            out[name] = _thaw(args.pop(0), case)
    for k, v in call.kwargs:
        out[k] = _thaw(v, case)
    return out


def _thaw(value: Any, case: ApiCase) -> Any:
    if isinstance(value, Ref):
        return case.tensors[value.index].to_numpy()
    if isinstance(value, tuple):
        return [_thaw(v, case) for v in value]
    return value

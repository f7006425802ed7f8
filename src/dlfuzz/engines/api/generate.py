"""Type-aware generation of ``ApiCase`` objects from specs.

Generation works in *signature groups*: a signature is everything a compiled backend
specializes on (the API, tensor shapes and dtypes, the static arguments), and each
signature gets several value sets. jax.jit, torch.compile and tf.function compile once
per signature, so a group of 4-8 cases costs one compilation instead of 4-8.

``rebuild`` is the other entry point: a reducer that shrinks a tensor or drops a
parameter back to its default gets calls for every library that stay consistent with the
canonical arguments, because calls are always derived from (spec, tensors, params).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Call, DType, Ref, Tensor, dtype_name
from dlfuzz.engines.api import shapes as shape_rules
from dlfuzz.engines.api.specs import SHAPE_RULES, ApiSpec, Binding, Param, load_specs
from dlfuzz.engines.api.values import Profile, draw_profile, make_index, make_tensor
from dlfuzz.errors import InternalError, Rejected, UsageError

OMIT_OPTIONAL_P = 0.4  # an optional parameter is left at its default this often
# Dtypes compiled and eager paths differ most on are also the most used: weight them up.
DTYPE_WEIGHT = {"float32": 3.0, "float64": 2.0}
# Groups whose results at +-max depend on each library's accumulation order and width.
NO_EXTREMES_GROUPS = frozenset({"reduction", "cumulative", "linalg"})
# Libraries that flush subnormals to zero on CPU (TensorFlow, and XLA under jax).
FLUSHING_LIBRARIES = frozenset({"tf", "jax"})


@dataclass(frozen=True)
class Signature:
    """What one group of cases shares: API, shapes, dtypes, static arguments, profile."""

    spec: ApiSpec
    dtype: str
    shapes: tuple[tuple[int, ...], ...]   # one per tensor slot
    dtypes: tuple[str, ...]               # one per tensor slot
    params: tuple[tuple[str, Any], ...]   # canonical, present parameters only
    bounds: tuple[tuple[int, int] | None, ...]
    profile: Profile
    calls: tuple[tuple[str, Call], ...]


def to_tensor(arr: np.ndarray) -> Tensor:
    """``Tensor.from_numpy`` without its 0-d -> (1,) reshape (``np.ascontiguousarray``
    returns at least 1-D), so scalars stay scalars."""
    arr = np.asarray(arr)
    data = arr.tobytes(order="C")
    return Tensor(dtype_name(arr.dtype), tuple(int(d) for d in arr.shape), data)


class _Prepared:
    """Per-spec facts computed once: rank limits implied by axis parameters, bindings."""

    def __init__(self, spec: ApiSpec, libraries: tuple[str, ...] | None) -> None:
        self.spec = spec
        self.rule = shape_rules.RULES[spec.shapes]
        self.ruled = frozenset(SHAPE_RULES[spec.shapes])
        self.tensors = spec.tensor_params
        self.others = tuple(p for p in spec.params if not p.is_tensor)
        self.plain = sum(1 for p in self.tensors if p.kind == "tensor")
        self.rank_limits = {p.name: _rank_limits(spec, p) for p in self.tensors}
        self.bindings = tuple((lib, b) for lib, b in spec.bindings
                              if libraries is None or lib in libraries)
        self.specials_ok = spec.specials
        self.extremes_ok = spec.group not in NO_EXTREMES_GROUPS
        weights = np.array([DTYPE_WEIGHT.get(d, 1.0) for d in spec.dtypes])
        self.dtype_cdf = np.cumsum(weights) / weights.sum()


def _rank_limits(spec: ApiSpec, tensor: Param) -> tuple[int, int]:
    """A tensor's rank range, raised so that required axis parameters have an axis."""
    lo, hi = tensor.rank
    for p in spec.params:
        if p.of != tensor.name:
            continue
        if p.kind == "axis" and not p.optional and not p.insert:
            lo = max(lo, 2 if p.distinct else 1)
        elif p.kind == "axis" and p.distinct:
            lo = max(lo, 2)
        elif p.kind == "axes" and not p.optional:
            lo = max(lo, p.size[0])
    return lo, max(lo, hi)


class Generator:
    """Draws signatures and value sets from specs; deterministic for a given seed."""

    def __init__(self, seed: int = 0, libraries: Iterable[str] | None = None,
                 subnormals: bool | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.libraries = tuple(libraries) if libraries is not None else None
        # Subnormal inputs only when no compared library flushes them to zero by design.
        if subnormals is None:
            subnormals = self.libraries is not None and not FLUSHING_LIBRARIES & set(
                self.libraries)
        self.subnormals = subnormals
        self._prepared: dict[str, _Prepared] = {}

    def prepared(self, spec: ApiSpec) -> _Prepared:
        prep = self._prepared.get(spec.name)
        if prep is None or prep.spec is not spec:
            prep = self._prepared[spec.name] = _Prepared(spec, self.libraries)
        return prep

    # ---- signatures ---------------------------------------------------------------------
    def signature(self, spec: ApiSpec, dtype: str | None = None,
                  profile: Profile | None = None) -> Signature:
        """Draw shapes, dtypes and static arguments for one group of cases."""
        prep = self.prepared(spec)
        rng = self.rng
        if dtype is None:
            dtype = spec.dtypes[int(np.searchsorted(prep.dtype_cdf, rng.random(),
                                                    side="right"))]
        d = shape_rules.Draw(rng, spec, prep.rank_limits, dtype)
        prep.rule(d)
        for p in prep.tensors:
            if p.name not in d.shapes:
                if p.kind == "tensors":
                    d.shapes[p.name] = [d.shape_for(p) for _ in range(d.count(p))]
                else:
                    d.shapes[p.name] = d.shape_for(p)
        for p in prep.others:
            if p.name in prep.ruled or p.name in d.params:
                continue
            if p.optional and d.chance(OMIT_OPTIONAL_P):
                continue
            if p.requires and p.requires not in d.params:
                continue
            value = _draw_param(d, p)
            if value is not None:
                d.params[p.name] = value
        slot_shapes: list[tuple[int, ...]] = []
        slot_dtypes: list[str] = []
        slot_bounds: list[tuple[int, int] | None] = []
        counts: dict[str, int] = {}
        for p in prep.tensors:
            shapes = d.shapes[p.name] if p.kind == "tensors" else [d.shapes[p.name]]
            counts[p.name] = len(shapes)
            tdtype = {"main": dtype, "bool": "bool", "index": "int64"}[p.role]
            for s in shapes:
                slot_shapes.append(tuple(int(x) for x in s))
                slot_dtypes.append(tdtype)
                slot_bounds.append(d.bounds.get(p.name) if p.role == "index" else None)
        params = tuple((p.name, d.params[p.name]) for p in spec.params
                       if not p.is_tensor and p.name in d.params)
        if profile is None:
            profile = draw_profile(rng, allow_specials=prep.specials_ok,
                                   allow_extremes=prep.extremes_ok, subnormals=self.subnormals)
        calls = build_calls(spec, counts, dict(params), prep.bindings)
        return Signature(spec, dtype, tuple(slot_shapes), tuple(slot_dtypes), params,
                         tuple(slot_bounds), profile, calls)

    # ---- values -------------------------------------------------------------------------
    def values(self, sig: Signature) -> tuple[Tensor, ...]:
        """One value set for ``sig``."""
        rng = self.rng
        out: list[Tensor] = []
        slot = 0
        for p in self.prepared(sig.spec).tensors:
            n = 1 if p.kind == "tensor" else len(sig.shapes) - self.prepared(sig.spec).plain
            for _ in range(n):
                shape, dtype, bounds = sig.shapes[slot], sig.dtypes[slot], sig.bounds[slot]
                if p.role == "index":
                    arr = make_index(rng, shape, bounds or (0, 1))
                else:
                    arr = make_tensor(rng, shape, dtype, profile=sig.profile, domain=p.domain,
                                      transform=p.values)
                out.append(to_tensor(arr))
                slot += 1
        return tuple(out)

    def case(self, sig: Signature) -> ApiCase:
        return ApiCase(sig.spec.name, self.values(sig), sig.calls, sig.params)

    def group(self, spec: ApiSpec, size: int, **kw: Any) -> list[ApiCase]:
        """``size`` cases sharing one signature."""
        sig = self.signature(spec, **kw)
        return [self.case(sig) for _ in range(size)]


# ---- generic parameter values ---------------------------------------------------------------
def _rank_of(d: shape_rules.Draw, name: str) -> int:
    shape = d.shapes[name]
    if isinstance(shape, list):
        return len(shape[0]) if shape else 0
    return len(shape)


def _draw_param(d: shape_rules.Draw, p: Param) -> Any:
    """A value for a parameter the shape rule did not set; None means 'leave it out'."""
    kind = p.kind
    if kind in ("axis", "axes", "perm"):
        r = _rank_of(d, p.of)
        if kind == "perm":
            return tuple(int(i) for i in d.rng.permutation(r))
        if kind == "axes":
            lo, hi = p.size
            if r < lo or r == 0:
                return None
            picks = d.rng.permutation(r)[:d.int(lo, min(hi, r))]
            return tuple(d.neg(int(a), r) for a in picks)
        n = r + (1 if p.insert else 0)
        if n == 0:
            return None
        other = d.params.get(p.distinct) if p.distinct else None
        choices = [a for a in range(n) if other is None or a != other % n]
        if not choices:
            return None
        return d.neg(choices[d.int(0, len(choices) - 1)], n)
    if kind == "int":
        return d.int(int(p.range[0]), int(p.range[1]))
    if kind == "float":
        return round(float(d.rng.uniform(p.range[0], p.range[1])), 3)
    if kind == "bool":
        return d.chance(0.5)
    if kind == "enum":
        return p.values[d.int(0, len(p.values) - 1)]
    if kind == "ints":
        length = d.int(p.length[0], p.length[1])
        return tuple(d.int(int(p.range[0]), int(p.range[1])) for _ in range(length))
    if kind == "shape":
        lo, hi = p.rank if p.rank != (0, 5) else (0, 3)
        return tuple(d.dims(d.int(lo, hi)))
    if kind == "dtype":
        if not p.values:  # the signature's dtype: creation functions are calibrated by it
            return DType(d.dtype)
        return DType(p.values[d.int(0, len(p.values) - 1)])
    raise InternalError(f"spec {d.spec.name!r}: parameter {p.name!r} of kind {kind!r} "
                        f"must be set by shape rule {d.spec.shapes!r}")


# ---- calls ----------------------------------------------------------------------------------
def _convert(value: Any, how: str | None) -> Any:
    if how == "tuple":
        return (value,) if isinstance(value, int) else value
    if how == "list":
        return list(value) if isinstance(value, tuple) else [value]
    return value


def build_calls(spec: ApiSpec, counts: Mapping[str, int], params: Mapping[str, Any],
                bindings: Iterable[tuple[str, Binding]] | None = None
                ) -> tuple[tuple[str, Call], ...]:
    """The call of every bound library for canonical ``params`` and tensor list sizes."""
    refs: dict[str, Any] = {}
    index = 0
    for p in spec.tensor_params:
        if p.kind == "tensors":
            n = counts.get(p.name, 0)
            refs[p.name] = tuple(Ref(index + i) for i in range(n))
            index += n
        else:
            refs[p.name] = Ref(index)
            index += 1
    calls = []
    for lib, b in (spec.bindings if bindings is None else bindings):
        convert = dict(b.convert)
        positional = b.args if b.args is not None else tuple(p.name for p in spec.tensor_params)
        args: list[Any] = []
        passed: set[str] = set()
        for a in positional:
            name = a.lstrip("*")
            if name in refs:
                if a.startswith("*"):
                    args.extend(refs[name])
                else:
                    args.append(refs[name])
            elif name in params:
                args.append(_convert(params[name], convert.get(name)))
            else:
                break  # a missing optional positional: the rest go by keyword
            passed.add(name)
        kwargs = dict(b.extra)
        rename = dict(b.rename)
        for name, value in params.items():
            if name in passed or name in b.drop or name in refs:
                continue
            kwargs[rename.get(name, name)] = _convert(value, convert.get(name))
        calls.append((lib, Call(b.target, tuple(args), tuple(kwargs.items()))))
    return tuple(calls)


def rebuild(api: str | ApiSpec, tensors: Iterable[Tensor],
            params: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
            specs: Mapping[str, ApiSpec] | None = None,
            libraries: Iterable[str] | None = None) -> ApiCase:
    """A case for ``api`` from canonical tensors and parameters, calls derived afresh.

    Parameters absent from ``params`` take the library defaults (they are not passed).
    A 'tensors' parameter takes whatever tensors the plain tensor parameters leave over.
    """
    if isinstance(api, ApiSpec):
        spec = api
    else:
        table = specs if specs is not None else load_specs()
        if api not in table:
            raise UsageError(f"unknown API {api!r}; see dlfuzz/engines/api/data/*.json")
        spec = table[api]
    tensors = tuple(tensors)
    given = dict(params)
    for name in given:
        p = spec.param(name)
        if p is None or p.is_tensor:
            raise UsageError(f"API {spec.name!r} has no non-tensor parameter {name!r}; "
                             f"its parameters: {', '.join(q.name for q in spec.params)}")
    plain = [p for p in spec.tensor_params if p.kind == "tensor"]
    listed = [p for p in spec.tensor_params if p.kind == "tensors"]
    extra = len(tensors) - len(plain)
    if extra < 0 or (extra and not listed):
        raise Rejected(f"API {spec.name!r} takes {len(plain)} tensors"
                       f"{' and a list' if listed else ''}, got {len(tensors)}")
    counts = {p.name: extra for p in listed}
    ordered = {p.name: given[p.name] for p in spec.params if p.name in given}
    wanted = None if libraries is None else frozenset(libraries)
    bindings = [(lib, b) for lib, b in spec.bindings if wanted is None or lib in wanted]
    calls = build_calls(spec, counts, ordered, bindings)
    return ApiCase(spec.name, tensors, calls, tuple(ordered.items()))

"""Generation for APIs with a shape rule (format 2's ``"shapes"`` key), in signature groups.

A signature is everything a compiled backend specializes on (the API, tensor shapes and
dtypes, the static arguments, the counterparts called): jax.jit, torch.compile and
tf.function compile once per signature, so a group of cases sharing one costs one
compilation instead of one per case. The rule (``shapes``) draws the shapes and the
parameters tied to them; every other parameter is drawn from its structure; values come
from ``values`` under a per-signature profile (special values, extremes).

Calls are always derived from (spec, tensors, parameters): the spec's own call when its
library is under test and one call per chosen counterpart, so ``rebuild`` gives a
reducer that shrank a tensor or dropped a parameter calls that stay consistent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Call, DType, Ref, Tensor, dtype_name
from dlfuzz.engines.api import shapes as shape_rules
from dlfuzz.engines.api.libdraw import call_for
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.engines.api.shapes import SHAPE_RULES
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

    spec: LibSpec
    dtype: str
    shapes: tuple[tuple[int, ...], ...]   # one per tensor slot
    dtypes: tuple[str, ...]               # one per tensor slot
    params: tuple[tuple[str, Any], ...]   # present non-tensor parameters only
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
    """Per-spec facts computed once: the rule, rank limits implied by axis parameters."""

    def __init__(self, spec: LibSpec) -> None:
        self.spec = spec
        self.rule = shape_rules.RULES[spec.shapes]
        self.ruled = frozenset(SHAPE_RULES[spec.shapes])
        self.tensors = spec.tensor_params
        self.others = tuple(p for p in spec.params if not p.is_tensor)
        self.plain = sum(1 for p in self.tensors if p.kind == "tensor")
        self.rank_limits = {p.name: _rank_limits(spec, p) for p in self.tensors}
        self.specials_ok = spec.specials
        self.extremes_ok = spec.group not in NO_EXTREMES_GROUPS
        weights = np.array([DTYPE_WEIGHT.get(d, 1.0) for d in spec.dtypes])
        self.dtype_cdf = np.cumsum(weights) / weights.sum()


def _rank_limits(spec: LibSpec, tensor: LibParam) -> tuple[int, int]:
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


class RuleGenerator:
    """Draws signatures and value sets of rule APIs; deterministic for a given rng.

    ``own`` says whether a case calls the spec's own API (its library is under test);
    ``subnormals`` whether inputs may hold subnormal floats (not when a compared library
    flushes them to zero by design, see ``subnormals_for``).
    """

    def __init__(self, rng: np.random.Generator | int = 0, subnormals: bool = False) -> None:
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.subnormals = subnormals
        self._prepared: dict[str, _Prepared] = {}

    def prepared(self, spec: LibSpec) -> _Prepared:
        prep = self._prepared.get(spec.api)
        if prep is None or prep.spec is not spec:
            prep = self._prepared[spec.api] = _Prepared(spec)
        return prep

    def profile(self, spec: LibSpec) -> Profile:
        """A fresh value profile for a signature of ``spec``."""
        prep = self.prepared(spec)
        return draw_profile(self.rng, allow_specials=prep.specials_ok,
                            allow_extremes=prep.extremes_ok, subnormals=self.subnormals)

    # ---- signatures ---------------------------------------------------------------------
    def params(self, spec: LibSpec, dtype: str | None = None
               ) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(dtype, tensor shapes, parameters, index bounds) of a new signature."""
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
        return dtype, d.shapes, d.params, d.bounds

    def signature(self, spec: LibSpec, counterparts: Sequence[Any] = (), own: bool = True,
                  dtype: str | None = None, profile: Profile | None = None,
                  drawn: tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]
                  | None = None) -> Signature:
        """Shapes, dtypes, static arguments and calls for one group of cases (``drawn``:
        what ``params`` returned, when the caller chose counterparts by it)."""
        prep = self.prepared(spec)
        dtype, shapes, drawn_params, bounds = drawn or self.params(spec, dtype)
        slot_shapes: list[tuple[int, ...]] = []
        slot_dtypes: list[str] = []
        slot_bounds: list[tuple[int, int] | None] = []
        counts: dict[str, int] = {}
        for p in prep.tensors:
            group = shapes[p.name] if p.kind == "tensors" else [shapes[p.name]]
            counts[p.name] = len(group)
            tdtype = {"main": dtype, "bool": "bool", "index": "int64"}[p.role]
            for s in group:
                slot_shapes.append(tuple(int(x) for x in s))
                slot_dtypes.append(tdtype)
                slot_bounds.append(bounds.get(p.name) if p.role == "index" else None)
        params = tuple((p.name, drawn_params[p.name]) for p in spec.params
                       if not p.is_tensor and p.name in drawn_params)
        if profile is None:
            profile = self.profile(spec)
        calls = build_calls(spec, counts, dict(params), counterparts, own)
        return Signature(spec, dtype, tuple(slot_shapes), tuple(slot_dtypes), params,
                         tuple(slot_bounds), profile, calls)

    # ---- values -------------------------------------------------------------------------
    def values(self, sig: Signature) -> tuple[Tensor, ...]:
        """One value set for ``sig``."""
        rng = self.rng
        prep = self.prepared(sig.spec)
        out: list[Tensor] = []
        slot = 0
        for p in prep.tensors:
            n = 1 if p.kind == "tensor" else len(sig.shapes) - prep.plain
            for _ in range(n):
                shape, dtype, bounds = sig.shapes[slot], sig.dtypes[slot], sig.bounds[slot]
                if p.role == "index":
                    arr = make_index(rng, shape, bounds or (0, 1))
                else:
                    arr = make_tensor(rng, shape, dtype, profile=sig.profile, domain=p.domain,
                                      transform=p.fill)
                out.append(to_tensor(arr))
                slot += 1
        return tuple(out)

    def case(self, sig: Signature) -> ApiCase:
        return ApiCase(sig.spec.api, self.values(sig), sig.calls, sig.params)

    def group(self, spec: LibSpec, size: int, counterparts: Sequence[Any] = (),
              own: bool = True, **kw: Any) -> list[ApiCase]:
        """``size`` cases sharing one signature."""
        sig = self.signature(spec, counterparts, own, **kw)
        return [self.case(sig) for _ in range(size)]


def subnormals_for(libraries: Iterable[str]) -> bool:
    """Subnormal inputs only when no compared library flushes them to zero by design."""
    return not FLUSHING_LIBRARIES & set(libraries)


# ---- parameter values -----------------------------------------------------------------------
def _rank_of(d: shape_rules.Draw, name: str) -> int:
    shape = d.shapes[name]
    if isinstance(shape, list):
        return len(shape[0]) if shape else 0
    return len(shape)


def _draw_param(d: shape_rules.Draw, p: LibParam) -> Any:
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
    low, high = p.range if p.range is not None else (0, 3)
    if kind == "int":
        return d.int(int(low), int(high))
    if kind == "float":
        return round(float(d.rng.uniform(low, high)), 3)
    if kind == "bool":
        return d.chance(0.5)
    if kind == "enum":
        return p.values[d.int(0, len(p.values) - 1)]
    if kind == "ints":
        length = d.int(p.length[0], p.length[1])
        return tuple(d.int(int(low), int(high)) for _ in range(length))
    if kind == "shape":
        lo, hi = p.rank
        return tuple(d.dims(d.int(lo, hi)))
    if kind == "dtype":
        if not p.dtypes:  # the signature's dtype: creation functions are calibrated by it
            return DType(d.dtype)
        return DType(p.dtypes[d.int(0, len(p.dtypes) - 1)])
    raise InternalError(f"spec {d.spec.api!r}: parameter {p.name!r} of structure {kind!r} "
                        f"must be set by shape rule {d.spec.shapes!r}")


# ---- calls ----------------------------------------------------------------------------------
def build_calls(spec: LibSpec, counts: Mapping[str, int], params: Mapping[str, Any],
                counterparts: Iterable[Any] = (), own: bool = True
                ) -> tuple[tuple[str, Call], ...]:
    """The spec's own call (when ``own``) and each counterpart's, for ``params`` and tensor
    list sizes (tensors numbered in parameter order)."""
    refs: dict[str, Any] = {}
    index = 0
    for p in spec.params:
        if p.kind == "tensors":
            n = counts.get(p.name, 0)
            refs[p.name] = tuple(Ref(index + i) for i in range(n))
            index += n
        elif p.kind == "tensor":
            refs[p.name] = Ref(index)
            index += 1
        elif p.name in params:
            refs[p.name] = params[p.name]
    calls = [(spec.library, call_for(spec, refs))] if own else []
    calls += [(cp.library, cp.call(refs)) for cp in counterparts]
    return tuple(calls)


def rebuild(spec: LibSpec, tensors: Iterable[Tensor],
            params: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
            counterparts: Iterable[Any] = (), own: bool = True) -> ApiCase:
    """A case of a rule API from its tensors and parameters, calls derived afresh.

    Parameters absent from ``params`` take the library defaults (they are not passed).
    A 'tensors' parameter takes whatever tensors the plain tensor parameters leave over.
    """
    tensors = tuple(tensors)
    given = dict(params)
    for name in given:
        p = spec.param(name)
        if p is None or p.is_tensor:
            raise UsageError(f"API {spec.api!r} has no non-tensor parameter {name!r}; "
                             f"its parameters: {', '.join(q.name for q in spec.params)}")
    plain = [p for p in spec.tensor_params if p.kind == "tensor"]
    listed = [p for p in spec.tensor_params if p.kind == "tensors"]
    extra = len(tensors) - len(plain)
    if extra < 0 or (extra and not listed):
        raise Rejected(f"API {spec.api!r} takes {len(plain)} tensors"
                       f"{' and a list' if listed else ''}, got {len(tensors)}")
    counts = {p.name: extra for p in listed}
    ordered = {p.name: given[p.name] for p in spec.params if p.name in given}
    calls = build_calls(spec, counts, ordered, counterparts, own)
    return ApiCase(spec.api, tensors, calls, tuple(ordered.items()))

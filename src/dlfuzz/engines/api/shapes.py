"""Shape rules: how the tensors of one call relate, so that most inputs are valid.

A spec names one rule (its ``"shapes"`` key, one of ``SHAPE_RULES``). The rule draws the
shapes of the tensors it knows about and the parameters tied to them (a concatenation
axis, reshape's new shape, einsum's subscripts), and bounds for index tensors. Whatever the rule leaves
alone is drawn generically afterwards, so a rule only encodes the *relations*.

Dimensions are small and biased toward 1-4: fuzzing finds bugs in corner cases of
structure (size 0 and 1, broadcasting, negative axes), not in big arrays, and small
arrays keep workers fast.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.engines.api.libspecs import SHAPE_RULES, LibParam, LibSpec

# P(rank = 0..5) and P(dim = 0..8): small is likely, empty and large stay possible.
RANK_P = np.array([0.08, 0.24, 0.30, 0.20, 0.11, 0.07])
DIM_P = np.array([0.02, 0.20, 0.20, 0.18, 0.13, 0.10, 0.07, 0.05, 0.05])
_DIM_CDF = np.cumsum(DIM_P) / DIM_P.sum()
_DIM_CDF_NONEMPTY = np.cumsum(DIM_P[1:]) / DIM_P[1:].sum()
MAX_ELEMENTS = 8192
_rank_cdf_cache: dict[tuple[int, int], np.ndarray] = {}


def _rank_cdf(lo: int, hi: int) -> np.ndarray:
    key = (lo, hi)
    cdf = _rank_cdf_cache.get(key)
    if cdf is None:
        p = np.zeros(max(hi + 1, len(RANK_P)))
        p[:len(RANK_P)] = RANK_P
        p[len(RANK_P):] = RANK_P[-1]
        p = p[lo:hi + 1]
        cdf = np.cumsum(p) / p.sum()
        _rank_cdf_cache[key] = cdf
    return cdf


class Draw:
    """Scratch space for drawing one signature; rules and generic steps fill it."""

    def __init__(self, rng: np.random.Generator, spec: LibSpec,
                 rank_limits: dict[str, tuple[int, int]], dtype: str) -> None:
        self.rng = rng
        self.spec = spec
        self.rank_limits = rank_limits
        self.dtype = dtype
        self.shapes: dict[str, Any] = {}    # tensor -> shape; tensors -> list of shapes
        self.params: dict[str, Any] = {}    # canonical non-tensor values set so far
        self.bounds: dict[str, tuple[int, int]] = {}  # index tensor -> [lo, hi)

    # ---- primitive draws --------------------------------------------------------------
    # (below ``int`` is this method inside the class body, so annotations say builtins.int)
    def int(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi] (inclusive)."""
        return int(self.rng.integers(lo, hi + 1)) if hi > lo else lo

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def dims(self, n: builtins.int, nonempty: bool = False) -> list[builtins.int]:
        cdf = _DIM_CDF_NONEMPTY if nonempty else _DIM_CDF
        dims = np.searchsorted(cdf, self.rng.random(n), side="right")
        return [int(d) + (1 if nonempty else 0) for d in dims]

    def dim(self, nonempty: bool = False) -> builtins.int:
        return self.dims(1, nonempty)[0]

    def rank(self, lo: builtins.int, hi: builtins.int) -> builtins.int:
        if hi <= lo:
            return lo
        return lo + int(np.searchsorted(_rank_cdf(lo, hi), self.rng.random(), side="right"))

    def shape(self, lo: builtins.int = 0, hi: builtins.int = 5, nonempty: bool = False
              ) -> tuple[builtins.int, ...]:
        return cap(tuple(self.dims(self.rank(lo, hi), nonempty)))

    def limits(self, name: str) -> tuple[builtins.int, builtins.int]:
        return self.rank_limits[name]

    def shape_for(self, p: LibParam, nonempty: bool = False) -> tuple[builtins.int, ...]:
        lo, hi = self.rank_limits[p.name]
        return self.shape(lo, hi, nonempty or p.nonempty)

    def count(self, p: LibParam) -> builtins.int:
        return self.int(p.count[0], p.count[1])

    def tensors(self) -> list[LibParam]:
        return [p for p in self.spec.params if p.is_tensor]

    def neg(self, axis: builtins.int, rank: builtins.int) -> builtins.int:
        """Sometimes spell an axis negatively: both spellings must mean the same."""
        return axis - rank if self.chance(0.3) else axis


def cap(shape: tuple[int, ...], limit: int = MAX_ELEMENTS) -> tuple[int, ...]:
    """Shrink the largest dimensions until the element count fits."""
    dims = list(shape)
    while dims and int(np.prod(dims)) > limit:
        i = int(np.argmax(dims))
        dims[i] = max(1, dims[i] // 2)
    return tuple(dims)


def broadcast_group(d: Draw, limits: list[tuple[int, int]],
                    suffix: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Mutually broadcastable shapes: suffixes of one base shape with some dims set to 1."""
    n = len(suffix)
    base_lo = max(max(lo for lo, _ in limits) - n, 0)
    base = d.shape(base_lo, max(min(hi for _, hi in limits) - n, base_lo))
    r = len(base)
    shapes = []
    for lo, hi in limits:
        k = d.int(max(lo - n, 0), max(min(hi - n, r), 0))
        dims = list(base[r - k:])
        if k and d.chance(0.5):
            mask = d.rng.random(k) < 0.3
            dims = [1 if m else x for m, x in zip(mask, dims, strict=True)]
        shapes.append(tuple(dims) + suffix)
    full = [i for i, (_, hi) in enumerate(limits) if hi - n >= r]
    if full and d.chance(0.5):  # often let one operand carry the full shape
        shapes[full[d.int(0, len(full) - 1)]] = base + suffix
    return shapes


def _broadcast_params(d: Draw, params: list[LibParam], suffix: tuple[int, ...] = ()) -> None:
    shapes = broadcast_group(d, [d.limits(p.name) for p in params], suffix)
    for p, shape in zip(params, shapes, strict=True):
        d.shapes[p.name] = shape


# ---- the rules ----------------------------------------------------------------------------
def _any(d: Draw) -> None:
    for p in d.tensors():
        if p.kind == "tensors":
            d.shapes[p.name] = [d.shape_for(p) for _ in range(d.count(p))]
        else:
            d.shapes[p.name] = d.shape_for(p)


def _same(d: Draw) -> None:
    ps = d.tensors()
    lo = max(d.limits(p.name)[0] for p in ps)
    hi = min(d.limits(p.name)[1] for p in ps)
    shape = d.shape(lo, max(lo, hi))
    for p in ps:
        d.shapes[p.name] = [shape] * d.count(p) if p.kind == "tensors" else shape


def _broadcast(d: Draw) -> None:
    _broadcast_params(d, d.tensors())


def _matmul(d: Draw) -> None:
    a, b = d.tensors()[:2]
    n, k, m = d.dims(3)
    batch = d.shape(0, 2)
    if d.chance(0.15):
        d.shapes[a.name] = (k,)
    else:
        cut = d.int(0, len(batch))
        d.shapes[a.name] = _ones_some(d, batch[cut:]) + (n, k)
    if d.chance(0.15):
        d.shapes[b.name] = (k,)
    else:
        cut = d.int(0, len(batch))
        d.shapes[b.name] = _ones_some(d, batch[cut:]) + (k, m)


def _ones_some(d: Draw, dims: tuple[int, ...]) -> tuple[int, ...]:
    if not dims or not d.chance(0.3):
        return tuple(dims)
    return tuple(1 if d.chance(0.4) else x for x in dims)


def _vectors(d: Draw) -> None:
    n = d.dim()
    for p in d.tensors():
        d.shapes[p.name] = (n,)


def _outer(d: Draw) -> None:
    for p in d.tensors():
        d.shapes[p.name] = (d.dim(),)


def _inner(d: Draw) -> None:
    k = d.dim()
    for p in d.tensors():
        lo, hi = d.limits(p.name)
        d.shapes[p.name] = d.shape(max(lo - 1, 0), min(hi - 1, 2)) + (k,)


def _tensordot(d: Draw) -> None:
    a, b = d.tensors()[:2]
    k = d.int(0, 2)
    common = tuple(d.dims(k))
    d.shapes[a.name] = d.shape(0, 2) + common
    d.shapes[b.name] = common + d.shape(0, 2)
    d.params["axes"] = k


def _cross(d: Draw) -> None:
    # torch.linalg.cross broadcasts sizes but not ranks: keep the ranks equal.
    base = d.shape(0, 3)
    for p in d.tensors():
        d.shapes[p.name] = _ones_some(d, base) + (3,)


def _square(d: Draw) -> None:
    n = d.int(0, 6) if d.chance(0.05) else d.int(1, 6)
    batch = d.shape(0, 2)
    for p in d.tensors():
        d.shapes[p.name] = batch + (n, n)


def _solve(d: Draw) -> None:
    a, b = d.tensors()[:2]
    n = d.int(1, 6)
    batch = d.shape(0, 2)
    d.shapes[a.name] = batch + (n, n)
    d.shapes[b.name] = batch + (n, d.int(1, 4))


def _take(d: Draw) -> None:
    a, idx = d.tensors()[:2]
    shape = d.shape_for(a, nonempty=True)
    d.shapes[a.name] = shape
    d.shapes[idx.name] = d.shape_for(idx)
    d.bounds[idx.name] = (0, int(np.prod(shape)))  # tnp.take clips negative indices


def _take_along_axis(d: Draw) -> None:
    arr, idx = d.tensors()[:2]
    lo, hi = d.limits(arr.name)
    shape = list(d.shape(max(lo, 1), hi))
    axis = d.int(0, len(shape) - 1)
    shape[axis] = max(shape[axis], 1)
    d.shapes[arr.name] = tuple(shape)
    ishape = list(shape)
    ishape[axis] = d.dim()
    d.shapes[idx.name] = tuple(ishape)
    d.bounds[idx.name] = (0, shape[axis])
    d.params["axis"] = d.neg(axis, len(shape))


def _searchsorted(d: Draw) -> None:
    a, v = d.tensors()[:2]
    d.shapes[a.name] = (d.dim(),)
    d.shapes[v.name] = (d.dim(),)


def _concat(d: Draw) -> None:
    p = d.tensors()[0]
    lo, hi = d.limits(p.name)
    base = list(d.shape(max(lo, 1), hi))
    axis = d.int(0, len(base) - 1)
    shapes = []
    for _ in range(d.count(p)):
        s = list(base)
        s[axis] = d.dim()
        shapes.append(tuple(s))
    d.shapes[p.name] = shapes
    d.params["axis"] = d.neg(axis, len(base))


def _stack(d: Draw) -> None:
    p = d.tensors()[0]
    shape = d.shape_for(p)
    d.shapes[p.name] = [shape] * d.count(p)
    r = len(shape) + 1
    d.params["axis"] = d.neg(d.int(0, r - 1), r)


def _same_list(d: Draw) -> None:
    p = d.tensors()[0]
    shape = d.shape_for(p)
    d.shapes[p.name] = [shape] * d.count(p)


def _broadcast_list(d: Draw) -> None:
    p = d.tensors()[0]
    d.shapes[p.name] = broadcast_group(d, [d.limits(p.name)] * d.count(p))


def _reshape(d: Draw) -> None:
    a = d.tensors()[0]
    shape = d.shape_for(a)
    d.shapes[a.name] = shape
    dims = list(shape)
    d.rng.shuffle(dims)
    merged: list[int] = []
    for x in dims:  # merging neighbours keeps the element count
        if merged and d.chance(0.4):
            merged[-1] *= x
        else:
            merged.append(x)
    while d.chance(0.25) and len(merged) < 5:
        merged.insert(d.int(0, len(merged)), 1)
    if merged and int(np.prod(shape)) > 0 and d.chance(0.3):
        merged[d.int(0, len(merged) - 1)] = -1
    d.params["shape"] = tuple(merged)


def _broadcast_to(d: Draw) -> None:
    a = d.tensors()[0]
    shape = d.shape_for(a)
    d.shapes[a.name] = shape
    target = tuple(d.dims(d.int(0, 2))) + tuple(d.dim() if x == 1 else x for x in shape)
    # Shrinking the target could break compatibility; an oversized one falls back to shape.
    d.params["shape"] = target if int(np.prod(target)) <= MAX_ELEMENTS else shape


def _squeeze(d: Draw) -> None:
    a = d.tensors()[0]
    lo, hi = d.limits(a.name)
    shape = list(d.shape(max(lo, 1), hi))
    axis = d.int(0, len(shape) - 1)
    shape[axis] = 1
    d.shapes[a.name] = tuple(shape)
    axis_param = d.spec.param("axis")
    if axis_param is not None and not (axis_param.optional and d.chance(0.3)):
        d.params["axis"] = d.neg(axis, len(shape))


def _sections(d: Draw, length: int, indices_ok: bool = True) -> Any:
    if indices_ok and d.chance(0.4):
        return tuple(sorted(d.int(0, length) for _ in range(d.int(1, 3))))
    if length == 0:
        return d.int(1, 3)
    divisors = [k for k in range(1, length + 1) if length % k == 0]
    return divisors[d.int(0, len(divisors) - 1)]


def _split(d: Draw) -> None:
    a = d.tensors()[0]
    lo, hi = d.limits(a.name)
    shape = d.shape(max(lo, 1), hi)
    d.shapes[a.name] = shape
    axis = d.int(0, len(shape) - 1)
    d.params["axis"] = d.neg(axis, len(shape))
    d.params["indices_or_sections"] = _sections(d, shape[axis])


def _xsplit(axis_for: Callable[[int], int], min_rank: int) -> Callable[[Draw], None]:
    def rule(d: Draw) -> None:
        a = d.tensors()[0]
        lo, hi = d.limits(a.name)
        shape = d.shape(max(lo, min_rank), max(hi, min_rank))
        d.shapes[a.name] = shape
        d.params["indices_or_sections"] = _sections(d, shape[axis_for(len(shape))])
    return rule


_LETTERS = "abcdefgh"


def _einsum(d: Draw) -> None:
    p = d.tensors()[0]
    n_ops = d.count(p)
    n_letters = d.int(1, 5)
    sizes = d.dims(n_letters, nonempty=d.chance(0.9))
    operands: list[str] = []
    for _ in range(n_ops):
        rank = d.int(0, min(3, n_letters))
        picks = d.rng.permutation(n_letters)[:rank]
        operands.append("".join(_LETTERS[i] for i in picks))
    used = sorted(set("".join(operands)))
    out = [c for c in used if d.chance(0.5)]
    d.rng.shuffle(out)
    d.params["subscripts"] = ",".join(operands) + "->" + "".join(out)
    d.shapes[p.name] = [tuple(sizes[_LETTERS.index(c)] for c in op) for op in operands]


def _diag(d: Draw) -> None:
    v = d.tensors()[0]
    d.shapes[v.name] = tuple(d.dims(d.int(1, 2)))


def _meshgrid(d: Draw) -> None:
    p = d.tensors()[0]
    d.shapes[p.name] = [(d.dim(),) for _ in range(d.count(p))]


def _arange(d: Draw) -> None:
    start = d.int(-5, 5)
    step = d.int(1, 3)
    d.params["start"] = start
    d.params["stop"] = start + step * d.int(0, 10) + d.int(0, step - 1)
    d.params["step"] = step


def _clip(d: Draw) -> None:
    _any(d)
    # Unsigned tensors get non-negative bounds: torch wraps -3 to 253 for uint8.
    lo = d.int(0 if d.dtype.startswith("uint") or d.dtype == "bool" else -5, 5)
    d.params["a_min"] = lo
    d.params["a_max"] = lo + d.int(0, 6)


def _none(d: Draw) -> None:
    pass


RULES: dict[str, Callable[[Draw], None]] = {
    "any": _any, "same": _same, "broadcast": _broadcast, "matmul": _matmul,
    "vectors": _vectors, "outer": _outer, "inner": _inner, "tensordot": _tensordot,
    "cross": _cross, "square": _square, "solve": _solve, "take": _take,
    "take_along_axis": _take_along_axis, "searchsorted": _searchsorted, "concat": _concat,
    "stack": _stack, "same_list": _same_list, "broadcast_list": _broadcast_list,
    "reshape": _reshape, "broadcast_to": _broadcast_to, "squeeze": _squeeze,
    "split": _split,
    "hsplit": _xsplit(lambda r: 1 if r >= 2 else 0, 1),
    "vsplit": _xsplit(lambda r: 0, 2),
    "dsplit": _xsplit(lambda r: 2, 3),
    "einsum": _einsum, "diag": _diag, "meshgrid": _meshgrid, "arange": _arange, "clip": _clip,
    "none": _none,
}
assert set(RULES) == set(SHAPE_RULES), "shape rules and their declarations diverged"

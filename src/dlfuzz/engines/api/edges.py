"""Edge inputs: a group of valid draws pushed to the edge of its value space.

Known bugs of the installed releases hide where a generator of valid inputs never goes:
integer division at ``INT_MIN // -1`` (a SIGFPE), a NaN where an infinite ``end`` with a
finite ``start`` should give ``-inf``, an ``eps`` or ``momentum`` just outside its range,
a zero-size dimension. Each edge group takes one group of valid draws (one signature:
``LibGenerator.group``) and pushes it to an edge so that it stays one compiled signature
(how members share a mechanism is said after the list):

``int-extremes``
    every integer tensor gets its dtype's extremes (min, min + 1, -1, 0, 1, max - 1,
    max; min and -1 most often) in a share of its elements, and each integer scalar such values with a smaller
    probability. All integers at once, since the classic crashes need two at once
    (``INT_MIN`` in the dividend where the divisor holds ``-1``; that pair is also
    placed at one element two signed integer tensors share); mostly the other
    tensors are first cast to the integer dtype where their spec allows it (a draw that
    mixed dtypes, float32 dividend and int8 divisor, becomes int8 and int8). A draw
    with no integer tensor gets them where its specs allow: its floating tensors cast
    to a signed integer dtype they all accept (``castable``), since an API drawn in
    float32 nine times in ten (``floor_divide``, ``remainder``) has its integer kernels,
    where the division crashes are, reached almost never.
``special-one``
    one floating argument (tensor or scalar) gets NaN, +inf, -inf, -0.0 or the dtype's
    largest or smallest normal value; every other floating tensor is made finite, so
    the report says which argument the library mishandles.
``outside-range``
    one bounded scalar (an ``eps``, ``p``, ``momentum``, ``axis`` with a range in its
    spec) just outside or far outside its range.
``special-pair``
    two floating tensors at once get specials (whole or in a share of their elements),
    every other floating tensor finite: the NaN/Inf *pairs* some functions mishandle
    (``gammainc(inf, nan)`` giving 0, ``zeta(nan, -inf)`` giving inf).
``empty``
    one tensor with a zero-size dimension (or, where that breaks a relation the valid
    draw kept, every dimension of that size in every tensor: a 0 by 0 matrix).
``equal-scalars``
    two numeric scalar parameters given the same value: the degenerate interval
    (``histc(min=7, max=7)`` silently bins over the data's range instead), a ``start``
    equal to its ``end``.
``large``
    one float16 or bfloat16 tensor's innermost dimension stretched (its values
    repeated) to 2^16-2^17 elements: counters and accumulators of the low-precision
    types overflow or lose everything only there (a float16 mean whose element count
    does not fit float16, a bfloat16 cumsum accumulated in bfloat16).
    Only that tensor grows: growing its partners too would make outer products and
    Kronecker products of 2^32 elements, a memory exhaustion of our own making.

A group is one signature, so what changes a signature (a static scalar, a dtype, a
shape: ``outside-range``, ``empty``, ``large``, the integer scalars and casts of
``int-extremes``) is planned once and shared by every member. What only changes values
(which special goes where: ``special-one`` and ``special-pair`` on tensors) is planned
per member, and the value-only mechanisms rotate across the members: one visit to an
API tries several of them at the price of one compilation. Across visits, the engine hands each API's groups its mechanisms in turn
(``turn``), so an API visited five times has seen five of them, not one five times.

Edge inputs are neither valid nor invalid: a library may reject them or compute them.
Their case's expectation is ``edge:<mechanism>:<parameter>``. The boundary oracle does
not judge them (no constraint says they must be rejected); a crash, a hang, an internal
failure, a wrong result against the other libraries stays a finding. The engine does
not learn constraints from their rejections (they would narrow generation back to the
ordinary values).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import ml_dtypes
import numpy as np

from dlfuzz.engines.api.constraints import Constraint, holds
from dlfuzz.engines.api.libdraw import Draw

EDGES = ("int-extremes", "special-one", "special-pair", "outside-range", "equal-scalars",
         "empty", "large")
# Mechanisms that only change values (never the signature) when applied to tensors: each
# member of a group plans its own, and the members rotate through those that apply.
VALUE_ONLY = frozenset({"special-one", "special-pair"})
LARGE_ELEMENTS = (2**16, 2**17)  # what ``large`` stretches one tensor to (log-uniform)
LARGE_OTHER_MAX = 2**12       # no ``large`` when the other dimensions already hold this many
INT_SHARES = (0.5, 1.0)       # share of an integer tensor's elements set to extremes
INT_SCALAR_P = 0.3            # an integer scalar takes an extreme this often
INT_WEIGHT = 3                # int-extremes counts as this many choices
JOIN_P = 0.7                  # int-extremes casts the other tensors to the integer dtype
# The integer dtypes a floating draw is cast to for ``int-extremes`` (the signed ones:
# INT_MIN beside -1 is the classic pair), where every floating tensor's spec lists one.
CAST_INTS = ("int64", "int32", "int16", "int8")
SCALAR_INTS = (-2**63, -2**31, -1, 0, 1, 2**31 - 1, 2**63 - 1)
FAR = 1e9                     # "far outside" a range, for floats
SPECIAL_WHOLE_P = 0.5         # special-one fills the whole argument this often
INFINITE_BOUND = 1e30         # a bound this large is no bound


def int_extremes(dtype: np.dtype) -> np.ndarray:
    """The extreme values of an integer dtype (and -1, 0, 1 where it has them)."""
    ii = np.iinfo(dtype)
    values = {int(ii.min), int(ii.min) + 1, 0, 1, int(ii.max) - 1, int(ii.max)}
    if ii.min < 0:
        values.add(-1)
    return np.array(sorted(values), dtype=dtype)


def int_extreme_weights(pool: np.ndarray) -> np.ndarray:
    """How often each of ``int_extremes`` is drawn: the minimum and -1 a quarter each
    (``abs(INT_MIN)``, ``INT_MIN // -1``, ``INT_MIN % -1`` need exactly these), the
    maximum more than the rest (overflow), so that two arguments meet at the classic
    pair once in sixteen aligned elements rather than once in 49."""
    ii = np.iinfo(pool.dtype)
    favoured = {int(ii.min): 4.0, -1: 4.0, int(ii.max): 2.0}
    w = np.array([favoured.get(int(v), 1.0) for v in pool])
    return w / w.sum()


def float_specials(dtype: np.dtype) -> np.ndarray:
    """NaN, +-inf, -0.0 and +-max of a floating dtype.

    Not the smallest normal value: a quotient or product of it is subnormal, which
    TensorFlow and XLA flush to zero by design (``floordiv(tiny, -1.1)`` is -0 in tf),
    a difference no maintainer takes as a bug."""
    fi = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
    values = [np.nan, np.inf, -np.inf, -0.0, float(fi.max), -float(fi.max)]
    return np.array(values, dtype=np.float64).astype(dtype)


def _is_int(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "iu"


def _is_float(arr: np.ndarray) -> bool:
    return arr.dtype.kind == "f" or arr.dtype == ml_dtypes.bfloat16


def _arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return list(value)
    return []


def _map_arrays(value: Any, fn: Any) -> Any:
    if isinstance(value, np.ndarray):
        return fn(value)
    return [fn(v) for v in value]


def _bounded(draw: Draw, name: str) -> tuple[float, float] | None:
    """The finite part of a scalar parameter's range (None when it has no bound)."""
    param = draw.spec.param(name)
    if param is None or param.range is None or param.values:
        return None
    lo, hi = param.range
    if abs(lo) >= INFINITE_BOUND and abs(hi) >= INFINITE_BOUND:
        return None
    return float(lo), float(hi)


def choices(draw: Draw) -> list[tuple[str, str]]:
    """The (mechanism, parameter) pairs that apply to a draw ("*": the plan picks, or
    every integer for ``int-extremes``)."""
    out: list[tuple[str, str]] = []
    ints = False
    float_tensors = 0
    stretchable = False
    for name, value in draw.values.items():
        structure = draw.structures.get(name, "")
        arrays = _arrays(value)
        if arrays:
            ints = ints or any(_is_int(a) for a in arrays)
            if any(_is_float(a) for a in arrays):
                out.append(("special-one", name))
                float_tensors += isinstance(value, np.ndarray)
            if any(a.ndim >= 1 and a.size for a in arrays):
                out.append(("empty", name))
            stretchable = stretchable or _stretchable(value)
        elif structure == "float" and isinstance(value, float):
            out.append(("special-one", name))
        if structure in ("int", "float", "ints") and _bounded(draw, name) is not None:
            out.append(("outside-range", name))
    if float_tensors >= 2:
        out.append(("special-pair", "*"))
    ints = ints or bool(castable(draw))
    if _scalar_pairs(draw):
        out.append(("equal-scalars", "*"))
    if stretchable:
        out.append(("large", "*"))
    if ints:
        # One entry stands for every integer argument at once: weighted like several
        # per-parameter ones, so integer APIs get integer extremes as often as the rest.
        out.extend([("int-extremes", "*")] * INT_WEIGHT)
    return out


def _stretchable(value: Any) -> bool:
    """A tensor ``large`` can stretch: a float16 or bfloat16 one whose other dimensions
    hold few elements.

    Only the low-precision floats: their counters and accumulators are what overflow or
    stall at 2^16 elements. A float32 reduction over 60,000 elements differs from the
    float64 one by its summation order's rounding (torch's ``norm`` 4e-6 relative off,
    against a float32 tolerance of 1.3e-6), which no maintainer takes as a wrong result,
    and the element-wise tolerance cannot tell that from a bug."""
    if not isinstance(value, np.ndarray) or value.ndim < 1 or not value.size:
        return False
    if value.dtype != np.float16 and value.dtype != ml_dtypes.bfloat16:
        return False
    return value.size // value.shape[-1] <= LARGE_OTHER_MAX


def _scalar_pairs(draw: Draw) -> list[list[str]]:
    """The int scalar parameters and the float ones (not enumerations, not booleans),
    each kind where it has two or more: the pairs ``equal-scalars`` may make equal (an
    int ``bins`` equal to a float ``min`` says nothing)."""
    kinds: dict[str, list[str]] = {}
    for n, v in draw.values.items():
        kind = draw.structures.get(n, "")
        if kind in ("int", "float") and isinstance(v, int | float) \
                and not isinstance(v, bool) and not _enum(draw, n):
            kinds.setdefault(kind, []).append(n)
    return [names for names in kinds.values() if len(names) >= 2]


def _value_only(draw: Draw, option: tuple[str, str]) -> bool:
    """Whether an option changes only values (tensors), never the signature."""
    mechanism, name = option
    if mechanism not in VALUE_ONLY:
        return False
    return name == "*" or bool(_arrays(draw.values[name]))


def edge_group(draws: Sequence[Draw], rng: np.random.Generator, turn: int | None = None,
               spread: bool = False) -> list[Draw]:
    """The group pushed to the edge; empty when no mechanism applies.

    ``turn`` (the engine's count of this API's edge groups) picks the mechanism in turn
    rather than at random. A signature-changing mechanism is planned once for every
    member; a value-only one starts a rotation of the value-only options across the
    members, each with its own plan. With ``spread`` every option rotates across the
    members, each member a mechanism of its own (a signature each where the mechanism
    changes it, marked ``meta["alone"]``: the engine runs those on the API's library
    only): for a visit where a new signature costs the library nothing."""
    if not draws:
        return []
    options = choices(draws[0])
    if not options:
        return []
    index = turn % len(options) if turn is not None else int(rng.integers(len(options)))
    chosen = options[index]
    if spread:
        ring = list(dict.fromkeys(options))
        start = ring.index(chosen)
        out = []
        for i, d in enumerate(draws):
            option = ring[(start + i) % len(ring)]
            edged = _apply(d, *option, _plan(*option, draws[0], rng), rng)
            if i and not _value_only(draws[0], option):  # a signature of its own
                edged = replace(edged, meta={**edged.meta, "alone": True})
            out.append(edged)
        return out
    if _value_only(draws[0], chosen):
        ring = [o for o in options if _value_only(draws[0], o)]
        start = ring.index(chosen)
        out = []
        for i, d in enumerate(draws):
            mechanism, name = ring[(start + i) % len(ring)]
            out.append(_apply(d, mechanism, name, _plan(mechanism, name, draws[0], rng), rng))
        return out
    mechanism, name = chosen
    plan = _plan(mechanism, name, draws[0], rng)
    return [_apply(d, mechanism, name, plan, rng) for d in draws]


def _apply(draw: Draw, mechanism: str, name: str, plan: dict[str, Any],
           rng: np.random.Generator) -> Draw:
    values = _APPLY[mechanism](draw, name, plan, rng)
    return replace(draw, values=values, edge=f"{mechanism}:{plan.get('label', name)}")


def _plan(mechanism: str, name: str, draw: Draw, rng: np.random.Generator) -> dict[str, Any]:
    """What every member of the group shares: the static values and choices."""
    if mechanism == "int-extremes":
        scalars = {n: int(SCALAR_INTS[int(rng.integers(len(SCALAR_INTS)))])
                   for n, s in draw.structures.items()
                   if s == "int" and not _enum(draw, n) and rng.random() < INT_SCALAR_P}
        casts = castable(draw)
        if casts:  # no integer tensor: every floating one becomes one
            cast_to = np.dtype(casts[int(rng.integers(len(casts)))])
            join = {n: cast_to for n, v in draw.values.items()
                    if isinstance(v, np.ndarray) and _is_float(v)}
        else:
            join = _joined(draw) if rng.random() < JOIN_P else {}
        return {"share": INT_SHARES[int(rng.integers(len(INT_SHARES)))], "scalars": scalars,
                "join": join}
    if mechanism == "special-one":
        if isinstance(draw.values[name], float):
            pool = float_specials(np.dtype(np.float64))
            return {"scalar": float(pool[int(rng.integers(len(pool)))])}
        return {"fills": {name: _fill(rng)}}
    if mechanism == "special-pair":
        names = [n for n, v in draw.values.items()
                 if isinstance(v, np.ndarray) and _is_float(v)]
        a, b = (names[int(i)] for i in rng.choice(len(names), size=2, replace=False))
        return {"fills": {a: _fill(rng), b: _fill(rng)}, "label": f"{a}+{b}"}
    if mechanism == "equal-scalars":
        kinds = _scalar_pairs(draw)
        names = kinds[int(rng.integers(len(kinds)))]
        a, b = (names[int(i)] for i in rng.choice(len(names), size=2, replace=False))
        return {"pair": (a, b), "label": f"{a}={b}"}
    if mechanism == "large":
        names = [n for n, v in draw.values.items() if _stretchable(v)]
        chosen = names[int(rng.integers(len(names)))]
        array = draw.values[chosen]
        lo, hi = np.log2(LARGE_ELEMENTS[0]), np.log2(LARGE_ELEMENTS[1])
        target = int(2 ** rng.uniform(lo, hi))
        other = max(array.size // array.shape[-1], 1)
        return {"name": chosen, "length": max(array.shape[-1], -(-target // other)),
                "label": chosen}
    if mechanism == "outside-range":
        lo, hi = _bounded(draw, name) or (0.0, 0.0)
        sides = [s for s, b in (("low", lo), ("high", hi)) if abs(b) < INFINITE_BOUND]
        low = sides[int(rng.integers(len(sides)))] == "low"
        far = bool(rng.random() < 0.5)
        if draw.structures[name] in ("int", "ints"):
            step = 2**31 if far else 1
            return {"value": int(np.ceil(lo)) - step if low else int(np.floor(hi)) + step}
        delta = FAR if far else max(1e-6, 1e-3 * max(abs(lo), abs(hi), 1.0))
        return {"value": float(lo - delta if low else hi + delta)}
    if mechanism == "empty":
        arrays = _arrays(draw.values[name])
        ndim = max(a.ndim for a in arrays)
        return {"axis": int(rng.integers(max(ndim, 1)))}
    raise ValueError(mechanism)  # pragma: no cover - EDGES is closed


def _enum(draw: Draw, name: str) -> bool:
    param = draw.spec.param(name)
    return param is not None and bool(param.values)


def _int_extremes(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
                  ) -> dict[str, Any]:
    share = plan["share"]

    def push(a: np.ndarray) -> np.ndarray:
        if not _is_int(a) or not a.size:
            return a
        out = a.copy()
        pool = int_extremes(a.dtype)
        mask = np.asarray(rng.random(a.shape) < share)
        out[mask] = rng.choice(pool, size=int(mask.sum()), p=int_extreme_weights(pool))
        return out

    values = dict(draw.values)
    joined = plan["join"]
    for n, v in values.items():
        if n in joined and isinstance(v, np.ndarray) and v.dtype != joined[n]:
            with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf: some integer
                # (asarray: nan_to_num gives a 0-d array back as a numpy scalar)
                v = np.asarray(np.nan_to_num(v.astype(np.float64))).astype(joined[n])
        if _arrays(v):
            values[n] = _map_arrays(v, push)
    _aligned_pair(values, rng)
    values.update(plan["scalars"])
    return values


def _aligned_pair(values: dict[str, Any], rng: np.random.Generator) -> None:
    """``INT_MIN`` in one signed integer tensor and ``-1`` in another at one element
    that the two share once broadcast, in place; nothing where no two signed integer
    tensors broadcast together.

    Drawn element by element, the pair meets at a given element once in twelve (at a
    share of 1, once in fifty at a share of one half): three integer-extreme members
    of a binary API in four held it at no element (``floor_divide``, ``gcd`` specs), and
    a SIGFPE planted at ``gcd(INT_MIN, -1)`` was missed with one group of its API.
    The dividend is the first of the two in the spec's order (``a // b``, ``gcd(a, b)``,
    ``fmod(a, b)``); where they share two elements or more, the pair is placed the other
    way round too. A pair in a drawn order missed the dividend of one-element tensors
    half the time."""
    names = [n for n, v in values.items() if isinstance(v, np.ndarray)
             and v.dtype.kind == "i" and v.size]
    if len(names) < 2:
        return
    first, second = (names[int(i)] for i in sorted(rng.choice(len(names), size=2,
                                                              replace=False)))
    a, b = values[first].copy(), values[second].copy()
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return
    lead_a, lead_b = len(shape) - a.ndim, len(shape) - b.ndim

    def own(arr: np.ndarray, lead: int, at: tuple[int, ...]) -> tuple[int, ...]:
        """An element of the broadcast shape in an array's own axes."""
        return tuple(0 if n == 1 else at[lead + k] for k, n in enumerate(arr.shape))

    size = math.prod(shape)
    flat = rng.choice(size, size=min(2, size), replace=False)
    ats = [tuple(int(i) for i in np.unravel_index(int(f), shape)) for f in flat]
    ia, ib = own(a, lead_a, ats[0]), own(b, lead_b, ats[0])
    a[ia], b[ib] = np.iinfo(a.dtype).min, -1
    if len(ats) == 2:  # the other way round, unless a broadcast element is shared
        ja, jb = own(a, lead_a, ats[1]), own(b, lead_b, ats[1])
        if ja != ia and jb != ib:
            a[ja], b[jb] = -1, np.iinfo(b.dtype).min
    values[first], values[second] = a, b


def castable(draw: Draw) -> tuple[str, ...]:
    """The signed integer dtypes (``CAST_INTS``) that every floating tensor of a draw
    without integer tensors may take by its spec (an explicit ``dtypes`` list naming
    them: an unrestricted tensor may still be float-only)."""
    floats = []
    for name, value in draw.values.items():
        arrays = _arrays(value)
        if any(_is_int(a) for a in arrays):
            return ()
        if isinstance(value, np.ndarray) and _is_float(value):
            param = draw.spec.param(name)
            floats.append(param.dtypes if param is not None else ())
    if not floats:
        return ()
    return tuple(d for d in CAST_INTS if all(d in allowed for allowed in floats))


def _joined(draw: Draw) -> dict[str, np.dtype]:
    """The floating or integer tensors that take the first integer tensor's dtype (where
    their spec allows it): the dividend and the divisor both integers, as the extremes
    need, also where the draw had mixed them."""
    ints = [a.dtype for v in draw.values.values() for a in _arrays(v) if _is_int(a)]
    if not ints:
        return {}
    target = ints[0]
    out = {}
    for name, value in draw.values.items():
        if not isinstance(value, np.ndarray) or value.dtype == target or value.dtype.kind \
                not in "iuf" and value.dtype != ml_dtypes.bfloat16:
            continue
        param = draw.spec.param(name)
        if param is not None and (not param.dtypes or target.name in param.dtypes):
            out[name] = target
    return out


def _fill(rng: np.random.Generator) -> dict[str, Any]:
    """How one tensor gets its specials: all one value, or a share of its elements."""
    return {"whole": bool(rng.random() < SPECIAL_WHOLE_P),
            "which": int(rng.integers(len(float_specials(np.dtype(np.float32))))),
            "share": float(rng.uniform(0.2, 0.6))}


def _special_one(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
                 ) -> dict[str, Any]:
    """Specials in the planned tensors (``fills``: one for ``special-one``, two for
    ``special-pair``) or the planned scalar; every other floating tensor finite, so the
    report says which arguments the library mishandles."""
    def finite(a: np.ndarray) -> np.ndarray:
        if not _is_float(a) or not a.size:
            return a
        wide = a.astype(np.float64)
        bad = ~np.isfinite(wide)
        if not bad.any():
            return a
        wide[bad] = rng.standard_normal(int(bad.sum()))
        return wide.astype(a.dtype)

    def special(a: np.ndarray, fill: dict[str, Any]) -> np.ndarray:
        if not _is_float(a) or not a.size:
            return a
        pool = float_specials(a.dtype)
        out = finite(a).copy()
        if fill["whole"]:
            out[...] = pool[fill["which"]]
        else:
            mask = np.asarray(rng.random(a.shape) < fill["share"])
            mask.flat[int(rng.integers(mask.size))] = True  # at least one element
            out[mask] = pool[rng.integers(len(pool), size=int(mask.sum()))]
        return out

    fills = plan.get("fills", {})
    values = dict(draw.values)
    for n, v in values.items():
        if n in fills:
            values[n] = _map_arrays(v, lambda a, f=fills[n]: special(a, f))
        elif n != name and _arrays(v):
            values[n] = _map_arrays(v, finite)
    if "scalar" in plan:
        values[name] = plan["scalar"]
    return values


def _equal_scalars(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
                   ) -> dict[str, Any]:
    """The second scalar of the planned pair takes the first one's value."""
    a, b = plan["pair"]
    values = dict(draw.values)
    values[b] = values[a]
    return values


def _large(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
           ) -> dict[str, Any]:
    """The planned tensor's innermost dimension stretched to the planned length, its
    values repeated (the distribution stays that of the valid draw)."""
    values = dict(draw.values)
    array = values[plan["name"]]
    values[plan["name"]] = np.take(array, np.arange(plan["length"]) % array.shape[-1], axis=-1)
    return values


def _outside_range(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
                   ) -> dict[str, Any]:
    values = dict(draw.values)
    if draw.structures[name] == "ints":
        items = list(values[name])
        if items:
            items[int(rng.integers(len(items)))] = plan["value"]
        values[name] = items
    else:
        values[name] = plan["value"]
    return values


def _empty(draw: Draw, name: str, plan: dict[str, Any], rng: np.random.Generator
           ) -> dict[str, Any]:
    """The planned axis of one tensor made zero-size; where that breaks a constraint the
    valid draw kept (a square matrix now 0 by 3, ``inner``'s last dimensions no longer
    equal), every axis of every tensor of that axis's size instead, where that keeps
    them: a 0 by 0 matrix, two vectors of length 0, the empty input the API is defined
    on."""
    def shrink(a: np.ndarray) -> np.ndarray:
        if a.ndim == 0:
            return a
        axis = min(plan["axis"], a.ndim - 1)
        return np.take(a, np.arange(0), axis=axis)

    values = dict(draw.values)
    v = values[name]
    values[name] = shrink(v) if isinstance(v, np.ndarray) else [shrink(v[0])] + list(v[1:])
    if _keeps_constraints(draw, values):
        return values
    first = v if isinstance(v, np.ndarray) else v[0]
    if first.ndim == 0:
        return values
    size = first.shape[min(plan["axis"], first.ndim - 1)]

    def linked(a: np.ndarray) -> np.ndarray:
        for axis in range(a.ndim):
            if a.shape[axis] == size:
                a = np.take(a, np.arange(0), axis=axis)
        return a

    wide = {n: _map_arrays(x, linked) if _arrays(x) else x for n, x in draw.values.items()}
    return wide if _keeps_constraints(draw, wide) else values


def newly_broken(before: Draw, after: Draw) -> list[Constraint]:
    """The constraints of the spec that ``before`` kept and ``after`` breaks: what an
    edge mechanism broke on its way (one the generator could not satisfy in the first
    place is not its doing)."""
    env, kept = after.env(), before.env()
    return [c for c in before.spec.constraints if not holds(c, env) and holds(c, kept)]


def _keeps_constraints(draw: Draw, values: dict[str, Any]) -> bool:
    return not newly_broken(draw, replace(draw, values=values))


_APPLY = {"int-extremes": _int_extremes, "special-one": _special_one,
          "special-pair": _special_one, "outside-range": _outside_range,
          "equal-scalars": _equal_scalars, "empty": _empty, "large": _large}


def unsorted_fills(spec: Any, before: Any, after: Any) -> list[str]:
    """``"<name> sorted"`` for each tensor the spec fills ``sorted`` (a search sequence)
    that ``before`` held sorted along its last axis and ``after`` (its edge form) does
    not: NaN or an extreme written into it leaves the domain every library documents."""
    out = []
    for p in spec.params:
        if p.fill != "sorted":
            continue
        old, new = before.values.get(p.name), after.values.get(p.name)
        if _sorted(old) and not _sorted(new):
            out.append(f"{p.name} sorted")
    return out


def _sorted(value: Any) -> bool:
    """Whether an array is sorted along its last axis, NaN last (numpy's order, which a
    drawn sequence holding specials gets)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind in "cOUS":
        return False
    if value.ndim == 0 or value.size == 0:
        return True
    wide = value.astype(np.float64)  # bfloat16 included (numpy kind "V")
    nan = np.isnan(wide)
    if np.any(nan[..., :-1] & ~nan[..., 1:]):
        return False  # a number after a NaN
    lo, hi = wide[..., :-1], wide[..., 1:]
    return bool(np.all((hi >= lo) | nan[..., 1:]))

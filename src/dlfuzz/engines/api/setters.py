"""The setters of Algorithm 2: how one property of a generation state is changed.

``AdjustParam`` (``adjust.py``) decides *what* value a property needs; the methods here
write it: a tensor's rank (new dimensions are prepended, dropped ones come off the
front, so ``shape[-1]`` and friends keep their meaning), one dimension (raising the rank
when ``x.shape[-3]`` does not exist yet), the dtype, the element count (a random
factorization), a list's length or item, a scalar (switching structure when the value
needs another one: None, an int for an ``int|ints`` parameter), and the planned element
bounds. Each returns True only when the state changed, which is how Algorithm 2 knows
to try the other side of a comparison. Type bounds are never crossed unless violate mode
relaxed them for this (parameter, bound).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.engines.api.constraints import Node, TensorProps, Var
from dlfuzz.engines.api.edges import LARGE_ELEMENTS
from dlfuzz.engines.api.typegen import (
    ALL_DTYPES,
    DIM_MAX,
    RANK_MAX,
    ParamPlan,
    State,
    TypedGen,
    default_bounds,
    family,
)

WINDOW = 3          # inequalities pick a target this far past the bound at most
DIM_CAP = 64        # largest dimension a setter writes
NUMEL_CAP = 4096    # largest element count a reshape writes
# Largest element count a setter writes into one parameter (a tensor list's members
# together), and the longest list: what generation itself reaches at most (the
# ``large`` edge inputs, ``edges.LARGE_ELEMENTS``). Dimensions set one at a time stay
# under DIM_CAP each, yet five of them at 64 made a float32 tensor of 4 GiB: drawn in the
# host for seconds, then too large for a frame to a worker (a CI campaign died on it).
ELEMENTS_CAP = LARGE_ELEMENTS[1]


class Setters:
    """Property writers over a ``State`` (see module doc)."""

    def __init__(self, tg: TypedGen) -> None:
        self.tg, self.rnd = tg, tg.rnd

    def _range(self, pp: ParamPlan, st: State) -> tuple[float, float]:
        if pp.p.range is None or (pp.name, "range") in st.relaxed:
            return -math.inf, math.inf
        return pp.p.range

    def regen(self, pp: ParamPlan, s: str, st: State) -> None:
        """Generate the parameter afresh with structure ``s`` (Alg. 1 for one param)."""
        self.tg.param(st, pp, s)
        if st.phase == 2 and s in ("tensor", "tensors"):
            self.put(pp, st.props[pp.name], st)

    def put(self, pp: ParamPlan, props: TensorProps, st: State,
            count: int | None = None) -> bool:
        """Write a tensor's props (drawing its values in phase 2); False, and the state
        left as it was, where they would exceed ``ELEMENTS_CAP``."""
        members = 1
        if st.structures.get(pp.name) == "tensors":
            members = len(st.values[pp.name]) if count is None else count
        if _numel(props.shape) * members > ELEMENTS_CAP:
            return False
        st.set_props(pp.name, props, count, self.tg.drawer(st, pp) if st.phase == 2 else None)
        return True

    def tensor(self, pp: ParamPlan, st: State) -> TensorProps | None:
        """The planned props of a tensor parameter, making it a tensor if it is not one
        and may be (``bias.shape[0] == ...`` with bias left out)."""
        props = st.props.get(pp.name)
        if props is not None:
            return props
        for s in ("tensor", "tensors"):
            if s in pp.p.structures:
                self.regen(pp, s, st)
                return st.props[pp.name]
        return None

    def set_rank(self, pp: ParamPlan, t: Any, st: State) -> bool:
        props = self.tensor(pp, st)
        lo, hi = (0, RANK_MAX) if (pp.name, "rank") in st.relaxed else pp.rank
        if props is None or not _is_int(t) or not lo <= t <= hi:
            return False
        t, shape = int(t), props.shape
        if len(shape) == t:
            return False
        if t > len(shape):
            shape = tuple(self.tg.dim() for _ in range(t - len(shape))) + shape
        else:
            shape = shape[len(shape) - t:]
        return self.put(pp, TensorProps(shape, props.dtype, props.min, props.max), st)

    def set_dim(self, pp: ParamPlan, i: int, t: Any, st: State) -> bool:
        props = self.tensor(pp, st)
        if props is None or not _is_int(t) or not 0 <= t <= DIM_CAP:
            return False
        need = i + 1 if i >= 0 else -i
        if len(props.shape) < need:
            if not self.set_rank(pp, need, st):
                return False
            props = st.props[pp.name]
        shape = list(props.shape)
        if shape[i] == t:
            return False
        shape[i] = int(t)
        return self.put(pp, TensorProps(tuple(shape), props.dtype, props.min, props.max), st)

    def set_dtype(self, pp: ParamPlan, t: Any, st: State) -> bool:
        props = self.tensor(pp, st)
        allowed = ALL_DTYPES if (not pp.p.dtypes or (pp.name, "dtypes") in st.relaxed) \
            else pp.p.dtypes
        if props is None or t not in allowed or props.dtype == t:
            return False
        lo, hi = props.min, props.max
        if family(t) != family(props.dtype):
            dlo, dhi = default_bounds(t, pp.p.domain)
            lo = lo if (pp.name, "min") in st.fixed else dlo
            hi = hi if (pp.name, "max") in st.fixed else dhi
        return self.put(pp, TensorProps(props.shape, t, lo, hi), st)

    def set_numel(self, pp: ParamPlan, t: Any, st: State) -> bool:
        props = self.tensor(pp, st)
        if props is None or not _is_int(t) or not 0 <= t <= NUMEL_CAP:
            return False
        t, r = int(t), len(props.shape)
        if r == 0:
            if t == 1 or not self.set_rank(pp, 1, st):
                return False
            return self.set_dim(pp, 0, t, st) or True
        if t == 0:
            shape = list(props.shape)
            shape[self.rnd.randrange(r)] = 0
        else:
            shape, rest = [], t
            for _ in range(r - 1):
                divs = [d for d in _divisors(rest) if d <= max(DIM_MAX, 1)] or [1]
                d = self.rnd.choice(divs)
                shape.append(d)
                rest //= d
            shape.append(rest)
            self.rnd.shuffle(shape)
        if tuple(shape) == props.shape:
            return False
        return self.put(pp, TensorProps(tuple(shape), props.dtype, props.min, props.max), st)

    def set_len(self, pp: ParamPlan, t: Any, st: State) -> bool:
        if not _is_int(t) or t < 0:
            return False
        t, s, p = int(t), st.structures.get(pp.name), pp.p
        if s not in ("ints", "floats", "tensors", "tensor"):
            s = next((x for x in ("ints", "floats", "tensors", "tensor")
                      if x in p.structures), None)
            if s is None:
                return False
            self.regen(pp, s, st)
        if s == "tensor":
            return self.set_dim(pp, 0, t, st)
        lo, hi = p.count if s == "tensors" else p.length
        if (pp.name, "length") not in st.relaxed and not lo <= t <= hi:
            return False
        cur = st.values[pp.name]
        if len(cur) == t or t > ELEMENTS_CAP:
            return False
        if s == "tensors":
            return self.put(pp, st.props[pp.name], st, count=t)
        new = list(cur[:t]) + [self.tg.item(p, s) for _ in range(t - len(cur))]
        st.set(pp.name, s, new)
        return True

    def set_item(self, pp: ParamPlan, i: int, t: Any, st: State) -> bool:
        s, p = st.structures.get(pp.name), pp.p
        if s not in ("ints", "floats"):
            s = "ints" if "ints" in p.structures else "floats" if "floats" in p.structures \
                else None
            if s is None:
                return False
            self.regen(pp, s, st)
        if not isinstance(t, int | float) or isinstance(t, bool):
            return False
        if s == "ints":
            if not float(t).is_integer():
                return False
            t = int(t)
        lo, hi = self._range(pp, st)
        if not lo <= t <= hi:
            return False
        cur = list(st.values[pp.name])
        if i >= len(cur) or i < -len(cur):
            if i < 0 or i + 1 > p.length[1]:
                return False
            cur += [self.tg.item(p, s) for _ in range(i + 1 - len(cur))]
        if cur[i] == t and cur == st.values[pp.name]:
            return False
        cur[i] = t
        st.set(pp.name, s, cur)
        return True

    def set_var(self, pp: ParamPlan, t: Any, st: State) -> bool:  # noqa: C901
        p, name = pp.p, pp.name
        cur_s = st.structures.get(name)
        if t is None:
            if "none" in p.structures:
                if cur_s == "none":
                    return False
                st.set(name, "none", None)
                return True
            if p.optional and p.default is None and name in st.present:
                st.omit(name)
                return True
            return False
        relaxed_values = (name, "values") in st.relaxed
        if isinstance(t, bool):
            s = "bool" if "bool" in p.structures else None
        elif isinstance(t, int | float):
            integral = float(t).is_integer()
            if "int" in p.structures and integral and cur_s != "float":
                s, t = "int", int(t)
            elif "float" in p.structures:
                s, t = "float", float(t)
            elif "int" in p.structures and integral:
                s, t = "int", int(t)
            else:
                return False
            lo, hi = self._range(pp, st)
            if not lo <= t <= hi:
                return False
            if s in pp.enums and not relaxed_values and t not in pp.enums[s]:
                return False
        elif isinstance(t, str):
            if "dtype" in p.structures and t in DTYPES and (
                    not p.dtypes or t in p.dtypes or (name, "dtypes") in st.relaxed):
                s = "dtype"
            elif "str" in p.structures and (relaxed_values or "str" not in pp.enums
                                            or t in pp.enums["str"]):
                s = "str"
            else:
                return False
        elif isinstance(t, tuple | list):
            s = "ints" if "ints" in p.structures and all(_is_int(x) for x in t) else \
                "floats" if "floats" in p.structures else None
            t = list(t)
        else:
            return False
        if s is None or (cur_s == s and st.values.get(name) == t and name in st.present):
            return False
        st.set(name, s, t)
        return True

    def assign_none(self, expr: Node, want_none: bool, st: State) -> bool:
        if not isinstance(expr, Var) or st.frozen:
            return False
        pp = st.plan.by_name.get(expr.name)
        if pp is None:
            return False
        if want_none:
            return self.set_var(pp, None, st)
        options = [s for s in pp.p.structures if s != "none"]
        if not options:
            return False
        self.regen(pp, self.rnd.choice(options), st)
        return True

    # ---- planned element bounds -------------------------------------------------------------
    def bound(self, name: str, prop: str, op: str, v: Any, st: State) -> bool:
        """``x.min op v`` / ``x.max op v``: move the planned bounds (phase 1), and in
        phase 2 redraw inside them and, where an element must reach a value, set one."""
        pp = st.plan.by_name[name]
        props = st.props[name]
        if isinstance(v, bool):
            v = int(v)
        if not isinstance(v, int | float) or (isinstance(v, float) and math.isnan(v)):
            return False
        fam = family(props.dtype)
        integral = fam in ("int", "bool")
        eps = 1 if integral else _eps(props.dtype, v)
        lo, hi = props.min, props.max
        is_min = prop == "min"
        if op in ("!=", "not in", "in"):
            return False
        # the bound this side needs: (new value, which end)
        if is_min:
            if op in (">=", "=="):
                lo = math.ceil(v) if integral else v
            elif op == ">":
                lo = math.floor(v) + 1 if integral else v + eps
            else:  # min <= v or min < v: the low end must reach below
                top = (math.floor(v) if op == "<=" else math.ceil(v) - 1) if integral \
                    else (v if op == "<=" else v - eps)
                lo = top if lo is None or lo > top else lo
            if op == "==":
                hi = max(hi, lo) if hi is not None else None
        else:
            if op in ("<=", "=="):
                hi = math.floor(v) if integral else v
            elif op == "<":
                hi = math.ceil(v) - 1 if integral else v - eps
            else:
                bottom = (math.ceil(v) if op == ">=" else math.floor(v) + 1) if integral \
                    else (v if op == ">=" else v + eps)
                hi = bottom if hi is None or hi < bottom else hi
            if op == "==":
                lo = min(lo, hi) if lo is not None else None
        if lo is not None and hi is not None and lo > hi:
            other = "max" if is_min else "min"
            if (name, other) in st.fixed:
                return False
            if is_min:
                hi = lo + (WINDOW if integral else 1.0)
            else:
                lo = hi - (WINDOW if integral else 1.0)
        if integral and fam == "int":
            ii = np.iinfo(DTYPES[props.dtype])
            if (lo is not None and lo > ii.max) or (hi is not None and hi < ii.min):
                return False
        st.fixed.add((name, prop))
        new = TensorProps(props.shape, props.dtype, lo, hi)
        changed = new != props
        if st.phase == 2 and _numel(props.shape) == 0:
            if st.frozen:
                return False
            shape = tuple(d or self.rnd.randint(1, DIM_MAX) for d in props.shape)
            new = TensorProps(shape, props.dtype, lo, hi)
            changed = True
        if (changed or st.phase == 2) and not self.put(pp, new, st):
            return False
        needs_reach = op not in (">", ">=") if is_min else op not in ("<", "<=")
        if st.phase == 2 and needs_reach:
            self._reach(name, prop, lo if is_min else hi, st)
        return True

    def _reach(self, name: str, prop: str, target: Any, st: State) -> None:
        """Phase 2: make one element equal the bound (min == v, max >= v, ...)."""
        if target is None:
            return
        value = st.values[name]
        arrays = value if isinstance(value, list) else [value]
        for arr in arrays:
            if isinstance(arr, np.ndarray) and arr.size:
                with np.errstate(invalid="ignore", over="ignore"):
                    arr.flat[self.rnd.randrange(arr.size)] = target


def _is_int(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return isinstance(x, float) and x.is_integer()


def _divisors(n: int) -> list[int]:
    n = abs(int(n))
    if n == 0:
        return [1]
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _eps(dtype: str, v: float) -> float:
    """A step that survives rounding to ``dtype`` at magnitude ``v``."""
    if dtype == "bfloat16":
        rel = 2.0 ** -7
    elif dtype in ("float16",):
        rel = 2.0 ** -10
    elif dtype in ("float32", "complex64"):
        rel = 2.0 ** -23
    else:
        rel = 2.0 ** -52
    return max(abs(v), 1.0) * rel * 4

"""Generation state and TensorJSFuzz's Algorithm 1 (type-aware generation) over LibSpecs.

Generation works in two phases, so that dependency constraints are handled on tensor
*properties* before any value exists (TensorJSFuzz Alg. 2 and the z3 mode both reason
about shapes and dtypes, never about elements):

1. properties: every tensor is a ``TensorProps`` (shape, dtype and *planned* value
   bounds), every other parameter its Python value. ``State`` holds them, together with
   the chosen structure of each parameter and which parameters are passed at all;
   parameters left out are evaluated at their ``default``, as the API would see them.
2. values: ``fill_values`` draws each tensor's elements inside its planned bounds from
   DLLens' value space (NOTES.md: rank 0-4, dims 0-4, integers in [-10, 10], floats from a
   normal draw, Inf 5% and NaN 5% per element when special values are allowed).

``Plan`` is everything about a spec that does not change from draw to draw (parsed and
normalized constraints, enum values per structure, bounds), built once per spec so a
draw parses nothing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.engines.api.constraints import (
    Env,
    Node,
    Prop,
    TensorProps,
    names_in,
    normalize,
    walk,
)
from dlfuzz.engines.api.fasteval import holds as fast_holds
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.engines.api.values import filled

# ---- DLLens' value space (NOTES.md), kept as named settings ------------------------------
RANK_MAX = 5            # hard cap on ranks (the paper's value space goes to 5)
DIM_MAX = 4             # dimensions drawn in [0, DIM_MAX] ...
ZERO_DIM_P = 0.04       # ... with 0 this rare: empty tensors test little and often just fail
# Beyond DLLens' value space: this share of tensors gets a long innermost dimension,
# log-uniform in (DIM_MAX, LONG_DIM_MAX]. Vectorized kernels take another path once a row
# holds a SIMD register's worth of elements (8-16 floats) and a remainder loop after it;
# with every dimension at most 4 that path never ran (a TF.js Add kernel wrong only for
# rows of 5 or more was not found by 150 inputs of tf.add). At most 4**3 * 256 = 16k
# elements a tensor, cheap for every backend.
LONG_DIM_P = 0.1
LONG_DIM_MAX = 256
INT_RANGE = (-10, 10)   # integers (tensor elements and scalars without a range)
INF_P = 0.05            # per float element, when special values are allowed
NAN_P = 0.05
# ... but not in every member of a group: one in ``CLEAN_EVERY`` (the first of each
# group and each variant of a first signature among them) draws no special value. With
# a tenth of the elements NaN or infinite, a float tensor of 30 elements holds one in
# 96 % of draws, and a result that mixes elements (a scan, a reduction, a convolution)
# is NaN almost everywhere: a float32 cumsum wrong in its last element and a conv2d
# with its kernel flipped gave the same NaN rows as the right ones, and a counterpart
# written by dlfuzz and not trusted on NaN judged nothing. Special values one argument
# at a time are the edge members' (``edges.py``).
CLEAN_EVERY = 2
OMIT_P = 0.3            # an optional parameter is left out (its default applies) this often
DEFAULT_DTYPES = ("float32", "float64")  # tensors without dtype information ...
DEFAULT_DTYPE_P = (0.75, 0.25)           # ... mostly float32
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
COMPLEX = frozenset({"complex64", "complex128"})
INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
ALL_DTYPES = tuple(DTYPES)
SCALAR_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


def family(dtype: str) -> str:
    """'float', 'complex', 'int' or 'bool': what planned bounds mean for a dtype."""
    if dtype in FLOATS:
        return "float"
    if dtype in COMPLEX:
        return "complex"
    return "bool" if dtype == "bool" else "int"


@dataclass
class ParamPlan:
    """One parameter, with what generation needs precomputed."""

    p: LibParam
    rank: tuple[int, int]
    enums: dict[str, tuple[Any, ...]]   # structure -> the enum values of that structure
    constrained_values: bool = False    # min/max of this tensor appear in a constraint

    @property
    def name(self) -> str:
        return self.p.name


@dataclass
class Rule:
    """A constraint as generation uses it: text, normalized tree, names, value flag."""

    text: str
    tree: Node
    names: frozenset[str]
    on_values: bool  # refers to min/max: needs drawn values to be checked for real


@dataclass
class Plan:
    """Per-spec facts computed once (see module doc)."""

    spec: LibSpec
    params: list[ParamPlan]
    by_name: dict[str, ParamPlan]
    rules: list[Rule]
    defaults: dict[str, Any]
    cache: dict[str, Any] = field(default_factory=dict)  # solver/violation caches


def _enums(p: LibParam) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for s in p.structures:
        kind = SCALAR_TYPES.get(s)
        if kind is None or not p.values:
            continue
        vals: tuple[Any, ...]
        if kind is float:
            vals = tuple(v for v in p.values if isinstance(v, int | float)
                         and not isinstance(v, bool))
        else:
            vals = tuple(v for v in p.values if type(v) is kind)
        if vals:
            out[s] = vals
    return out


def make_rule(text: str, tree: Node) -> Rule:
    try:
        tree = normalize(tree)
    except RecursionError:  # constraints.normalize loops on ``not <name>``; keep as written
        pass
    on_values = any(isinstance(n, Prop) and n.prop in ("min", "max") for n in walk(tree))
    return Rule(text, tree, names_in(tree), on_values)


def make_plan(spec: LibSpec) -> Plan:
    rules = [make_rule(c.text, c.tree) for c in spec.constraints]
    valued = {n.name for r in rules for n in walk(r.tree)
              if isinstance(n, Prop) and n.prop in ("min", "max")}
    params = []
    for p in spec.params:
        lo, hi = p.rank
        params.append(ParamPlan(p, (min(lo, RANK_MAX), min(hi, RANK_MAX)), _enums(p),
                                p.name in valued))
    defaults = {p.name: p.default for p in spec.params if p.optional}
    return Plan(spec, params, {pp.name: pp for pp in params}, rules, defaults)


_PLANS: dict[int, Plan] = {}


def plan_of(spec: LibSpec) -> Plan:
    """The spec's Plan, cached by identity (specs are immutable)."""
    plan = _PLANS.get(id(spec))
    if plan is None or plan.spec is not spec:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[id(spec)] = make_plan(spec)
    return plan


def safe_holds(tree: Node, env: Env) -> bool:
    """``constraints.holds`` (compiled, see ``fasteval``), also False where a value has
    the wrong kind altogether (the Random baseline passes an array where an int is
    expected: numpy raises)."""
    return fast_holds(tree, env)


# ---- the state ----------------------------------------------------------------------------
class State:
    """Parameter values during generation (see module doc).

    ``values`` holds every parameter the constraints may see: present ones, and absent
    optional ones at their default. ``props`` holds the planned TensorProps of every
    present tensor (and of the members of a tensor list, which share one). In phase 2,
    ``values`` holds numpy arrays for tensors. ``relaxed`` are (name, bound) pairs the
    setters may cross: violate mode's broken type bound.
    """

    __slots__ = ("plan", "values", "present", "structures", "props", "phase", "relaxed",
                 "fixed", "env", "frozen")

    def __init__(self, plan: Plan, relaxed: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.plan = plan
        self.values: dict[str, Any] = dict(plan.defaults)
        self.present: set[str] = set()
        self.structures: dict[str, str] = {}
        self.props: dict[str, TensorProps] = {}
        self.phase = 1
        self.relaxed = relaxed
        self.fixed: set[tuple[str, str]] = set()  # value bounds set by a constraint
        self.env = Env(self.values, self.structures)
        self.frozen = False  # a group member: only element values may change

    def copy(self) -> State:
        new = State.__new__(State)
        new.plan, new.phase, new.relaxed = self.plan, self.phase, self.relaxed
        new.frozen = self.frozen
        new.values = {k: (list(v) if isinstance(v, list) else v) for k, v in self.values.items()}
        new.present = set(self.present)
        new.structures = dict(self.structures)
        new.props = dict(self.props)
        new.fixed = set(self.fixed)
        new.env = Env(new.values, new.structures)
        return new

    def restore(self, other: State) -> None:
        """Become ``other`` (a copy taken earlier): Algorithm 2's best effort so far."""
        self.values, self.present, self.structures = other.values, other.present, \
            other.structures
        self.props, self.fixed, self.phase = other.props, other.fixed, other.phase
        self.env = Env(self.values, self.structures)

    def holds(self, rule: Rule | Node) -> bool:
        return safe_holds(rule.tree if isinstance(rule, Rule) else rule, self.env)

    def violated(self, rules: Sequence[Rule]) -> list[Rule]:
        return [r for r in rules if not safe_holds(r.tree, self.env)]

    def omit(self, name: str) -> None:
        """Leave a parameter out: the API (and the constraints) see its default."""
        self.present.discard(name)
        self.structures.pop(name, None)
        self.props.pop(name, None)
        self.values[name] = self.plan.defaults.get(name)

    def set(self, name: str, structure: str, value: Any) -> None:
        self.present.add(name)
        self.structures[name] = structure
        self.values[name] = value
        if structure not in ("tensor", "tensors"):
            self.props.pop(name, None)

    def set_props(self, name: str, props: TensorProps, count: int | None = None,
                  draw: Any = None) -> None:
        """Planned properties of a tensor (or of every member of a tensor list); in phase
        2 ``draw(props) -> array`` makes the values at once."""
        self.props[name] = props
        kind = self.structures.get(name)
        if kind == "tensors":
            n = len(self.values[name]) if count is None else count
            self.values[name] = [props if draw is None else draw(props) for _ in range(n)]
        else:
            self.values[name] = props if draw is None else draw(props)


# ---- Algorithm 1: type-aware generation ---------------------------------------------------
@dataclass(frozen=True)
class Lean:
    """Where an API's first signature leans (``TypedGen.leaning``): its tensors' dtypes
    drawn from ``dtypes`` where a parameter's own list meets them (those the API's
    counterparts were validated on, so the differential oracle judges the group), and
    no dimension drawn 0 (the first group's edge members make the empty tensors).

    Drawn from a spec's whole dtype list, torch's ``conv2d`` took complex64 or bfloat16
    in two first groups of three, which neither counterpart (JAX's and TF's
    compositions) computes: a conv wrong for one stride and dilation was judged by
    nobody; and 28 % of its first groups held an empty weight or input dimension
    (``ZERO_DIM_P`` over eight dimensions), every ordinary member rejected."""

    dtypes: frozenset[str] = frozenset()


class TypedGen:
    """TensorJSFuzz Algorithm 1 over a Plan: structure, then enum or dtype+value, or rank,
    shape and dtype for tensors."""

    def __init__(self, rnd: random.Random, nrng: np.random.Generator, specials: bool) -> None:
        self.rnd, self.nrng, self.specials = rnd, nrng, specials
        self.lean: Lean | None = None

    @contextmanager
    def leaning(self, lean: Lean | None) -> Iterator[None]:
        """Draws (and repairs) within the block lean as ``lean`` says."""
        before, self.lean = self.lean, lean
        try:
            yield
        finally:
            self.lean = before

    # -- properties
    def state(self, plan: Plan, forced: dict[str, str | None] | None = None,
              relaxed: frozenset[tuple[str, str]] = frozenset()) -> State:
        """A phase-1 state: each parameter's structure chosen, optional ones left out
        with OMIT_P. ``forced`` fixes a structure (None: leave out)."""
        st = State(plan, relaxed)
        r = self.rnd.random
        for pp in plan.params:
            if forced and pp.name in forced:
                s = forced[pp.name]
                if s is None:
                    continue
            elif pp.p.optional and r() < OMIT_P:
                continue
            else:
                s = self.rnd.choice(pp.p.structures)
            self.param(st, pp, s)
        return st

    def choose(self, plan: Plan) -> dict[str, str | None]:
        """Only the structure choice of Alg. 1 (z3 mode solves the rest)."""
        out: dict[str, str | None] = {}
        for pp in plan.params:
            if pp.p.optional and self.rnd.random() < OMIT_P:
                out[pp.name] = None
            else:
                out[pp.name] = self.rnd.choice(pp.p.structures)
        return out

    def param(self, st: State, pp: ParamPlan, s: str) -> None:
        """Generate one parameter with structure ``s`` (Alg. 1 lines 3-14)."""
        p, rnd = pp.p, self.rnd
        if s == "tensor":
            st.set(p.name, s, None)
            st.set_props(p.name, self.tensor_props(pp))
        elif s == "tensors":
            lo, hi = p.count
            st.set(p.name, s, [])
            st.set_props(p.name, self.tensor_props(pp), rnd.randint(lo, hi))
        elif s in pp.enums:
            st.set(p.name, s, rnd.choice(pp.enums[s]))
        elif s == "int":
            lo, hi = _int_bounds(p.range)
            st.set(p.name, s, rnd.randint(lo, hi))
        elif s == "float":
            st.set(p.name, s, self.scalar_float(p.range))
        elif s == "bool":
            st.set(p.name, s, rnd.random() < 0.5)
        elif s == "str":
            st.set(p.name, s, rnd.choice(("", "default", "none")))
        elif s == "none":
            st.set(p.name, s, None)
        elif s == "dtype":
            st.set(p.name, s, rnd.choice(p.dtypes or ALL_DTYPES))
        elif s in ("ints", "floats"):
            n = rnd.randint(*p.length)
            st.set(p.name, s, [self.item(p, s) for _ in range(n)])
        else:  # pragma: no cover - libspecs validates structures
            raise ValueError(s)

    def item(self, p: LibParam, s: str) -> int | float:
        if s == "ints":
            lo, hi = _int_bounds(p.range)
            return self.rnd.randint(lo, hi)
        return self.scalar_float(p.range)

    def scalar_float(self, rng: tuple[float, float] | None) -> float:
        if rng is None:
            return self.rnd.gauss(0.0, 1.0)
        lo, hi = rng
        if hi - lo > 1e3:  # effectively one-sided: a normal step from the finite end
            return lo + abs(self.rnd.gauss(0.0, 1.0)) if abs(lo) < abs(hi) \
                else hi - abs(self.rnd.gauss(0.0, 1.0))
        return self.rnd.uniform(lo, hi)

    def tensor_props(self, pp: ParamPlan) -> TensorProps:
        """Alg. 1 lines 11-13: rank from the rank bound, dims from the value space, dtype
        from the dtype list; planned bounds from the dtype and the domain hint."""
        rank = self.rnd.randint(*pp.rank)
        shape = tuple(self.dim() for _ in range(rank))
        if shape and self.rnd.random() < LONG_DIM_P:
            shape = (*shape[:-1], self.long_dim())
        dtype = self.dtype(pp)
        lo, hi = default_bounds(dtype, pp.p.domain)
        return TensorProps(shape, dtype, lo, hi)

    def dim(self) -> int:
        if self.lean is not None:
            return self.rnd.randint(1, DIM_MAX)
        return 0 if self.rnd.random() < ZERO_DIM_P else self.rnd.randint(1, DIM_MAX)

    def long_dim(self) -> int:
        """A dimension past the value space (``LONG_DIM_P``), log-uniform."""
        low, high = math.log(DIM_MAX + 1), math.log(LONG_DIM_MAX + 1)
        return min(LONG_DIM_MAX, int(math.exp(self.rnd.uniform(low, high))))

    def dtype(self, pp: ParamPlan) -> str:
        if pp.p.dtypes:
            leaned = [d for d in pp.p.dtypes if d in self.lean.dtypes] if self.lean else []
            return self.rnd.choice(leaned or pp.p.dtypes)
        return DEFAULT_DTYPES[0] if self.rnd.random() < DEFAULT_DTYPE_P[0] else DEFAULT_DTYPES[1]

    # -- values (phase 2)
    def fill(self, st: State, clean: bool = False) -> None:
        """Phase 2: draw every present tensor's elements inside its planned bounds;
        ``clean``: with no special value (``CLEAN_EVERY``)."""
        for name in list(st.props):
            pp = st.plan.by_name[name]
            st.set_props(name, st.props[name], draw=self.drawer(st, pp, clean))
        st.phase = 2

    def drawer(self, st: State, pp: ParamPlan, clean: bool = False) -> Any:
        spec_ok = self.specials and st.plan.spec.specials and not pp.constrained_values \
            and not clean
        fill = pp.p.fill
        if fill != "any":  # a search sequence sorted, a matrix symmetric (``values.filled``)
            return lambda props: filled(self.array(props, spec_ok), fill)
        return lambda props: self.array(props, spec_ok)

    def array(self, props: TensorProps, specials: bool) -> np.ndarray:
        """Elements for planned props (bounds inclusive; strict bounds were already
        moved inwards when set). Always an ndarray, 0-d included (numpy hands back
        scalars for shape ())."""
        return np.asarray(self._array(props, specials))

    def _array(self, props: TensorProps, specials: bool) -> np.ndarray:
        shape, dtype, lo, hi = props.shape, props.dtype, props.min, props.max
        g = self.nrng
        fam = family(dtype)
        if fam == "bool":
            if lo is not None and lo > 0:
                return np.ones(shape, dtype=np.bool_)
            if hi is not None and hi < 1:
                return np.zeros(shape, dtype=np.bool_)
            return g.random(shape) < 0.5
        if fam == "int":
            ii = np.iinfo(DTYPES[dtype])
            a = int(ii.min) if lo is None else max(int(math.ceil(lo)), int(ii.min))
            b = int(ii.max) if hi is None else min(int(math.floor(hi)), int(ii.max))
            if lo is None and hi is None:
                a, b = max(INT_RANGE[0], a), min(INT_RANGE[1], b)
            if a > b:
                return np.full(shape, a if lo is not None else b, dtype=DTYPES[dtype])
            return g.integers(a, b, size=shape, endpoint=True).astype(DTYPES[dtype])
        arr = _float_draw(g, shape, lo, hi)
        if fam == "complex":
            arr = arr + 1j * _float_draw(g, shape, lo, hi)
        if specials and arr.size and lo is None and hi is None:
            u = g.random(shape)
            arr = np.where(u < INF_P, np.where(g.random(shape) < 0.5, np.inf, -np.inf), arr)
            arr = np.where((u >= INF_P) & (u < INF_P + NAN_P), np.nan, arr)
        out = np.asarray(arr).astype(DTYPES[dtype])
        if lo is not None or hi is not None:  # rounding to a narrow dtype may cross a bound
            out = _clip_in_dtype(out, lo, hi)
        return out


def _float_draw(g: np.random.Generator, shape: tuple[int, ...], lo: float | None,
                hi: float | None) -> np.ndarray:
    if lo is not None and hi is not None:
        if hi <= lo:
            return np.full(shape, float(lo))
        if hi - lo > 1e3:
            lo_small = abs(lo) <= abs(hi)
            step = np.abs(g.standard_normal(shape))
            return np.clip(lo + step if lo_small else hi - step, lo, hi)
        return g.uniform(lo, hi, shape)
    if lo is not None:
        return lo + np.abs(g.standard_normal(shape))
    if hi is not None:
        return hi - np.abs(g.standard_normal(shape))
    return g.standard_normal(shape)


def _clip_in_dtype(arr: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    if arr.dtype.kind == "c" or not arr.size:
        return arr
    with np.errstate(invalid="ignore"):
        if lo is not None:
            b = np.asarray(lo).astype(arr.dtype)
            if b < lo:
                b = np.nextafter(b, np.asarray(np.inf, arr.dtype))
            arr = np.maximum(arr, b)
        if hi is not None:
            b = np.asarray(hi).astype(arr.dtype)
            if b > hi:
                b = np.nextafter(b, np.asarray(-np.inf, arr.dtype))
            arr = np.minimum(arr, b)
    return arr


def default_bounds(dtype: str, domain: tuple[float, float] | None
                   ) -> tuple[float | None, float | None]:
    """Planned element bounds of a fresh tensor: the value space of its dtype, narrowed
    by the parameter's domain hint."""
    fam = family(dtype)
    if fam == "bool":
        return 0, 1
    if fam == "int":
        ii = np.iinfo(DTYPES[dtype])
        lo, hi = max(INT_RANGE[0], int(ii.min)), min(INT_RANGE[1], int(ii.max))
        if domain is not None:
            lo2, hi2 = max(lo, math.ceil(domain[0])), min(hi, math.floor(domain[1]))
            if lo2 <= hi2:
                return lo2, hi2
        return lo, hi
    if domain is not None:
        lo_f = float(domain[0]) if domain[0] > -1e30 else None
        hi_f = float(domain[1]) if domain[1] < 1e30 else None
        return lo_f, hi_f
    return None, None


def _int_bounds(rng: tuple[float, float] | None) -> tuple[int, int]:
    if rng is None:
        return INT_RANGE
    lo, hi = int(math.ceil(rng[0])), int(math.floor(rng[1]))
    return (lo, hi) if lo <= hi else (lo, lo)


# ---- the Random baseline --------------------------------------------------------------------
def random_state(plan: Plan, tg: TypedGen) -> State:
    """TensorJSFuzz's Random baseline as the brief defines it: only names and
    required/optional are known; each parameter takes a value from one generic pool."""
    st = State(plan)
    rnd = tg.rnd
    for pp in plan.params:
        if pp.p.optional and rnd.random() < OMIT_P:
            continue
        u = rnd.random()
        if u < 0.40:
            props = TensorProps(tuple(tg.dim() for _ in range(rnd.randint(0, 4))),
                                rnd.choice(ALL_DTYPES))
            lo, hi = default_bounds(props.dtype, None)
            st.set(pp.name, "tensor", None)
            st.set_props(pp.name, TensorProps(props.shape, props.dtype, lo, hi))
        elif u < 0.55:
            st.set(pp.name, "int", rnd.randint(*INT_RANGE))
        elif u < 0.65:
            st.set(pp.name, "float", rnd.gauss(0.0, 1.0))
        elif u < 0.75:
            st.set(pp.name, "bool", rnd.random() < 0.5)
        elif u < 0.85:
            st.set(pp.name, "none", None)
        else:
            st.set(pp.name, "ints", [rnd.randint(*INT_RANGE)
                                     for _ in range(rnd.randint(1, 4))])
    return st

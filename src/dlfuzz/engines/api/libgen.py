"""Input generation for per-library API specs: TensorJSFuzz's generators and DLLens' solver.

Modes (``LibGenerator(rng, mode)``):

- ``random``: TensorJSFuzz's Random baseline as this project defines it: only parameter
  names and required/optional are known, every value comes from one generic pool.
- ``typed``: Algorithm 1 (type-aware generation, ``typegen``): structure, enum values,
  ranges, ranks and dtypes respected; dependency constraints ignored.
- ``adjust``: Algorithm 1 then Algorithm 2 (``adjust``) over the normalized constraints,
  on tensor properties first, on drawn values last.
- ``z3``: structures chosen as in Algorithm 1, properties solved by z3 (``solver``) with
  random preferred values and DLLens' blocking clauses; what z3 cannot decode or leaves
  violated is handed to Algorithm 2.

``violate`` breaks exactly one constraint or type bound while every other constraint
holds (the API must reject the input cleanly); ``group`` gives inputs that share shapes,
dtypes and static arguments (one compilation for jit backends).

Modules: ``typegen`` (state, Algorithm 1, value drawing), ``adjust`` + ``setters``
(Algorithm 2), ``solver`` + ``z3enc`` (z3 mode), ``fasteval`` (compiled constraint
checks), ``libdraw`` (``Draw`` and ApiCase building, re-exported here).
"""

from __future__ import annotations

import importlib.util
import math
import random
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from dlfuzz.cases import DType
from dlfuzz.engines.api.adjust import Adjuster
from dlfuzz.engines.api.constraints import negate, parse
from dlfuzz.engines.api.libdraw import (
    Draw,
    call_for,
    env_of,
    rebuild,
    to_case,
    values_of,
    with_refs,
)
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.engines.api.typegen import (
    ALL_DTYPES,
    CLEAN_EVERY,
    RANK_MAX,
    Lean,
    ParamPlan,
    Plan,
    Rule,
    State,
    TypedGen,
    make_rule,
    plan_of,
    random_state,
)
from dlfuzz.errors import UsageError

MODES = ("random", "typed", "adjust", "z3")
VIOLATE_TRIES = 4     # adjust attempts per violation target before asking z3
VIOLATE_GIVE_UP = 3   # a target no attempt could break in this many calls is dropped
Z3_STRUCTURE_TRIES = 3  # structure choices tried before z3 mode falls back to adjust

__all__ = ["MODES", "Draw", "LibGenerator", "Violation", "call_for", "env_of", "rank_bounds",
           "rebuild", "to_case", "values_of", "with_refs"]


class Violation:
    """One thing violate mode can break: a constraint, or a type bound of a parameter.

    ``rules`` must hold afterwards (the other constraints and the negation of this one);
    ``relaxed`` are the (param, bound) pairs setters may cross; ``forced`` fixes
    structures (a range violation needs an int). ``check`` is the original condition,
    which must be False afterwards.
    """

    def __init__(self, text: str, check: Rule, rules: list[Rule],
                 relaxed: frozenset[tuple[str, str]] = frozenset(),
                 forced: dict[str, str] | None = None, negated: Rule | None = None) -> None:
        self.text, self.check, self.rules = text, check, rules
        self.relaxed, self.forced = relaxed, forced or {}
        self.negated = negated
        self.kind = "bound" if relaxed else "constraint"


class _Record:
    """One generator's history with one violation target (kept per generator, so that
    generators with equal seeds stay equal)."""

    __slots__ = ("adjusted", "solved", "failures")

    def __init__(self) -> None:
        self.adjusted = self.solved = 0  # successes by adjust / by z3
        self.failures = 0  # calls in which nothing broke it alone; dropped after a few

    @property
    def z3_first(self) -> bool:
        return self.solved >= 2 and self.adjusted == 0

    @property
    def feasible(self) -> bool:
        return self.failures < VIOLATE_GIVE_UP


def _bound_rule(text: str, expr: str) -> Rule:
    return make_rule(text, parse(expr))


def violations(plan: Plan) -> list[Violation]:
    """Every violation target of a spec (built once per spec)."""
    cached = plan.cache.get("violations")
    if cached is not None:
        return cached
    out: list[Violation] = []
    rules = plan.rules
    for i, rule in enumerate(rules):
        negated = make_rule("not " + rule.text, negate(rule.tree))
        others = rules[:i] + rules[i + 1:]
        out.append(Violation(rule.text, rule, others + [negated], negated=negated))
    for pp in plan.params:
        p, n = pp.p, pp.name
        if p.range is not None:
            lo, hi = p.range
            text = f"{n} in range [{lo}, {hi}]"
            for s in ("int", "float"):
                if s in p.structures and s not in pp.enums:
                    out.append(_type_violation(text, f"{lo} <= {n} <= {hi}", rules,
                                               (n, "range"), {n: s}))
                    break
            else:
                for s in ("ints", "floats"):
                    if s in p.structures:
                        out.append(_type_violation(text, f"{lo} <= {n}[0] <= {hi}", rules,
                                                   (n, "range"), {n: s}))
                        break
        for s in ("tensor", "tensors"):
            if s in p.structures:
                lo, hi = pp.rank
                if lo > 0 or hi < RANK_MAX:
                    out.append(_type_violation(f"{n}.ndims in range [{lo}, {hi}]",
                                               f"{lo} <= {n}.ndims <= {hi}", rules,
                                               (n, "rank"), {n: s}))
                if p.dtypes and set(p.dtypes) != set(ALL_DTYPES):
                    out.append(_type_violation(f"{n}.dtype in {tuple(p.dtypes)!r}",
                                               f"{n}.dtype in {tuple(p.dtypes)!r}", rules,
                                               (n, "dtypes"), {n: s}))
                break
        for s, vals in pp.enums.items():
            if s in ("str", "int", "float"):
                out.append(_type_violation(f"{n} in {tuple(vals)!r}",
                                           f"{n} in {tuple(vals)!r}", rules,
                                           (n, "values"), {n: s}))
    plan.cache["violations"] = out
    return out


def rank_bounds(spec: LibSpec) -> frozenset[str]:
    """The texts of a spec's rank bounds as violation targets (``x.ndims in range
    [lo, hi]``): the structural bounds an edge input breaks one at a time."""
    return frozenset(v.text for v in violations(plan_of(spec))
                     if v.kind == "bound" and ".ndims in range" in v.text)


def _type_violation(text: str, holds_expr: str, rules: list[Rule], relax: tuple[str, str],
                    forced: dict[str, str]) -> Violation:
    check = _bound_rule(text, holds_expr)
    negated = make_rule("not " + text, negate(check.tree))
    return Violation(text, check, list(rules) + [negated], frozenset({relax}), forced,
                     negated)


# The most elements a stretched tensor (``LibGenerator.stretched``) holds: what a long
# innermost dimension of typegen reaches (4**3 * 256).
STRETCH_ELEMENTS = 1 << 14
LOW_AND_DOUBLE = frozenset({"float16", "bfloat16", "float64"})
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
# Fresh property states the adjuster is given before a signature that still breaks a
# shape constraint is kept as it is (best effort: an unsatisfiable spec still draws).
# The adjuster's repair of one state stops at its best, and a fresh state is often
# repaired where the first was not: with one try a seventh of torch conv2d's
# signatures had a kernel larger than the padded input (torch rejects the call, and a
# plant behind stride 2 with dilation 2 was reached with 5 of 21 inputs running), with
# three 1 in 100. Over the torch, tf and jax specs 0.87 % of first draws broke a
# constraint with one try, 0.67 % with three, for 0.1 ms more a draw.
PROPERTY_TRIES = 3
# Integer parameters that name the axis an API scans, reduces or sorts along: the long
# variant stretches the axis they name in the first tensor (``stretched``).
AXIS_PARAMS = ("dim", "axis")
# A bounded integer parameter whose range is at most this wide is a knob (a stride, a
# dilation, a group count, a kernel size, a padding) that the corner variant sets to
# its upper bound (``cornered``); a wider range (a seed, a size of thousands) is a value,
# and its upper bound a large allocation rather than a combination.
CORNER_WIDTH = 16


class LibGenerator:
    """Draws inputs for LibSpecs in one of ``MODES`` (see module doc)."""

    def __init__(self, rng: np.random.Generator | int | None = None, mode: str = "adjust",
                 specials: bool = True) -> None:
        if mode not in MODES:
            raise UsageError(f"generation mode {mode!r} is unknown; use one of "
                             + ", ".join(MODES))
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        if mode == "z3" and importlib.util.find_spec("z3") is None:
            raise UsageError("generation mode 'z3' needs the z3 solver; install it with "
                             "'pip install z3-solver' or use mode 'adjust'")
        self.rng, self.mode, self.specials = rng, mode, specials
        self.rnd = random.Random(int(rng.integers(2**63)))
        self.tg = TypedGen(self.rnd, rng, specials)
        self.adjuster = Adjuster(self.tg)
        self._solver: Any = None
        self._records: dict[tuple[int, str], _Record] = {}
        self.stats: dict[str, float] = {"draws": 0, "z3_solves": 0, "z3_seconds": 0.0,
                                        "z3_fallbacks": 0, "unsatisfied": 0,
                                        "properties_redrawn": 0}

    # ---- public API ---------------------------------------------------------------------
    def draw(self, spec: LibSpec) -> Draw:
        """One input for ``spec`` in this generator's mode."""
        st = self._properties(spec)
        self._values(st)
        return self._finish(st)

    def group(self, spec: LibSpec, n: int) -> list[Draw]:
        """``n`` inputs sharing shapes, dtypes and every non-tensor argument (one compiled
        signature), each with fresh tensor values."""
        return self.new_group(spec, n)[0]

    def new_group(self, spec: LibSpec, n: int, lean: Lean | None = None
                  ) -> tuple[list[Draw], State]:
        """``group``, and its signature as a template ``regroup`` draws more values for;
        the signature drawn leaning as ``lean`` says (``typegen.Lean``)."""
        with self.tg.leaning(lean):
            first = self._properties(spec)
            self._values(first, clean=True)
        out = [self._finish(first)]
        template = first.copy()  # the first member's final properties, values undrawn
        template.phase = 1
        for name, props in template.props.items():
            template.set_props(name, props)
        out.extend(self.regroup(template, max(1, n) - 1, start=1))
        return out, template

    def regroup(self, template: State, n: int, start: int = 0) -> list[Draw]:
        """``n`` more inputs of a signature ``new_group`` made: fresh tensor values only,
        so a jit backend reuses what it compiled for the signature. Member ``start + i``
        draws no special value where it is a multiple of ``CLEAN_EVERY``."""
        out = []
        for i in range(start, start + n):
            member = template.copy()
            self._values(member, reshape=False, clean=i % CLEAN_EVERY == 0)
            out.append(self._finish(member))
        return out

    def lowered(self, template: State, dtype: str, n: int) -> list[Draw]:
        """``n`` inputs of ``template``'s signature with every floating tensor in
        ``dtype`` (bfloat16, float16) instead, fresh values; none when no tensor changes
        (the template is in ``dtype`` already), a parameter's dtype list leaves ``dtype``
        out, or a constraint no longer holds (dtypes that must match another argument's).
        The dtype oracle judges a low-precision input against the same library in
        float64, so an API no other library has is checked in the low dtype too; a
        template drawn in float16 gets its bfloat16 variant and the reverse (a torch
        ``hardswish`` wrong in bfloat16 alone was reached with a float16 first group
        and no bfloat16 member)."""
        low = template.copy()
        changed = False
        for name, props in template.props.items():
            if props.dtype not in FLOATING or props.dtype == dtype:
                continue
            allowed = low.plan.by_name[name].p.dtypes
            if allowed and dtype not in allowed:
                return []
            low.set_props(name, replace(props, dtype=dtype))
            changed = True
        return self._variant(low, n) if changed else []

    def stretched(self, template: State, n: int) -> list[Draw]:
        """``n`` inputs of ``template``'s signature with one axis of one tensor made long
        (``TypedGen.long_dim``, within ``STRETCH_ELEMENTS``), its float tensors in
        float32; none when no tensor has an axis or a constraint no longer holds (a
        dimension that must match another tensor's). Drawn dimensions are at most 4 and
        a long one is always the innermost, so a scan or a reduction along another axis
        never covered a vector's width (a cumulative sum wrong from the seventh element
        of the scanned axis on was missed by every first group). The axis is the one an
        integer ``dim`` or ``axis`` argument names in the first tensor, where there is
        one (the scanned or reduced axis: at random, one of a 4-d cumulative sum's
        first visits in four stretched it); else a tensor and an axis at random."""
        names = [name for name, props in template.props.items() if props.shape]
        if not names:
            return []
        named = _named_axis(template, names[0])
        if named is not None:
            name, axis = names[0], named
        else:
            name = names[self.rnd.randrange(len(names))]
            axis = self.rnd.randrange(len(template.props[name].shape))
        props = template.props[name]
        others = max(1, math.prod(props.shape) // max(1, props.shape[axis]))
        length = min(self.tg.long_dim(), STRETCH_ELEMENTS // others)
        long = template.copy()
        changed = length > props.shape[axis]
        if changed:  # (an axis drawn long already keeps its length)
            long.set_props(name, replace(props, shape=(*props.shape[:axis], length,
                                                        *props.shape[axis + 1:])))
        # In float32, where the template's tensors were in another float dtype and the
        # spec allows it, or in an integer dtype and the spec lists float32: the
        # vectorized paths a long axis reaches are the float32 ones users run most (a
        # spec listing twelve dtypes drew float32 once in twelve first groups; a
        # float16 template whose scanned axis was drawn 97 long got no variant at all,
        # and a float32 cumsum wrong from the seventh element on was missed).
        for other, p in long.props.items():
            allowed = long.plan.by_name[other].p.dtypes
            floating = p.dtype in LOW_AND_DOUBLE and (not allowed or "float32" in allowed)
            integer = str(p.dtype).startswith(("int", "uint")) and "float32" in allowed
            if floating or integer:
                long.set_props(other, replace(p, dtype="float32"))
                changed = True
        return self._variant(long, n) if changed else []

    def cornered(self, template: State, n: int) -> list[Draw]:
        """``n`` inputs of ``template``'s signature with every knob (``corner_params``)
        at its upper bound at once, the tensors' shapes repaired to fit (a dilated
        kernel no larger than the padded input, channels divisible by the groups);
        none where the spec has fewer than two knobs, the template is at the corner
        already, or the repair fails.

        A group shares its static arguments, and a broad campaign gives an API one or
        two groups: two knobs of two values each meet at one combination in four
        groups, and a conv2d wrong only with stride 2 *and* dilation 2 (its first
        group drew each with one chance in two or three, optional ones left out half
        the time) was reached and missed in most 300 s campaigns. All knobs high at
        once is the corner of boundary-value testing the valid draws almost never
        reach; the low corner is mostly the defaults, which they reach often."""
        knobs = corner_params(template.plan)
        if not knobs:
            return []
        corner = template.copy()
        changed = False
        for pp in knobs:
            p, name = pp.p, pp.name
            assert p.range is not None  # a knob has a range (``corner_params``)
            hi = int(math.floor(p.range[1]))
            kind = corner.structures.get(name) if name in corner.present else None
            if kind is None:  # left out: given, as the structure that takes a range
                kind = "int" if "int" in p.structures and "int" not in pp.enums else "ints"
            if kind == "int":
                value: Any = hi
            elif kind == "ints":
                old = corner.values.get(name)
                count = len(old) if name in corner.present and isinstance(old, list) \
                    else self.rnd.randint(*p.length)
                value = [hi] * count
            else:  # a tensor, an enum, None: not this knob
                continue
            changed = changed or name not in corner.present or corner.values[name] != value
            corner.set(name, kind, value)
        if not changed:
            return []
        rules = [r for r in corner.plan.rules if not r.on_values]
        if corner.violated(rules):
            self.adjuster.run(corner, rules)
        return self._variant(corner, n)

    def _variant(self, state: State, n: int) -> list[Draw]:
        """``n`` inputs of a template changed in place of ``regroup``'s (a dtype, a
        dimension), or none when that broke a rule on properties (rules on values are
        the adjuster's, drawing each member)."""
        if state.violated([r for r in state.plan.rules if not r.on_values]):
            return []
        return self.regroup(state, n)

    def violate(self, spec: LibSpec, bounds: bool = True,
                only: frozenset[str] | None = None) -> Draw | None:
        """An input that breaks exactly one constraint or type bound of ``spec`` while
        every other constraint holds; None when no target can be broken alone.
        ``bounds=False`` breaks constraints only (never a rank, range, enum or dtype
        bound of the type information); ``only`` limits the targets to those texts."""
        group = self.violate_group(spec, 1, bounds, only)
        return group[0] if group else None

    def violate_group(self, spec: LibSpec, n: int, bounds: bool = True,
                      only: frozenset[str] | None = None) -> list[Draw]:
        """Up to ``n`` violating inputs that break the same target with one signature.

        Finding a state that breaks exactly one constraint costs a hundred times a
        valid draw (adjust on the negation, z3 when that fails), so it is paid once
        per group, as ``group`` does for valid inputs: the other members keep the
        first one's properties and draw fresh elements, and are kept only while they
        still break the target alone (a constraint on values may stop being broken).
        """
        plan = plan_of(spec)
        targets = [v for v in violations(plan) if self._record(plan, v).feasible
                   and (bounds or v.kind == "constraint")
                   and (only is None or v.text in only)]
        self.rnd.shuffle(targets)
        # constraints and type bounds get even chances (a spec has many more bounds)
        first = self.rnd.random() < 0.5
        targets.sort(key=lambda v: (v.kind == "constraint") != first)
        for target in targets:
            st = self._violate_one(plan, target)
            if st is None:
                continue
            out = [self._finish(st, violated=target.text)]
            template = st.copy()
            template.phase = 1
            for name, props in template.props.items():
                template.set_props(name, props)
            template.frozen = True
            on_values = [r for r in target.rules if r.on_values]
            for _ in range(max(1, n) - 1):
                member = template.copy()
                self.tg.fill(member)
                if on_values and member.violated(on_values):
                    self.adjuster.run(member, on_values)
                if not member.violated(target.rules) and not member.holds(target.check):
                    out.append(self._finish(member, violated=target.text))
            return out
        return []

    def solver_stats(self) -> dict[str, float]:
        """z3 cost so far: solves, seconds, seconds per solve, fallbacks to adjust."""
        out = dict(self.stats)
        out["z3_ms_per_solve"] = 1e3 * out["z3_seconds"] / max(1, out["z3_solves"])
        return out

    def _record(self, plan: Plan, target: Violation) -> _Record:
        key = (id(plan), target.text)
        rec = self._records.get(key)
        if rec is None:
            rec = self._records[key] = _Record()
        return rec

    # ---- phases -------------------------------------------------------------------------
    def _properties(self, spec: LibSpec) -> State:
        plan = plan_of(spec)
        self.stats["draws"] += 1
        if self.mode == "random":
            st = random_state(plan, self.tg)
        elif self.mode == "z3":
            st = self._z3_state(plan)
        elif self.mode == "adjust":
            # The adjuster repairs one state as far as it can; a fresh state is often
            # repaired where the first was not (``PROPERTY_TRIES``).
            rules = [r for r in plan.rules if not r.on_values]
            for _ in range(PROPERTY_TRIES):
                st = self.tg.state(plan)
                if not self.adjuster.run(st, rules):
                    break
                self.stats["properties_redrawn"] += 1
        else:
            st = self.tg.state(plan)
        return st

    def _values(self, st: State, reshape: bool = True, clean: bool = False) -> None:
        """Phase 2: draw elements (``clean``: no special value); then fix what depends
        on them (min/max), and in adjust/z3 mode whatever the properties phase left
        violated."""
        self.tg.fill(st, clean)
        if self.mode in ("adjust", "z3"):
            rules = st.plan.rules
            if not reshape:  # group members keep the group's signature: values only
                rules = [r for r in rules if r.on_values]
                st.frozen = True
            bad = self.adjuster.run(st, rules)  # returns at once when all hold
            self.stats["unsatisfied"] += bool(bad)

    def _finish(self, st: State, violated: str = "") -> Draw:
        values: dict[str, Any] = {}
        for name in st.present:
            v = st.values[name]
            s = st.structures.get(name)
            if s == "dtype":
                v = DType(v)
            elif isinstance(v, list):
                v = list(v)
            values[name] = v
        order = {p.name: i for i, p in enumerate(st.plan.spec.params)}
        values = dict(sorted(values.items(), key=lambda kv: order[kv[0]]))
        structures = {k: st.structures[k] for k in values}
        return Draw(st.plan.spec, values, structures, violated, {"mode": self.mode})

    # ---- z3 mode ------------------------------------------------------------------------
    def _z3(self) -> Any:
        if self._solver is None:
            try:
                from dlfuzz.engines.api.solver import Z3Solver
            except ImportError:  # z3-solver not installed: adjust does the work
                self._solver = False
            else:
                self._solver = Z3Solver(self.rnd)
        return self._solver or None

    def _z3_state(self, plan: Plan) -> State:
        if not plan.rules:  # nothing to solve: Algorithm 1 alone
            return self.tg.state(plan)
        st = self._z3_try(plan, plan.rules, "", tries=Z3_STRUCTURE_TRIES)
        if st is None:  # unsatisfiable (or undecided) for every structure choice tried
            self.stats["z3_fallbacks"] += 1
            st = self.tg.state(plan)
            self.adjuster.run(st, [r for r in plan.rules if not r.on_values])
        return st

    def _z3_try(self, plan: Plan, rules: list[Rule], key: str, tries: int,
                forced: dict[str, str] | None = None,
                relaxed: frozenset[tuple[str, str]] = frozenset()) -> State | None:
        """Structures as Algorithm 1 chooses them (``forced`` ones fixed), properties
        from z3; what z3 could not decode goes to Algorithm 2. None when z3 found no
        model in ``tries`` structure choices."""
        solver = self._z3()
        if solver is None:
            return None
        for _ in range(tries):
            choice = self.tg.choose(plan)
            choice.update(forced or {})
            st = self.tg.state(plan, choice, relaxed)
            t0 = time.perf_counter()
            ok = solver.solve(st, rules, key=key)
            self.stats["z3_seconds"] += time.perf_counter() - t0
            self.stats["z3_solves"] += 1
            if ok:
                on_props = [r for r in rules if not r.on_values]
                if st.violated(on_props):  # constraints z3 could not decode
                    self.stats["z3_fallbacks"] += 1
                    self.adjuster.run(st, on_props)
                return st
        return None

    # ---- violate mode -------------------------------------------------------------------
    def _violate_one(self, plan: Plan, target: Violation) -> State | None:
        """Adjust on the negation first (fast); z3 on others ∧ ¬c when that fails. A
        target adjust never managed but z3 did goes to z3 at once next time."""
        record = self._record(plan, target)
        tries = VIOLATE_TRIES if self.mode != "z3" and not record.z3_first else 0
        for _ in range(tries):
            st = self.tg.state(plan, dict(target.forced), target.relaxed)
            self.adjuster.run(st, [r for r in target.rules if not r.on_values])
            if self._violates(st, target):
                record.adjusted += 1
                return st
        for _ in range(Z3_STRUCTURE_TRIES):
            solved = self._z3_try(plan, target.rules, "violate:" + target.text, 1,
                                  target.forced, target.relaxed)
            if solved is not None and self._violates(solved, target):
                record.solved += 1
                return solved
        record.failures += 1
        return None

    def _violates(self, st: State, target: Violation) -> bool:
        """Phase 2 for a violation attempt; True when exactly the target is broken."""
        self.tg.fill(st)
        if st.violated(target.rules):
            self.adjuster.run(st, target.rules)
        return not st.violated(target.rules) and not st.holds(target.check)


def draws_to_cases(draws: Iterable[Draw], counterparts: Iterable[Any] = ()) -> list[Any]:
    """Cases for several draws with the same counterparts (a convenience for engines)."""
    cps = tuple(counterparts)
    return [to_case(d, cps) for d in draws]


def corner_params(plan: Plan) -> list[ParamPlan]:
    """The knobs of a spec: its integer parameters (``int`` or ``ints``, not an enum)
    with a finite range at most ``CORNER_WIDTH`` wide; none where there are fewer than
    two (one knob's upper bound is an ordinary draw's, one in a few)."""
    cached = plan.cache.get("corner")
    if cached is not None:
        return list(cached)
    knobs = []
    for pp in plan.params:
        p = pp.p
        if p.range is None:
            continue
        lo, hi = p.range
        scalar = "int" in p.structures and "int" not in pp.enums
        if (scalar or "ints" in p.structures) and math.isfinite(lo) and math.isfinite(hi) \
                and 0 < hi - lo <= CORNER_WIDTH:
            knobs.append(pp)
    out = knobs if len(knobs) >= 2 else []
    plan.cache["corner"] = tuple(out)
    return out


def _named_axis(state: State, tensor: str) -> int | None:
    """The axis of ``tensor`` that an integer ``AXIS_PARAMS`` argument names (a negative
    one counted from the end), or None where there is none or it is out of range."""
    rank = len(state.props[tensor].shape)
    for param in AXIS_PARAMS:
        value = state.values.get(param) if param in state.present else None
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) \
                and -rank <= value < rank:
            return int(value) % rank
    return None

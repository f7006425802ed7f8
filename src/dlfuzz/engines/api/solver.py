"""z3 mode: tensor-property constraints solved by z3 (DLLens §III-C, TensorJSFuzz-SMT).

Structures and left-out parameters are chosen first, as in Algorithm 1; what remains is
a problem over integers and reals: per tensor its rank ``nd``, dims ``d0..d{R-1}`` (front
to back, R = the rank bound, at most 5), a dtype index and planned element bounds
(``min``/``max`` as reals: the tensor's values are drawn inside them afterwards); per
scalar its value; per list its length and items. ``x.shape[-k]`` becomes an If-chain
over ``nd``. A property that does not exist (``shape[3]`` of a matrix) makes the
comparison false, exactly as ``constraints.holds`` says.

Diversity, which plain SMT solving lacks (TensorJSFuzz found 29 distinct shapes in 1,000
z3 inputs): every solve prefers the values of a fresh Algorithm-1 draw, as assumption
literals; when they conflict, members of the unsat core are dropped one at a time until
z3 finds a model, so the solution is a random draw repaired as little as z3 can. DLLens'
blocking clauses are added after each solution, so successive solutions of one model
differ in their properties; when they exhaust the space the blocking scope is reset.
One z3 solver is cached per (spec, structure choice) and reused with push/pop.

Constraints z3 cannot decode (a tensor compared as a value, ordering of strings, ...)
are left out of the model; the caller hands what stays violated to Algorithm 2.
"""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import z3

from dlfuzz.engines.api.constraints import TensorProps
from dlfuzz.engines.api.typegen import ALL_DTYPES, Rule, State, default_bounds, family
from dlfuzz.engines.api.z3enc import DT_INDEX, Encoder, LVar, TVar, is_num

CORE_STEPS = 12       # unsat-core members dropped one by one before dropping whole cores
MODEL_CACHE = 512     # solvers kept (per spec and structure choice)
DTYPE_WEIGHT = 0.1    # relative chance a conflict drops a dtype preference (see below)
NONEMPTY_WEIGHT = 0.3  # ... and a "dimension >= 1" preference (see _preferences)
BLOCK_RESET = 256     # blocking clauses kept before the scope is cleared (solver speed)


class _Model(Encoder):
    """One cached solver: the encoding plus solving with preferences and blocking."""

    def solve(self, st: State, rnd: random.Random) -> bool:
        """A model preferring ``st``'s (Algorithm 1) values, written into ``st``."""
        s = self.solver
        prefs = self._preferences(st)
        rnd.shuffle(prefs)
        s.push()
        lits = []
        weight: dict[str, float] = {}
        for lit, (eq, w) in zip(self.prefs, prefs, strict=False):
            s.add(z3.Implies(lit, eq))
            lits.append(lit)
            weight[str(lit)] = w
        s.set("random_seed", rnd.randrange(2**31))
        result = s.check(*lits)
        steps = 0
        while result == z3.unsat and lits:
            core = set(map(str, s.unsat_core()))
            if not core:
                break
            if steps < CORE_STEPS:
                names = sorted(core)
                drop = rnd.choices(names, [weight.get(n, 1.0) for n in names])[0]
                lits = [x for x in lits if str(x) != drop]
            else:
                lits = [x for x in lits if str(x) not in core]
            steps += 1
            result = s.check(*lits)
        if result == z3.unsat and self.blocked:  # blocking clauses exhausted the space
            s.pop()
            s.pop()
            s.push()
            self.blocked = 0
            return self.solve(st, rnd)
        if result != z3.sat:
            s.pop()
            return False
        model = s.model()
        block = self._apply(st, model)
        s.pop()
        if block is not None:
            if self.blocked >= BLOCK_RESET:
                s.pop()
                s.push()
                self.blocked = 0
            s.add(block)
            self.blocked += 1
        return True

    def _preferences(self, st: State) -> list[tuple[Any, float]]:
        """(preferred equality, weight) per variable: Algorithm 1's values. The weight
        is how readily a conflict drops it: a dtype changes last, since a dtype the
        spec does not list is the likeliest to be rejected."""
        out: list[tuple[Any, float]] = []
        for name, var in self.vars.items():
            kind = self.kinds[name]
            value: Any = st.values.get(name)
            if isinstance(var, TVar):
                props = st.props.get(name)
                if props is None:
                    continue
                out.append((var.nd == len(props.shape), 1.0))
                out.extend((d == props.shape[j], 1.0) for j, d in enumerate(var.dims)
                           if j < len(props.shape))
                # second tier: a dim whose value had to go stays non-empty if it can
                # (left alone, z3 picks boundary values: 0 and DIM_CAP)
                out.extend((d >= 1, NONEMPTY_WEIGHT) for j, d in enumerate(var.dims)
                           if j < len(props.shape) and props.shape[j] >= 1)
                out.append((var.dt == DT_INDEX[props.dtype], DTYPE_WEIGHT))
                if props.min is not None:
                    out.append((var.mn == props.min, 1.0))
                if props.max is not None:
                    out.append((var.mx == props.max, 1.0))
                if kind == "tensors":
                    out.append((var.count == len(value), 1.0))
            elif isinstance(var, LVar):
                out.append((var.n == len(value), 1.0))
                out.extend((var.items[j] == x, 1.0) for j, x in enumerate(value)
                           if j < len(var.items))
            elif kind == "str":
                vals = self.plan.by_name[name].enums["str"]
                if value in vals:
                    out.append((var == vals.index(value), 1.0))
            elif kind == "dtype":
                out.append((var == DT_INDEX[value], DTYPE_WEIGHT))
            elif kind == "bool":
                out.append((var == bool(value), 1.0))
            elif is_num(value):
                out.append((var == value, 1.0))
        return out

    def _apply(self, st: State, m: Any) -> Any:  # noqa: C901
        """Write model ``m`` into ``st``; returns the blocking clause of the solution."""
        diff = []
        for name, var in self.vars.items():
            kind = self.kinds[name]
            pp = self.plan.by_name[name]
            if isinstance(var, TVar):
                nd = _int(m, var.nd)
                shape = tuple(_int(m, var.dims[j]) for j in range(nd))
                dtype = ALL_DTYPES[_int(m, var.dt)]
                lo, hi = default_bounds(dtype, pp.p.domain)
                if var.used_bounds:
                    integral = family(dtype) in ("int", "bool")
                    if "min" in var.used_bounds:
                        lo = _real(m, var.mn, integral, up=True)
                        st.fixed.add((name, "min"))
                    if "max" in var.used_bounds:
                        hi = _real(m, var.mx, integral, up=False)
                        st.fixed.add((name, "max"))
                count = _int(m, var.count) if kind == "tensors" else None
                st.set_props(name, TensorProps(shape, dtype, lo, hi), count)
                diff.append(var.nd != nd)
                diff.extend(var.dims[j] != shape[j] for j in range(nd))
                diff.append(var.dt != DT_INDEX[dtype])
                if count is not None:
                    diff.append(var.count != count)
            elif isinstance(var, LVar):
                n = _int(m, var.n)
                items = [_int(m, it) if kind == "ints" else _real(m, it, False, True)
                         for it in var.items[:n]]
                st.set(name, kind, items)
                diff.append(var.n != n)
                diff.extend(var.items[j] != (items[j] if kind == "ints" else
                                             z3.RealVal(str(Fraction(items[j]))))
                            for j in range(n))
            elif kind == "int":
                v = _int(m, var)
                st.set(name, kind, v)
                diff.append(var != v)
            elif kind == "float":
                v = _real(m, var, False, True)
                st.set(name, kind, v)
                diff.append(var != z3.RealVal(str(Fraction(v))))
            elif kind == "bool":
                v = z3.is_true(m.eval(var, model_completion=True))
                st.set(name, kind, v)
                diff.append(var != v)
            elif kind == "str":
                vals = pp.enums["str"]
                i = _int(m, var)
                st.set(name, kind, vals[i] if i < len(vals) else "dlfuzz_invalid")
                diff.append(var != i)
            elif kind == "dtype":
                i = _int(m, var)
                st.set(name, kind, ALL_DTYPES[i])
                diff.append(var != i)
        return z3.Or(*diff) if diff else None


def _int(m: Any, var: Any) -> int:
    return m.eval(var, model_completion=True).as_long()


def _real(m: Any, var: Any, integral: bool, up: bool) -> Any:
    v = m.eval(var, model_completion=True)
    if z3.is_int_value(v):
        x = float(v.as_long())
    elif z3.is_rational_value(v):
        x = float(Fraction(v.numerator_as_long(), v.denominator_as_long()))
    else:  # an algebraic number from a nonlinear constraint
        x = float(Fraction(v.approx(20).as_fraction()))
    if integral:
        return math.ceil(x) if up else math.floor(x)
    return x


class Z3Solver:
    """z3 mode's entry point: one cached ``_Model`` per (spec, structures, target)."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.models: OrderedDict[Any, _Model] = OrderedDict()

    def solve(self, st: State, rules: Sequence[Rule], key: str = "") -> bool:
        """Solve ``rules`` for the structures ``st`` has, preferring its values; the
        solution is written into ``st``. False when unsatisfiable or undecided."""
        plan = st.plan
        choice = tuple((pp.name, st.structures.get(pp.name) if pp.name in st.present
                        else None, _const_key(st.values.get(pp.name))
                        if st.structures.get(pp.name) == "str" and "str" not in pp.enums
                        else None)
                       for pp in plan.params)
        mkey = (id(plan), key, choice, st.relaxed)
        model = self.models.get(mkey)
        if model is None or model.plan is not plan:
            model = _Model(st, rules)
            self.models[mkey] = model
            if len(self.models) > MODEL_CACHE:
                self.models.popitem(last=False)
        else:
            self.models.move_to_end(mkey)
        return model.solve(st, self.rnd)


def _const_key(value: Any) -> Any:
    return repr(value)

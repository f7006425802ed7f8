"""TensorJSFuzz Algorithm 2: dependency-aware adjustment of a type-aware draw.

Constraints are walked as the paper does: an ``or`` adjusts one side and, when that does
not make it hold, the next; an ``and`` adjusts every side; a comparison that does not hold
gets ``AdjustParam`` on its left expression and, when that fails, on its right one.
AdjustParam solves the comparison for the expression (``x.shape[-3] == w.shape[1] *
groups`` wants ``x.shape[-3]`` set to the right side's value; ``w.shape[0] % groups == 0``
wants ``w.shape[0]`` a multiple of ``groups``) and writes the property that the
expression names: a rank, one dimension, a dtype, the element count (a reshape), a list
length or item, a scalar, the structure, or the planned element bounds (min/max).

Choices are random inside what the comparison allows (``x.shape[-1] >= k`` picks from
[k, k+WINDOW]), so adjusted inputs stay diverse. Deliberate departures from the paper's
single pass: the alternatives of an ``or`` are tried in random order (always trying the
left one first would, e.g., always set ``bias`` to None); the pass is repeated for up to
``MAX_ROUNDS`` rounds because fixing one constraint can break another; and from the
second round on, a comparison is fixed on whichever side breaks fewer constraints
(min-conflicts), since the left-first rule cycles on chains of equalities. Like the
paper, the result is a best effort: the round with the fewest violated constraints is
kept.

Type bounds from the spec (rank, range, enum values, dtypes, list length, count) are
respected by every setter except for the (name, bound) pairs the state marks as relaxed
(violate mode breaks exactly one of them on purpose).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dlfuzz.engines.api.constraints import (
    Arith,
    Compare,
    Cond,
    Func,
    Index,
    Logic,
    Node,
    Prop,
    Unary,
    Var,
    negate,
    walk,
)
from dlfuzz.engines.api.fasteval import QUIET, compiled
from dlfuzz.engines.api.setters import (
    DIM_CAP,
    NUMEL_CAP,
    WINDOW,
    Setters,
    _divisors,
    _is_int,
)
from dlfuzz.engines.api.typegen import (
    ALL_DTYPES,
    DIM_MAX,
    RANK_MAX,
    ParamPlan,
    Rule,
    State,
)

MAX_ROUNDS = 6      # passes over the constraint list
INVALID_STRINGS = ("dlfuzz_invalid", "")  # what violate mode passes for a broken enum
FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_UNDEF = object()
_NOPE = object()


class Adjuster(Setters):
    """Algorithm 2 over a ``State`` (see module doc); the writing is in ``Setters``."""

    _careful: Sequence[Rule] | None = None  # rules to score sides against (rounds > 1)

    # ---- the algorithm -------------------------------------------------------------------
    def run(self, st: State, rules: Sequence[Rule], rounds: int = MAX_ROUNDS) -> list[Rule]:
        """Adjust until every rule holds or ``rounds`` passes are done; returns the rules
        still violated by the best state seen (which ``st`` is left in)."""
        bad = st.violated(rules)
        if not bad:
            return []
        best: State | None = None
        best_n = len(bad)
        for r in range(rounds):
            order = rules if r == 0 else self.rnd.sample(list(rules), len(rules))
            self._careful = None if r == 0 else rules
            for rule in order:
                if not st.holds(rule):
                    try:
                        self.fix(rule.tree, st)
                    except (ArithmeticError, ValueError, TypeError, IndexError):
                        pass  # an adjustment that cannot be computed fails (Alg. 2 l. 26)
            bad = st.violated(rules)
            if not bad:
                self._careful = None
                return []
            if len(bad) < best_n:
                best, best_n = st.copy(), len(bad)
        self._careful = None
        if best is not None and best_n < len(bad):
            st.restore(best)
            return st.violated(rules)
        return bad

    def fix(self, node: Node, st: State) -> None:
        """Alg. 2 lines 2-15 for one (normalized) constraint tree."""
        if st.holds(node):
            return
        if isinstance(node, Logic):
            if node.op == "and":
                for item in node.items:
                    if not st.holds(item):
                        self.fix(item, st)
                return
            items = list(node.items)
            self.rnd.shuffle(items)
            for item in items:
                self.fix(item, st)
                if st.holds(node):
                    return
            return
        if isinstance(node, Compare):
            self.compare(node, st)
        elif isinstance(node, Cond):
            self.fix(node.then if st.holds(node.test) else node.other, st)
        elif isinstance(node, Var):
            self.assign(node, True, st)
        elif isinstance(node, Unary) and node.op == "not":
            if isinstance(node.operand, Var):
                self.assign(node.operand, False, st)
            else:
                self.fix(negate(node.operand), st)

    def compare(self, c: Compare, st: State) -> None:
        op = c.op
        if op in ("is", "is not"):
            self.assign_none(c.left, op == "is", st)
            return
        if op in ("in", "not in"):
            choices = self.val(c.right, st)
            if choices is not _UNDEF:
                if not isinstance(choices, tuple | list):
                    choices = (choices,)
                self.solve(c.left, op, tuple(choices), st)
            return
        if self._careful is None:  # Alg. 2 lines 12-15: the left side, else the right
            if not self.side(c, True, st) or not st.holds(c):
                self.side(c, False, st)
            return
        # later rounds: each side on a copy, keep the one that breaks fewest constraints
        # (left-first alone chases its tail on chains like a == b, a == c, a == d)
        best: tuple[int, State] | None = None
        for left in self.rnd.sample((True, False), 2):
            trial = st.copy()
            if self.side(c, left, trial) and trial.holds(c):
                score = len(trial.violated(self._careful))
                if best is None or score < best[0]:
                    best = (score, trial)
        if best is None:
            if not self.side(c, True, st) or not st.holds(c):
                self.side(c, False, st)
        else:
            st.restore(best[1])

    def side(self, c: Compare, left: bool, st: State) -> bool:
        """AdjustParam on one side of ``c``, solved against the other side's value."""
        target, other = (c.left, c.right) if left else (c.right, c.left)
        v = self.val(other, st)
        if v is _UNDEF:
            self.define(other, st)
            v = self.val(other, st)
        if v is _UNDEF:
            return False
        return self.solve(target, c.op if left else FLIP[c.op], v, st)

    # ---- AdjustParam ------------------------------------------------------------------------
    def solve(self, expr: Node, op: str, v: Any, st: State) -> bool:
        """Change what ``expr`` names so that ``expr op v`` holds; True when changed."""
        if isinstance(expr, Prop) and expr.prop in ("min", "max") and \
                expr.name in st.props:
            return self.bound(expr.name, expr.prop, op, v, st)
        t = self.pick(op, v, self.domain(expr, st))
        if t is _NOPE:
            return False
        return self.assign(expr, t, st)

    def val(self, node: Node, st: State) -> Any:
        try:
            return compiled(node)(st.env)
        except QUIET:
            return _UNDEF

    def domain(self, expr: Node, st: State) -> tuple[str, Any, Any]:
        """(kind, lo, hi) for numbers, ('choice', values, None) for finite sets,
        ('any', None, None) when unknown."""
        inf = math.inf
        pp = st.plan.by_name.get(getattr(expr, "name", ""))
        if isinstance(expr, Prop) and pp is not None:
            p = pp.p
            if expr.prop == "ndims":
                lo, hi = (0, RANK_MAX) if (p.name, "rank") in st.relaxed else pp.rank
                return "int", lo, hi
            if expr.prop == "dtype":
                relaxed = (p.name, "dtypes") in st.relaxed or not p.dtypes
                return "choice", ALL_DTYPES if relaxed else p.dtypes, None
            if expr.prop == "num_element":
                return "int", 0, NUMEL_CAP
            if expr.prop == "type":
                return "choice", p.structures, None
            if expr.prop == "len":
                s = st.structures.get(p.name)
                if s in ("ints", "floats"):
                    return "int", *p.length
                if s == "tensors":
                    return "int", *p.count
                return "int", 0, DIM_CAP
            return "num", -inf, inf
        if isinstance(expr, Index) and pp is not None:
            if expr.shape:
                return "int", 0, DIM_CAP
            low, high = self._range(pp, st)
            return ("float" if st.structures.get(pp.name) == "floats" else "int"), low, high
        if isinstance(expr, Var) and pp is not None:
            return self._var_domain(pp, st)
        return "any", None, None

    def _var_domain(self, pp: ParamPlan, st: State) -> tuple[str, Any, Any]:
        p, s = pp.p, st.structures.get(pp.name)
        relaxed_values = (pp.name, "values") in st.relaxed
        if s == "dtype":
            return "choice", ALL_DTYPES if (not p.dtypes or (pp.name, "dtypes") in st.relaxed) \
                else p.dtypes, None
        if s == "str" or (s not in ("int", "float", "bool") and "str" in pp.enums):
            vals = pp.enums.get("str", ())
            if relaxed_values:
                return "choice", INVALID_STRINGS + tuple(vals), None
            return ("choice", vals, None) if vals else ("any", None, None)
        if s in ("int", "float") and s in pp.enums and not relaxed_values:
            return "choice", pp.enums[s], None
        if s == "bool":
            return "choice", (False, True), None
        lo, hi = self._range(pp, st)
        if s == "float" or ("int" not in p.structures and "float" in p.structures):
            return "float", lo, hi
        if "int" in p.structures or s in ("int", "ints"):
            return "int", lo, hi
        return "any", None, None

    def pick(self, op: str, v: Any, dom: tuple[str, Any, Any]) -> Any:  # noqa: C901
        """A target value t with ``t op v`` inside the domain; _NOPE when there is none."""
        kind, lo, hi = dom
        rnd = self.rnd
        if kind == "choice":
            choices = lo
            if op == "==":
                return v if v in choices else _NOPE
            if op == "in":
                ok = [c for c in v if c in choices]
            elif op == "not in":
                ok = [c for c in choices if c not in v]
            elif op == "!=":
                ok = [c for c in choices if c != v]
            else:
                ok = [c for c in choices if _holds_op(op, c, v)]
            return rnd.choice(ok) if ok else _NOPE
        if kind == "any":
            if op == "==":
                return v
            if op == "in":
                return rnd.choice(v) if v else _NOPE
            if isinstance(v, int | float) and not isinstance(v, bool):
                kind, lo, hi = ("int" if isinstance(v, int) else "float"), -math.inf, math.inf
            else:
                return _NOPE
        if op == "in":
            ok = [c for c in v if isinstance(c, int | float) and lo <= c <= hi
                  and (kind != "int" or float(c).is_integer())]
            return rnd.choice(ok) if ok else _NOPE
        if isinstance(v, bool):
            v = int(v)
        if op == "not in":
            pool = [c for c in v if isinstance(c, int | float)] or [0]
            for _ in range(8):
                base = rnd.choice(pool)
                t = base + rnd.randint(-WINDOW - len(pool), WINDOW + len(pool))
                if kind == "float":
                    t = float(t) + rnd.random()
                if lo <= t <= hi and t not in v:
                    return t
            return _NOPE
        if not isinstance(v, int | float):
            return _NOPE
        if kind == "int":
            return self._pick_int(op, v, lo, hi)
        return self._pick_float(op, v, lo, hi)

    def _pick_int(self, op: str, v: float, lo: float, hi: float) -> Any:
        rnd = self.rnd
        if op == "==":
            return int(v) if float(v).is_integer() and lo <= v <= hi else _NOPE
        if op == "!=":
            a, b = max(lo, math.floor(v) - WINDOW), min(hi, math.ceil(v) + WINDOW)
            ok = [t for t in range(int(a), int(b) + 1) if t != v] if a <= b else []
            return rnd.choice(ok) if ok else _NOPE
        top: float
        bottom: float
        if op in ("<", "<="):
            top = math.ceil(v) - 1 if op == "<" else math.floor(v)
            top = min(hi, top)
            bottom = max(lo, top - WINDOW)
        else:
            bottom = math.floor(v) + 1 if op == ">" else math.ceil(v)
            bottom = max(lo, bottom)
            top = min(hi, bottom + WINDOW)
        if bottom > top:
            return _NOPE
        return rnd.randint(int(bottom), int(top))

    def _pick_float(self, op: str, v: float, lo: float, hi: float) -> Any:
        rnd = self.rnd
        if op == "==":
            return float(v) if lo <= v <= hi else _NOPE
        if op == "!=":
            for _ in range(4):
                t = v + rnd.uniform(-1.0, 1.0)
                if t != v and lo <= t <= hi:
                    return t
            return _NOPE
        if op in ("<", "<="):
            top, bottom = min(hi, v), max(lo, v - WINDOW)
        else:
            top, bottom = min(hi, v + WINDOW), max(lo, v)
        if bottom > top or (bottom == top and op in ("<", ">")):
            return _NOPE
        t = rnd.uniform(bottom, top)
        if op == "<" and t >= v:
            t = math.nextafter(v, -math.inf)
        if op == ">" and t <= v:
            t = math.nextafter(v, math.inf)
        return t if lo <= t <= hi else _NOPE

    # ---- setters --------------------------------------------------------------------------
    def assign(self, expr: Node, t: Any, st: State) -> bool:  # noqa: C901
        """Write ``t`` into what ``expr`` names; True when the state changed."""
        if st.frozen:  # a group member keeps the group's signature: values only
            return False
        if isinstance(expr, Prop):
            pp = st.plan.by_name.get(expr.name)
            if pp is None:
                return False
            prop = expr.prop
            if prop in ("min", "max"):
                if expr.name in st.props:
                    return self.bound(expr.name, prop, "==", t, st)
                return self.set_var(pp, t, st)
            if prop == "ndims":
                return self.set_rank(pp, t, st)
            if prop == "dtype":
                return self.set_dtype(pp, t, st)
            if prop == "num_element":
                return self.set_numel(pp, t, st)
            if prop == "len":
                return self.set_len(pp, t, st)
            if prop == "type":
                if t not in pp.p.structures or st.structures.get(pp.name) == t:
                    return False
                self.regen(pp, t, st)
                return True
            return False
        if isinstance(expr, Index):
            pp = st.plan.by_name.get(expr.name)
            i = self.val(expr.index, st)
            if pp is None or not isinstance(i, int) or isinstance(i, bool):
                return False
            if expr.shape:
                return self.set_dim(pp, i, t, st)
            return self.set_item(pp, i, t, st)
        if isinstance(expr, Var):
            pp = st.plan.by_name.get(expr.name)
            return False if pp is None else self.set_var(pp, t, st)
        if isinstance(expr, Arith):
            return self.assign_arith(expr, t, st)
        if isinstance(expr, Unary) and expr.op == "-":
            return isinstance(t, int | float) and self.assign(expr.operand, -t, st)
        if isinstance(expr, Cond):
            return self.assign(expr.then if st.holds(expr.test) else expr.other, t, st)
        if isinstance(expr, Func):
            return self.assign_func(expr, t, st)
        return False

    def assign_arith(self, node: Arith, t: Any, st: State) -> bool:
        if not isinstance(t, int | float) or isinstance(t, bool):
            return False
        a, b = self.val(node.left, st), self.val(node.right, st)
        for side, other, left in ((node.left, b, True), (node.right, a, False)):
            if other is _UNDEF or not isinstance(other, int | float):
                continue
            need = self._invert(node.op, left, t, other)
            if need is not _NOPE and self.assign(side, need, st):
                return True
        return False

    def _invert(self, op: str, left: bool, t: Any, other: Any) -> Any:  # noqa: C901
        """The value one operand needs so that ``left op right == t``."""
        rnd, ints = self.rnd, _is_int(t) and _is_int(other)
        if op == "+":
            return t - other
        if op == "-":
            return t + other if left else other - t
        if op == "*":
            if other == 0:
                return _NOPE
            if ints:
                return t // other if t % other == 0 else _NOPE
            return t / other
        if op == "/":
            if left:
                return t * other
            return other / t if t != 0 else _NOPE
        if op == "//":
            if left:
                if other == 0 or not ints:
                    return _NOPE
                return t * other + (rnd.randint(0, other - 1) if other > 0
                                    else rnd.randint(other + 1, 0))
            if not ints:
                return _NOPE
            if t == 0:
                return other + 1 + rnd.randint(0, WINDOW) if other >= 0 else _NOPE
            cand = other // t
            return cand if cand != 0 and other // cand == t else _NOPE
        if op == "%":
            if not ints:
                return _NOPE
            if left:  # a % b == t: a = b*k + t
                b = other
                if b == 0 or not (0 <= t < b or b < t <= 0):
                    return _NOPE
                k_hi = max(1, DIM_MAX // abs(b))
                return b * rnd.randint(1 if t == 0 else 0, k_hi) + t
            a = other  # a % b == t: b divides a - t and b > t
            if a - t == 0:
                return rnd.randint(max(1, t + 1), max(1, t + 1) + WINDOW)
            divs = [d for d in _divisors(abs(a - t)) if d > t]
            return rnd.choice(divs) if divs else _NOPE
        return _NOPE

    def assign_func(self, node: Func, t: Any, st: State) -> bool:
        if node.name == "abs":
            if not isinstance(t, int | float) or t < 0:
                return False
            signs = [t, -t]
            self.rnd.shuffle(signs)
            return any(self.assign(node.args[0], s, st) for s in signs)
        vals = [self.val(a, st) for a in node.args]
        if len(vals) < 2 or any(not isinstance(v, int | float) for v in vals):
            return False
        changed = False
        for arg, v in zip(node.args, vals, strict=True):
            if (node.name == "min" and v < t) or (node.name == "max" and v > t):
                changed |= self.assign(arg, t, st)
        k = int(np.argmin(vals) if node.name == "min" else np.argmax(vals))
        return self.assign(node.args[k], t, st) or changed

    def define(self, expr: Node, st: State) -> bool:
        """Make every property ``expr`` reads exist (a tensor where a shape is read, a
        rank high enough for ``x.shape[-3]``), so that it can be compared at all."""
        changed = False
        if st.frozen:
            return False
        for n in walk(expr):
            pp = st.plan.by_name.get(getattr(n, "name", ""))
            if pp is None:
                continue
            if isinstance(n, Index) and n.shape:
                i = self.val(n.index, st)
                props = self.tensor(pp, st)
                if props is not None and _is_int(i):
                    need = i + 1 if i >= 0 else -i
                    if len(props.shape) < need:
                        changed |= self.set_rank(pp, need, st)
            elif isinstance(n, Prop) and n.prop in ("ndims", "dtype", "num_element", "min",
                                                    "max"):
                if pp.name not in st.props:
                    changed |= self.tensor(pp, st) is not None
            elif isinstance(n, Index) and st.structures.get(pp.name) not in ("ints", "floats"):
                s = "ints" if "ints" in pp.p.structures else \
                    "floats" if "floats" in pp.p.structures else None
                if s:
                    self.regen(pp, s, st)
                    changed = True
        return changed

def _holds_op(op: str, a: Any, b: Any) -> bool:
    try:
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    except TypeError:
        return False

"""The z3 encoding of constraints over tensor properties (used by ``solver.py``).

Per parameter under one structure choice: a tensor (or the shared member of a tensor
list) is its rank ``nd``, dims ``d0..d{R-1}`` from the front (R = its rank bound, at most
5), a dtype index into ``cases.DTYPES`` and real planned element bounds; an int or float
scalar is an Int or Real, a bool a Bool, an enum string or a dtype an index, a list its
length and items. Parameters left out, or whose structure is None or a free string, are
constants. ``x.shape[-k]`` is an If-chain over ``nd``; a list item likewise over the
length. Every translated expression carries its *definedness* (``x.shape[3]`` exists only
when ``nd > 3``), and a comparison holds only where both sides are defined, which is
``constraints.holds``' reading of an undefined property. ``//`` and ``%`` follow Python
(floor) semantics, not SMT-LIB's.

A construct with no encoding (a tensor compared as a value, ordering of strings) raises
``Unsupported``; the constraint is then left to Algorithm 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from dlfuzz.engines.api.constraints import (
    Arith,
    Compare,
    Cond,
    Const,
    Env,
    Func,
    Index,
    Logic,
    Node,
    Prop,
    Unary,
    Undefined,
    Var,
    evaluate,
)
from dlfuzz.engines.api.typegen import ALL_DTYPES, RANK_MAX, ParamPlan, Rule, State

DIM_CAP = 32          # dims z3 may choose (preferences keep them small)
TIMEOUT_MS = 2000     # per check: nonlinear integer problems can be hard
DT_INDEX = {name: i for i, name in enumerate(ALL_DTYPES)}
_NO_ENV = Env({})


class Unsupported(Exception):  # noqa: N818 - a signal inside translation
    """A constraint (part) z3 mode cannot encode."""


class Z:
    """A translated expression: kind, z3 (or Python) value, definedness."""

    __slots__ = ("kind", "e", "d", "info")

    def __init__(self, kind: str, e: Any, d: Any = True, info: Any = None) -> None:
        self.kind, self.e, self.d, self.info = kind, e, d, info


def _and(*parts: Any) -> Any:
    items = [p for p in parts if p is not True]
    if any(p is False for p in items):
        return z3.BoolVal(False)
    if not items:
        return z3.BoolVal(True)
    return items[0] if len(items) == 1 else z3.And(*items)


def _structure_of(value: Any) -> str:
    if value is None:
        return "none"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if isinstance(value, kind):
            return name
    if isinstance(value, list | tuple):
        return "floats" if any(isinstance(v, float) for v in value) else "ints"
    return "tensor"


class TVar:
    """z3 variables of one tensor (or of the shared member of a tensor list)."""

    def __init__(self, name: str, rank: tuple[int, int]) -> None:
        self.rank = rank
        self.nd = z3.Int(f"{name}.nd")
        self.dims = [z3.Int(f"{name}.d{j}") for j in range(rank[1])]
        self.dt = z3.Int(f"{name}.dt")
        self.mn = z3.Real(f"{name}.min")
        self.mx = z3.Real(f"{name}.max")
        self.count = z3.Int(f"{name}.count")
        self.used_bounds: set[str] = set()

    def dim(self, i: int) -> tuple[Any, Any]:
        lo, hi = self.rank
        if i >= 0:
            if i >= hi:
                return z3.IntVal(0), False
            return self.dims[i], self.nd > i
        k = -i
        chain: Any = self.dims[0] if self.dims else z3.IntVal(0)
        for r in range(max(k, lo, 1), hi + 1):
            chain = z3.If(self.nd == r, self.dims[r - k], chain)
        return chain, self.nd >= k


class LVar:
    def __init__(self, name: str, real: bool, length: tuple[int, int]) -> None:
        self.length = length
        self.n = z3.Int(f"{name}.len")
        mk = z3.Real if real else z3.Int
        self.items = [mk(f"{name}.{j}") for j in range(length[1])]

    def item(self, i: int) -> tuple[Any, Any]:
        if i >= 0:
            if i >= len(self.items):
                return z3.IntVal(0), False
            return self.items[i], self.n > i
        k = -i
        chain: Any = self.items[0] if self.items else z3.IntVal(0)
        for n in range(max(k, self.length[0], 1), self.length[1] + 1):
            chain = z3.If(self.n == n, self.items[n - k], chain)
        return chain, self.n >= k

class Encoder:
    """A z3 solver holding the encoding of a spec's rules under one structure choice."""

    def __init__(self, st: State, rules: Sequence[Rule]) -> None:
        self.plan = st.plan
        self.relaxed = st.relaxed
        self.solver = z3.Solver()
        self.solver.set("timeout", TIMEOUT_MS)
        self.solver.set("core.minimize", True)  # drop only what really conflicts
        self.vars: dict[str, Any] = {}
        self.kinds: dict[str, str] = {}
        self.consts: dict[str, Any] = {}
        self.names = frozenset(n for r in rules for n in r.names)
        for name in sorted(self.names):
            self._declare(st, self.plan.by_name[name])
        self.decoded: list[Rule] = []
        for rule in rules:
            try:
                z = self.t(rule.tree)
            except (Unsupported, z3.Z3Exception, TypeError, ValueError, ArithmeticError,
                    IndexError, KeyError):
                continue
            if z.kind == "const":
                if z.d is True and bool(z.e):
                    self.decoded.append(rule)
                    continue
                self.solver.add(z3.BoolVal(False))
                self.decoded.append(rule)
                continue
            if z.kind != "bool":
                continue
            self.solver.add(_and(z.d, z.e))
            self.decoded.append(rule)
        self.solver.push()  # the blocking scope
        self.blocked = 0
        self.prefs = [z3.Bool(f"__pref{i}") for i in range(256)]

    # ---- variables ----------------------------------------------------------------------
    def _declare(self, st: State, pp: ParamPlan) -> None:  # noqa: C901
        name, p, s = pp.name, pp.p, st.structures.get(pp.name)
        add = self.solver.add
        # (s is None only for an absent parameter: State.set gives each present one its
        # structure)
        if pp.name not in st.present or s is None or s in ("none", "str") \
                and s not in pp.enums:
            self.kinds[name] = "const"
            self.consts[name] = st.values.get(name)
            return
        self.kinds[name] = s
        relaxed = lambda bound: (name, bound) in self.relaxed  # noqa: E731
        if s in ("tensor", "tensors"):
            rank = (0, RANK_MAX) if relaxed("rank") else pp.rank
            tv = TVar(name, rank)
            add(tv.nd >= rank[0], tv.nd <= rank[1])
            for j, d in enumerate(tv.dims):
                add(d >= 0, d <= DIM_CAP, z3.Implies(tv.nd <= j, d == 1))
            allowed = ALL_DTYPES if (not p.dtypes or relaxed("dtypes")) else p.dtypes
            add(z3.Or(*[tv.dt == DT_INDEX[d] for d in allowed]))
            add(tv.mn <= tv.mx)
            if s == "tensors":
                add(tv.count >= p.count[0], tv.count <= p.count[1])
            self.vars[name] = tv
        elif s in ("int", "float"):
            v = z3.Int(name) if s == "int" else z3.Real(name)
            if s in pp.enums and not relaxed("values"):
                add(z3.Or(*[v == x for x in pp.enums[s]]))
            if p.range is not None and not relaxed("range"):
                add(v >= p.range[0], v <= p.range[1])
            self.vars[name] = v
        elif s == "bool":
            self.vars[name] = z3.Bool(name)
        elif s == "str":  # with enum values: an index into them
            vals = pp.enums["str"]
            v = z3.Int(name)
            add(v >= 0, v < len(vals) + (1 if relaxed("values") else 0))
            self.vars[name] = v
        elif s == "dtype":
            v = z3.Int(name)
            allowed = ALL_DTYPES if (not p.dtypes or relaxed("dtypes")) else p.dtypes
            add(z3.Or(*[v == DT_INDEX[d] for d in allowed]))
            self.vars[name] = v
        elif s in ("ints", "floats"):
            lv = LVar(name, s == "floats", p.length)
            add(lv.n >= p.length[0], lv.n <= p.length[1])
            for it in lv.items:
                if p.range is not None and not relaxed("range"):
                    add(it >= p.range[0], it <= p.range[1])
            self.vars[name] = lv
        else:  # pragma: no cover
            self.kinds[name] = "const"
            self.consts[name] = st.values.get(name)

    # ---- translation --------------------------------------------------------------------
    def t(self, node: Node) -> Z:  # noqa: C901 - one case per node type
        if isinstance(node, Const):
            return Z("const", node.value)
        if isinstance(node, Var):
            kind = self.kinds.get(node.name)
            if kind is None:
                raise Unsupported(node.name)
            if kind == "const":
                return Z("const", self.consts[node.name])
            v = self.vars[node.name]
            if kind in ("int", "float"):
                return Z("num", v)
            if kind == "bool":
                return Z("bool", v)
            if kind == "str":
                return Z("enum", v, True, self.plan.by_name[node.name].enums["str"])
            if kind == "dtype":
                return Z("dtype", v)
            if kind in ("ints", "floats"):
                return Z("list", v)
            raise Unsupported("a tensor used as a value")
        if isinstance(node, Prop):
            return self._prop(node)
        if isinstance(node, Index):
            i = self.t(node.index)
            kind = self.kinds.get(node.name)
            if kind is None:
                raise Unsupported(node.name)
            if kind == "const":
                return self._const_index(node, i)
            var = self.vars[node.name]
            if node.shape and isinstance(var, TVar):
                return self._select(var.dim, i, -len(var.dims), len(var.dims))
            if not node.shape and isinstance(var, LVar):
                return self._select(var.item, i, -len(var.items), len(var.items))
            return Z("const", None, False)
        if isinstance(node, Unary):
            z = self.t(node.operand)
            if node.op == "not":
                if z.kind == "bool":
                    return Z("bool", z3.Not(z.e), z.d)
                if z.kind == "const":
                    return Z("const", not z.e, z.d)
                raise Unsupported("not of a value")
            num = self._num(z)
            return Z("const", -num, z.d) if z.kind == "const" else Z("num", -num, z.d)
        if isinstance(node, Arith):
            return self._arith(node)
        if isinstance(node, Compare):
            return self._compare(node)
        if isinstance(node, Logic):
            items = [self._bool(self.t(i)) for i in node.items]
            return Z("bool", z3.And(*items) if node.op == "and" else z3.Or(*items))
        if isinstance(node, Cond):
            zt = self.t(node.test)
            if zt.kind == "const":  # decided by the structure choice: one branch only
                return self.t(node.then if zt.d is True and zt.e else node.other)
            test = self._bool(zt)
            a, b = self.t(node.then), self.t(node.other)
            if a.kind == "const" and b.kind == "const" and not (
                    is_num(a.e) and is_num(b.e)):
                raise Unsupported("ternary of non-numbers")
            if {a.kind, b.kind} <= {"bool"}:
                return Z("bool", z3.If(test, _and(a.d, a.e), _and(b.d, b.e)))
            ea, eb = self._num(a), self._num(b)
            return Z("num", z3.If(test, ea, eb), z3.If(test, _and(a.d), _and(b.d)))
        if isinstance(node, Func):
            args = [self.t(a) for a in node.args]
            vals = [self._num(a) for a in args]
            d = _and(*[a.d for a in args])
            if node.name == "abs":
                return Z("num", z3.If(vals[0] >= 0, vals[0], -vals[0]), d)
            out = vals[0]
            for v in vals[1:]:
                out = z3.If(v < out, v, out) if node.name == "min" else \
                    z3.If(v > out, v, out)
            return Z("num", out, d)
        raise Unsupported(type(node).__name__)

    def _prop(self, node: Prop) -> Z:
        kind = self.kinds.get(node.name)
        if kind is None:
            raise Unsupported(node.name)
        if node.prop == "type":
            if kind == "const":
                return Z("const", _structure_of(self.consts[node.name]))
            return Z("const", kind)
        var = self.vars.get(node.name)
        if node.prop == "len":
            if isinstance(var, LVar):
                return Z("num", var.n)
            if isinstance(var, TVar):
                if kind == "tensors":
                    return Z("num", var.count)
                e, d = var.dim(0)
                return Z("num", e, d)
            if kind == "const" and isinstance(self.consts[node.name], list | tuple):
                return Z("const", len(self.consts[node.name]))
            return Z("const", None, False)
        if node.prop in ("min", "max") and kind in ("int", "float"):
            return Z("num", var)
        if not isinstance(var, TVar):
            if kind == "const" and node.prop in ("min", "max") and is_num(
                    self.consts[node.name]):
                return Z("const", self.consts[node.name])
            return Z("const", None, False)
        if node.prop == "ndims":
            return Z("num", var.nd)
        if node.prop == "dtype":
            return Z("dtype", var.dt)
        if node.prop == "num_element":
            prod: Any = z3.IntVal(1)
            for j, d in enumerate(var.dims):
                prod = prod * z3.If(var.nd > j, d, 1)
            return Z("num", prod)
        if node.prop in ("min", "max"):
            var.used_bounds.add(node.prop)
            return Z("num", var.mn if node.prop == "min" else var.mx)
        raise Unsupported(node.prop)

    def _const_index(self, node: Index, i: Z) -> Z:
        value = self.consts[node.name]
        if i.kind != "const" or not isinstance(i.e, int) or node.shape:
            return Z("const", None, False)
        if isinstance(value, list | tuple) and -len(value) <= i.e < len(value):
            return Z("const", value[i.e])
        return Z("const", None, False)

    def _select(self, get: Any, i: Z, lo: int, hi: int) -> Z:
        if i.kind == "const":
            if not isinstance(i.e, int) or isinstance(i.e, bool):
                return Z("const", None, False)
            e, d = get(i.e)
            return Z("num", e, d)
        idx = self._num(i)
        value: Any = z3.IntVal(0)
        defined: Any = z3.BoolVal(False)
        for k in range(lo, hi):
            e, d = get(k)
            if d is False:
                continue
            value = z3.If(idx == k, e, value)
            defined = z3.Or(defined, z3.And(idx == k, d))
        return Z("num", value, _and(i.d, defined))

    def _num(self, z: Z) -> Any:
        if z.kind == "num":
            return z.e
        if z.kind == "bool":
            return z3.If(z.e, 1, 0)
        if z.kind == "const" and is_num(z.e):
            return int(z.e) if isinstance(z.e, bool) else z.e
        if z.kind == "const" and z.d is False:
            return z3.IntVal(0)
        raise Unsupported(f"{z.kind} in arithmetic")

    def _bool(self, z: Z) -> Any:
        if z.kind == "bool":
            return _and(z.d, z.e)
        if z.kind == "const":
            return z3.BoolVal(bool(z.e) and z.d is True)
        raise Unsupported("a value used as a condition")

    def _arith(self, node: Arith) -> Z:
        a, b = self.t(node.left), self.t(node.right)
        d = _and(a.d, b.d)
        if a.kind == "const" and b.kind == "const":
            if not (is_num(a.e) and is_num(b.e)) or (node.op in "/%//" and b.e == 0):
                return Z("const", None, False)
            return Z("const", _py(Arith(node.op, Const(a.e), Const(b.e))), d)
        x, y = self._num(a), self._num(b)
        op = node.op
        if op == "+":
            return Z("num", x + y, d)
        if op == "-":
            return Z("num", x - y, d)
        if op == "*":
            return Z("num", x * y, d)
        if op == "/":
            return Z("num", z3.ToReal(x) / z3.ToReal(y) if _is_int_expr(x) else x / y,
                     _and(d, y != 0))
        if not (_is_int_expr(x) and _is_int_expr(y)):
            raise Unsupported("// or % of reals")
        fdiv = z3.If(y > 0, x / y, (-x) / (-y))  # Python's floor division
        if op == "//":
            return Z("num", fdiv, _and(d, y != 0))
        return Z("num", x - y * fdiv, _and(d, y != 0))

    def _compare(self, node: Compare) -> Z:  # noqa: C901
        op = node.op
        if op in ("is", "is not"):
            if isinstance(node.left, Var) and self.kinds.get(node.left.name) not in (
                    None, "const"):
                return Z("const", op == "is not")  # a present, non-None structure
            a = self.t(node.left)
            if a.kind != "const":
                return Z("const", op == "is not")
            return Z("const", (a.e is None) == (op == "is"), True)
        a = self.t(node.left)
        b = self.t(node.right)
        d = _and(a.d, b.d)
        if a.kind == "const" and b.kind == "const":
            if a.d is False or b.d is False:
                return Z("const", False)
            value = _py(Compare(op, Const(a.e), Const(b.e)))
            return Z("const", bool(value)) if value is not None else Z("const", False)
        if op in ("in", "not in"):
            if b.kind != "const":
                raise Unsupported("'in' a non-literal")
            choices = b.e if isinstance(b.e, tuple | list) else (b.e,)
            eq = [self._eq(a, Z("const", c)) for c in choices]
            res = z3.Or(*eq) if eq else z3.BoolVal(False)
            return Z("bool", res if op == "in" else z3.Not(res), d)
        if b.kind == "const" and a.kind != "const":
            pass
        elif a.kind == "const":
            a, b = b, a
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        if op in ("==", "!="):
            eq = self._eq(a, b)
            return Z("bool", eq if op == "==" else z3.Not(eq), d)
        if a.kind in ("dtype", "enum", "list") or b.kind in ("dtype", "enum", "list") or (
                b.kind == "const" and not is_num(b.e)):
            raise Unsupported("ordering of non-numbers")
        x, y = self._num(a), self._num(b)
        return Z("bool", {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op], d)

    def _eq(self, a: Z, b: Z) -> Any:
        """z3 equality of a (not const) and b, across kinds."""
        if a.kind == "const":
            a, b = b, a
        if a.kind == "dtype":
            if b.kind == "dtype":
                return a.e == b.e
            return a.e == DT_INDEX[b.e] if b.e in DT_INDEX else z3.BoolVal(False)
        if a.kind == "enum":
            if b.kind == "const":
                return a.e == a.info.index(b.e) if b.e in a.info else z3.BoolVal(False)
            raise Unsupported("enum compared with a non-literal")
        if a.kind == "list":
            if b.kind != "const" or not isinstance(b.e, tuple | list):
                raise Unsupported("list compared with a non-literal")
            lv = a.e
            if len(b.e) > len(lv.items):
                return z3.BoolVal(False)
            return z3.And(lv.n == len(b.e), *[lv.items[i] == v for i, v in enumerate(b.e)])
        if a.kind == "bool":
            if b.kind == "bool":
                return a.e == b.e
            if b.kind == "const" and isinstance(b.e, bool | int):
                return a.e == z3.BoolVal(bool(b.e))
            return z3.BoolVal(False)
        if b.kind == "const" and not is_num(b.e):
            return z3.BoolVal(False)
        if b.kind in ("dtype", "enum", "list"):
            return z3.BoolVal(False)
        return self._num(a) == self._num(b)

    # ---- solving ------------------------------------------------------------------------


def is_num(x: Any) -> bool:
    return isinstance(x, int | float)


def _py(node: Node) -> Any:
    """Python's value of a constant expression (None where it is undefined)."""
    try:
        return evaluate(node, _NO_ENV)
    except (Undefined, TypeError, ValueError, ArithmeticError):
        return None


def _is_int_expr(x: Any) -> bool:
    if isinstance(x, int):
        return True
    return z3.is_expr(x) and x.sort() == z3.IntSort()

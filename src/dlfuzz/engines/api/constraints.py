"""The constraint language of API specs: TensorJSFuzz's BNF in Python expression syntax.

A constraint is one Python expression over the parameters of an API, with the tensor
properties of DLLens' constraint model (Table I):

    x.ndims        rank of tensor x              x.shape[i]   size of dimension i (i < 0 ok)
    x.dtype        dtype name, e.g. 'float32'    x.num_element  number of elements
    x.min, x.max   smallest / largest value      x.type       chosen structure ('tensor', 'int', ...)
    n              value of a scalar parameter   s[i], len(s) item / length of a list parameter
    x is None      parameter passed as None (or left out with a None default)

with ``and``/``or``/``not``, comparisons (chained too), ``in``/``not in`` a tuple of
literals, arithmetic ``+ - * / // %``, the ternary ``a if c else b`` and the functions
``len``, ``min``, ``max``, ``abs``. Anything else is a parse error that says where.

Why Python syntax: extracted conditions (``if input.dim() != 4: raise``) are Python
already, hand-written ones read naturally, and ``ast`` gives exact columns for errors.
Evaluation is three-valued in spirit: a property that does not exist for the value at
hand (``x.shape[3]`` of a matrix, ``x.ndims`` of None) raises ``Undefined``, and a
constraint whose evaluation is undefined counts as *not satisfied* (``holds``), so
``bias is None or bias.shape[0] == weight.shape[0]`` works by short-circuit.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlfuzz.errors import UsageError

TENSOR_PROPS = ("ndims", "dtype", "num_element", "min", "max", "type")
FUNCTIONS = ("len", "min", "max", "abs")
COMPARE_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
               ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
               ast.IsNot: "is not"}
NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
           "in": "not in", "not in": "in", "is": "is not", "is not": "is"}
ARITH_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
             ast.Mod: "%"}


class ConstraintError(UsageError):
    """A constraint that does not parse; ``column`` is 0-based within the expression."""

    def __init__(self, message: str, expr: str, column: int) -> None:
        super().__init__(message)
        self.expr, self.column, self.reason = expr, column, message


class Undefined(Exception):  # noqa: N818 - a value, not an error
    """A property that the value at hand does not have (shape[5] of a vector)."""


# ---- the tree ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    def children(self) -> tuple[Node, ...]:
        return ()


@dataclass(frozen=True)
class Const(Node):
    value: Any  # int | float | str | bool | None | tuple of those


@dataclass(frozen=True)
class Var(Node):
    """A parameter's value (scalar, list, tensor or None)."""

    name: str


@dataclass(frozen=True)
class Prop(Node):
    """``name.prop`` for a tensor property of TENSOR_PROPS, or ``len(name)`` (prop 'len')."""

    name: str
    prop: str


@dataclass(frozen=True)
class Index(Node):
    """``name.shape[i]`` (shape=True) or ``name[i]`` of a list parameter."""

    name: str
    index: Node
    shape: bool

    def children(self) -> tuple[Node, ...]:
        return (self.index,)


@dataclass(frozen=True)
class Unary(Node):
    op: str  # 'not' | '-'
    operand: Node

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)


@dataclass(frozen=True)
class Arith(Node):
    op: str
    left: Node
    right: Node

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Compare(Node):
    op: str  # one of COMPARE_OPS' values
    left: Node
    right: Node

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Logic(Node):
    op: str  # 'and' | 'or'
    items: tuple[Node, ...]

    def children(self) -> tuple[Node, ...]:
        return self.items


@dataclass(frozen=True)
class Cond(Node):
    """``then if test else other``."""

    test: Node
    then: Node
    other: Node

    def children(self) -> tuple[Node, ...]:
        return (self.test, self.then, self.other)


@dataclass(frozen=True)
class Func(Node):
    name: str  # 'min' | 'max' | 'abs'
    args: tuple[Node, ...]

    def children(self) -> tuple[Node, ...]:
        return self.args


@dataclass(frozen=True)
class Constraint:
    """A parsed constraint with its text and where it came from.

    ``source`` says what vouches for it, ``why`` the evidence (a documentation quote or
    link, the place of a source check, the error message it was learned from) and, for a
    constraint learned during a campaign, ``rejections`` the number of cases whose error
    gave it: a validation report names this (``provenance``), because a constraint the
    library never stated is weak evidence that accepting its violation is a bug.
    """

    text: str
    tree: Node
    source: str = "hand"  # signature | doc | validation | error | llm | hand
    why: str = field(default="", compare=False)
    rejections: int = field(default=0, compare=False)

    @property
    def names(self) -> frozenset[str]:
        return names_in(self.tree)


# What each source means in a report (the shared ``constraint_source`` phrases).
_PROVENANCE = {
    "doc": "documentation",
    "signature": "source check",
    "validation": "source check",
    "error": "learned error message",
    "llm": "hand table",
    "hand": "hand table",
}
_DEFAULT_WHY = {
    "doc": "the API's docstring, as extracted into {file}",
    "signature": "the signature of {api}, as extracted into {file}",
    "validation": "the argument checks in {api}'s source, as extracted into {file}",
    "error": "an error message of {api}, recorded in {file}",
    "llm": "{file} (extracted by a language model from the documentation)",
    "hand": "{file}",
}


def provenance(constraint: Constraint, api: str = "", file: str = "") -> str:
    """Where a constraint comes from, as a validation finding reports it.

    One of "documentation: ...", "source check: ...", "learned error message: ..." (a
    constraint learned in this campaign says how many rejections gave it: "learned error
    message (1 rejection): ..."), "hand table: ...".
    """
    kind = _PROVENANCE.get(constraint.source, "hand table")
    if constraint.rejections:
        n = constraint.rejections
        kind = f"{kind} ({n} rejection{'s' if n != 1 else ''})"
    why = constraint.why or _DEFAULT_WHY.get(constraint.source, "{file}").format(
        api=api or "the API", file=file or "the spec file")
    return f"{kind}: {why}"


def broken_by_defaults(constraint: Constraint, defaults: Mapping[str, Any]) -> bool:
    """True when the API's own default call breaks ``constraint`` for sure.

    ``defaults`` are the recorded defaults of optional parameters (None defaults left
    out: a None often means "not given", and "size or scale_factor must be given" is a
    real constraint the default call breaks in the library too). Every other parameter
    is unknown; the constraint is judged in three-valued logic, so only a constraint
    that is false whatever the unknown parameters are counts (``p.type != 'str'`` with
    ``p`` defaulting to 'fro'). Such a constraint was mined wrong: the library accepts
    its own default.
    """
    return _truth(constraint.tree, Env(defaults)) is False


def _truth(node: Node, env: Env) -> bool | None:
    """True, False, or None when the known values do not decide ``node``."""
    if isinstance(node, Logic):
        values = [_truth(item, env) for item in node.items]
        decisive, other = (False, True) if node.op == "and" else (True, False)
        if decisive in values:
            return decisive
        return other if all(v is other for v in values) else None
    if isinstance(node, Unary) and node.op == "not":
        value = _truth(node.operand, env)
        return None if value is None else not value
    if isinstance(node, Cond):
        test = _truth(node.test, env)
        if test is None:
            when_true, when_false = _truth(node.then, env), _truth(node.other, env)
            return when_true if when_true is not None and when_true == when_false else None
        return _truth(node.then if test else node.other, env)
    try:
        return bool(evaluate(node, env))
    except (Undefined, ValueError, TypeError, ArithmeticError):
        return None


# ---- parsing ----------------------------------------------------------------------------
def _fail(node: ast.AST, expr: str, message: str) -> ConstraintError:
    return ConstraintError(message, expr, getattr(node, "col_offset", 0))


@functools.lru_cache(maxsize=8192)
def parse(expr: str, params: frozenset[str] | None = None) -> Node:
    """The tree of one constraint; ``params`` (when given) are the only names allowed."""
    if not isinstance(expr, str) or not expr.strip():
        raise ConstraintError("empty constraint; write an expression such as "
                              "'x.ndims == 2'", str(expr), 0)
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConstraintError(f"not a Python expression ({exc.msg})", expr,
                              max(0, (exc.offset or 1) - 1)) from None
    return _Parser(expr.strip(), params).node(tree)


class _Parser:
    def __init__(self, expr: str, params: frozenset[str] | None) -> None:
        self.expr, self.params = expr, params

    def name(self, node: ast.AST) -> str:
        if not isinstance(node, ast.Name):
            raise _fail(node, self.expr, "expected a parameter name here")
        if self.params is not None and node.id not in self.params:
            known = ", ".join(sorted(self.params)) or "(none)"
            raise _fail(node, self.expr, f"unknown parameter {node.id!r}; parameters: {known}")
        return node.id

    def node(self, n: ast.AST) -> Node:  # noqa: C901 - one case per syntax form
        if isinstance(n, ast.BoolOp):
            op = "and" if isinstance(n.op, ast.And) else "or"
            return Logic(op, tuple(self.node(v) for v in n.values))
        if isinstance(n, ast.UnaryOp):
            if isinstance(n.op, ast.Not):
                return Unary("not", self.node(n.operand))
            if isinstance(n.op, ast.USub):
                inner = self.node(n.operand)
                if isinstance(inner, Const) and isinstance(inner.value, int | float):
                    return Const(-inner.value)
                return Unary("-", inner)
            if isinstance(n.op, ast.UAdd):
                return self.node(n.operand)
            raise _fail(n, self.expr, "only 'not' and '-' are unary operators here")
        if isinstance(n, ast.BinOp):
            arith = ARITH_OPS.get(type(n.op))
            if arith is None:
                raise _fail(n, self.expr, "arithmetic is + - * / // % only")
            return Arith(arith, self.node(n.left), self.node(n.right))
        if isinstance(n, ast.Compare):
            parts: list[Node] = []
            left = self.node(n.left)
            for op_node, right_ast in zip(n.ops, n.comparators, strict=True):
                op = COMPARE_OPS[type(op_node)]
                right = self.node(right_ast)
                if op in ("is", "is not") and not (isinstance(right, Const)
                                                   and right.value is None):
                    raise _fail(right_ast, self.expr, "'is' compares with None only")
                if op in ("in", "not in") and not isinstance(right, Const | Var):
                    raise _fail(right_ast, self.expr,
                                "'in' needs a tuple of literals, e.g. x.dtype in "
                                "('float32', 'float64')")
                parts.append(Compare(op, left, right))
                left = right
            return parts[0] if len(parts) == 1 else Logic("and", tuple(parts))
        if isinstance(n, ast.IfExp):
            return Cond(self.node(n.test), self.node(n.body), self.node(n.orelse))
        if isinstance(n, ast.Constant):
            if n.value is not None and not isinstance(n.value, int | float | str | bool):
                raise _fail(n, self.expr, "literals are numbers, strings, True/False, None")
            return Const(n.value)
        if isinstance(n, ast.Tuple | ast.List):
            items = []
            for e in n.elts:
                item = self.node(e)
                if not isinstance(item, Const):
                    raise _fail(e, self.expr, "a tuple holds literals only")
                items.append(item.value)
            return Const(tuple(items))
        if isinstance(n, ast.Name):
            if n.id in ("True", "False", "None"):  # pragma: no cover - ast gives Constant
                return Const({"True": True, "False": False, "None": None}[n.id])
            return Var(self.name(n))
        if isinstance(n, ast.Attribute):
            if n.attr == "shape":
                raise _fail(n, self.expr, "index the shape: x.shape[i]; for the rank "
                            "write x.ndims")
            if n.attr not in TENSOR_PROPS:
                raise _fail(n, self.expr, f"unknown property {n.attr!r}; properties: "
                            + ", ".join(TENSOR_PROPS) + ", shape[i]")
            return Prop(self.name(n.value), n.attr)
        if isinstance(n, ast.Subscript):
            index = self.node(n.slice)
            if isinstance(n.value, ast.Attribute):
                if n.value.attr != "shape":
                    raise _fail(n.value, self.expr, f"only the shape can be indexed, not "
                                f"{n.value.attr!r}; write x.shape[i]")
                return Index(self.name(n.value.value), index, shape=True)
            return Index(self.name(n.value), index, shape=False)
        if isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.func.id not in FUNCTIONS or n.keywords:
                raise _fail(n, self.expr, "functions are " + ", ".join(FUNCTIONS)
                            + " (positional arguments)")
            if n.func.id == "len":
                if len(n.args) != 1:
                    raise _fail(n, self.expr, "len takes one parameter")
                return Prop(self.name(n.args[0]), "len")
            if not n.args or (n.func.id == "abs" and len(n.args) != 1):
                raise _fail(n, self.expr, f"wrong number of arguments to {n.func.id}")
            return Func(n.func.id, tuple(self.node(a) for a in n.args))
        raise _fail(n, self.expr, f"{type(n).__name__} is not part of the constraint "
                    "language (see dlfuzz.engines.api.constraints)")


def names_in(node: Node) -> frozenset[str]:
    """Parameters a tree refers to."""
    found: set[str] = set()
    for n in walk(node):
        if isinstance(n, Var | Prop | Index):
            found.add(n.name)
    return frozenset(found)


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children():
        yield from walk(child)


def unparse(node: Node) -> str:
    """Text of a tree (round-trips through ``parse``)."""
    if isinstance(node, Const):
        return repr(node.value)
    if isinstance(node, Var):
        return node.name
    if isinstance(node, Prop):
        return f"len({node.name})" if node.prop == "len" else f"{node.name}.{node.prop}"
    if isinstance(node, Index):
        base = f"{node.name}.shape" if node.shape else node.name
        return f"{base}[{unparse(node.index)}]"
    if isinstance(node, Unary):
        return f"not ({unparse(node.operand)})" if node.op == "not" \
            else f"-({unparse(node.operand)})"
    if isinstance(node, Arith | Compare):
        return f"({unparse(node.left)} {node.op} {unparse(node.right)})"
    if isinstance(node, Logic):
        return "(" + f" {node.op} ".join(unparse(i) for i in node.items) + ")"
    if isinstance(node, Cond):
        return f"({unparse(node.then)} if {unparse(node.test)} else {unparse(node.other)})"
    if isinstance(node, Func):
        return f"{node.name}({', '.join(unparse(a) for a in node.args)})"
    raise TypeError(node)


def negate(node: Node) -> Node:
    """``not node`` pushed inwards (De Morgan, negated comparisons): what violate mode
    and Algorithm 2 work on, since both adjust comparisons, not negations."""
    if isinstance(node, Unary) and node.op == "not":
        return node.operand
    if isinstance(node, Compare):
        return Compare(NEGATED[node.op], node.left, node.right)
    if isinstance(node, Logic):
        return Logic("or" if node.op == "and" else "and", tuple(negate(i) for i in node.items))
    if isinstance(node, Cond):
        return Cond(node.test, negate(node.then), negate(node.other))
    return Unary("not", node)


def normalize(node: Node) -> Node:
    """Negations pushed to comparisons; ternaries as (c and a) or (not c and b)."""
    if isinstance(node, Unary) and node.op == "not":
        if isinstance(node.operand, Unary) and node.operand.op == "not":
            return normalize(node.operand.operand)
        pushed = negate(node.operand)
        if isinstance(pushed, Unary) and pushed.op == "not":
            return pushed  # ``not <value>``: nothing to push into
        return normalize(pushed)
    if isinstance(node, Logic):
        return Logic(node.op, tuple(normalize(i) for i in node.items))
    if isinstance(node, Cond) and _is_boolean(node.then) and _is_boolean(node.other):
        test = normalize(node.test)
        return Logic("or", (Logic("and", (test, normalize(node.then))),
                            Logic("and", (normalize(negate(node.test)),
                                          normalize(node.other)))))
    return node


def _is_boolean(node: Node) -> bool:
    return isinstance(node, Compare | Logic) or (isinstance(node, Unary) and node.op == "not")


# ---- evaluation -------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorProps:
    """A tensor known by its properties only: what generation knows before drawing values."""

    shape: tuple[int, ...]
    dtype: str
    min: float | None = None
    max: float | None = None


def _is_tensor(value: Any) -> bool:
    return isinstance(value, np.ndarray | TensorProps) or (
        hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type))


def _dtype_name(value: Any) -> str:
    if isinstance(value, TensorProps):
        return value.dtype
    name = getattr(value.dtype, "name", None)
    return str(name if name is not None else value.dtype)


def _prop(value: Any, prop: str, structure: str | None) -> Any:
    if prop == "type":
        if structure is not None:
            return structure
        return _structure_of(value)
    if prop == "len":
        if isinstance(value, list | tuple):
            return len(value)
        if _is_tensor(value) and len(value.shape) >= 1:
            return int(value.shape[0])
        raise Undefined(f"len of {type(value).__name__}")
    if isinstance(value, int | float) and not isinstance(value, bool) and prop in (
            "min", "max"):
        return value
    if isinstance(value, list | tuple) and value and all(_is_tensor(v) for v in value):
        value = value[0]  # a tensor list: properties of its first member
    if not _is_tensor(value):
        raise Undefined(f"{prop} of {type(value).__name__}")
    if prop == "ndims":
        return len(value.shape)
    if prop == "dtype":
        return _dtype_name(value)
    if prop == "num_element":
        return int(np.prod(value.shape, dtype=np.int64))
    if isinstance(value, TensorProps):
        got = value.min if prop == "min" else value.max
        if got is None:
            raise Undefined(f"{prop} before values are drawn")
        return got
    arr = np.asarray(value)
    if arr.size == 0:
        raise Undefined(f"{prop} of an empty tensor")
    if np.iscomplexobj(arr):
        raise Undefined(f"{prop} of a complex tensor")
    return float(arr.min() if prop == "min" else arr.max())


def _structure_of(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if _is_tensor(value):
        return "tensor"
    if isinstance(value, list | tuple):
        if value and all(_is_tensor(v) for v in value):
            return "tensors"
        return "floats" if any(isinstance(v, float) for v in value) else "ints"
    return type(value).__name__


class Env:
    """Parameter values for evaluation; ``structures`` answer ``x.type`` when known."""

    def __init__(self, values: Mapping[str, Any], structures: Mapping[str, str] | None = None
                 ) -> None:
        self.values = values
        self.structures = structures or {}

    def get(self, name: str) -> Any:
        if name not in self.values:
            raise Undefined(f"{name} is not set")
        return self.values[name]


def evaluate(node: Node, env: Env) -> Any:  # noqa: C901 - one case per node type
    """The value of a tree; raises ``Undefined`` where a property does not exist."""
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Var):
        value = env.get(node.name)
        if _is_tensor(value) and not isinstance(value, TensorProps) and np.ndim(value) == 0:
            return np.asarray(value).item()
        return value
    if isinstance(node, Prop):
        return _prop(env.get(node.name), node.prop, env.structures.get(node.name))
    if isinstance(node, Index):
        value = env.get(node.name)
        i = evaluate(node.index, env)
        if not isinstance(i, int) or isinstance(i, bool):
            raise Undefined("index is not an integer")
        seq = value.shape if node.shape and _is_tensor(value) else value
        if node.shape and not _is_tensor(value):
            raise Undefined(f"shape of {type(value).__name__}")
        if not isinstance(seq, list | tuple) or not -len(seq) <= i < len(seq):
            raise Undefined(f"index {i} out of range")
        return seq[i]
    if isinstance(node, Unary):
        v = evaluate(node.operand, env)
        return (not v) if node.op == "not" else -_num(v)
    if isinstance(node, Arith):
        a, b = _num(evaluate(node.left, env)), _num(evaluate(node.right, env))
        if node.op in ("/", "//", "%") and b == 0:
            raise Undefined("division by zero")
        return _ARITH[node.op](a, b)
    if isinstance(node, Compare):
        return _compare(node.op, evaluate(node.left, env), evaluate(node.right, env))
    if isinstance(node, Logic):
        if node.op == "and":
            return all(evaluate(i, env) for i in node.items)
        return any(_holds_quietly(i, env) for i in node.items)
    if isinstance(node, Cond):
        return evaluate(node.then, env) if evaluate(node.test, env) \
            else evaluate(node.other, env)
    if isinstance(node, Func):
        args = [evaluate(a, env) for a in node.args]
        if len(args) == 1 and isinstance(args[0], list | tuple):
            args = list(args[0])
        elif len(args) == 1 and node.name != "abs":
            return args[0]  # min/max of one number
        if not args:
            raise Undefined(f"{node.name} of nothing")
        funcs: dict[str, Callable[..., Any]] = {"min": min, "max": max,
                                                "abs": lambda *a: abs(a[0])}
        return funcs[node.name](*args)
    raise TypeError(node)


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b}


def _holds_quietly(node: Node, env: Env) -> bool:
    try:
        return bool(evaluate(node, env))
    except (Undefined, ValueError, TypeError, ArithmeticError):
        # a property that does not exist, an array compared with a number, an overflow:
        # not satisfied
        return False


def _num(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float):
        if isinstance(v, np.integer | np.floating):
            return v.item()
        raise Undefined(f"arithmetic on {type(v).__name__}")
    return v


def _compare(op: str, a: Any, b: Any) -> bool:
    if op in ("is", "is not"):
        return (a is None) == (op == "is")
    if op in ("in", "not in"):
        choices = b if isinstance(b, tuple | list) else (b,)
        if isinstance(a, list):
            a = tuple(a)
        return (a in choices) == (op == "in")
    if isinstance(a, list):
        a = tuple(a)
    if isinstance(b, list):
        b = tuple(b)
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if a is None or b is None or isinstance(a, str) != isinstance(b, str):
        raise Undefined(f"cannot order {a!r} and {b!r}")
    try:
        return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    except TypeError as exc:
        raise Undefined(str(exc)) from None


def holds(constraint: Constraint | Node, env: Env) -> bool:
    """True when satisfied; False when violated or undefined for these values."""
    tree = constraint.tree if isinstance(constraint, Constraint) else constraint
    return _holds_quietly(tree, env)


def make(expr: str, source: str = "hand", params: frozenset[str] | None = None,
         why: str = "") -> Constraint:
    return Constraint(expr.strip(), parse(expr, params), source, why)

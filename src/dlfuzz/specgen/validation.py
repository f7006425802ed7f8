"""Constraints from the Python validation code of an API (TensorJSFuzz §3.1.2, DLLens §III-B).

The Python layer of torch (``torch.nn.functional``), TensorFlow (every ``tf.image``,
``tf.signal`` and ``tf.nn`` wrapper) and JAX (all of ``jax.numpy`` and most of
``jax.lax``) checks its arguments before it calls a kernel::

    if p < 0.0 or p > 1.0:
        raise ValueError(...)           =>  not (p < 0.0 or p > 1.0)
    if padding_idx is not None:
        if padding_idx >= weight.size(0):
            raise AssertionError(...)   =>  not (padding_idx is not None and
                                                 padding_idx >= weight.shape[0])

DLLens has an LLM model the calls it cannot read; we translate the few idioms that carry
most of the information (``x.dim()``, ``len(x.shape)``, ``np.ndim(x)``, ``x.size(i)``,
``x.dtype == torch.float32``, ``isinstance``, TF's ``with_rank``, JAX's
``canonicalize_axis``). A condition mentioning anything else (a local computed by a
kernel, a loop variable) is dropped whole: dropping only the unknown part ``U`` of
``not (A and U)`` would give the stronger ``not A`` and exclude valid inputs.

Path conditions follow DLLens: the conditions of the enclosing ``if``s (negated in
``else``, and after an ``if c: return``) are conjoined; loops are entered once, their
conditions ignored. Environment tests (``has_torch_function``, ``torch.jit.
is_scripting()``) are false during fuzzing. A call passing parameters straight on to
another Python function of the library is followed (depth 2), as DLLens analyses code
within the same module.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from dlfuzz.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES
from dlfuzz.engines.api.constraints import ConstraintError, parse
from dlfuzz.engines.api.errorfeedback.vocabulary import dtype_names
from dlfuzz.libraries import LIBRARIES

MAX_DEPTH = 2
# top-level modules whose functions' checks are followed (each library's own, less ONNX
# Runtime's compiled one, plus the standalone Keras 2 that TensorFlow may load)
_LIBRARY_ROOTS = (*(m for lib in LIBRARIES for m in lib.modules[:1] if lib.name != "onnxruntime"),
                  "tf_keras")
_DTYPE_ROOTS = frozenset({"torch", "tf", "tensorflow", "dtypes", "np", "numpy", "jnp", "_dtypes",
                          "dtypes_lib", "lax", "jax", "onp", "_np", "dtype"})
_FAMILIES = {"floating": FLOAT_DTYPES, "integer": INT_DTYPES, "complexfloating": COMPLEX_DTYPES,
             "signedinteger": INT_DTYPES[:4], "unsignedinteger": INT_DTYPES[4:],
             "bool": ("bool",), "bool_": ("bool",)}
_FAMILIES["inexact"] = _FAMILIES["floating"] + _FAMILIES["complexfloating"]
_FAMILIES["number"] = _FAMILIES["integer"] + _FAMILIES["inexact"]
_DTYPE_FLAGS = {"is_floating_point": "floating", "is_floating": "floating",
                "is_complex": "complexfloating", "is_integer": "integer",
                "is_bool": "bool", "is_unsigned": "unsignedinteger", "is_signed": None}
_ISINSTANCE = {"int": ("int",), "float": ("float",), "bool": ("bool",), "str": ("str",),
               "list": ("ints", "floats", "tensors"), "tuple": ("ints", "floats", "tensors"),
               "Sequence": ("ints", "floats", "tensors"), "Tensor": ("tensor",),
               "ndarray": ("tensor",), "Array": ("tensor",), "SymInt": ("int",),
               "Number": ("int", "float"), "Integral": ("int",), "Real": ("int", "float"),
               "SymFloat": ("float",), "NoneType": ("none",)}
_CONVERSIONS = frozenset({"convert_to_tensor", "convert_to_tensor_v2", "asarray", "array",
                          "as_tensor", "ensure_arraylike", "promote_dtypes", "contiguous",
                          "convert_to_tensor_v2_with_dispatch", "promote_dtypes_inexact",
                          "promote_dtypes_numeric", "promote_dtypes_complex", "_promote_dtypes",
                          "promote_args", "promote_args_inexact", "asarray_or_none"})
_ENV_FALSE = frozenset({"has_torch_function", "has_torch_function_unary", "is_tracing",
                        "has_torch_function_variadic", "is_scripting", "_get_tracing_state",
                        "is_compiling", "is_dynamo_compiling"})
_CHECKS = {"_check": 0, "_check_value": 0, "_check_type": 0, "_check_index": 0,
           "_check_not_implemented": 0, "_check_with": 1, "check": 0}
_TF_RANK = {"with_rank": ast.Eq, "assert_has_rank": ast.Eq, "with_rank_at_least": ast.GtE,
            "with_rank_at_most": ast.LtE}


class _Untranslatable(Exception):  # noqa: N818 - control flow: outside the language
    pass


def _source_tree(fn: Any) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, Any] | None:
    fn = inspect.unwrap(fn)
    func = getattr(fn, "__func__", fn)
    try:
        module = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (TypeError, OSError, SyntaxError):
        return None  # a builtin or a C function: nothing to read
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return (defs[0], func) if defs else None


def constraints_from_source(fn: Callable[..., Any], params: Sequence[str]) -> list[str]:
    """Constraint texts over ``params`` that the Python checks of ``fn`` imply."""
    found = _extract(fn, tuple(params), 0)
    names = frozenset(params)
    out: list[str] = []
    for tree in found:
        text = ast.unparse(tree)
        try:
            parse(text, names)
        except ConstraintError:
            continue
        if text not in out and text not in ("True", "False"):
            out.append(text)
    return out


def _extract(fn: Any, params: tuple[str, ...], depth: int) -> list[ast.expr]:
    got = _source_tree(fn)
    if got is None:
        return []
    node, func = got
    walker = _Walker(frozenset(params), getattr(func, "__globals__", {}), depth)
    walker.block(node.body, [])
    return walker.found


def _neg(e: ast.expr) -> ast.expr:
    """``not e``, flipping a single comparison rather than wrapping it."""
    flip = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt,
            ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In,
            ast.Is: ast.IsNot, ast.IsNot: ast.Is}
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        return ast.Compare(e.left, [flip[type(e.ops[0])]()], e.comparators)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return e.operand
    if isinstance(e, ast.Constant) and isinstance(e.value, bool):
        return ast.Constant(not e.value)
    return ast.UnaryOp(ast.Not(), e)


def _and(items: list[ast.expr]) -> ast.expr:
    return items[0] if len(items) == 1 else ast.BoolOp(ast.And(), items)


def _const(value: Any) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Tuple([ast.Constant(v) for v in value], ast.Load())
    return ast.Constant(value)


def _attr_chain(e: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    return [e.id, *reversed(parts)] if isinstance(e, ast.Name) else None


def _call_name(e: ast.expr) -> str | None:
    return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None


class _Walker:
    """Walks one function body, collecting must-hold conditions (as constraint ASTs)."""

    def __init__(self, params: frozenset[str], globals_: dict[str, Any], depth: int) -> None:
        self.params = params
        self.globals = globals_
        self.depth = depth
        self.aliases: dict[str, ast.expr] = {}
        self.tainted: set[str] = set()
        self.found: list[ast.expr] = []

    # ---- statements -------------------------------------------------------------------
    def block(self, body: list[ast.stmt], path: list[ast.expr | None]) -> None:
        path = list(path)
        for stmt in body:
            self.stmt(stmt, path)
            if isinstance(stmt, ast.If) and stmt.body and isinstance(
                    stmt.body[-1], ast.Return) and not stmt.orelse:
                test = self.maybe(stmt.test)  # "if c: return ..." guards what follows
                if not (isinstance(test, ast.Constant) and not test.value):
                    path.append(None if test is None else _neg(test))

    def emit(self, must: ast.expr | None, path: list[ast.expr | None]) -> None:
        if must is None or any(p is None for p in path):
            return
        conds = [p for p in path if p is not None]
        if isinstance(must, ast.Constant) or ast.dump(must) in {ast.dump(c) for c in conds}:
            return  # always true, implied by the path, or an unconditional raise
        tree = must if not conds else ast.BoolOp(ast.Or(), [_neg(_and(conds)), must])
        self.found.append(tree)

    def stmt(self, s: ast.stmt, path: list[ast.expr | None]) -> None:  # noqa: C901
        if isinstance(s, ast.If):
            test = self.maybe(s.test)
            if isinstance(test, ast.Constant):
                self.block(s.body if test.value else s.orelse, path)
                return
            before = (dict(self.aliases), set(self.tainted))
            self.block(s.body, [*path, test])
            after_body = (self.aliases, self.tainted)
            self.aliases, self.tainted = dict(before[0]), set(before[1])
            if s.body and isinstance(s.body[-1], ast.Raise) and test is not None:
                self.block(s.orelse, path)  # "not test" is a constraint already
            else:
                self.block(s.orelse, [*path, None if test is None else _neg(test)])
            self.tainted |= after_body[1]  # a branch's assignments end the alias
            self.aliases = {k: v for k, v in self.aliases.items()
                            if k in after_body[0] and ast.dump(after_body[0][k]) == ast.dump(v)}
        elif isinstance(s, ast.Raise):
            if path and all(p is not None for p in path):
                dumps = {ast.dump(p) for p in path if p is not None}
                if not any(ast.dump(_neg(p)) in dumps for p in path if p is not None):
                    self.emit(_neg(_and([p for p in path if p is not None])), [])
        elif isinstance(s, ast.Assert):
            self.emit(self.maybe(s.test), path)
        elif isinstance(s, ast.Expr | ast.Return) and s.value is not None:
            self.call_checks(s.value, path)
        elif isinstance(s, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self.assign(s, path)
        elif isinstance(s, ast.For | ast.AsyncFor | ast.While):
            if isinstance(s, ast.For | ast.AsyncFor):
                self.forget(s.target)
            self.block(s.body, path)
        elif isinstance(s, ast.With | ast.AsyncWith):
            self.block(s.body, path)
        elif isinstance(s, ast.Try):
            if not s.handlers:  # a caught check rejects nothing (jnp.array_equiv)
                self.block(s.body, path)
            self.block(s.finalbody, path)

    def forget(self, target: ast.expr) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                self.aliases.pop(n.id, None)
                if n.id in self.params:
                    self.tainted.add(n.id)

    def assign(self, s: ast.Assign | ast.AnnAssign | ast.AugAssign,
               path: list[ast.expr | None]) -> None:
        value = s.value
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        if value is not None:
            self.call_checks(value, path)
        for t in targets:
            if isinstance(s, ast.AugAssign) or value is None:
                self.forget(t)
                continue
            if isinstance(t, ast.Name) and t.id in self.params and self._conversion(value, t.id):
                continue  # x = convert_to_tensor(x): still the parameter
            if isinstance(t, ast.Tuple) and self._conversion(value, None) and all(
                    isinstance(e, ast.Name) and e.id in self.params for e in t.elts):
                continue  # x, y = promote_dtypes(x, y)
            self.forget(t)
            if isinstance(t, ast.Name) and t.id not in self.params:
                shape = self._shape_of(value)  # shape = x.shape: kept for shape[i], len()
                got = ast.Attribute(shape, "shape", ast.Load()) if shape else self.maybe(value)
                if got is not None:
                    self.aliases[t.id] = got
            elif isinstance(t, ast.Tuple) and not any(isinstance(e, ast.Starred)
                                                      for e in t.elts):
                shape = self._shape_of(value)
                if shape is not None:
                    for i, e in enumerate(t.elts):
                        if isinstance(e, ast.Name) and e.id not in self.params:
                            self.aliases[e.id] = self._shape_index(shape, ast.Constant(i))

    @staticmethod
    def _conversion(value: ast.expr, name: str | None) -> bool:
        """``convert_to_tensor(x)``, ``x.contiguous()``: the same parameter, converted."""
        if not isinstance(value, ast.Call) or _call_name(value.func) not in _CONVERSIONS:
            return False
        args = [a for a in value.args if isinstance(a, ast.Name)]
        if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name):
            args.append(value.func.value)
        return name is None or any(a.id == name for a in args)

    # ---- calls that check ---------------------------------------------------------------
    def call_checks(self, e: ast.expr, path: list[ast.expr | None]) -> None:
        """Check calls inside ``e``, under the conditions that reach them."""
        if isinstance(e, ast.IfExp):
            test = self.maybe(e.test)
            self.call_checks(e.test, path)
            self.call_checks(e.body, [*path, test])
            self.call_checks(e.orelse, [*path, None if test is None else _neg(test)])
            return
        if isinstance(e, ast.BoolOp):
            inner = list(path)
            for v in e.values:
                self.call_checks(v, inner)
                got = self.maybe(v)
                inner.append(None if got is None else
                             got if isinstance(e.op, ast.And) else _neg(got))
            return
        if isinstance(e, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                      | ast.GeneratorExp):
            return  # runs later, or per element
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.call_checks(child, path)
        if isinstance(e, ast.Call):
            self.check_call(e, path)

    def check_call(self, node: ast.Call, path: list[ast.expr | None]) -> None:
        name = _call_name(node.func)
        if name in _CHECKS and len(node.args) > _CHECKS[name]:
            chain = _attr_chain(node.func) or []
            if name != "check" or chain[:1] in (["utils"], ["torch"]):
                self.emit(self.maybe(node.args[_CHECKS[name]]), path)
        elif name in _TF_RANK and isinstance(node.func, ast.Attribute) and node.args:
            rank = self.maybe(ast.Call(ast.Name("len", ast.Load()), [node.func.value], []))
            n = self.maybe(node.args[0])
            if rank is not None and n is not None:
                self.emit(ast.Compare(rank, [_TF_RANK[name]()], [n]), path)
        elif name in ("canonicalize_axis", "_canonicalize_axis") and len(node.args) == 2:
            axis, ndim = self.maybe(node.args[0]), self.maybe(node.args[1])
            if axis is not None and ndim is not None:
                neg = ast.UnaryOp(ast.USub(), ndim)
                self.emit(ast.Compare(neg, [ast.LtE(), ast.Lt()], [axis, ndim]), path)
        elif self.depth < MAX_DEPTH:
            self.follow(node, path)

    def follow(self, call: ast.Call, path: list[ast.expr | None]) -> None:
        """Constraints of a library function the parameters are passed straight on to."""
        chain = _attr_chain(call.func)
        if not chain or chain[0] not in self.globals:
            return
        target: Any = self.globals[chain[0]]
        for attr in chain[1:]:
            target = getattr(target, attr, None)
        target = inspect.unwrap(target) if callable(target) else None
        module = getattr(target, "__module__", "") or ""
        if not inspect.isfunction(target) or module.split(".")[0] not in _LIBRARY_ROOTS:
            return
        try:
            bound = inspect.signature(target).bind_partial(*call.args, **{
                k.arg: k.value for k in call.keywords if k.arg})
        except (TypeError, ValueError):
            return
        mapping = {k: v.id for k, v in bound.arguments.items()
                   if isinstance(v, ast.Name) and v.id in self.params
                   and v.id not in self.tainted}
        if not mapping:
            return
        for tree in _callee(target, tuple(sorted(mapping)), self.depth + 1):
            renamed = _copy(tree)
            for n in ast.walk(renamed):
                if isinstance(n, ast.Name):
                    n.id = mapping.get(n.id, n.id)
            self.emit(renamed, path)

    # ---- expressions ------------------------------------------------------------------
    def maybe(self, e: ast.expr) -> ast.expr | None:
        try:
            return self.tr(e)
        except _Untranslatable:
            return None

    def tr(self, e: ast.expr) -> ast.expr:  # noqa: C901 - one case per idiom
        if isinstance(e, ast.Constant):
            if e.value is None or isinstance(e.value, int | float | str | bool):
                return ast.Constant(e.value)
            raise _Untranslatable
        if isinstance(e, ast.Name):
            return self.name(e.id)
        if isinstance(e, ast.BoolOp):
            return ast.BoolOp(e.op, [self.tr(v) for v in e.values])
        if isinstance(e, ast.UnaryOp):
            operand = self.tr(e.operand)
            if isinstance(e.op, ast.Not):
                return _neg(operand) if isinstance(operand, ast.Constant) else \
                    ast.UnaryOp(ast.Not(), operand)
            if isinstance(e.op, ast.USub | ast.UAdd):
                return ast.UnaryOp(e.op, operand)
            raise _Untranslatable
        if isinstance(e, ast.BinOp):
            if not isinstance(e.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv
                              | ast.Mod):
                raise _Untranslatable
            return ast.BinOp(self.tr(e.left), e.op, self.tr(e.right))
        if isinstance(e, ast.Compare):
            return self.compare(e)
        if isinstance(e, ast.IfExp):
            return ast.IfExp(self.tr(e.test), self.tr(e.body), self.tr(e.orelse))
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            items = [self.tr(x) for x in e.elts]
            if not all(isinstance(i, ast.Constant) for i in items):
                raise _Untranslatable
            return ast.Tuple(items, ast.Load())
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        raise _Untranslatable

    def name(self, n: str) -> ast.expr:
        if n in self.params:
            if n in self.tainted:
                raise _Untranslatable
            return ast.Name(n, ast.Load())
        if n in self.aliases:
            alias = self.aliases[n]
            if isinstance(alias, ast.Attribute) and alias.attr == "shape":
                raise _Untranslatable  # a whole shape: only its items and length are
            return _copy(alias)
        if n in ("True", "False", "None"):
            return ast.Constant({"True": True, "False": False, "None": None}[n])
        value = self.globals.get(n, _Untranslatable)
        if isinstance(value, bool | int | float | str) and not isinstance(value, type):
            return ast.Constant(value)
        if isinstance(value, tuple | list | frozenset | set) and value and all(
                isinstance(v, str | int | float) for v in value):
            return _const(tuple(sorted(value, key=repr)) if isinstance(value, set | frozenset)
                          else tuple(value))
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            return _const(tuple(value))  # "mode in _MODES" over a dict's keys
        raise _Untranslatable

    def attribute(self, e: ast.Attribute) -> ast.expr:
        dtype = self._dtype_const(e)
        if dtype is not None:
            return ast.Constant(dtype)
        chain, a = _attr_chain(e), e.attr
        if chain and chain[0] in self.globals and chain[0] not in self.params:
            value: Any = self.globals[chain[0]]  # ResizeMethod.BILINEAR == 'bilinear'
            for part in chain[1:]:
                value = getattr(value, part, None)
            if isinstance(value, bool | int | float | str) and not isinstance(value, type):
                return ast.Constant(value)
        if a in ("ndim", "ndims", "rank") and (t := self._tensor(e.value)) is not None:
            return self._prop(t, "ndims")
        if a in ("ndim", "ndims", "rank") and (shape := self._shape_of(e.value)) is not None:
            return self._prop(shape, "ndims")
        if a == "dtype" and (t := self._tensor(e.value)) is not None:
            return self._prop(t, "dtype")
        if a == "size" and (t := self._tensor(e.value)) is not None:
            return self._prop(t, "num_element")
        if a in _DTYPE_FLAGS and isinstance(e.value, ast.Attribute) and e.value.attr == "dtype":
            return self._family(e.value, _DTYPE_FLAGS[a])
        raise _Untranslatable

    def _dtype_const(self, e: ast.expr) -> str | None:
        chain = _attr_chain(e)
        if not chain or len(chain) < 2 or chain[0] not in _DTYPE_ROOTS or \
                chain[0] in self.params:
            return None
        got = dtype_names([chain[-1]])
        return got[0] if got else None

    def _tensor(self, e: ast.expr) -> str | None:
        """The parameter ``e`` names, when it is (an alias of) a bare parameter."""
        if isinstance(e, ast.Name):
            got = self.maybe(e)
            if isinstance(got, ast.Name) and got.id in self.params:
                return got.id
        return None

    def _shape_of(self, e: ast.expr) -> ast.expr | None:
        """``x`` for ``x.shape``, ``x.size()``, ``np.shape(x)``, ``x.get_shape()``,
        ``x.shape.as_list()`` or an alias of one; None otherwise."""
        if isinstance(e, ast.Name) and e.id in self.aliases:
            alias = self.aliases[e.id]
            if isinstance(alias, ast.Attribute) and alias.attr == "shape" and \
                    isinstance(alias.value, ast.Name):
                return alias.value
            return None
        if isinstance(e, ast.Attribute) and e.attr == "shape":
            t = self._tensor(e.value)
            return ast.Name(t, ast.Load()) if t else None
        if isinstance(e, ast.Call) and not e.keywords:
            name = _call_name(e.func)
            if name in ("size", "get_shape") and isinstance(e.func, ast.Attribute) and \
                    not e.args:
                t = self._tensor(e.func.value)
                return ast.Name(t, ast.Load()) if t else None
            if name == "as_list" and isinstance(e.func, ast.Attribute) and not e.args:
                return self._shape_of(e.func.value)
            if name == "shape" and len(e.args) == 1:
                t = self._tensor(e.args[0])
                return ast.Name(t, ast.Load()) if t else None
        return None

    @staticmethod
    def _prop(t: ast.expr | str, prop: str) -> ast.expr:
        base = ast.Name(t, ast.Load()) if isinstance(t, str) else t
        return ast.Attribute(base, prop, ast.Load())

    @staticmethod
    def _shape_index(t: ast.expr, index: ast.expr) -> ast.expr:
        return ast.Subscript(ast.Attribute(_copy(t), "shape", ast.Load()), index, ast.Load())

    def _family(self, t: ast.expr | str | None, family: str | None) -> ast.expr:
        """``t.dtype in <family>``; ``t`` is a parameter, or ``p.dtype`` for one."""
        if isinstance(t, ast.Attribute) and t.attr == "dtype":
            t = self._tensor(t.value)
        if not isinstance(t, str) or family not in _FAMILIES:
            raise _Untranslatable
        return ast.Compare(self._prop(t, "dtype"), [ast.In()], [_const(_FAMILIES[family])])

    def subscript(self, e: ast.Subscript) -> ast.expr:
        shape = self._shape_of(e.value)
        if shape is not None and not isinstance(e.slice, ast.Slice):
            return self._shape_index(shape, self.tr(e.slice))
        t = self._tensor(e.value)
        if t is not None and not isinstance(e.slice, ast.Slice):
            return ast.Subscript(ast.Name(t, ast.Load()), self.tr(e.slice), ast.Load())
        raise _Untranslatable

    def call(self, e: ast.Call) -> ast.expr:  # noqa: C901 - one case per idiom
        name = _call_name(e.func)
        args = e.args
        method_of = self._tensor(e.func.value) if isinstance(e.func, ast.Attribute) else None
        if name in _ENV_FALSE:
            return ast.Constant(False)
        if name in _CONVERSIONS and len(args) == 1 and (t := self._tensor(args[0])):
            return ast.Name(t, ast.Load())  # asarray(x) is x
        if e.keywords and name not in ("isinstance",):
            raise _Untranslatable
        if method_of is not None:
            if name in ("dim", "ndimension") and not args:
                return self._prop(method_of, "ndims")
            if name in ("numel", "nelement") and not args:
                return self._prop(method_of, "num_element")
            if name == "size" and len(args) == 1:
                return self._shape_index(ast.Name(method_of, ast.Load()), self.tr(args[0]))
            if name in ("is_floating_point", "is_complex") and not args:
                return self._family(method_of, _DTYPE_FLAGS[name])
        if name == "len" and len(args) == 1:
            shape = self._shape_of(args[0])
            if shape is not None:
                return self._prop(shape, "ndims")
            inner = self.tr(args[0])
            if isinstance(inner, ast.Name):
                return ast.Call(ast.Name("len", ast.Load()), [inner], [])
            raise _Untranslatable
        if name in ("ndim", "rank") and len(args) == 1 and (t := self._tensor(args[0])):
            return self._prop(t, "ndims")
        if name == "size" and len(args) == 1 and (t := self._tensor(args[0])):
            return self._prop(t, "num_element")
        if name in ("is_floating_point", "is_complex") and len(args) == 1:
            return self._family(self._tensor(args[0]), _DTYPE_FLAGS[name])
        if name in ("min", "max", "abs") and args:
            return ast.Call(ast.Name(name, ast.Load()), [self.tr(a) for a in args], [])
        if name in ("int", "index", "dimension_value") and len(args) == 1:
            return self.tr(args[0])
        if name == "issubdtype" and len(args) == 2 and isinstance(args[0], ast.Attribute) \
                and args[0].attr == "dtype":
            chain = _attr_chain(args[1]) or []
            fam = chain[-1] if chain else None
            if fam in _FAMILIES:
                return self._family(args[0], fam)
            const = self._dtype_const(args[1])
            if const is not None and (t := self._tensor(args[0].value)):
                return ast.Compare(self._prop(t, "dtype"),
                                   [ast.Eq()], [ast.Constant(const)])
            raise _Untranslatable
        if name == "isinstance" and len(args) == 2:
            inner = self.tr(args[0])
            if not isinstance(inner, ast.Name):
                raise _Untranslatable
            kinds = args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]]
            structs: list[str] = []
            for k in kinds:
                none = isinstance(k, ast.Call) and ast.unparse(k) == "type(None)"
                kind_chain = ["NoneType"] if none else _attr_chain(k)
                if not kind_chain or kind_chain[-1] not in _ISINSTANCE:
                    raise _Untranslatable
                structs += [s for s in _ISINSTANCE[kind_chain[-1]] if s not in structs]
            prop = self._prop(inner, "type")
            if len(structs) == 1:
                return ast.Compare(prop, [ast.Eq()], [ast.Constant(structs[0])])
            return ast.Compare(prop, [ast.In()], [_const(tuple(structs))])
        raise _Untranslatable

    def compare(self, e: ast.Compare) -> ast.expr:
        left = self.tr(e.left)
        ops: list[ast.cmpop] = []
        rights: list[ast.expr] = []
        for op, right in zip(e.ops, e.comparators, strict=True):
            r = self.tr(right)
            if isinstance(op, ast.Is | ast.IsNot):
                if not (isinstance(r, ast.Constant) and r.value is None):
                    # "x.dtype is torch.float32" compares dtype objects by identity
                    if isinstance(r, ast.Constant) and isinstance(r.value, str):
                        op = ast.Eq() if isinstance(op, ast.Is) else ast.NotEq()
                    else:
                        raise _Untranslatable
            if isinstance(op, ast.In | ast.NotIn) and not isinstance(r, ast.Tuple):
                raise _Untranslatable
            ops.append(op)
            rights.append(r)
        if len(ops) == 1 and all(isinstance(x, ast.Constant) for x in (left, rights[0])):
            a, b = left.value, rights[0].value  # type: ignore[attr-defined]
            if isinstance(ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
                return ast.Constant((a == b) == isinstance(ops[0], ast.Eq | ast.Is))
            raise _Untranslatable
        return ast.Compare(left, ops, rights)


def _copy(tree: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(tree), mode="eval").body


@functools.lru_cache(maxsize=2048)
def _callee(target: Any, params: tuple[str, ...], depth: int) -> tuple[ast.expr, ...]:
    try:
        return tuple(_extract(target, params, depth))
    except RecursionError:
        return ()

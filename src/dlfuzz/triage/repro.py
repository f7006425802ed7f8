"""Standalone reproducers: one short script per library, needing only that library.

A script rebuilds the inputs from literals (exact: every value is written so that it
parses back to the same bits), makes the one call, and checks the expectation:

* ``values``: outputs within the per-element allowance of the float64 reference
  (the same judgement the oracle made); exit 1 on a mismatch;
* ``runs``: the call returns normally; an exception exits 1, a crash kills the process
  (non-zero status), a hang is stopped by an alarm (exit 1);
* ``rejects``: the call raises an exception (the input breaks a constraint of the API);
  a normal return exits 1 (the boundary bug), so does a crash or a hang.

A call of a dlfuzz helper (a counterpart composition) has its source written into the
script, so the script still needs only the library.

So the script exits non-zero while the bug is present and zero once it is fixed.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from dlfuzz.backends.base import Backend
from dlfuzz.cases import ApiCase, Call, DType, Expectation, Ref

_ALIASES = {"numpy": "np", "tensorflow": "tf"}
_ROOTS = {"np": "numpy", "tf": "tensorflow", "torch": "torch", "jax": "jax"}


def literal(value: Any) -> str:
    """Python source for a (nested) list of numbers that parses back to the same values."""
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, complex | np.complexfloating):
        return f"complex({literal(float(value.real))}, {literal(float(value.imag))})"
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    return repr(value)


def _values(array: np.ndarray) -> str:
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float64)
    return literal(array.tolist())


def _target(target: str) -> tuple[str, str]:
    """(expression, extra import) for a dotted target."""
    root, _, rest = target.partition(".")
    if root == "dlfuzz":
        return _inlined(target)
    alias = _ALIASES.get(root, root)
    extra = "" if alias in _ROOTS else f"import {target.rpartition('.')[0]}"
    if extra:
        return target, extra
    return f"{alias}.{rest}" if rest else alias, ""


def _inlined(target: str) -> tuple[str, str]:
    """A dlfuzz helper function (counterpart composition) as plain source: itself and the
    module-level helpers, constants and imports it uses, without decorators or
    annotations, so the reproducer needs only the libraries."""
    import importlib

    module, _, name = target.rpartition(".")
    fn = getattr(importlib.import_module(module), name)
    parts: dict[str, str] = {}
    imports: set[str] = set()
    _collect(fn, parts, imports)
    return name, "\n\n\n".join([*sorted(imports), *parts.values()]).strip()


def _code_names(code: Any) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names += _code_names(const)
    return names


def _collect(fn: Any, parts: dict[str, str], imports: set[str]) -> None:
    """Depth first, so a helper's own dependencies come before it in ``parts``."""
    import ast
    import inspect
    import textwrap

    parts.setdefault(fn.__name__, "")  # mark first: recursion and mutual calls stop here
    for name in dict.fromkeys(_code_names(fn.__code__)):
        if name in parts or name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        if inspect.isfunction(value) and value.__module__.startswith("dlfuzz"):
            _collect(value, parts, imports)
        elif inspect.ismodule(value):
            full = value.__name__
            imports.add(f"import {full}" if full == name else f"import {full} as {name}")
        elif isinstance(value, int | float | str | bool | tuple | frozenset | dict | type(None)):
            parts[name] = f"{name} = {value!r}"
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.decorator_list = []
            node.returns = None
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg]:
                if arg is not None:
                    arg.annotation = None
    parts[fn.__name__] = ast.unparse(tree)


def _arg(value: Any, backend: Backend) -> str:
    if isinstance(value, Ref):
        return f"x{value.index}"
    if isinstance(value, DType):
        return backend.repro_dtype(value.name)
    if isinstance(value, tuple):
        inner = ", ".join(_arg(v, backend) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_arg(v, backend) for v in value) + "]"
    if isinstance(value, float):
        return literal(value)
    return repr(value)


def call_source(call: Call, backend: Backend) -> tuple[str, str]:
    """(call expression, extra import line) for one library call."""
    fn, extra = _target(call.target)
    parts = [_arg(a, backend) for a in call.args]
    parts += [f"{k}={_arg(v, backend)}" for k, v in call.kwargs]
    return f"{fn}({', '.join(parts)})", extra


REPEATS = 9  # extra runs of the call a "repeatable" reproducer compares with the first

_FLAT = '''
def _flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [v]
'''

_CHECK_VALUES = '''
def _flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [v]


def _bad(actual, expected, allowed):
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return 1
        return sum(_bad(a, e, w) for a, e, w in zip(actual, expected, allowed))
    if isinstance(actual, list):
        return 1
    a, e = complex(actual), complex(expected)
    if math.isnan(a.real) or math.isnan(e.real) or math.isnan(a.imag) or math.isnan(e.imag):
        return int(math.isnan(a.real + a.imag) != math.isnan(e.real + e.imag))
    if math.isinf(abs(a)) or math.isinf(abs(e)):
        return int(a != e)
    return int(abs(a - e) > allowed)


got = [_as_list(t) for t in _flat(result)]
bad = [_bad(g, e, w) for g, e, w in zip(got, EXPECTED, ALLOWED)]
if len(got) != len(EXPECTED) or any(bad):
    print("BUG present: output differs from the reference beyond the allowed error")
    for i, (g, e) in enumerate(zip(got, EXPECTED)):
        print(f"  output {i}: got      {g}")
        print(f"  output {i}: expected {e}")
    sys.exit(1)
print("OK: outputs match the reference")
sys.exit(0)
'''


def reproducer(backend: Backend, case: ApiCase, expectation: Expectation, title: str,
               version: str = "") -> str:
    """The whole script for ``backend`` (an instance; its library is not imported)."""
    call = case.call_for(backend.library)
    if call is None:
        raise ValueError(f"case has no call for {backend.library}")
    expr, extra = call_source(call, backend)
    used = [i for i in range(len(case.tensors)) if re.search(rf"\bx{i}\b", expr)]
    expr = backend.repro_call(expr, [f"x{i}" for i in used])
    lines = [
        '"""' + f"dlfuzz reproducer: {title}",
        "",
        f"Backend: {backend.name}{' ' + version if version else ''}. Needs only that library.",
        "Exit status: 1 while the bug is present, 0 once it is fixed.",
        '"""',
        "import math",
        "import signal",
        "import sys",
        "",
        backend.repro_import,
    ]
    if extra:
        lines.append(extra)
    if backend.repro_setup():
        lines.append(backend.repro_setup())
    lines += ["", backend.repro_helpers().rstrip(), ""]
    if expectation.kind == "repeatable":
        lines += [_FLAT.strip(), ""]
    for i, t in enumerate(case.tensors):
        arr = t.to_numpy()
        lines.append(f"x{i} = {backend.repro_tensor(_values(arr), t.dtype, t.shape)}")
    lines += ["", f"signal.alarm({int(expectation.timeout_s)})  # a hang ends the script"]
    if expectation.kind == "rejects":
        lines += [
            f"# {expectation.note}" if expectation.note else "# the input is invalid",
            "try:",
            f"    result = {expr}",
            "except Exception as exc:  # right: the library rejects the invalid input",
            '    print(f"OK: rejected with {type(exc).__name__}: {exc}")',
            "    sys.exit(0)",
            'print("BUG present: the invalid input was accepted and a result returned")',
            "sys.exit(1)",
        ]
    elif expectation.kind == "repeatable":
        lines += [
            f"# {expectation.note}" if expectation.note else "# a deterministic call",
            f"first = [_as_list(t) for t in _flat({expr})]",
            f"for run in range({REPEATS}):",
            f"    again = [_as_list(t) for t in _flat({expr})]",
            "    if repr(again) != repr(first):  # repr: NaN equals NaN, bits otherwise",
            '        print(f"BUG present: run {run + 2} differs from run 1")',
            '        print(f"  run 1: {first}")',
            '        print(f"  run {run + 2}: {again}")',
            "        sys.exit(1)",
            f'print("OK: {REPEATS + 1} runs gave the same outputs")',
            "sys.exit(0)",
        ]
    elif expectation.kind == "runs":
        lines += [
            "try:",
            f"    result = {expr}",
            "except Exception as exc:  # the bug: this call must compute",
            '    print(f"BUG present: {type(exc).__name__}: {exc}")',
            "    sys.exit(1)",
            'print("OK: the call returned normally")',
            "sys.exit(0)",
        ]
    else:
        if expectation.note:
            lines.append(f"# {expectation.note}")
        lines.append(f"result = {expr}")
        lines.append("EXPECTED = " + literal([_nested(e) for e in expectation.expected]))
        lines.append("ALLOWED = " + literal([_nested(w) for w in expectation.allowed]))
        lines.append(_CHECK_VALUES)
    return "\n".join(lines).rstrip() + "\n"


def _nested(array: np.ndarray) -> Any:
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float64)
    return array.tolist()

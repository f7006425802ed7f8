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
from dlfuzz.libraries import LIBRARIES, get, resolve
from dlfuzz.triage.repro_verdict import VERDICT, nested, quiet_header, values_check

# Conventional aliases of the libraries' root modules (numpy -> np), from their records.
_ALIASES = {m: a for lib in LIBRARIES for a, m in lib.aliases.items() if "." not in m}
_ROOTS = {_ALIASES.get(m, m): m for n in ("numpy", "torch", "jax", "tf")
          for m in get(n).modules[:1]}


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
    name = target.rpartition(".")[2]
    fn = resolve(target)
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
    return [] if v is None else [v]
'''


def reproducer(backend: Backend, case: ApiCase, expectation: Expectation, title: str,
               version: str = "") -> str:
    """The whole script for ``backend`` (an instance; its library is not imported).

    Whatever the expectation, the script's last line is its verdict (``BUG present: ...``
    with exit 1, or ``OK: ...`` with exit 0); only a crash or a hang (killed by the alarm)
    ends it without one, with a non-zero status.
    """
    call = case.call_for(backend.library)
    if call is None:
        raise ValueError(f"case has no call for {backend.library}")
    expr, extra = call_source(call, backend)
    used = [i for i in range(len(case.tensors)) if re.search(rf"\bx{i}\b", expr)]
    expr = backend.repro_call(expr, [f"x{i}" for i in used])
    target = call.target.rpartition(".")[2] if call.target.startswith("dlfuzz.") \
        else call.target
    lines = script_head(backend, title, [
        f"Backend: {backend.name}{' ' + version if version else ''}. Needs only that library.",
        "Exit status: 1 while the bug is present, 0 once it is fixed; the last line printed",
        "is the verdict."], extra)
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
            *waits_for_result(backend.repro_wait),
            "except Exception as exc:  # right: the library rejects the invalid input",
            '    _verdict(0, f"OK: rejected with {type(exc).__name__}: {exc}")',
            f'_verdict(1, "BUG present: {target} accepted the invalid input and returned '
            'a result")',
        ]
    elif expectation.kind == "repeatable":
        lines += [
            f"# {expectation.note}" if expectation.note else "# a deterministic call",
            f"first = [_as_list(t) for t in _flat({expr})]",
            f"for run in range({REPEATS}):",
            f"    again = [_as_list(t) for t in _flat({expr})]",
            "    if repr(again) != repr(first):  # repr: NaN equals NaN, bits otherwise",
            "        diff = [i for i, (a, b) in enumerate(zip(again, first)) if repr(a) != repr(b)]",
            f'        _verdict(1, f"BUG present: {target} run {{run + 2}} differs from run 1 '
            'in output(s) {diff or list(range(len(first)))}")',
            f'_verdict(0, "OK: {target}: {REPEATS + 1} runs gave the same outputs")',
        ]
    elif expectation.kind == "runs":
        lines += [
            "try:",
            f"    result = {expr}",
            *waits_for_result(backend.repro_wait),
            "except Exception as exc:  # the bug: this call must compute",
            f'    _verdict(1, f"BUG present: {target} raised {{type(exc).__name__}}: {{exc}}")',
            f'_verdict(0, "OK: {target} returned normally")',
        ]
    elif expectation.kind == "survives":
        lines += [
            "# the bug kills or hangs the process; returning or raising is the fix",
            "try:",
            f"    result = {expr}",
            *waits_for_result(backend.repro_wait),
            "except Exception as exc:  # right: an error the caller can handle",
            f'    _verdict(0, f"OK: {target} raised {{type(exc).__name__}}: {{exc}}")',
            f'_verdict(0, "OK: {target} returned normally")',
        ]
    else:
        if expectation.note:
            lines.append(f"# {expectation.note}")
        lines.append(f"result = {expr}")
        lines.append(values_check(target, expectation.expected, expectation.allowed, literal))
    return "\n".join(lines).rstrip() + "\n"


def waits_for_result(wait: str) -> list[str]:
    """The line inside a reproducer's ``try`` that waits for ``result`` where the library
    dispatches asynchronously (``Backend.repro_wait``; none elsewhere): a JAX hang or an
    error raised at completion shows only once the computation is waited for."""
    return [f"    {wait}  # the computation, not only its dispatch"] if wait else []


def script_head(backend: Backend, title: str, about: list[str], extra: str,
                imports: tuple[str, ...] = ()) -> list[str]:
    """What every Python reproducer of a call starts with: its docstring (``title`` and
    the ``about`` lines), the quiet header, the imports (the library's, ``imports``,
    ``extra``), the backend's set-up, its helpers and ``_verdict``."""
    lines = ['"""' + f"dlfuzz reproducer: {title}", "", *about, '"""',
             *quiet_header(backend.name), "import math", "import signal", "import sys", "",
             backend.repro_import, *imports]
    if extra:
        lines.append(extra)
    if backend.repro_setup():
        lines.append(backend.repro_setup())
    return lines + ["", backend.repro_helpers().rstrip(), "", VERDICT.strip(), ""]


def _nested(array: np.ndarray) -> Any:
    return nested(array)

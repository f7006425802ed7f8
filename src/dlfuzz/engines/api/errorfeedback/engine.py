"""Error-feedback constraints (DLLens §III-C): what a library's error message implies.

DLLens reads "Dimension out of range (expected to be in range of [#1, #2], but got #3)"
with a regular expression, looks for the tensor argument whose ndims fits #1..#3 and
adds a constraint on it. We do the same for the message formats torch, TensorFlow and
JAX really produce (collected by running each library on bad inputs; the unit tests
hold them verbatim): a table of patterns, each with a handler that maps the numbers,
shapes and dtype names in the message back to the draw's parameters (the tensor of that
shape, the dims that equal the reported sizes, the parameter whose value is the bad
axis, the tensor of the named dtype) and writes constraints over them.

Every constraint must parse over the API's parameters and must be *violated* by the
draw that failed (otherwise it does not explain the failure); ``refine`` additionally
keeps only those that hold on every draw that ran.
"""

from __future__ import annotations

import re
from typing import Any

from dlfuzz.engines.api.constraints import ConstraintError, holds, parse
from dlfuzz.engines.api.errorfeedback import dtypes, ranks, shapes, sizes
from dlfuzz.engines.api.errorfeedback.context import Ctx
from dlfuzz.engines.api.errorfeedback.registry import Rule
from dlfuzz.engines.api.errorfeedback.vocabulary import dtype_of, shape_of

__all__ = ["RULES", "constraints_from_error", "dtype_of", "shape_of"]

# Tried in this order: rank and axis rules first, then dtypes, shape relations, sizes.
RULES: tuple[Rule, ...] = (*ranks.RULES, *dtypes.RULES, *shapes.RULES, *sizes.RULES)


def constraints_from_error(library: str, exc_type: str, message: str, draw: Any
                           ) -> list[str]:
    """Constraint texts over the draw's API parameters that ``message`` implies and the
    draw violates. ``draw``: anything with ``.spec`` (a LibSpec) and ``.values``."""
    from dlfuzz.engines.api.libdraw import env_of

    spec = draw.spec
    structures = getattr(draw, "structures", None)
    env = env_of(spec, draw.values, structures)
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*|\s*\[Op:[^\]]*\].*$", "", message or "",
                  flags=re.S)
    ctx = Ctx(spec.names, [p.name for p in spec.params], dict(env.values), env,
              " ".join(text.split()))
    out: list[str] = []
    for libs, pattern, handler in RULES:
        if library not in libs:
            continue
        for m in pattern.finditer(ctx.message):
            for c in handler(m, ctx):
                if c in out:
                    continue
                try:
                    tree = parse(c, ctx.names)
                    explains = not holds(tree, env)  # it must say why this draw failed
                except (ConstraintError, TypeError, ValueError, ArithmeticError):
                    continue
                if explains:
                    out.append(c)
    return out

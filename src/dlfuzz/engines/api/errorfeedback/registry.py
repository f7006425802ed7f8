"""Rule tables: (libraries, message pattern, handler) entries, each module its own.

A rule module owns ``RULES`` and fills it with ``rule = adder(RULES)`` used as a
decorator, ``@rule("torch tf", pattern, ...)``. ``engine`` concatenates the modules'
tables in a fixed order, so the order in which constraints are proposed never depends on
which module was imported first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from dlfuzz.engines.api.errorfeedback.context import Ctx

Handler = Callable[[re.Match[str], Ctx], Iterator[str]]
Rule = tuple[frozenset[str], re.Pattern[str], Handler]


def adder(table: list[Rule]) -> Callable[..., Callable[[Handler], Handler]]:
    """The ``@rule(libraries, *patterns)`` decorator that appends to ``table``: one entry
    per pattern, for the space-separated ``libraries``."""
    def rule(libraries: str, *patterns: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            for p in patterns:
                table.append((frozenset(libraries.split()), re.compile(p, re.S), fn))
            return fn
        return register
    return rule

"""The engine protocol: what the campaign loop asks of a test-case generator.

An engine proposes cases and learns from what happened to them. Nothing more: running
cases, judging outcomes and storing findings belong to the executor, the oracles and the
store, so an engine can be driven by a test with a fake loop as easily as by the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from dlfuzz.cases import Finding, Outcome


@runtime_checkable
class Engine(Protocol):
    """A source of cases that may adapt to feedback. Must be deterministic per seed."""

    name: str

    def propose(self, n: int) -> list[Any]:
        """The next ``n`` cases (``ApiCase`` or another case type the executor accepts)."""
        ...

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        """What the backends did with ``case`` (backend -> Outcome) and what oracles saw."""
        ...

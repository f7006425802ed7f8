"""An API case: one input for one library function, with the call for every library."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.cases.core import Call, Tensor


@dataclass(frozen=True)
class ApiCase:
    """One input for one API, with the concrete call for each library.

    ``calls`` maps a library (``numpy``, ``torch``, ...) to its Call; backends of the same
    library (``torch`` and ``torch-compile``) share it. ``params`` keeps the canonical
    (library-neutral) non-tensor arguments for reports and reduction. ``expect`` is
    ``"valid"``, or ``"invalid:<constraint>"`` for a violate-mode input that breaks that
    constraint of the API's spec on purpose: the API must reject it with a clean exception,
    or ``"edge:<mechanism>:<parameter>"`` for an input at the edge of the value space
    (``engines/api/edges.py``), which the API may compute or reject, or
    ``"outside:<mechanism>:<parameter>:<constraint>"`` for an edge input that broke a
    relation between parameters on the way (a special value in ``clip_value_max`` now
    below ``clip_value_min``): outside the documented domain, so no result is right or wrong,
    and only a crash, a hang or a nondeterministic result is judged (``answerable``).
    """

    api: str
    tensors: tuple[Tensor, ...]
    calls: tuple[tuple[str, Call], ...]
    params: tuple[tuple[str, Any], ...] = ()
    expect: str = "valid"
    kind: str = field(default="api", init=False)

    @property
    def invalid(self) -> bool:
        return self.expect.startswith("invalid")

    @property
    def answerable(self) -> bool:
        """Whether the input has a right answer to judge a result or a rejection by:
        not a violate-mode input (the boundary oracle's) nor one outside the domain."""
        return not self.expect.startswith(("invalid", "outside"))

    def call_for(self, library: str) -> Call | None:
        for lib, call in self.calls:
            if lib == library:
                return call
        return None

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(lib for lib, _ in self.calls)

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(repr((self.api, self.calls, self.params, self.expect)).encode())
        for t in self.tensors:
            h.update(t.digest().encode())
        return h.hexdigest()

    def with_tensors(self, tensors: tuple[Tensor, ...]) -> ApiCase:
        return ApiCase(self.api, tensors, self.calls, self.params, self.expect)

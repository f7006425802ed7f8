"""A program case: one whole user program (MoCo), as source text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.cases.core import Call, Tensor
from dlfuzz.libraries import LIBRARIES

# Library of a program -> the backends that run it (a Keras program runs on every keras-*).
PROGRAM_LIBRARIES: dict[str, tuple[str, ...]] = {
    lib.name: lib.program_backends for lib in LIBRARIES if lib.program_backends}


@dataclass(frozen=True)
class ProgramCase:
    """One whole program (MoCo): source text that builds, trains and evaluates a model.

    The source is a standalone, readable Python file; a worker executes it in a fresh
    module namespace and returns its ``RESULT``. ``library`` is ``torch`` or ``keras`` (a
    Keras program runs on every keras-* backend). ``expect`` is ``"valid"`` for a
    positive node and ``"invalid:<param>"`` for a negative node (boundary checking: the
    library must raise). ``node``/``parent`` place it in the derivation tree and
    ``edge`` names the derivation step that made it (block index, API, mutated
    parameter, operator, value): that is what a finding is localized to. ``parts`` is
    how it was assembled (template and blocks, for reduction); it is not part of the id.
    """

    api: str
    source: str
    library: str
    expect: str = "valid"
    node: str = ""
    parent: str = ""
    edge: tuple[tuple[str, Any], ...] = ()
    seed: str = ""
    parts: Any = field(default=None, compare=False)
    kind: str = field(default="program", init=False)

    @property
    def negative(self) -> bool:
        return self.expect.startswith("invalid")

    @property
    def libraries(self) -> tuple[str, ...]:
        return PROGRAM_LIBRARIES.get(self.library, (self.library,))

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return ()

    @property
    def params(self) -> tuple[tuple[str, Any], ...]:
        return self.edge

    def call_for(self, library: str) -> Call | None:
        """A stand-in call (what the executor keys hangs on), for libraries that run it."""
        if library not in self.libraries:
            return None
        return Call(f"program:{self.id}")

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(repr((self.library, self.expect)).encode())
        h.update(self.source.encode())
        return h.hexdigest()

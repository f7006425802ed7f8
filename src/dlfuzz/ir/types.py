"""The value types of the IR: a tensor's type and the error a bad graph raises.

They sit below both the graph (which checks itself by running every op's shape rule) and
the op catalog (whose shape rules take and return tensor types), so each of those can
import this module and neither has to import the other back.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlfuzz.errors import Rejected


class InvalidGraph(Rejected):
    """A graph (or a mutation's candidate) that breaks an op's constraints."""


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"

"""The op catalog: every op kind by name (docs/ir.md has the table)."""

from __future__ import annotations

from dlfuzz.ir.ops import conv, elementwise, logic, pool, recurrent, shape
from dlfuzz.ir.ops.base import Attr, OpKind
from dlfuzz.ir.types import InvalidGraph

CATALOG: dict[str, OpKind] = {
    op.name: op
    for module in (conv, pool, elementwise, logic, shape, recurrent)
    for op in module.OPS
}


def get_op(name: str) -> OpKind:
    try:
        return CATALOG[name]
    except KeyError:
        raise InvalidGraph(f"unknown op kind {name!r}; known: {', '.join(CATALOG)}") from None


__all__ = ["CATALOG", "Attr", "OpKind", "get_op"]

"""The ONNX lowering's builder: what an op emitter writes its ``node``/``const`` lines through.

Both the program assembly (``onnx_lower``) and the op emitters (``onnx_lower_ops``) use
it: the emitters append to it, the assembly renders its lines and the helpers they asked
for into ``build``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dlfuzz.ir.graph import Node
from dlfuzz.ir.types import TensorType

# Module-level helpers an emitter may ask for (emitted only when used).
HELPERS = {
    "gates": '''def gates(w, order):
    """Keras gate blocks (the last axis) rearranged into ONNX's gate order."""
    blocks = np.split(w, len(order), axis=-1)
    return np.concatenate([blocks[i] for i in order], axis=-1)
''',
}


@dataclass
class Ctx:
    """What an op emitter sees: value types, and the lines of ``build`` it appends to."""

    types: dict[str, TensorType]
    lines: list[str] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)

    def shape(self, value: str) -> tuple[int, ...]:
        return self.types[value].shape

    def node(self, op: str, inputs: list[str], output: str | list[str], **attrs: Any) -> str:
        """One ``node(...)`` line; returns the (first) output name."""
        args = "".join(f", {k}={_literal(v)}" for k, v in attrs.items())
        self.lines.append(f"node({op!r}, {inputs!r}, {output!r}{args})")
        return output if isinstance(output, str) else output[0]

    def weight(self, n: Node, name: str, transform: str = "") -> str:
        """Initializer from ``W`` (rearranged by the numpy expression ``transform``)."""
        key = f"{n.id}.{name}"
        self.lines.append(f"const({key!r}, W[{key!r}]{transform})")
        return key

    def expr(self, name: str, expression: str) -> str:
        """Initializer from a numpy expression over ``W`` (in the graph's dtype)."""
        self.lines.append(f"const({name!r}, {expression})")
        return name

    def const(self, name: str, value: Any, dtype: str = "NP") -> str:
        """A literal initializer: ``dtype`` is ``NP`` (the graph's) or a numpy dtype."""
        tail = "" if dtype == "NP" else f", {dtype}"
        self.lines.append(f"const({name!r}, {_literal(value)}{tail})")
        return name

    def ints(self, name: str, values: list[int]) -> str:
        return self.const(name, [int(v) for v in values], "np.int64")


class Raw(str):
    """An attribute value written as source (a name of the emitted module, e.g. ``DT``)."""


def _literal(v: Any) -> str:
    return str(v) if isinstance(v, Raw) else repr(_lists(v))


def _lists(v: Any) -> Any:
    """Attribute tuples written as lists, as onnx.helper examples do."""
    return [_lists(x) for x in v] if isinstance(v, tuple | list) else v

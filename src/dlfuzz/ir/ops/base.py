"""What every op kind declares: arity, attribute schema, shape rule, weights.

An op kind is data plus two functions (``infer`` and ``weights``), so the catalog reads
like the table in docs/ir.md. Semantics follow Keras 3 layers in channels-last layout
(LEMON mutates Keras models), with one exception per op noted where Keras is vague.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.ir.types import InvalidGraph, TensorType

Infer = Callable[[list[TensorType], dict[str, Any]], tuple[int, ...]]
WeightShapes = Callable[[list[TensorType], dict[str, Any]], dict[str, tuple[int, ...]]]

# The dtypes a graph computes in. Every kind allows the floats; the integer dtypes only
# kinds every library computes exactly on integers (no division, no transcendental, no
# kernel a library lacks for them: ONNX Runtime has no int32 MaxPool, a mean divides).
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int32", "int64")
FLOATS_AND_INTS = FLOATS + INTS
# Bool graphs: kinds that only move, copy or decide (shape ops, logic), which every
# library runs on bool tensors.
BOOLS = ("bool",)
ANY_DTYPE = FLOATS_AND_INTS + BOOLS


@dataclass(frozen=True)
class Attr:
    """One attribute: ``kind`` is int | float | bool | str | ints | pairs | optfloat."""

    name: str
    kind: str
    default: Any
    choices: tuple[Any, ...] = ()

    def check(self, value: Any, op: str) -> Any:
        ok = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "str": lambda v: isinstance(v, str),
            "ints": lambda v: isinstance(v, tuple | list) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in v),
            "pairs": lambda v: isinstance(v, tuple | list) and all(
                isinstance(p, tuple | list) and len(p) == 2 and all(isinstance(x, int)
                                                                   for x in p) for p in v),
            "optfloat": lambda v: v is None or (isinstance(v, int | float)
                                                and not isinstance(v, bool)),
        }[self.kind](value)
        if not ok:
            raise InvalidGraph(f"{op}.{self.name} = {value!r} is not a {self.kind}")
        if self.choices and value not in self.choices:
            raise InvalidGraph(f"{op}.{self.name} = {value!r} is not one of {self.choices}")
        if self.kind == "float":
            return float(value)
        if self.kind in ("ints",):
            return tuple(value)
        if self.kind == "pairs":
            return tuple(tuple(p) for p in value)
        return value


@dataclass(frozen=True)
class OpKind:
    name: str
    family: str  # conv | pool | global_pool | norm | activation | shape | merge | recurrent | misc
    arity: tuple[int, int]  # (min, max); max -1 means any number
    attrs: tuple[Attr, ...]
    infer: Infer
    weights: WeightShapes = field(default=lambda ins, a: {})
    spatial: int = 0  # 1/2/3 for the *1D/2D/3D families, 0 otherwise
    deterministic: bool = True
    doc: str = ""
    # The graph dtypes this kind computes in (``FLOATS``, ``FLOATS_AND_INTS``, ``ANY_DTYPE``);
    # ``infer_types`` refuses a node whose kind does not allow its graph's dtype.
    dtypes: tuple[str, ...] = FLOATS

    def complete(self, attrs: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled in, types checked; unknown attributes are an error."""
        known = {a.name: a for a in self.attrs}
        unknown = set(attrs) - set(known)
        if unknown:
            raise InvalidGraph(f"{self.name} has no attribute(s) {sorted(unknown)}; "
                               f"known: {sorted(known)}")
        out = {}
        for a in self.attrs:
            value = attrs.get(a.name, a.default)
            out[a.name] = a.check(value, self.name)
        return out

    def infer_node(self, ins: list[TensorType], attrs: dict[str, Any]) -> TensorType:
        lo, hi = self.arity
        if len(ins) < lo or (hi >= 0 and len(ins) > hi):
            raise InvalidGraph(f"takes {lo}..{'n' if hi < 0 else hi} inputs, got {len(ins)}")
        attrs = self.complete(attrs)
        return TensorType(tuple(int(d) for d in self.infer(ins, attrs)), ins[0].dtype)

    def weight_shapes(self, ins: list[TensorType], attrs: dict[str, Any]
                      ) -> dict[str, tuple[int, ...]]:
        return self.weights(ins, self.complete(attrs))


def need(cond: bool, why: str) -> None:
    if not cond:
        raise InvalidGraph(why)


def need_rank(t: TensorType, rank: int | tuple[int, ...], what: str = "input") -> None:
    ranks = (rank,) if isinstance(rank, int) else rank
    need(t.rank in ranks, f"{what} must have rank {' or '.join(map(str, ranks))}, got {t}")


def tup(value: int | tuple[int, ...], n: int) -> tuple[int, ...]:
    return (value,) * n if isinstance(value, int) else tuple(value)


def window_out(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    """Output length of a sliding window (conv or pool), TensorFlow's rule for 'same'."""
    need(kernel >= 1 and stride >= 1 and dilation >= 1,
         f"kernel {kernel}, stride {stride}, dilation {dilation} must be >= 1")
    span = (kernel - 1) * dilation + 1
    if padding == "same":
        return -(-size // stride)
    need(size >= span, f"window {span} is larger than the input length {size}")
    return (size - span) // stride + 1


def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TensorFlow 'same' padding (before, after): the extra element goes after."""
    out = -(-size // stride)
    span = (kernel - 1) * dilation + 1
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2

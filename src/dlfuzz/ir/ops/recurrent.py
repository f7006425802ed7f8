"""Recurrent layers in Keras 3 form: tanh activation, sigmoid gates, zero initial state.

Input ``(N, T, F)``; output ``(N, T, units)`` with ``return_sequences`` else ``(N, units)``.
Weights: ``kernel (F, g*units)``, ``recurrent_kernel (units, g*units)`` with gates in
Keras order (LSTM i, f, c, o; GRU z, r, h), ``bias (g*units,)``; GRU is ``reset_after``
(bias ``(2, 3*units)``: input bias row 0, recurrent bias row 1), so
``h~ = tanh(x Wh + b0h + r * (h Uh + b1h))`` and ``h' = z * h + (1 - z) * h~``.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.ops.base import Attr, OpKind, need, need_rank
from dlfuzz.ir.types import TensorType

GATES = {"SimpleRNN": 1, "LSTM": 4, "GRU": 3}


def recurrent(name: str) -> OpKind:
    g = GATES[name]

    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need_rank(ins[0], 3)
        need(a["units"] >= 1, "units must be >= 1")
        n, t, _ = ins[0].shape
        return (n, t, a["units"]) if a["return_sequences"] else (n, a["units"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        u = a["units"]
        bias = (2, g * u) if name == "GRU" else (g * u,)
        return {"kernel": (ins[0].shape[-1], g * u), "recurrent_kernel": (u, g * u),
                "bias": bias}

    return OpKind(name, "recurrent", (1, 1),
                  (Attr("units", "int", 4), Attr("return_sequences", "bool", False)),
                  infer, weights)


OPS = [recurrent(n) for n in GATES]

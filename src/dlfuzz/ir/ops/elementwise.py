"""Activations, normalizations and the elementwise merges.

Activations keep the shape. PReLU's ``alpha`` has one slope per channel (last axis),
shared over the other axes (Keras ``shared_axes`` = all but channels). BatchNorm is the
inference form: ``gamma * (x - moving_mean) / sqrt(moving_variance + epsilon) + beta``
over the last axis; LayerNorm normalizes the last axis (biased variance). Softplus,
Softsign, SELU, SiLU, HardSigmoid, Mish, Abs, Square and Clip have no weights; their
formulas are Keras 3's and PyTorch's (HardSigmoid is relu6(x + 3) / 6, not Keras 2's
0.2 * x + 0.5), written out in docs/ir.md so every lowering is checked against numpy.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.ops.base import FLOATS, FLOATS_AND_INTS, INTS, Attr, Infer, OpKind, need
from dlfuzz.ir.types import TensorType


def _same(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    return ins[0].shape


def _softmax(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(1 <= a["axis"] < ins[0].rank or a["axis"] == -1,
         f"softmax axis {a['axis']} is not a non-batch axis of {ins[0]}")
    return ins[0].shape


def _integral(ins: list[TensorType], value: float | None, what: str) -> None:
    """An integer graph's bound is a whole number: every lowering applies it as an integer
    of the graph's dtype (a fractional bound would have each library round or promote it
    its own way, torch.clamp turning the int tensor into a float one)."""
    if ins[0].dtype in INTS and value is not None:
        need(float(value).is_integer(), f"{what} {value} of a {ins[0].dtype} graph is not "
                                        "a whole number")


def _clip(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    """Clip bounds must be ordered: libraries disagree on min > max (torch gives max
    everywhere, TF.js asserts), so such a graph would only find that disagreement."""
    need(a["min_value"] <= a["max_value"],
         f"Clip min_value {a['min_value']} is greater than max_value {a['max_value']}")
    _integral(ins, a["min_value"], "Clip min_value")
    _integral(ins, a["max_value"], "Clip max_value")
    return ins[0].shape


def _relu(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    _integral(ins, a["max_value"], "ReLU max_value")
    return ins[0].shape


def activation(name: str, attrs: tuple[Attr, ...] = (), doc: str = "",
               infer: Infer = _same, dtypes: tuple[str, ...] = FLOATS) -> OpKind:
    """An elementwise op of one input that keeps the shape (``infer`` may add checks)."""
    return OpKind(name, "activation", (1, 1), attrs, infer, doc=doc, dtypes=dtypes)


def _channels(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {"alpha": (ins[0].shape[-1],)}


def _norm_weights(names: tuple[str, ...]):
    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        return {n: (ins[0].shape[-1],) for n in names}
    return weights


def _norm_infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(ins[0].rank >= 2, f"input must have rank >= 2, got {ins[0]}")
    need(a["epsilon"] > 0, f"epsilon {a['epsilon']} must be > 0")
    return ins[0].shape


def _merge(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    need(all(t.shape == ins[0].shape for t in ins),
         f"inputs must have one shape, got {[t.shape for t in ins]}")
    return ins[0].shape


def _matmul(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
    x, y = ins
    need(x.rank == 3 and y.rank == 3, f"MatMul needs two rank-3 inputs, got {x} and {y}")
    need(x.shape[0] == y.shape[0] and x.shape[2] == y.shape[1],
         f"MatMul cannot multiply {x.shape} by {y.shape}")
    return (x.shape[0], x.shape[1], y.shape[2])


def _scalar_weight(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {"value": ()}


OPS = [
    OpKind("AddConst", "elementwise_const", (1, 1), (), _same, _scalar_weight,
           doc="x + value, value a zero-dimensional weight (DLJSFuzzer's ZDT)",
           dtypes=FLOATS_AND_INTS),
    OpKind("MulConst", "elementwise_const", (1, 1), (), _same, _scalar_weight,
           doc="x * value, value a zero-dimensional weight (DLJSFuzzer's ZDT)",
           dtypes=FLOATS_AND_INTS),
    activation("ReLU", (Attr("max_value", "optfloat", None),),
               "min(max(x, 0), max_value); max_value None means no cap",
               infer=_relu, dtypes=FLOATS_AND_INTS),
    activation("LeakyReLU", (Attr("alpha", "float", 0.3),), "x if x >= 0 else alpha * x"),
    OpKind("PReLU", "activation", (1, 1), (), _same, _channels,
           doc="x if x >= 0 else alpha[c] * x"),
    activation("ELU", (Attr("alpha", "float", 1.0),), "x if x > 0 else alpha * (exp(x) - 1)"),
    activation("ThresholdedReLU", (Attr("theta", "float", 1.0),), "x if x > theta else 0"),
    OpKind("Softmax", "activation", (1, 1), (Attr("axis", "int", -1),), _softmax),
    activation("Sigmoid"),
    activation("Tanh"),
    activation("GELU", (Attr("approximate", "bool", False),),
               "exact: x * Phi(x); approximate: the tanh formula"),
    activation("Softplus", doc="log(1 + exp(x)), computed stably"),
    activation("Softsign", doc="x / (1 + |x|)"),
    activation("SELU", doc="scale * (x if x > 0 else alpha * (exp(x) - 1)), "
                           "alpha = 1.6732632423543772848170429916717, "
                           "scale = 1.0507009873554804934193349852946"),
    activation("SiLU", doc="x * sigmoid(x) (Swish)"),
    activation("HardSigmoid", doc="max(0, min(1, x / 6 + 1/2)) = relu6(x + 3) / 6 "
                                  "(Keras 3 and PyTorch; not Keras 2's 0.2 * x + 0.5)"),
    activation("Mish", doc="x * tanh(softplus(x))"),
    activation("Abs", doc="|x|", dtypes=FLOATS_AND_INTS),
    activation("Square", doc="x * x", dtypes=FLOATS_AND_INTS),
    activation("Clip", (Attr("min_value", "float", -1.0), Attr("max_value", "float", 1.0)),
               "min(max(x, min_value), max_value); min_value <= max_value", _clip,
               dtypes=FLOATS_AND_INTS),
    OpKind("BatchNorm", "norm", (1, 1), (Attr("epsilon", "float", 1e-3),), _norm_infer,
           _norm_weights(("gamma", "beta", "moving_mean", "moving_variance"))),
    OpKind("LayerNorm", "norm", (1, 1), (Attr("epsilon", "float", 1e-3),), _norm_infer,
           _norm_weights(("gamma", "beta"))),
    OpKind("Add", "merge", (2, -1), (), _merge, dtypes=FLOATS_AND_INTS),
    OpKind("Mul", "merge", (2, -1), (), _merge, dtypes=FLOATS_AND_INTS),
    OpKind("Subtract", "merge", (2, 2), (), _merge, dtypes=FLOATS_AND_INTS),
    OpKind("Maximum", "merge", (2, -1), (), _merge, dtypes=FLOATS_AND_INTS),
    OpKind("Minimum", "merge", (2, -1), (), _merge, dtypes=FLOATS_AND_INTS),
    OpKind("MatMul", "merge", (2, 2), (), _matmul, doc="batched: (N,a,b) @ (N,b,c)"),
]

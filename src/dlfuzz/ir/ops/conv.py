"""Dense and the convolution family (channels-last; kernels in Keras layout).

Kernels: Conv ``(*k, cin, filters)``; DepthwiseConv2D ``(kh, kw, cin, multiplier)``
with output channel ``c * multiplier + m``; Separable ``depthwise (*k, cin, multiplier)``
then ``pointwise (1.., cin * multiplier, filters)``; ConvTranspose ``(*k, filters, cin)``.
'same' padding is TensorFlow's (extra element after). Strides > 1 together with
dilation > 1 is refused, as Keras and TensorFlow refuse it.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.ops.base import Attr, OpKind, need, need_rank, window_out
from dlfuzz.ir.types import TensorType

PADDINGS = ("valid", "same")


def _conv_attrs(n: int, filters: bool = True, multiplier: bool = False,
                dilation: bool = True) -> tuple[Attr, ...]:
    attrs = [Attr("kernel_size", "ints", (3,) * n), Attr("strides", "ints", (1,) * n),
             Attr("padding", "str", "valid", PADDINGS), Attr("use_bias", "bool", True)]
    if filters:
        attrs.insert(0, Attr("filters", "int", 4))
    if multiplier:
        attrs.append(Attr("depth_multiplier", "int", 1))
    if dilation:
        attrs.append(Attr("dilation_rate", "ints", (1,) * n))
    return tuple(attrs)


def _check_window(n: int, a: dict[str, Any]) -> None:
    for key in ("kernel_size", "strides") + (("dilation_rate",) if "dilation_rate" in a else ()):
        need(len(a[key]) == n and all(v >= 1 for v in a[key]),
             f"{key} {a[key]} must be {n} integers >= 1")
    dil = a.get("dilation_rate", (1,) * n)
    need(not (any(s > 1 for s in a["strides"]) and any(d > 1 for d in dil)),
         "strides > 1 with dilation_rate > 1 is not allowed")


def _spatial_out(x: TensorType, n: int, a: dict[str, Any]) -> list[int]:
    need_rank(x, n + 2)
    _check_window(n, a)
    dil = a.get("dilation_rate", (1,) * n)
    return [window_out(x.shape[1 + i], a["kernel_size"][i], a["strides"][i], dil[i],
                       a["padding"]) for i in range(n)]


def conv(n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need(a["filters"] >= 1, f"filters {a['filters']} must be >= 1")
        return (ins[0].shape[0], *_spatial_out(ins[0], n, a), a["filters"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        w = {"kernel": (*a["kernel_size"], ins[0].shape[-1], a["filters"])}
        if a["use_bias"]:
            w["bias"] = (a["filters"],)
        return w

    return OpKind(f"Conv{n}D", "conv", (1, 1), _conv_attrs(n), infer, weights, spatial=n)


def depthwise2d() -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need(a["depth_multiplier"] >= 1, "depth_multiplier must be >= 1")
        return (ins[0].shape[0], *_spatial_out(ins[0], 2, a),
                ins[0].shape[-1] * a["depth_multiplier"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        cin, m = ins[0].shape[-1], a["depth_multiplier"]
        w = {"kernel": (*a["kernel_size"], cin, m)}
        if a["use_bias"]:
            w["bias"] = (cin * m,)
        return w

    return OpKind("DepthwiseConv2D", "conv", (1, 1),
                  _conv_attrs(2, filters=False, multiplier=True), infer, weights, spatial=2)


def separable(n: int) -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need(a["filters"] >= 1 and a["depth_multiplier"] >= 1,
             "filters and depth_multiplier must be >= 1")
        return (ins[0].shape[0], *_spatial_out(ins[0], n, a), a["filters"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        cin, m = ins[0].shape[-1], a["depth_multiplier"]
        w = {"depthwise_kernel": (*a["kernel_size"], cin, m),
             "pointwise_kernel": ((1,) * n + (cin * m, a["filters"]))}
        if a["use_bias"]:
            w["bias"] = (a["filters"],)
        return w

    return OpKind(f"SeparableConv{n}D", "conv", (1, 1), _conv_attrs(n, multiplier=True),
                  infer, weights, spatial=n)


def transpose(n: int) -> OpKind:
    """Keras ConvTranspose: 'valid' gives (in-1)*s + k, 'same' gives in*s (needs k >= s)."""
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        x = ins[0]
        need_rank(x, n + 2)
        _check_window(n, a)
        need(a["filters"] >= 1, "filters must be >= 1")
        out = []
        for i in range(n):
            k, s = a["kernel_size"][i], a["strides"][i]
            if a["padding"] == "same":
                need(k >= s, f"'same' transposed conv needs kernel {k} >= stride {s}")
                out.append(x.shape[1 + i] * s)
            else:
                out.append((x.shape[1 + i] - 1) * s + k)
        return (x.shape[0], *out, a["filters"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        w = {"kernel": (*a["kernel_size"], a["filters"], ins[0].shape[-1])}
        if a["use_bias"]:
            w["bias"] = (a["filters"],)
        return w

    return OpKind(f"Conv{n}DTranspose", "conv", (1, 1), _conv_attrs(n, dilation=False),
                  infer, weights, spatial=n)


def dense() -> OpKind:
    def infer(ins: list[TensorType], a: dict[str, Any]) -> tuple[int, ...]:
        need(ins[0].rank >= 2, f"input must have rank >= 2, got {ins[0]}")
        need(a["units"] >= 1, "units must be >= 1")
        return (*ins[0].shape[:-1], a["units"])

    def weights(ins: list[TensorType], a: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        w: dict[str, tuple[int, ...]] = {"kernel": (ins[0].shape[-1], a["units"])}
        if a["use_bias"]:
            w["bias"] = (a["units"],)
        return w

    return OpKind("Dense", "dense", (1, 1), (Attr("units", "int", 8),
                                             Attr("use_bias", "bool", True)), infer, weights)


OPS = [dense(), conv(1), conv(2), conv(3), depthwise2d(), separable(1), separable(2),
       transpose(2), transpose(3)]

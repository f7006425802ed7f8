"""ONNX model files as IR models (``importers.from_onnx``).

Each ONNX node maps to IR ops through a registry keyed by ``op_type``; initializers and
Constant nodes become weights or shape arguments. Anything not expressible *exactly* is
refused with a UsageError naming the node, its op type and the file.

ONNX layout. ONNX convolutions are channels-first (NCHW); the IR is channels-last. The
imported model keeps the ONNX model's interface (its inputs and outputs are NCHW) and
tracks, per ONNX tensor, whether its IR value is stored channels-first ("plain") or
channels-last. A Transpose to channels-last is inserted lazily before the first op that
needs it (Conv, pools, BatchNorm on rank >= 3) and one back before an op that reads the
layout (Flatten, Reshape, Softmax, MatMul/Gemm, merges of mixed layouts, graph outputs);
activations and same-layout merges run in whichever layout they get, and an ONNX
Transpose is folded into the pending one. So a conv stack costs one Transpose in and one
out, and the IR model computes the ONNX model's function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.engines.model.import_net import DEFAULT_BATCH, ImportNet, Unsupported, ir_axis, require
from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import InvalidGraph, TensorType
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops.base import same_pads

ONNX_DTYPES = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}


class _OnnxImport:
    """Per-tensor IR value and layout ("plain": the ONNX layout; "cl": channels-last)."""

    def __init__(self, net: ImportNet, consts: dict[str, np.ndarray], uses: Counter[str],
                 opset: int) -> None:
        self.net, self.consts, self.uses, self.opset = net, consts, uses, opset
        self.env: dict[str, tuple[str, str]] = {}
        self._moved: dict[tuple[str, str], str] = {}

    def rank(self, name: str) -> int:
        return len(self.net.shape(self.value(name)[0]))

    def value(self, name: str) -> tuple[str, str]:
        require(name not in self.consts,
                f"input {name!r} is a constant; only weight and shape inputs may be")
        return self.env[name]

    def get(self, name: str, layout: str) -> str:
        """The IR value of ``name`` in ``layout`` (one cached Transpose if it is not)."""
        value, have = self.value(name)
        rank = len(self.net.shape(value))
        if have == layout or rank < 3:
            return value
        key = (value, layout)
        if key not in self._moved:
            dims = tuple(range(2, rank)) + (1,) if layout == "cl" else (rank - 1,) + tuple(
                range(1, rank - 1))
            self._moved[key] = self.net.add("Transpose", value, dims=dims)
        return self._moved[key]

    def set(self, name: str, value: str, layout: str = "plain") -> None:
        self.env[name] = (value, layout if len(self.net.shape(value)) >= 3 else "plain")

    def const(self, name: str, what: str) -> np.ndarray:
        require(name in self.consts, f"{what} ({name!r}) must be an initializer or Constant")
        return self.consts[name]


OnnxHandler = Callable[[_OnnxImport, Any, dict[str, Any]], None]


def _o_pads(a: dict[str, Any], sizes: Sequence[int], kernel: Sequence[int],
            strides: Sequence[int], dil: Sequence[int]) -> list[tuple[int, int]]:
    """Explicit (before, after) pads per spatial dim from pads / auto_pad."""
    n, auto = len(sizes), a.get("auto_pad", "NOTSET")
    if auto == "VALID":
        return [(0, 0)] * n
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [same_pads(sizes[i], kernel[i], strides[i], dil[i]) for i in range(n)]
        return pads if auto == "SAME_UPPER" else [(p[1], p[0]) for p in pads]
    flat = list(a.get("pads", [0] * 2 * n))
    return [(flat[i], flat[i + n]) for i in range(n)]


def _o_window(imp: _OnnxImport, node: Any, a: dict[str, Any], kernel: Sequence[int],
              same_ok: bool, zero_pad_ok: bool) -> tuple[str, dict[str, Any]]:
    """The channels-last input and IR window attrs. Pads become 'valid' (none), 'same'
    (when they equal TensorFlow's rule and ``same_ok``), or an explicit ZeroPadding
    before a 'valid' window (when ``zero_pad_ok``: padding with zeros is exact)."""
    x = imp.get(node.input[0], "cl")
    sizes = imp.net.shape(x)[1:-1]
    n = len(sizes)
    require(len(kernel) == n and 1 <= n <= 3, f"{len(kernel)}-D windows are not supported")
    strides = tuple(int(s) for s in a.get("strides", [1] * n))
    dil = tuple(int(d) for d in a.get("dilations", [1] * n))
    pads = _o_pads(a, sizes, kernel, strides, dil)
    same = [same_pads(sizes[i], kernel[i], strides[i], dil[i]) for i in range(n)]
    padding = "valid"
    if any(p != (0, 0) for p in pads) and same_ok and pads == same:
        padding = "same"
    elif any(p != (0, 0) for p in pads):
        require(zero_pad_ok, f"pads {pads} are neither zero nor TensorFlow's 'same' padding")
        x = imp.net.add(f"ZeroPadding{n}D", x, padding=tuple(pads))
    return x, {"strides": strides, "padding": padding, "dilation_rate": dil}


def _o_conv(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    w = imp.const(node.input[1], "the Conv weight")
    has_bias = len(node.input) > 2 and bool(node.input[2])
    n, group = w.ndim - 2, int(a.get("group", 1))
    x, attrs = _o_window(imp, node, a, w.shape[2:], same_ok=True, zero_pad_ok=True)
    cin = imp.net.shape(x)[-1]
    attrs.update(kernel_size=tuple(w.shape[2:]), use_bias=has_bias)
    if group == 1:
        op, attrs["filters"] = f"Conv{n}D", w.shape[0]
        kernel = w.transpose(*range(2, n + 2), 1, 0)
    else:
        require(n == 2 and group == cin and w.shape[1] == 1,
                f"group={group}: only group 1 or depthwise 2-D (group = channels) is supported")
        m = w.shape[0] // cin
        op, attrs["depth_multiplier"] = "DepthwiseConv2D", m
        kernel = w.reshape(cin, m, *w.shape[2:]).transpose(2, 3, 0, 1)
    weights = {"kernel": kernel}
    if has_bias:
        weights["bias"] = imp.const(node.input[2], "the Conv bias")
    imp.set(node.output[0], imp.net.add(op, x, weights=weights, **attrs), "cl")


def _o_pool(kind: str) -> OnnxHandler:
    """Max pads with -inf and AveragePool(count_include_pad=0) averages real elements,
    both as TensorFlow's 'same'; count_include_pad=1 averages zeros: ZeroPadding."""
    def handler(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
        require(len([o for o in node.output if o]) == 1, "the Indices output is not supported")
        kernel = tuple(int(k) for k in a["kernel_shape"])
        require(all(d == 1 for d in a.get("dilations", [1])), "dilated pooling is unsupported")
        include = kind == "Avg" and bool(a.get("count_include_pad", 0))
        x, win = _o_window(imp, node, a, kernel, same_ok=not include, zero_pad_ok=include)
        sizes = imp.net.shape(x)[1:-1]
        if a.get("ceil_mode", 0) and win["padding"] == "valid":
            require(all((sizes[i] - kernel[i]) % win["strides"][i] == 0
                        for i in range(len(sizes))), "ceil_mode=1 with a partial last window")
        out = imp.net.add(f"{kind}Pool{len(kernel)}D", x, pool_size=kernel,
                          strides=win["strides"], padding=win["padding"])
        imp.set(node.output[0], out, "cl")
    return handler


def _o_global_pool(kind: str) -> OnnxHandler:
    def handler(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
        x = imp.get(node.input[0], "cl")
        shape = imp.net.shape(x)
        pooled = imp.net.add(f"Global{kind}Pool{len(shape) - 2}D", x)
        ones = (1,) * (len(shape) - 2)
        imp.set(node.output[0], imp.net.add("Reshape", pooled, target_shape=(shape[-1], *ones)))
    return handler


def _o_batchnorm(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    require(not a.get("training_mode", 0) and len([o for o in node.output if o]) == 1,
            "training mode is not supported")
    layout = "cl" if imp.rank(node.input[0]) >= 3 else "plain"
    names = ("gamma", "beta", "moving_mean", "moving_variance")
    w = {k: imp.const(v, f"BatchNormalization {k}") for k, v in zip(names, node.input[1:5],
                                                                   strict=True)}
    out = imp.net.add("BatchNorm", imp.get(node.input[0], layout),
                      epsilon=float(a.get("epsilon", 1e-5)), weights=w)
    imp.set(node.output[0], out, layout)


def _o_unary(op: str, **defaults: Any) -> OnnxHandler:
    """Elementwise: runs in the input's layout. ``defaults`` maps IR attr -> ONNX default."""
    def handler(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
        if op == "Identity" and node.input[0] in imp.consts:
            imp.consts[node.output[0]] = imp.consts[node.input[0]]
            return
        value, layout = imp.value(node.input[0])
        attrs: dict[str, Any] = {k: float(a.get(k, v)) for k, v in defaults.items()}
        imp.set(node.output[0], imp.net.add(op, value, **attrs), layout)
    return handler


def _o_dropout(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    require(len([o for o in node.output if o]) == 1, "the mask output is not supported")
    ratio = float(a.get("ratio", 0.5))
    if len(node.input) > 1 and node.input[1]:
        ratio = float(imp.const(node.input[1], "the Dropout ratio"))
    value, layout = imp.value(node.input[0])
    imp.set(node.output[0], imp.net.add("Dropout", value, rate=ratio), layout)


def _o_softmax(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    rank = imp.rank(node.input[0])
    axis = int(a.get("axis", 1 if imp.opset < 13 else -1))
    require(imp.opset >= 13 or axis in (-1, rank - 1),
            f"opset {imp.opset} Softmax over axis {axis} flattens trailing axes")
    out = imp.net.add("Softmax", imp.get(node.input[0], "plain"), axis=ir_axis(axis, rank))
    imp.set(node.output[0], out)


def _o_flatten(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    require(int(a.get("axis", 1)) == 1, "only Flatten(axis=1) keeps the batch axis")
    imp.set(node.output[0], imp.net.add("Flatten", imp.get(node.input[0], "plain")))


def _o_reshape(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    x = imp.get(node.input[0], "plain")
    shape = imp.net.shape(x)
    target = [int(d) for d in imp.const(node.input[1], "the Reshape shape")]
    if not a.get("allowzero", 0):
        target = [shape[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1]))
        target[target.index(-1)] = int(np.prod(shape)) // max(known, 1)
    require(len(target) >= 2 and target[0] == shape[0],
            f"shape {target} must keep the batch dim {shape[0]} and one more axis")
    imp.set(node.output[0], imp.net.add("Reshape", x, target_shape=tuple(target[1:])))


def _o_transpose(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    value, layout = imp.value(node.input[0])
    rank = imp.rank(node.input[0])
    perm = [int(p) for p in a.get("perm", range(rank - 1, -1, -1))]
    held = list(range(rank)) if layout == "plain" else [0, rank - 1, *range(1, rank - 1)]
    full = [held[p] for p in perm]  # the ONNX output's axes as axes of ``value``
    require(full[0] == 0, f"perm {perm} moves the batch axis")
    if full == list(range(rank)):
        imp.set(node.output[0], value, "plain")
    else:
        imp.set(node.output[0], imp.net.add("Transpose", value, dims=tuple(full[1:])))


def _o_concat(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    layouts = {imp.value(i)[1] for i in node.input}
    rank = imp.rank(node.input[0])
    axis = int(a["axis"]) % rank
    layout = "cl" if layouts == {"cl"} else "plain"
    if layout == "cl":
        axis = [0, *range(2, rank), 1].index(axis)
    require(axis != 0, "concatenation along the batch axis is not supported")
    out = imp.net.add("Concat", *[imp.get(i, layout) for i in node.input], axis=axis)
    imp.set(node.output[0], out, layout)


def _o_fold_bias(imp: _OnnxImport, x: str, c: np.ndarray) -> bool:
    """MatMul followed by Add(bias): give the bias-less Dense the bias. True if done."""
    value, _ = imp.env[x]
    nodes = imp.net.b.nodes
    idx = next((i for i, n in enumerate(nodes) if n.id == value), None)
    if idx is None or nodes[idx].op != "Dense" or nodes[idx].attr("use_bias") \
            or imp.uses[x] != 1 or sum(v == value for v, _ in imp.env.values()) != 1:
        return False
    units = imp.net.shape(value)[-1]
    if c.ndim > len(imp.net.shape(value)) or c.shape[-1:] != (units,) or c.size != units:
        return False
    nodes[idx] = nodes[idx].with_attrs(use_bias=True)
    imp.net.weights[f"{value}.bias"] = c.reshape(units).astype(DTYPES[imp.net.dtype])
    return True


def _o_binary(op: str) -> OnnxHandler:
    def handler(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
        ins, out = list(node.input), node.output[0]
        consts = [i for i in ins if i in imp.consts]
        if not consts:
            layouts = {imp.value(i)[1] for i in ins}
            layout = layouts.pop() if len(layouts) == 1 else "plain"
            imp.set(out, imp.net.add(op, *[imp.get(i, layout) for i in ins]), layout)
            return
        require(len(ins) == 2 and len(consts) == 1, "needs two inputs, at most one constant")
        x = ins[1] if ins[0] in imp.consts else ins[0]
        c = imp.consts[consts[0]]
        value, layout = imp.value(x)
        if op == "Add" and _o_fold_bias(imp, x, c):
            imp.set(out, value, layout)
            return
        require(c.size == 1 and c.ndim <= imp.rank(x) and op in ("Add", "Subtract", "Mul"),
                f"a constant operand of shape {c.shape} is supported only as a scalar of "
                "Add/Sub/Mul or as the bias of a MatMul")
        scalar = c.reshape(())
        if op == "Subtract" and ins[0] in imp.consts:  # c - x = (-1 * x) + c
            value = imp.net.add("MulConst", value, weights={"value": -1.0})
        elif op == "Subtract":
            scalar = -scalar
        kind = "MulConst" if op == "Mul" else "AddConst"
        imp.set(out, imp.net.add(kind, value, weights={"value": scalar}), layout)
    return handler


def _o_matmul(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    x = imp.get(node.input[0], "plain")
    if node.input[1] in imp.consts:
        w = imp.consts[node.input[1]]
        require(w.ndim == 2, f"a constant right operand must be a matrix, got {w.shape}")
        out = imp.net.add("Dense", x, units=w.shape[1], use_bias=False, weights={"kernel": w})
    else:
        out = imp.net.add("MatMul", x, imp.get(node.input[1], "plain"))
    imp.set(node.output[0], out)


def _o_gemm(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    require(not a.get("transA", 0), "transA=1 is not supported")
    w = imp.const(node.input[1], "the Gemm B matrix") * float(a.get("alpha", 1.0))
    w = w.T if a.get("transB", 0) else w
    weights = {"kernel": w}
    if len(node.input) > 2 and node.input[2]:
        c = imp.const(node.input[2], "the Gemm C bias") * float(a.get("beta", 1.0))
        require(c.ndim <= 1 or (c.ndim == 2 and c.shape[0] == 1),
                f"C of shape {c.shape}: only a bias broadcast over the rows is supported")
        weights["bias"] = np.broadcast_to(c.reshape(-1), (w.shape[1],))
    out = imp.net.add("Dense", imp.get(node.input[0], "plain"), units=w.shape[1],
                      use_bias="bias" in weights, weights=weights)
    imp.set(node.output[0], out)


def _o_constant(imp: _OnnxImport, node: Any, a: dict[str, Any]) -> None:
    require("value" in a, "only Constant(value=tensor) is supported")
    from onnx import numpy_helper

    imp.consts[node.output[0]] = numpy_helper.to_array(a["value"])


ONNX_OPS: dict[str, OnnxHandler] = {
    "Conv": _o_conv, "MaxPool": _o_pool("Max"), "AveragePool": _o_pool("Avg"),
    "GlobalAveragePool": _o_global_pool("Avg"), "GlobalMaxPool": _o_global_pool("Max"),
    "BatchNormalization": _o_batchnorm,
    "Relu": _o_unary("ReLU"), "LeakyRelu": _o_unary("LeakyReLU", alpha=0.01),
    "Elu": _o_unary("ELU", alpha=1.0), "Sigmoid": _o_unary("Sigmoid"),
    "Tanh": _o_unary("Tanh"), "Identity": _o_unary("Identity"), "Dropout": _o_dropout,
    "Softmax": _o_softmax, "Flatten": _o_flatten, "Reshape": _o_reshape,
    "Transpose": _o_transpose, "Concat": _o_concat,
    "Add": _o_binary("Add"), "Mul": _o_binary("Mul"), "Sub": _o_binary("Subtract"),
    "Max": _o_binary("Maximum"), "Min": _o_binary("Minimum"),
    "MatMul": _o_matmul, "Gemm": _o_gemm, "Constant": _o_constant,
}


def _o_input_type(vi: Any, batch: int) -> TensorType:
    t = vi.type.tensor_type
    dtype = ONNX_DTYPES.get(t.elem_type)
    if dtype is None:
        raise Unsupported(f"input {vi.name!r} has element type {t.elem_type}, not a float")
    dims: list[int | None] = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0
                              else None for d in t.shape.dim]
    known = [d for d in dims[1:] if d is not None]
    require(len(dims) >= 1 and len(known) == len(dims) - 1,
            f"input {vi.name!r} has shape {dims}: every dim but the batch must be known")
    return TensorType((batch if dims[0] is None else dims[0], *known), dtype)


def import_onnx(path: str | Path, batch: int = DEFAULT_BATCH) -> Model:
    """An ONNX model file as an IR model with the same NCHW interface (see the module doc)."""
    import onnx
    from onnx import helper, numpy_helper

    path = Path(path)
    proto = onnx.load(str(path))
    g = proto.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    inputs = [vi for vi in g.input if vi.name not in consts]
    try:
        net = ImportNet([_o_input_type(vi, batch) for vi in inputs])
    except Unsupported as exc:
        raise UsageError(f"{path}: {exc}; only statically shaped float inputs can be "
                         "imported") from None
    uses = Counter(i for n in g.node for i in n.input)
    uses.update(o.name for o in g.output)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 13)
    imp = _OnnxImport(net, consts, uses, opset)
    for i, vi in enumerate(inputs):
        imp.set(vi.name, f"x{i}")
    supported = ", ".join(sorted(ONNX_OPS))
    for index, node in enumerate(g.node):
        label = node.name or f"#{index}"
        try:
            require(node.domain in ("", "ai.onnx") and node.op_type in ONNX_OPS,
                    "this op type cannot be imported")
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
            ONNX_OPS[node.op_type](imp, node, attrs)
        except (Unsupported, InvalidGraph, KeyError) as exc:
            raise UsageError(f"{path}: node {label!r} ({node.op_type}) cannot be imported: "
                             f"{exc}; supported op types: {supported}") from None
    try:
        outputs = [imp.get(o.name, "plain") for o in g.output]
        return net.model(outputs)
    except (Unsupported, InvalidGraph, KeyError) as exc:
        raise UsageError(f"{path}: the graph outputs cannot be imported: {exc}") from None

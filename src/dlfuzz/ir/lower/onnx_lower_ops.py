"""ONNX emitters, one per op kind: each appends the ``node(...)``/``const(...)`` lines of a node.

The graph is channels-last (Keras); ONNX's Conv, ConvTranspose, pooling and
BatchNormalization are channels-first, so those read a Transposed input and Transpose
their result back. Every Keras kernel layout ``(*k, a, b)`` becomes ONNX's ``(b, a, *k)``
with one transpose (ConvTranspose's ``(*k, filters, cin)`` becomes ``(cin, filters, *k)``,
which is exactly ONNX's ``(C_in, C_out, *k)``). 'same' padding is spelled out as explicit
``pads`` (TensorFlow's rule, the extra element after); ONNX pads are
``[begin_1..begin_n, end_1..end_n]``. Recurrent ops use ONNX's RNN/LSTM/GRU in their
default time-major layout (ONNX Runtime refuses ``layout=1``).
"""

from __future__ import annotations

from collections.abc import Callable

from dlfuzz.ir.graph import Node
from dlfuzz.ir.lower.onnx_context import Ctx, Raw
from dlfuzz.ir.ops.base import same_pads

Emitter = Callable[[Ctx, Node], None]


# ---- layout helpers ---------------------------------------------------------------------
def _to_first(rank: int) -> list[int]:
    """NHWC -> NCHW (any rank): channels move from last to axis 1."""
    return [0, rank - 1, *range(1, rank - 1)]


def _to_last(rank: int) -> list[int]:
    return [0, *range(2, rank), 1]


def _kernel_perm(n: int) -> str:
    """numpy transpose taking a Keras kernel ``(*k, a, b)`` to ONNX's ``(b, a, *k)``."""
    return f".transpose{(n + 1, n, *range(n))}"


def _channels_first(c: Ctx, n: Node) -> str:
    x = n.inputs[0]
    return c.node("Transpose", [x], f"{n.id}.cf", perm=_to_first(len(c.shape(x))))


def _channels_last(c: Ctx, n: Node, y: str) -> None:
    c.node("Transpose", [y], n.id, perm=_to_last(len(c.shape(n.id))))


def _pads(sizes: tuple[int, ...], kernel: tuple[int, ...], strides: tuple[int, ...],
          dilations: tuple[int, ...], padding: str) -> list[int]:
    if padding == "valid":
        return [0] * (2 * len(sizes))
    pairs = [same_pads(s, k, st, d) for s, k, st, d in zip(sizes, kernel, strides, dilations,
                                                           strict=True)]
    return [p[0] for p in pairs] + [p[1] for p in pairs]


def _window(c: Ctx, n: Node) -> dict[str, list[int]]:
    """kernel_shape, strides, dilations and explicit pads of a conv node."""
    a = n.a
    k = a["kernel_size"]
    dil = a.get("dilation_rate", (1,) * len(k))
    return {"kernel_shape": list(k), "strides": list(a["strides"]), "dilations": list(dil),
            "pads": _pads(c.shape(n.inputs[0])[1:-1], k, a["strides"], dil, a["padding"])}


# ---- dense and convolutions -------------------------------------------------------------
def dense(c: Ctx, n: Node) -> None:
    kernel = c.weight(n, "kernel")
    if not n.a["use_bias"]:
        c.node("MatMul", [n.inputs[0], kernel], n.id)
        return
    y = c.node("MatMul", [n.inputs[0], kernel], f"{n.id}.matmul")
    c.node("Add", [y, c.weight(n, "bias")], n.id)


def conv(c: Ctx, n: Node) -> None:
    dims = len(n.a["kernel_size"])
    ins = [_channels_first(c, n), c.weight(n, "kernel", _kernel_perm(dims))]
    if n.a["use_bias"]:
        ins.append(c.weight(n, "bias"))
    _channels_last(c, n, c.node("Conv", ins, f"{n.id}.conv", **_window(c, n)))


def _grouped_kernel(k: tuple[int, ...]) -> str:
    """``(*k, cin, m)`` -> ``(cin * m, 1, *k)``: output channel ``c * m + j`` is in group c."""
    return f".reshape({', '.join(map(str, k))}, 1, -1){_kernel_perm(len(k))}"


def depthwise(c: Ctx, n: Node) -> None:
    cin = c.shape(n.inputs[0])[-1]
    ins = [_channels_first(c, n), c.weight(n, "kernel", _grouped_kernel(n.a["kernel_size"]))]
    if n.a["use_bias"]:
        ins.append(c.weight(n, "bias"))
    _channels_last(c, n, c.node("Conv", ins, f"{n.id}.conv", group=cin, **_window(c, n)))


def separable(c: Ctx, n: Node) -> None:
    """Depthwise conv (group = cin, no bias), then a 1x1 pointwise conv with the bias."""
    cin = c.shape(n.inputs[0])[-1]
    k = n.a["kernel_size"]
    dims = len(k)
    dw = c.weight(n, "depthwise_kernel", _grouped_kernel(k))
    y = c.node("Conv", [_channels_first(c, n), dw], f"{n.id}.depthwise", group=cin,
               **_window(c, n))
    ins = [y, c.weight(n, "pointwise_kernel", _kernel_perm(dims))]
    if n.a["use_bias"]:
        ins.append(c.weight(n, "bias"))
    y = c.node("Conv", ins, f"{n.id}.pointwise", kernel_shape=[1] * dims)
    _channels_last(c, n, y)


def conv_transpose(c: Ctx, n: Node) -> None:
    """'same' crops the full ``(in-1)*s + k`` output by ``k - s``, the larger half after."""
    k, s = n.a["kernel_size"], n.a["strides"]
    if n.a["padding"] == "same":
        crop = [ki - si for ki, si in zip(k, s, strict=True)]
        pads = [p // 2 for p in crop] + [p - p // 2 for p in crop]
    else:
        pads = [0] * (2 * len(k))
    ins = [_channels_first(c, n), c.weight(n, "kernel", _kernel_perm(len(k)))]
    if n.a["use_bias"]:
        ins.append(c.weight(n, "bias"))
    y = c.node("ConvTranspose", ins, f"{n.id}.conv", kernel_shape=list(k), strides=list(s),
               pads=pads)
    _channels_last(c, n, y)


# ---- pooling ----------------------------------------------------------------------------
def _pool(onnx_op: str, **extra: int) -> Emitter:
    def emit(c: Ctx, n: Node) -> None:
        size = n.a["pool_size"]
        strides = n.a["strides"] or size
        pads = _pads(c.shape(n.inputs[0])[1:-1], size, strides, (1,) * len(size),
                     n.a["padding"])
        y = c.node(onnx_op, [_channels_first(c, n)], f"{n.id}.pool", kernel_shape=list(size),
                   strides=list(strides), pads=pads, **extra)
        _channels_last(c, n, y)
    return emit


def _global_pool(onnx_op: str) -> Emitter:
    """ONNX's global pools keep 1-sized spatial axes: Flatten them away."""
    def emit(c: Ctx, n: Node) -> None:
        y = c.node(onnx_op, [_channels_first(c, n)], f"{n.id}.pool")
        c.node("Flatten", [y], n.id, axis=1)
    return emit


# ---- activations and normalization ------------------------------------------------------
def _unary(onnx_op: str) -> Emitter:
    def emit(c: Ctx, n: Node) -> None:
        c.node(onnx_op, [n.inputs[0]], n.id)
    return emit


def _unary_attr(onnx_op: str, attr: str, onnx_attr: str) -> Emitter:
    def emit(c: Ctx, n: Node) -> None:
        c.node(onnx_op, [n.inputs[0]], n.id, **{onnx_attr: float(n.a[attr])})
    return emit


def _scalar(onnx_op: str) -> Emitter:
    """x op value, ``value`` a zero-dimensional weight (broadcast by ONNX)."""
    def emit(c: Ctx, n: Node) -> None:
        c.node(onnx_op, [n.inputs[0], c.weight(n, "value")], n.id)
    return emit


# ONNX Runtime 1.31's CPU kernels lack int64 Relu and int64 Resize (int32 has both): an
# int64 graph spells those two ops with others, exactly, as float64 does Mish. Nor is
# there a bool Resize (nor a bool Where: ``where``).
_NO_KERNEL_INT64 = ("int64",)
_NO_RESIZE = ("int64", "bool")


def relu(c: Ctx, n: Node) -> None:
    cap = n.a["max_value"]
    if cap is None and c.types[n.id].dtype in _NO_KERNEL_INT64:
        c.node("Max", [n.inputs[0], c.const(f"{n.id}.zero", 0)], n.id)
        return
    if cap is None:
        c.node("Relu", [n.inputs[0]], n.id)
        return
    low = c.const(f"{n.id}.min", 0.0)
    high = c.const(f"{n.id}.max", float(cap))
    c.node("Clip", [n.inputs[0], low, high], n.id)


def prelu(c: Ctx, n: Node) -> None:
    c.node("PRelu", [n.inputs[0], c.weight(n, "alpha")], n.id)


def softmax(c: Ctx, n: Node) -> None:
    c.node("Softmax", [n.inputs[0]], n.id, axis=n.a["axis"])


def gelu(c: Ctx, n: Node) -> None:
    c.node("Gelu", [n.inputs[0]], n.id, approximate="tanh" if n.a["approximate"] else "none")


# ---- comparisons, logic, selection: ONNX computes them on bool tensors ------------------
_COMPARE = {"greater": "Greater", "greater_equal": "GreaterOrEqual", "less": "Less",
            "less_equal": "LessOrEqual", "equal": "Equal"}


def _to_bool(c: Ctx, value: str, name: str) -> str:
    return c.node("Cast", [value], name, to=Raw("TensorProto.BOOL"))


def compare(c: Ctx, n: Node) -> None:
    """``not_equal`` is Not(Equal): ONNX has no NotEqual."""
    op = n.a["mode"]
    t = c.node(_COMPARE.get(op, "Equal"), list(n.inputs), f"{n.id}.cmp")
    if op == "not_equal":
        t = c.node("Not", [t], f"{n.id}.not")
    c.node("Cast", [t], n.id, to=Raw("DT"))


def logical(c: Ctx, n: Node) -> None:
    a, b = (_to_bool(c, v, f"{n.id}.b{i}") for i, v in enumerate(n.inputs))
    t = c.node(n.a["mode"].capitalize(), [a, b], f"{n.id}.logic")
    c.node("Cast", [t], n.id, to=Raw("DT"))


def logical_not(c: Ctx, n: Node) -> None:
    t = c.node("Not", [_to_bool(c, n.inputs[0], f"{n.id}.b")], f"{n.id}.not")
    c.node("Cast", [t], n.id, to=Raw("DT"))


def where(c: Ctx, n: Node) -> None:
    """ONNX Runtime 1.31 has no bool Where kernel: a bool graph selects by
    (c and a) or (not c and b), exactly."""
    cond, a, b = n.inputs
    truth = _to_bool(c, cond, f"{n.id}.b")
    if c.types[n.id].dtype != "bool":
        c.node("Where", [truth, a, b], n.id)
        return
    keep = c.node("And", [truth, a], f"{n.id}.keep")
    other = c.node("And", [c.node("Not", [truth], f"{n.id}.not"), b], f"{n.id}.other")
    c.node("Or", [keep, other], n.id)


# ---- activations ONNX Runtime runs in float32/float16 but not in float64 --------------------
# ONNX Runtime 1.31's CPU provider has no double kernel for Softplus, Softsign, Selu,
# HardSigmoid or Mish (NOT_IMPLEMENTED). A float64 graph gets the same formula from
# primitives that have one (Abs, Neg, Exp, Log, Relu, Min, Add, Sub, Mul, Div, Clip,
# Tanh), so its values are still compared; other dtypes keep the native op (bfloat16 is
# refused by ONNX Runtime either way: no primitive has a bfloat16 CPU kernel).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _f64(c: Ctx, n: Node) -> bool:
    return c.types[n.id].dtype == "float64"


def _softplus_f64(c: Ctx, n: Node, out: str) -> str:
    """Stable softplus: ``relu(x) + log(1 + exp(-|x|))`` (exp never overflows)."""
    x = n.inputs[0]
    one = c.const(f"{n.id}.one", 1.0)
    t = c.node("Neg", [c.node("Abs", [x], f"{n.id}.abs")], f"{n.id}.neg")
    t = c.node("Add", [c.node("Exp", [t], f"{n.id}.exp"), one], f"{n.id}.exp1")
    t = c.node("Log", [t], f"{n.id}.log")
    return c.node("Add", [c.node("Relu", [x], f"{n.id}.relu"), t], out)


def softplus(c: Ctx, n: Node) -> None:
    if _f64(c, n):
        _softplus_f64(c, n, n.id)
    else:
        c.node("Softplus", [n.inputs[0]], n.id)


def softsign(c: Ctx, n: Node) -> None:
    x = n.inputs[0]
    if not _f64(c, n):
        c.node("Softsign", [x], n.id)
        return
    t = c.node("Add", [c.node("Abs", [x], f"{n.id}.abs"), c.const(f"{n.id}.one", 1.0)],
               f"{n.id}.den")
    c.node("Div", [x, t], n.id)


def selu(c: Ctx, n: Node) -> None:
    """Native Selu with alpha and gamma spelled out (ONNX's defaults are the same constants,
    rounded to float32 attributes); float64: ``scale * (relu(x) + alpha * (exp(min(x, 0))
    - 1))``, which is ``scale * x`` for x > 0 and never overflows."""
    x = n.inputs[0]
    if not _f64(c, n):
        c.node("Selu", [x], n.id, alpha=SELU_ALPHA, gamma=SELU_SCALE)
        return
    t = c.node("Min", [x, c.const(f"{n.id}.zero", 0.0)], f"{n.id}.neg_part")
    t = c.node("Sub", [c.node("Exp", [t], f"{n.id}.exp"), c.const(f"{n.id}.one", 1.0)],
               f"{n.id}.expm1")
    t = c.node("Mul", [t, c.const(f"{n.id}.alpha", SELU_ALPHA)], f"{n.id}.elu")
    t = c.node("Add", [c.node("Relu", [x], f"{n.id}.relu"), t], f"{n.id}.sum")
    c.node("Mul", [t, c.const(f"{n.id}.scale", SELU_SCALE)], n.id)


def silu(c: Ctx, n: Node) -> None:
    """ONNX has no SiLU before opset 24 (Swish): ``x * Sigmoid(x)``."""
    x = n.inputs[0]
    c.node("Mul", [x, c.node("Sigmoid", [x], f"{n.id}.sigmoid")], n.id)


def hard_sigmoid(c: Ctx, n: Node) -> None:
    """HardSigmoid(alpha=1/6, beta=0.5) is ``max(0, min(1, x / 6 + 0.5))``; float64:
    ``Clip(x / 6 + 0.5, 0, 1)``."""
    x = n.inputs[0]
    if not _f64(c, n):
        c.node("HardSigmoid", [x], n.id, alpha=1 / 6, beta=0.5)
        return
    t = c.node("Div", [x, c.const(f"{n.id}.six", 6.0)], f"{n.id}.div")
    t = c.node("Add", [t, c.const(f"{n.id}.half", 0.5)], f"{n.id}.add")
    c.node("Clip", [t, c.const(f"{n.id}.zero", 0.0), c.const(f"{n.id}.one", 1.0)], n.id)


def mish(c: Ctx, n: Node) -> None:
    """Native Mish (opset 18); float64: ``x * tanh(softplus(x))`` from primitives."""
    x = n.inputs[0]
    if not _f64(c, n):
        c.node("Mish", [x], n.id)
        return
    t = c.node("Tanh", [_softplus_f64(c, n, f"{n.id}.softplus")], f"{n.id}.tanh")
    c.node("Mul", [x, t], n.id)


def square(c: Ctx, n: Node) -> None:
    """ONNX has no Square op: ``x * x``, the IR's formula as written."""
    c.node("Mul", [n.inputs[0], n.inputs[0]], n.id)


def clip(c: Ctx, n: Node) -> None:
    """Clip's bounds are inputs of the graph's dtype (opset 11 and later)."""
    low = c.const(f"{n.id}.min", float(n.a["min_value"]))
    high = c.const(f"{n.id}.max", float(n.a["max_value"]))
    c.node("Clip", [n.inputs[0], low, high], n.id)


def batch_norm(c: Ctx, n: Node) -> None:
    """ONNX normalizes axis 1: a rank > 2 input goes channels-first and back."""
    rank = len(c.shape(n.id))
    x = n.inputs[0] if rank == 2 else _channels_first(c, n)
    ins = [x] + [c.weight(n, w) for w in ("gamma", "beta", "moving_mean", "moving_variance")]
    out = n.id if rank == 2 else f"{n.id}.bn"
    y = c.node("BatchNormalization", ins, out, epsilon=n.a["epsilon"])
    if rank > 2:
        _channels_last(c, n, y)


def layer_norm(c: Ctx, n: Node) -> None:
    """``stash_type`` = the graph's dtype, so statistics are not computed in float32."""
    ins = [n.inputs[0], c.weight(n, "gamma"), c.weight(n, "beta")]
    c.node("LayerNormalization", ins, n.id, axis=-1, epsilon=n.a["epsilon"],
           stash_type=Raw("DT"))


# ---- merges -----------------------------------------------------------------------------
def _chain(onnx_op: str) -> Emitter:
    """A binary op folded left to right over the inputs, as Keras merges do."""
    def emit(c: Ctx, n: Node) -> None:
        acc = n.inputs[0]
        for i, v in enumerate(n.inputs[1:], start=1):
            last = i == len(n.inputs) - 1
            acc = c.node(onnx_op, [acc, v], n.id if last else f"{n.id}.{i}")
    return emit


def _variadic(onnx_op: str) -> Emitter:
    def emit(c: Ctx, n: Node) -> None:
        c.node(onnx_op, list(n.inputs), n.id)
    return emit


def concat(c: Ctx, n: Node) -> None:
    c.node("Concat", list(n.inputs), n.id, axis=n.a["axis"])


# ---- shape ops --------------------------------------------------------------------------
def flatten(c: Ctx, n: Node) -> None:
    c.node("Flatten", [n.inputs[0]], n.id, axis=1)


def reshape(c: Ctx, n: Node) -> None:
    shape = c.ints(f"{n.id}.shape", list(c.shape(n.id)))
    c.node("Reshape", [n.inputs[0], shape], n.id)


def transpose(c: Ctx, n: Node) -> None:
    c.node("Transpose", [n.inputs[0]], n.id, perm=[0, *n.a["dims"]])


def zero_padding(c: Ctx, n: Node) -> None:
    p = n.a["padding"]
    pads = c.ints(f"{n.id}.pads", [0, *[b for b, _ in p], 0, 0, *[a for _, a in p], 0])
    c.node("Pad", [n.inputs[0], pads], n.id, mode="constant")


def cropping(c: Ctx, n: Node) -> None:
    crop = n.a["cropping"]
    sizes = c.shape(n.inputs[0])[1:-1]
    starts = c.ints(f"{n.id}.starts", [b for b, _ in crop])
    ends = c.ints(f"{n.id}.ends", [s - a for s, (_, a) in zip(sizes, crop, strict=True)])
    axes = c.ints(f"{n.id}.axes", list(range(1, len(crop) + 1)))
    c.node("Slice", [n.inputs[0], starts, ends, axes], n.id)


def upsampling(c: Ctx, n: Node) -> None:
    """Nearest-neighbour repeat as a Resize on the spatial axes (floor, asymmetric); int64
    and bool (no Resize kernel) repeat each element by Unsqueeze, Expand and Reshape per
    axis."""
    if c.types[n.id].dtype in _NO_RESIZE:
        _repeat_elements(c, n)
        return
    scales = c.const(f"{n.id}.scales", [1.0, *map(float, n.a["size"]), 1.0], "np.float32")
    c.node("Resize", [n.inputs[0], "", scales], n.id, mode="nearest",
           coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def _repeat_elements(c: Ctx, n: Node) -> None:
    """Every element repeated ``size[i]`` times along spatial axis i: the axis gets a new
    axis after it, expanded to the factor, then merged back into it."""
    x, shape = n.inputs[0], list(c.shape(n.inputs[0]))
    for i, factor in enumerate(n.a["size"]):
        axis = 1 + i
        if factor == 1:
            continue
        y = c.node("Unsqueeze", [x, c.ints(f"{n.id}.axes{i}", [axis + 1])], f"{n.id}.u{i}")
        wide = [*shape[:axis + 1], factor, *shape[axis + 1:]]
        y = c.node("Expand", [y, c.ints(f"{n.id}.wide{i}", wide)], f"{n.id}.e{i}")
        shape[axis] *= factor
        x = c.node("Reshape", [y, c.ints(f"{n.id}.shape{i}", shape)], f"{n.id}.r{i}")
    c.node("Identity", [x], n.id)


def repeat_vector(c: Ctx, n: Node) -> None:
    axes = c.ints(f"{n.id}.axes", [1])
    y = c.node("Unsqueeze", [n.inputs[0], axes], f"{n.id}.unsqueeze")
    c.node("Expand", [y, c.ints(f"{n.id}.shape", list(c.shape(n.id)))], n.id)


def _reduce(onnx_op: str) -> Emitter:
    def emit(c: Ctx, n: Node) -> None:
        axes = c.ints(f"{n.id}.axes", list(n.a["axes"]))
        c.node(onnx_op, [n.inputs[0], axes], n.id, keepdims=int(n.a["keepdims"]))
    return emit


def dropout(c: Ctx, n: Node) -> None:
    """Inference-mode Dropout (no training_mode input): the identity."""
    ratio = c.const(f"{n.id}.ratio", float(n.a["rate"]), "np.float32")
    c.node("Dropout", [n.inputs[0], ratio], n.id)


# ---- recurrent --------------------------------------------------------------------------
_RNN = {"SimpleRNN": ("RNN", 1), "GRU": ("GRU", 3), "LSTM": ("LSTM", 4)}


def recurrent(c: Ctx, n: Node) -> None:
    """Keras ``(F, g*H)`` kernels become ONNX's ``(1, g*H, F)``; ONNX runs time-major.

    LSTM gate blocks go from Keras's i,f,c,o to ONNX's i,o,f,c; GRU (z,r,h) and RNN agree.
    ONNX biases are ``[Wb, Rb]``: Keras has only the input bias (Rb zeros) except the
    reset_after GRU, whose ``(2, 3H)`` bias rows are exactly Wb and Rb
    (``linear_before_reset=1`` is Keras's reset_after).
    """
    op, gates = _RNN[n.op]
    units = n.a["units"]

    def keras(name: str) -> str:
        key = f"W[{f'{n.id}.{name}'!r}]"
        if n.op != "LSTM":
            return key
        c.helpers.add("gates")
        return f"gates({key}, [0, 3, 1, 2])"

    w = c.expr(f"{n.id}.W", f"{keras('kernel')}.T[None]")
    r = c.expr(f"{n.id}.R", f"{keras('recurrent_kernel')}.T[None]")
    if n.op == "GRU":
        b = c.expr(f"{n.id}.B", f"{keras('bias')}.reshape(1, -1)")
    else:
        b = c.expr(f"{n.id}.B",
                   f"np.concatenate([{keras('bias')}, np.zeros({gates * units}, NP)])[None]")
    x = c.node("Transpose", [n.inputs[0]], f"{n.id}.tnf", perm=[1, 0, 2])
    attrs: dict[str, object] = {"hidden_size": units}
    if n.op == "SimpleRNN":
        attrs["activations"] = ["Tanh"]
    if n.op == "GRU":
        attrs["linear_before_reset"] = 1
    if n.a["return_sequences"]:  # Y: (T, 1, N, H) -> (N, T, H)
        y = c.node(op, [x, w, r, b], f"{n.id}.y", **attrs)
        y = c.node("Squeeze", [y, c.ints(f"{n.id}.axes", [1])], f"{n.id}.tnh")
        c.node("Transpose", [y], n.id, perm=[1, 0, 2])
    else:  # Y_h: (1, N, H) -> (N, H)
        c.node(op, [x, w, r, b], ["", f"{n.id}.h"], **attrs)
        c.node("Squeeze", [f"{n.id}.h", c.ints(f"{n.id}.axes", [0])], n.id)


EMITTERS: dict[str, Emitter] = {
    "Dense": dense,
    **{f"Conv{d}D": conv for d in (1, 2, 3)},
    "DepthwiseConv2D": depthwise,
    **{f"SeparableConv{d}D": separable for d in (1, 2)},
    **{f"Conv{d}DTranspose": conv_transpose for d in (2, 3)},
    **{f"MaxPool{d}D": _pool("MaxPool") for d in (1, 2, 3)},
    **{f"AvgPool{d}D": _pool("AveragePool", count_include_pad=0) for d in (1, 2, 3)},
    **{f"GlobalMaxPool{d}D": _global_pool("GlobalMaxPool") for d in (1, 2, 3)},
    **{f"GlobalAvgPool{d}D": _global_pool("GlobalAveragePool") for d in (1, 2, 3)},
    "AddConst": _scalar("Add"),
    "MulConst": _scalar("Mul"),
    "ReLU": relu,
    "LeakyReLU": _unary_attr("LeakyRelu", "alpha", "alpha"),
    "PReLU": prelu,
    "ELU": _unary_attr("Elu", "alpha", "alpha"),
    "ThresholdedReLU": _unary_attr("ThresholdedRelu", "theta", "alpha"),
    "Softmax": softmax,
    "Sigmoid": _unary("Sigmoid"),
    "Tanh": _unary("Tanh"),
    "GELU": gelu,
    "Softplus": softplus,
    "Softsign": softsign,
    "SELU": selu,
    "SiLU": silu,
    "HardSigmoid": hard_sigmoid,
    "Mish": mish,
    "Abs": _unary("Abs"),
    "Square": square,
    "Clip": clip,
    "BatchNorm": batch_norm,
    "LayerNorm": layer_norm,
    "Add": _chain("Add"),
    "Mul": _chain("Mul"),
    "Subtract": _chain("Sub"),
    "Maximum": _variadic("Max"),
    "Minimum": _variadic("Min"),
    "MatMul": _variadic("MatMul"),
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": transpose,
    "Concat": concat,
    **{f"ZeroPadding{d}D": zero_padding for d in (1, 2, 3)},
    **{f"Cropping{d}D": cropping for d in (1, 2, 3)},
    **{f"UpSampling{d}D": upsampling for d in (1, 2, 3)},
    "RepeatVector": repeat_vector,
    "ReduceMean": _reduce("ReduceMean"),
    "ReduceMax": _reduce("ReduceMax"),
    "ReduceSum": _reduce("ReduceSum"),
    "ReduceMin": _reduce("ReduceMin"),
    "Identity": _unary("Identity"),
    "Dropout": dropout,
    **{op: recurrent for op in _RNN},
    "Compare": compare,
    "Logical": logical,
    "LogicalNot": logical_not,
    "Where": where,
}

"""One emitter per op kind for the TensorFlow lowering (``tf_lower`` assembles them).

An emitter takes the node, the names of its input values and the ``Ctx`` and returns
the statements that compute the node's value into a variable named by its id. Weights
are requested through ``Ctx.w``, which converts them once in ``build``. Lines starting
with ``#`` are comments saying why a node is not the obvious single call.
"""

from __future__ import annotations

from collections.abc import Callable

from dlfuzz.ir.graph import Graph, Node, TensorType
from dlfuzz.ir.lower.context import bound
from dlfuzz.ir.ops.base import same_pads


class Ctx:
    """What emitters share: value types, the weight constants and helpers in use."""

    def __init__(self, graph: Graph) -> None:
        self.types: dict[str, TensorType] = graph.types()
        self.dtype = graph.dtype
        self.node: Node | None = None
        self.helpers: set[str] = set()
        self.build_lines: list[str] = []

    def w(self, name: str, wrap: str = "{}") -> str:
        """The variable holding the current node's weight ``name`` (``wrap`` reshapes it)."""
        node = self.node
        assert node is not None
        var = f"{node.id}_{name}"
        value = wrap.format(f'_const(W["{node.id}.{name}"])')
        self.build_lines.append(f"{var} = {value}  # {node.id} {node.op}")
        return var

    def shape(self, value: str) -> tuple[int, ...]:
        return self.types[value].shape


Emitter = Callable[[Node, list[str], Ctx], list[str]]


def _padding(node: Node) -> str:
    return '"SAME"' if node.a["padding"] == "same" else '"VALID"'


def _bias(node: Node, c: Ctx) -> list[str]:
    if not node.a["use_bias"]:
        return []
    return [f"{node.id} = tf.nn.bias_add({node.id}, {c.w('bias')})"]


def _ints(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _paddings(pairs: list[tuple[int, int]]) -> str:
    """A ``tf.pad`` paddings literal: the spatial pairs, none on batch and channels."""
    return "[" + ", ".join(_ints(r) for r in [(0, 0), *pairs, (0, 0)]) + "]"


# ---- dense and convolutions ---------------------------------------------------------------
def _dense(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """Rank 2 is a matmul; higher ranks contract the last axis with ``tf.tensordot``."""
    x, k = xs[0], c.w("kernel")
    if len(c.shape(x)) == 2:
        call = f"tf.linalg.matmul({x}, {k})"
    else:
        call = f"tf.tensordot({x}, {k}, axes=1)"
    return [f"{node.id} = {call}", *_bias(node, c)]


def _conv(node: Node, xs: list[str], c: Ctx) -> list[str]:
    a, x, k, p = node.a, xs[0], c.w("kernel"), _padding(node)
    s, d = list(a["strides"]), list(a["dilation_rate"])
    if len(s) == 1:
        call = f"tf.nn.conv1d({x}, {k}, stride={s[0]}, padding={p}, dilations={d[0]})"
    elif len(s) == 2:
        call = f"tf.nn.conv2d({x}, {k}, strides={_ints(s)}, padding={p}, dilations={_ints(d)})"
    elif max(d) > 1:
        return ["# the CPU Conv3D kernel refuses dilation (float64): tf.nn.convolution",
                f"{node.id} = tf.nn.convolution({x}, {k}, strides={_ints(s)}, padding={p}, "
                f"dilations={_ints(d)})", *_bias(node, c)]
    else:
        call = f"tf.nn.conv3d({x}, {k}, strides={_ints([1, *s, 1])}, padding={p})"
    return [f"{node.id} = {call}", *_bias(node, c)]


def _unequal_strides(node: Node, x: str, c: Ctx, call: Callable[[str], str]) -> list[str] | None:
    """TF's CPU depthwise kernel needs equal strides: pad, stride 1, then subsample.

    ``tf.nn.depthwise_conv2d`` documents that it "only supports equal length strides in
    the row and column dimensions". Some builds' float32/16 kernels (oneDNN) accept
    unequal strides and others refuse them, so every dtype takes this path: a documented
    limit is never reported as a bug. Returns None when the strides are equal.
    """
    s = node.a["strides"]
    if s[0] == s[1]:
        return None
    lines = ["# TF's CPU depthwise needs equal strides: stride 1, then subsample"]
    src = x
    if node.a["padding"] == "same":
        size, ks = c.shape(x)[1:3], node.a["kernel_size"]
        pads = [same_pads(size[i], ks[i], s[i]) for i in range(2)]
        lines.append(f"{node.id} = tf.pad({x}, {_paddings(pads)})")
        src = node.id
    lines.append(f"{node.id} = {call(src)}")
    lines.append(f"{node.id} = {node.id}[:, ::{s[0]}, ::{s[1]}, :]")
    return lines


def _depthwise(node: Node, xs: list[str], c: Ctx) -> list[str]:
    a, k, p = node.a, c.w("kernel"), _padding(node)
    s, d = a["strides"], _ints(a["dilation_rate"])
    lines = _unequal_strides(node, xs[0], c, lambda src: (
        f'tf.nn.depthwise_conv2d({src}, {k}, strides=[1, 1, 1, 1], padding="VALID")'))
    if lines is None:
        lines = [f"{node.id} = tf.nn.depthwise_conv2d({xs[0]}, {k}, "
                 f"strides=[1, {s[0]}, {s[1]}, 1], padding={p}, dilations={d})"]
    return [*lines, *_bias(node, c)]


def _separable(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """1D runs as 2D on a height-1 image, like Keras does.

    The 1D stride is repeated on the height axis (height stays 1 for either padding),
    so the depthwise kernel sees equal strides, which every CPU dtype supports.
    """
    a, x, p = node.a, xs[0], _padding(node)
    s, d = a["strides"], a["dilation_rate"]
    if len(s) == 1:
        dk = c.w("depthwise_kernel", "tf.expand_dims({}, 0)")
        pk = c.w("pointwise_kernel", "tf.expand_dims({}, 0)")
        return [f"{node.id} = tf.nn.separable_conv2d(tf.expand_dims({x}, 1), {dk}, {pk}, "
                f"strides=[1, {s[0]}, {s[0]}, 1], padding={p}, dilations=[1, {d[0]}])",
                f"{node.id} = tf.squeeze({node.id}, axis=1)", *_bias(node, c)]
    dk, pk = c.w("depthwise_kernel"), c.w("pointwise_kernel")
    lines = _unequal_strides(node, x, c, lambda src: (
        f'tf.nn.separable_conv2d({src}, {dk}, {pk}, strides=[1, 1, 1, 1], padding="VALID")'))
    if lines is None:
        lines = [f"{node.id} = tf.nn.separable_conv2d({x}, {dk}, {pk}, "
                 f"strides=[1, {s[0]}, {s[1]}, 1], padding={p}, dilations={_ints(d)})"]
    return [*lines, *_bias(node, c)]


def _conv_transpose(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """The kernel ``(*k, filters, cin)`` is TensorFlow's layout; the output shape is static."""
    a, k, p = node.a, c.w("kernel"), _padding(node)
    s, out = list(a["strides"]), _ints(c.shape(node.id))
    if len(s) == 2:
        call = (f"tf.nn.conv2d_transpose({xs[0]}, {k}, output_shape={out}, "
                f"strides={_ints(s)}, padding={p})")
    else:
        call = (f"tf.nn.conv3d_transpose({xs[0]}, {k}, output_shape={out}, "
                f"strides={_ints([1, *s, 1])}, padding={p})")
    return [f"{node.id} = {call}", *_bias(node, c)]


# ---- pooling ------------------------------------------------------------------------------
def _pool(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """TensorFlow's 'SAME' max ignores padding and 'SAME' avg divides by the real count."""
    kind = "max" if node.op.startswith("Max") else "avg"
    ks = list(node.a["pool_size"])
    s = list(node.a["strides"] or ks)
    p, x, n = _padding(node), xs[0], len(ks)
    if n == 3 and c.dtype == "float64":
        return _pool3d_split(node, x, kind, ks, s, c)
    return [f"{node.id} = tf.nn.{kind}_pool{n}d({x}, ksize={_ints(ks)}, strides={_ints(s)}, "
            f"padding={p})"]


def _pool3d_split(node: Node, x: str, kind: str, ks: list[int], s: list[int], c: Ctx
                  ) -> list[str]:
    """float64 has no CPU MaxPool3D/AvgPool3D: pool (H, W), then D.

    The window is a box, so max is separable; avg is too, because the real-element count
    of a box is the product of the per-axis counts.
    """
    _, d, h, w, ch = c.shape(x)
    _, d2, h2, w2, _ = c.shape(node.id)
    p, v = _padding(node), node.id
    return [f"# float64 has no CPU {kind.capitalize()}Pool3D kernel: pool H, W then D",
            f"{v} = tf.reshape({x}, [-1, {h}, {w}, {ch}])",
            f"{v} = tf.nn.{kind}_pool2d({v}, ksize={_ints(ks[1:])}, strides={_ints(s[1:])}, "
            f"padding={p})",
            f"{v} = tf.reshape({v}, [-1, {d}, {h2 * w2 * ch}])",
            f"{v} = tf.nn.{kind}_pool1d({v}, ksize={ks[:1]}, strides={s[:1]}, padding={p})",
            f"{v} = tf.reshape({v}, [-1, {d2}, {h2}, {w2}, {ch}])"]


def _global_pool(node: Node, xs: list[str], c: Ctx) -> list[str]:
    fn = "tf.math.reduce_max" if "Max" in node.op else "tf.math.reduce_mean"
    axes = list(range(1, len(c.shape(xs[0])) - 1))
    return [f"{node.id} = {fn}({xs[0]}, axis={_ints(axes)})"]


# ---- activations and normalizations ---------------------------------------------------------
def _relu(node: Node, xs: list[str], c: Ctx) -> list[str]:
    cap = node.a["max_value"]
    if cap is None:
        return [f"{node.id} = tf.nn.relu({xs[0]})"]
    if cap == 6.0:
        return [f"{node.id} = tf.nn.relu6({xs[0]})"]
    return [f"{node.id} = tf.math.minimum(tf.nn.relu({xs[0]}), {bound(c.dtype, cap)})"]


def _clip(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.clip_by_value({xs[0]}, {bound(c.dtype, node.a['min_value'])}, "
            f"{bound(c.dtype, node.a['max_value'])})"]


def _elu(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """tf.nn.elu has alpha 1; another alpha scales its negative branch (as Keras does).

    ``tf.math.multiply`` converts alpha to the tensor's dtype; ``alpha * t`` would
    promote bfloat16 to float64 under TensorFlow's numpy behaviour.
    """
    alpha, x = node.a["alpha"], xs[0]
    if alpha == 1.0:
        return [f"{node.id} = tf.nn.elu({x})"]
    return [f"{node.id} = tf.where({x} > 0, {x}, tf.math.multiply(tf.nn.elu({x}), {alpha!r}))"]


def _hard_sigmoid(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """relu6(x + 3) / 6, as Keras' TF backend writes it (TensorFlow has no such op).

    The constants are tensors of the input's dtype: ``x + 3.0`` or ``y / 6.0`` would
    promote bfloat16 to float64 under TensorFlow's numpy behaviour.
    """
    x = xs[0]
    return [f"{node.id} = tf.math.divide(tf.nn.relu6(tf.math.add({x}, "
            f"tf.constant(3.0, {x}.dtype))), tf.constant(6.0, {x}.dtype))"]


def _simple(template: str) -> Emitter:
    """An op that is one call of its single input; ``{x}`` and attributes fill in."""
    def emit(node: Node, xs: list[str], c: Ctx) -> list[str]:
        return [f"{node.id} = " + template.format(x=xs[0], **node.a)]
    return emit


def _prelu(node: Node, xs: list[str], c: Ctx) -> list[str]:
    x, alpha = xs[0], c.w("alpha")
    return [f"{node.id} = tf.where({x} >= 0, {x}, {alpha} * {x})"]


def _batch_norm(node: Node, xs: list[str], c: Ctx) -> list[str]:
    mean, var = c.w("moving_mean"), c.w("moving_variance")
    beta, gamma = c.w("beta"), c.w("gamma")
    return [f"{node.id} = tf.nn.batch_normalization({xs[0]}, {mean}, {var}, offset={beta}, "
            f"scale={gamma}, variance_epsilon={node.a['epsilon']!r})"]


def _layer_norm(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """Moments written out: tf.nn.moments would compute float16 in float32."""
    x, v = xs[0], node.id
    beta, gamma = c.w("beta"), c.w("gamma")
    return [f"{v}_mean = tf.math.reduce_mean({x}, axis=-1, keepdims=True)",
            f"{v}_var = tf.math.reduce_mean(tf.math.squared_difference({x}, {v}_mean), "
            f"axis=-1, keepdims=True)",
            f"{v} = tf.nn.batch_normalization({x}, {v}_mean, {v}_var, offset={beta}, "
            f"scale={gamma}, variance_epsilon={node.a['epsilon']!r})"]


# ---- merges and shapes --------------------------------------------------------------------
def _fold(fn: str) -> Emitter:
    """A binary TensorFlow op applied left to right over all inputs (Keras merge order)."""
    def emit(node: Node, xs: list[str], c: Ctx) -> list[str]:
        expr = xs[0]
        for y in xs[1:]:
            expr = f"{fn}({expr}, {y})"
        return [f"{node.id} = {expr}"]
    return emit


def _add(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.math.add_n([{', '.join(xs)}])"]


def _scalar(fn: str) -> Emitter:
    """AddConst/MulConst: the zero-dimensional weight broadcasts against the input."""
    def emit(node: Node, xs: list[str], c: Ctx) -> list[str]:
        return [f"{node.id} = {fn}({xs[0]}, {c.w('value')})"]
    return emit


def _concat(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.concat([{', '.join(xs)}], axis={node.a['axis']})"]


def _flatten(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.reshape({xs[0]}, [-1, {c.shape(node.id)[1]}])"]


def _reshape(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.reshape({xs[0]}, {_ints([-1, *node.a['target_shape']])})"]


def _transpose(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.transpose({xs[0]}, perm={_ints([0, *node.a['dims']])})"]


def _zero_pad(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.pad({xs[0]}, {_paddings(list(node.a['padding']))})"]


def _crop(node: Node, xs: list[str], c: Ctx) -> list[str]:
    shape = c.shape(xs[0])
    spans = [f"{lo}:{shape[1 + i] - hi}" for i, (lo, hi) in enumerate(node.a["cropping"])]
    return [f"{node.id} = {xs[0]}[:, {', '.join(spans)}, :]"]


def _upsample(node: Node, xs: list[str], c: Ctx) -> list[str]:
    expr = xs[0]
    for axis, n in enumerate(node.a["size"], start=1):
        expr = f"tf.repeat({expr}, {n}, axis={axis})"
    return [f"{node.id} = {expr}"]


def _repeat_vector(node: Node, xs: list[str], c: Ctx) -> list[str]:
    return [f"{node.id} = tf.tile(tf.expand_dims({xs[0]}, 1), [1, {node.a['n']}, 1])"]


def _reduce(fn: str) -> Emitter:
    def emit(node: Node, xs: list[str], c: Ctx) -> list[str]:
        return [f"{node.id} = {fn}({xs[0]}, axis={_ints(node.a['axes'])}, "
                f"keepdims={node.a['keepdims']})"]
    return emit


# ---- recurrent ----------------------------------------------------------------------------
_RNN_HELPERS = {
    "SimpleRNN": '''
def _simple_rnn(x, kernel, recurrent_kernel, bias, return_sequences):
    """Keras SimpleRNN: h = tanh(x_t K + h R + b) from a zero state, a tf.scan over time."""
    h0 = tf.zeros([tf.shape(x)[0], recurrent_kernel.shape[0]], x.dtype)

    def step(h, x_t):
        return tf.math.tanh(tf.linalg.matmul(x_t, kernel)
                            + tf.linalg.matmul(h, recurrent_kernel) + bias)

    hs = tf.transpose(tf.scan(step, tf.transpose(x, [1, 0, 2]), initializer=h0), [1, 0, 2])
    return hs if return_sequences else hs[:, -1]
''',
    "LSTM": '''
def _lstm(x, kernel, recurrent_kernel, bias, return_sequences):
    """Keras LSTM, gates i, f, c, o (sigmoid gates, tanh cell), zero state, tf.scan."""
    h0 = tf.zeros([tf.shape(x)[0], recurrent_kernel.shape[0]], x.dtype)

    def step(state, x_t):
        h, c = state
        z = tf.linalg.matmul(x_t, kernel) + tf.linalg.matmul(h, recurrent_kernel) + bias
        i, f, g, o = tf.split(z, 4, axis=-1)
        c = tf.math.sigmoid(f) * c + tf.math.sigmoid(i) * tf.math.tanh(g)
        return tf.math.sigmoid(o) * tf.math.tanh(c), c

    hs, _ = tf.scan(step, tf.transpose(x, [1, 0, 2]), initializer=(h0, h0))
    hs = tf.transpose(hs, [1, 0, 2])
    return hs if return_sequences else hs[:, -1]
''',
    "GRU": '''
def _gru(x, kernel, recurrent_kernel, bias, return_sequences):
    """Keras GRU (reset_after), gates z, r, h; bias row 0 input, row 1 recurrent; tf.scan."""
    h0 = tf.zeros([tf.shape(x)[0], recurrent_kernel.shape[0]], x.dtype)

    def step(h, x_t):
        xz, xr, xh = tf.split(tf.linalg.matmul(x_t, kernel) + bias[0], 3, axis=-1)
        hz, hr, hh = tf.split(tf.linalg.matmul(h, recurrent_kernel) + bias[1], 3, axis=-1)
        z = tf.math.sigmoid(xz + hz)
        r = tf.math.sigmoid(xr + hr)
        return z * h + (1 - z) * tf.math.tanh(xh + r * hh)

    hs = tf.transpose(tf.scan(step, tf.transpose(x, [1, 0, 2]), initializer=h0), [1, 0, 2])
    return hs if return_sequences else hs[:, -1]
''',
}
HELPERS = _RNN_HELPERS
_RNN_FN = {"SimpleRNN": "_simple_rnn", "LSTM": "_lstm", "GRU": "_gru"}


def _rnn(node: Node, xs: list[str], c: Ctx) -> list[str]:
    """A call of the cell helper: a ``tf.scan`` over time, as Keras' TF backend runs an RNN
    (a while loop), so XLA compiles one step instead of an unrolled copy per time step."""
    c.helpers.add(node.op)
    k, r, b = c.w("kernel"), c.w("recurrent_kernel"), c.w("bias")
    return [f"{node.id} = {_RNN_FN[node.op]}({xs[0]}, {k}, {r}, {b}, "
            f"return_sequences={node.a['return_sequences']})"]


EMITTERS: dict[str, Emitter] = {
    "Dense": _dense,
    **{f"Conv{n}D": _conv for n in (1, 2, 3)},
    "DepthwiseConv2D": _depthwise,
    "SeparableConv1D": _separable,
    "SeparableConv2D": _separable,
    "Conv2DTranspose": _conv_transpose,
    "Conv3DTranspose": _conv_transpose,
    **{f"{k}Pool{n}D": _pool for k in ("Max", "Avg") for n in (1, 2, 3)},
    **{f"Global{k}Pool{n}D": _global_pool for k in ("Max", "Avg") for n in (1, 2, 3)},
    "ReLU": _relu,
    "LeakyReLU": _simple("tf.nn.leaky_relu({x}, alpha={alpha!r})"),
    "PReLU": _prelu,
    "ELU": _elu,
    "ThresholdedReLU": _simple("tf.where(tf.math.greater({x}, {theta!r}), {x}, tf.zeros_like({x}))"),
    "Softmax": _simple("tf.nn.softmax({x}, axis={axis})"),
    "Sigmoid": _simple("tf.math.sigmoid({x})"),
    "Tanh": _simple("tf.math.tanh({x})"),
    "GELU": _simple("tf.nn.gelu({x}, approximate={approximate})"),
    "Softplus": _simple("tf.math.softplus({x})"),
    "Softsign": _simple("tf.nn.softsign({x})"),
    "SELU": _simple("tf.nn.selu({x})"),
    "SiLU": _simple("tf.nn.silu({x})"),
    "HardSigmoid": _hard_sigmoid,
    "Mish": _simple("tf.math.multiply({x}, tf.math.tanh(tf.math.softplus({x})))"),
    "Abs": _simple("tf.math.abs({x})"),
    "Square": _simple("tf.math.square({x})"),
    "Clip": _clip,
    "BatchNorm": _batch_norm,
    "LayerNorm": _layer_norm,
    "AddConst": _scalar("tf.math.add"),
    "MulConst": _scalar("tf.math.multiply"),
    "Add": _add,
    "Mul": _fold("tf.math.multiply"),
    "Subtract": _fold("tf.math.subtract"),
    "Maximum": _fold("tf.math.maximum"),
    "Minimum": _fold("tf.math.minimum"),
    "MatMul": _fold("tf.linalg.matmul"),
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Transpose": _transpose,
    "Concat": _concat,
    **{f"ZeroPadding{n}D": _zero_pad for n in (1, 2, 3)},
    **{f"Cropping{n}D": _crop for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _upsample for n in (1, 2, 3)},
    "RepeatVector": _repeat_vector,
    "ReduceMean": _reduce("tf.math.reduce_mean"),
    "ReduceMax": _reduce("tf.math.reduce_max"),
    "ReduceSum": _reduce("tf.math.reduce_sum"),
    "ReduceMin": _reduce("tf.math.reduce_min"),
    "Identity": _simple("tf.identity({x})"),
    "Dropout": _simple("tf.identity({x})"),  # inference: the identity
    **{name: _rnn for name in _RNN_FN},
    "Compare": lambda node, xs, c: [
        f"{node.id} = tf.cast(tf.math.{node.a['mode']}({xs[0]}, {xs[1]}), DTYPE)"],
    "Logical": lambda node, xs, c: [
        f"{node.id} = tf.cast(tf.math.logical_{node.a['mode']}(tf.cast({xs[0]}, tf.bool), "
        f"tf.cast({xs[1]}, tf.bool)), DTYPE)"],
    "LogicalNot": _simple("tf.cast(tf.math.logical_not(tf.cast({x}, tf.bool)), DTYPE)"),
    "Where": lambda node, xs, c: [
        f"{node.id} = tf.where(tf.cast({xs[0]}, tf.bool), {xs[1]}, {xs[2]})"],
}

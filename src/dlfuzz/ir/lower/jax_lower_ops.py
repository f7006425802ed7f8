"""Per-op emitters of the JAX lowering: op name -> function from a node context to lines.

Each emitter returns the model-body lines of one node and may add lines to ``ctx.setup``
(run once in ``build()``: weight conversion, kernel re-layouts, RNN step functions,
window counts). Layout is channels-last throughout, so convolutions state their
``dimension_numbers`` (NHWC / HWIO) and pools work on windows ``(1, *k, 1)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dlfuzz.ir.lower.context import NodeCtx, bound, call, fold, identity, infix, num, with_const

# (input, kernel, output) layouts for lax.conv_general_dilated, by spatial rank.
DIMS = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC"),
        3: ("NDHWC", "DHWIO", "NDHWC")}


class Ctx(NodeCtx):
    """The JAX node context: weights become ``jnp.asarray(W[key], DTYPE)`` in build()."""

    def weight_var(self, label: str) -> str:
        return self.local(label)

    def convert(self, key: str) -> str:
        return f"jnp.asarray(W[{key!r}], DTYPE)"

    def bias(self) -> str:
        return f" + {self.weight('bias')}" if self.a["use_bias"] else ""


Emitter = Callable[[Ctx], list[str]]


def _mm(a: str, b: str) -> str:
    return f"jnp.matmul({a}, {b}, precision=PREC)"


def _conv_expr(x: str, k: str, n: int, strides: tuple[int, ...], padding: str,
               dilation: tuple[int, ...] = (), groups: int = 1) -> str:
    """lax.conv_general_dilated call; TF 'same' is lax's 'SAME' (extra element after)."""
    extra = ""
    if any(d > 1 for d in dilation):
        extra += f", rhs_dilation={tuple(dilation)}"
    if groups > 1:
        extra += f", feature_group_count={groups}"
    return (f"lax.conv_general_dilated({x}, {k}, {tuple(strides)}, {padding.upper()!r}"
            f"{extra}, dimension_numbers={DIMS[n]}, precision=PREC)")


# ---- dense and convolutions ------------------------------------------------------------
def _dense(c: Ctx) -> list[str]:
    return [f"{c.out} = {_mm(c.x, c.weight('kernel'))}{c.bias()}"]


def _conv(c: Ctx) -> list[str]:
    n = len(c.a["kernel_size"])
    y = _conv_expr(c.x, c.weight("kernel"), n, c.a["strides"], c.a["padding"],
                   c.a["dilation_rate"])
    return [f"{c.out} = {y}{c.bias()}"]


def _depthwise_kernel(c: Ctx, name: str) -> tuple[str, int]:
    """(k.., cin, m) -> (k.., 1, cin*m): one group per input channel, channel c*m + j."""
    *k, cin, m = c.weight_shapes[name]
    shape = ", ".join(map(str, (*k, 1, cin * m)))
    return c.weight(name, f".reshape({shape})"), cin


def _depthwise(c: Ctx) -> list[str]:
    k, cin = _depthwise_kernel(c, "kernel")
    y = _conv_expr(c.x, k, 2, c.a["strides"], c.a["padding"], c.a["dilation_rate"], cin)
    return [f"{c.out} = {y}{c.bias()}"]


def _separable(c: Ctx) -> list[str]:
    n = len(c.a["kernel_size"])
    k, cin = _depthwise_kernel(c, "depthwise_kernel")
    mid = c.local("depthwise")
    dw = _conv_expr(c.x, k, n, c.a["strides"], c.a["padding"], c.a["dilation_rate"], cin)
    pw = _conv_expr(mid, c.weight("pointwise_kernel"), n, (1,) * n, "valid")
    return [f"{mid} = {dw}", f"{c.out} = {pw}{c.bias()}"]


def _conv_transpose(c: Ctx) -> list[str]:
    """Keras kernel (k.., filters, cin) is the forward conv's HWIO: transpose_kernel=True.

    lax's 'SAME' crops the full output exactly as the IR says (pad_before = (k-s)//2);
    lax's 'VALID' is in*s + max(k-s, 0), which is the IR's (in-1)*s + k only when k >= s,
    so otherwise the full-output padding (k-1, k-1) of the dilated input is spelled out.
    """
    n = len(c.a["kernel_size"])
    ks, ss = c.a["kernel_size"], c.a["strides"]
    pad = repr(c.a["padding"].upper())
    if c.a["padding"] == "valid" and any(k < s for k, s in zip(ks, ss, strict=True)):
        pad = repr(tuple((k - 1, k - 1) for k in ks))
    return [f"{c.out} = lax.conv_transpose({c.x}, {c.weight('kernel')}, {tuple(ss)}, {pad}, "
            f"dimension_numbers={DIMS[n]}, transpose_kernel=True, precision=PREC){c.bias()}"]


# ---- pooling ---------------------------------------------------------------------------
def _window(c: Ctx) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    k = c.a["pool_size"]
    s = c.a["strides"] or k
    return (1, *k, 1), (1, *s, 1), repr(c.a["padding"].upper())


def _max_pool(c: Ctx) -> list[str]:
    """-inf as the initial value: padded positions never win ('same' ignores them)."""
    win, st, pad = _window(c)
    return [f"{c.out} = lax.reduce_window({c.x}, -jnp.inf, lax.max, {win}, {st}, {pad})"]


def _avg_pool(c: Ctx) -> list[str]:
    """Window sums divided by the number of real elements (counted once in build())."""
    win, st, pad = _window(c)
    total = f"lax.reduce_window({c.x}, 0.0, lax.add, {win}, {st}, {pad})"
    if c.a["padding"] == "valid":
        return [f"{c.out} = {total} / {math.prod(c.a['pool_size'])}"]
    count = c.local("count")
    ones = (1, *c.shape[1:-1], 1)
    c.setup.append(f"{count} = lax.reduce_window(jnp.ones({ones}, DTYPE), 0.0, lax.add, "
                   f"{win}, {st}, {pad})")
    return [f"{c.out} = {total} / {count}"]


def _global(fn: str) -> Emitter:
    def emit(c: Ctx) -> list[str]:
        axes = tuple(range(1, len(c.shape) - 1))
        return [f"{c.out} = jnp.{fn}({c.x}, axis={axes})"]
    return emit


# ---- activations and normalization -----------------------------------------------------
def _relu(c: Ctx) -> list[str]:
    if c.a["max_value"] is None:
        return [f"{c.out} = jax.nn.relu({c.x})"]
    return [f"{c.out} = jnp.minimum(jax.nn.relu({c.x}), {bound(c.dtype, c.a['max_value'])})"]


def _clip(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.clip({c.x}, min={bound(c.dtype, c.a['min_value'])}, "
            f"max={bound(c.dtype, c.a['max_value'])})"]


def _prelu(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.where({c.x} >= 0, {c.x}, {c.weight('alpha')} * {c.x})"]


def _batch_norm(c: Ctx) -> list[str]:
    g, b, m, v = (c.weight(k) for k in ("gamma", "beta", "moving_mean", "moving_variance"))
    eps = num(c.a["epsilon"])
    return [f"{c.out} = {g} * ({c.x} - {m}) / jnp.sqrt({v} + {eps}) + {b}"]


def _layer_norm(c: Ctx) -> list[str]:
    """Two-pass biased variance over the last axis."""
    g, b = c.weight("gamma"), c.weight("beta")
    mean, var = c.local("mean"), c.local("var")
    return [f"{mean} = jnp.mean({c.x}, axis=-1, keepdims=True)",
            f"{var} = jnp.mean(jnp.square({c.x} - {mean}), axis=-1, keepdims=True)",
            f"{c.out} = {g} * ({c.x} - {mean}) / jnp.sqrt({var} + {num(c.a['epsilon'])})"
            f" + {b}"]


# ---- merges (Add, Mul, Maximum... are the shared infix/fold emitters) -----------------
def _matmul(c: Ctx) -> list[str]:
    return [f"{c.out} = {_mm(c.ins[0], c.ins[1])}"]


# ---- shape ops -------------------------------------------------------------------------
def _reshape(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.reshape({c.x}, {c.out_type.shape})"]


def _transpose(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.transpose({c.x}, {(0, *c.a['dims'])})"]


def _concat(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.concatenate([{', '.join(c.ins)}], axis={c.a['axis']})"]


def _zero_pad(c: Ctx) -> list[str]:
    pads = ((0, 0), *c.a["padding"], (0, 0))
    return [f"{c.out} = jnp.pad({c.x}, {pads})"]


def _crop(c: Ctx) -> list[str]:
    spans = [f"{lo}:{size - hi}" for (lo, hi), size in zip(c.a["cropping"], c.shape[1:-1],
                                                            strict=True)]
    return [f"{c.out} = {c.x}[:, {', '.join(spans)}, :]"]


def _upsample(c: Ctx) -> list[str]:
    expr = c.x
    for axis, size in enumerate(c.a["size"], start=1):
        expr = f"jnp.repeat({expr}, {size}, axis={axis})"
    return [f"{c.out} = {expr}"]


def _repeat_vector(c: Ctx) -> list[str]:
    return [f"{c.out} = jnp.repeat({c.x}[:, None, :], {c.a['n']}, axis=1)"]


def _reduce(fn: str, keep_dtype: bool = False) -> Emitter:
    """``keep_dtype``: pass ``dtype=DTYPE`` (with x64 on, jnp.sum of int32 gives int64)."""
    def emit(c: Ctx) -> list[str]:
        dtype = ", dtype=DTYPE" if keep_dtype else ""
        return [f"{c.out} = jnp.{fn}({c.x}, axis={tuple(c.a['axes'])}, "
                f"keepdims={c.a['keepdims']}{dtype})"]
    return emit


# ---- recurrent -------------------------------------------------------------------------
STEPS = {
    "SimpleRNN": ["def {step}(h, xw):",
                  "    h = jnp.tanh(xw + jnp.matmul(h, {rk}, precision=PREC))",
                  "    return h, h"],
    "LSTM": ["def {step}(carry, xw):",
             "    h, c = carry",
             "    i, f, g, o = jnp.split(xw + jnp.matmul(h, {rk}, precision=PREC), 4, axis=-1)",
             "    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)",
             "    h = jax.nn.sigmoid(o) * jnp.tanh(c)",
             "    return (h, c), h"],
    "GRU": ["def {step}(h, xw):",
            "    xz, xr, xh = jnp.split(xw, 3, axis=-1)",
            "    hz, hr, hh = jnp.split(jnp.matmul(h, {rk}, precision=PREC) + {rb}, 3, axis=-1)",
            "    z = jax.nn.sigmoid(xz + hz)",
            "    r = jax.nn.sigmoid(xr + hr)",
            "    h = z * h + (1 - z) * jnp.tanh(xh + r * hh)",
            "    return h, h"],
}


def _recurrent(c: Ctx) -> list[str]:
    """Input projection for all steps at once, then lax.scan over time (axis 0)."""
    op = c.node.op
    kernel, rk = c.weight("kernel"), c.weight("recurrent_kernel")
    if op == "GRU":  # reset_after: bias row 0 for the input, row 1 for the recurrent part
        bias, rb = c.weight("bias", "[0]", "input_bias"), c.weight("bias", "[1]", "recurrent_bias")
    else:
        bias, rb = c.weight("bias"), ""
    step, xw = c.local("step"), c.local("xw")
    c.setup += [line.format(step=step, rk=rk, rb=rb) for line in STEPS[op]]
    n, units = c.shape[0], c.a["units"]
    zeros = f"jnp.zeros({(n, units)}, DTYPE)"
    init = f"({zeros}, {zeros})" if op == "LSTM" else zeros
    lines = [f"{xw} = jnp.swapaxes({_mm(c.x, kernel)} + {bias}, 0, 1)"]
    scan = f"lax.scan({step}, {init}, {xw})"
    if c.a["return_sequences"]:
        seq = c.local("seq")
        return lines + [f"_, {seq} = {scan}", f"{c.out} = jnp.swapaxes({seq}, 0, 1)"]
    last = f"({c.out}, _)" if op == "LSTM" else c.out
    return lines + [f"{last}, _ = {scan}"]


EMITTERS: dict[str, Emitter] = {
    "Dense": _dense,
    "Conv1D": _conv, "Conv2D": _conv, "Conv3D": _conv,
    "DepthwiseConv2D": _depthwise,
    "SeparableConv1D": _separable, "SeparableConv2D": _separable,
    "Conv2DTranspose": _conv_transpose, "Conv3DTranspose": _conv_transpose,
    **{f"MaxPool{n}D": _max_pool for n in (1, 2, 3)},
    **{f"AvgPool{n}D": _avg_pool for n in (1, 2, 3)},
    **{f"GlobalMaxPool{n}D": _global("max") for n in (1, 2, 3)},
    **{f"GlobalAvgPool{n}D": _global("mean") for n in (1, 2, 3)},
    "ReLU": _relu,
    "LeakyReLU": call("jax.nn.leaky_relu({x}, negative_slope={alpha})"),
    "PReLU": _prelu,
    "ELU": call("jax.nn.elu({x}, alpha={alpha})"),
    "ThresholdedReLU": call("jnp.where({x} > {theta}, {x}, 0)"),
    "Softmax": call("jax.nn.softmax({x}, axis={axis})"),
    "Sigmoid": call("jax.nn.sigmoid({x})"),
    "Tanh": call("jnp.tanh({x})"),
    "GELU": call("jax.nn.gelu({x}, approximate={approximate})"),
    "Softplus": call("jax.nn.softplus({x})"),
    "Softsign": call("jax.nn.soft_sign({x})"),
    "SELU": call("jax.nn.selu({x})"),
    "SiLU": call("jax.nn.silu({x})"),
    "HardSigmoid": call("jax.nn.hard_sigmoid({x})"),
    "Mish": call("jax.nn.mish({x})"),
    "Abs": call("jnp.abs({x})"),
    "Square": call("jnp.square({x})"),
    # Python float bounds are weakly typed in JAX: they take the input's dtype.
    "Clip": _clip,
    "BatchNorm": _batch_norm,
    "LayerNorm": _layer_norm,
    "Add": infix("+"), "Mul": infix("*"), "Subtract": infix("-"),
    "Maximum": fold("jnp.maximum"), "Minimum": fold("jnp.minimum"),
    "MatMul": _matmul,
    "Flatten": _reshape, "Reshape": _reshape,
    "Transpose": _transpose,
    "Concat": _concat,
    **{f"ZeroPadding{n}D": _zero_pad for n in (1, 2, 3)},
    **{f"Cropping{n}D": _crop for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _upsample for n in (1, 2, 3)},
    "RepeatVector": _repeat_vector,
    "ReduceMean": _reduce("mean"), "ReduceMax": _reduce("max"),
    "ReduceSum": _reduce("sum", keep_dtype=True), "ReduceMin": _reduce("min"),
    "Identity": identity,
    "Dropout": identity,
    "AddConst": with_const("+"), "MulConst": with_const("*"),
    "SimpleRNN": _recurrent, "LSTM": _recurrent, "GRU": _recurrent,
    "Compare": lambda c: [f"{c.out} = jnp.{c.a['mode']}({c.ins[0]}, {c.ins[1]}).astype(DTYPE)"],
    "Logical": lambda c: [f"{c.out} = jnp.logical_{c.a['mode']}({c.ins[0]}, {c.ins[1]})"
                          ".astype(DTYPE)"],
    "LogicalNot": call("jnp.logical_not({x}).astype(DTYPE)"),
    "Where": call("jnp.where({ins[0]}.astype(bool), {ins[1]}, {ins[2]})"),
}

"""Per-op emitters for the PyTorch lowering: each turns one node into a few lines of torch.

An emitter gets a ``Ctx`` and returns the node's lines for ``model``; weights it needs are
converted once through ``ctx.weight`` / ``ctx.setup`` (lines of ``build``). Values are
channels-last as the IR says; torch's convolutions and pools are channels-first, so those
emitters permute in and out around the call and permute kernels once in ``build``.
'same' padding is TensorFlow's (extra element after), which torch cannot express with its
symmetric ``padding=``: an explicit ``F.pad`` precedes a 'valid' call.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dlfuzz.ir.lower.context import NodeCtx, bound, call, fold, infix, num, with_const
from dlfuzz.ir.ops.base import same_pads

# torch's CPU avg_pool3d has no float16/bfloat16 kernel: those dtypes sum windows by unfold.
_NO_HALF_AVG3D = ("float16", "bfloat16")


_COMPARE = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
            "equal": "eq", "not_equal": "ne"}


class Ctx(NodeCtx):
    """The PyTorch node context: weights become ``_w(W[key])`` (a DTYPE tensor) in build()."""

    def weight_var(self, label: str) -> str:
        return self.names(f"w_{self.node.id}_{label}")

    def convert(self, key: str) -> str:
        return f'_w(W["{key}"])'

    def const(self, name: str, expr: str) -> str:
        """A build-time variable ``expr`` (computed once, not on every call)."""
        var = self.names(f"{name}_{self.node.id}")
        self.setup.append(f"{var} = {expr}")
        return var


Emitter = Callable[[Ctx], list[str]]


# ---- layout helpers ------------------------------------------------------------------------
def _ints(values: tuple[int, ...] | list[int]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def to_cf(n: int) -> str:
    """``.permute`` taking channels-last (N, *S, C) to torch's channels-first (N, C, *S)."""
    return f".permute{_ints((0, n + 1, *range(1, n + 1)))}"


def to_cl(n: int) -> str:
    return f".permute{_ints((0, *range(2, n + 2), 1))}"


def kernel_to_torch(n: int) -> str:
    """Keras ``(*k, a, b)`` to torch ``(b, a, *k)``: conv ``(out, in, *k)`` and transposed
    conv ``(in, out, *k)`` alike, since Keras stores the transposed kernel ``(*k, out, in)``."""
    return f".permute{_ints((n + 1, n, *range(n)))}.contiguous()"


def pad_arg(pairs: list[tuple[int, int]]) -> str:
    """``F.pad``'s tuple: (before, after) pairs for the trailing dims, last dim first."""
    return _ints([v for pair in reversed(pairs) for v in pair])


def _window_pads(ctx: Ctx, n: int, kernel: tuple[int, ...], strides: tuple[int, ...],
                 dilation: tuple[int, ...]) -> list[tuple[int, int]]:
    size = ctx.in_types[0].shape[1:1 + n]
    return [same_pads(size[i], kernel[i], strides[i], dilation[i]) for i in range(n)]


def _padded_cf(ctx: Ctx, n: int, pads: list[tuple[int, int]], value: str = "") -> str:
    """The input channels-first, with TF 'same' padding applied when there is any."""
    x = f"{ctx.x}{to_cf(n)}"
    if any(p for pair in pads for p in pair):
        x = f"F.pad({x}, {pad_arg(pads)}{', value=' + value if value else ''})"
    return x


# ---- dense and convolutions ----------------------------------------------------------------
def dense(ctx: Ctx) -> list[str]:
    w = ctx.weight("kernel", ".T.contiguous()")
    b = ctx.weight("bias") if ctx.a["use_bias"] else "None"
    return [f"{ctx.out} = F.linear({ctx.x}, {w}, {b})"]


def _conv_lines(ctx: Ctx, n: int, kernel: str, bias: str, groups: int = 1) -> list[str]:
    """Depthwise/plain conv with 'same' as explicit pad; leaves the result channels-first."""
    a = ctx.a
    dil = a.get("dilation_rate", (1,) * n)
    pads = (_window_pads(ctx, n, a["kernel_size"], a["strides"], dil)
            if a["padding"] == "same" else [(0, 0)] * n)
    group = f", groups={groups}" if groups > 1 else ""
    return [f"{ctx.out} = {_padded_cf(ctx, n, pads)}",
            f"{ctx.out} = F.conv{n}d({ctx.out}, {kernel}, {bias}, stride={_ints(a['strides'])}, "
            f"dilation={_ints(dil)}{group})"]


def conv(ctx: Ctx) -> list[str]:
    n = len(ctx.a["kernel_size"])
    w = ctx.weight("kernel", kernel_to_torch(n))
    b = ctx.weight("bias") if ctx.a["use_bias"] else "None"
    return [*_conv_lines(ctx, n, w, b), f"{ctx.out} = {ctx.out}{to_cl(n)}"]


def _depthwise_kernel(ctx: Ctx, name: str, n: int) -> str:
    """Keras ``(*k, cin, m)`` to grouped torch ``(cin*m, 1, *k)``: out channel c*m + j."""
    *k, cin, m = ctx.weight_shapes[name]
    return ctx.weight(name, f".reshape{_ints((*k, cin * m))}"
                            f".permute{_ints((n, *range(n)))}.unsqueeze(1).contiguous()")


def depthwise(ctx: Ctx) -> list[str]:
    n = len(ctx.a["kernel_size"])
    w = _depthwise_kernel(ctx, "kernel", n)
    b = ctx.weight("bias") if ctx.a["use_bias"] else "None"
    groups = ctx.in_types[0].shape[-1]
    return [*_conv_lines(ctx, n, w, b, groups), f"{ctx.out} = {ctx.out}{to_cl(n)}"]


def separable(ctx: Ctx) -> list[str]:
    """Depthwise (no bias) then a 1x1 pointwise conv carrying the bias, as Keras does."""
    n = len(ctx.a["kernel_size"])
    dw = _depthwise_kernel(ctx, "depthwise_kernel", n)
    pw = ctx.weight("pointwise_kernel", kernel_to_torch(n))
    b = ctx.weight("bias") if ctx.a["use_bias"] else "None"
    groups = ctx.in_types[0].shape[-1]
    return [*_conv_lines(ctx, n, dw, "None", groups),
            f"{ctx.out} = F.conv{n}d({ctx.out}, {pw}, {b}){to_cl(n)}"]


def conv_transpose(ctx: Ctx) -> list[str]:
    """Full transposed conv ((in-1)*s + k), then 'same' crops k - s: (k-s)//2 at the start."""
    a = ctx.a
    n = len(a["kernel_size"])
    w = ctx.weight("kernel", kernel_to_torch(n))
    b = ctx.weight("bias") if a["use_bias"] else "None"
    lines = [f"{ctx.out} = F.conv_transpose{n}d({ctx.x}{to_cf(n)}, {w}, {b}, "
             f"stride={_ints(a['strides'])})"]
    if a["padding"] == "same":
        crops = []
        for i in range(n):
            k, s, size = a["kernel_size"][i], a["strides"][i], ctx.in_types[0].shape[1 + i]
            start = (k - s) // 2
            crops.append(f"{start}:{start + size * s}")
        lines.append(f"{ctx.out} = {ctx.out}[:, :, {', '.join(crops)}]")
    lines.append(f"{ctx.out} = {ctx.out}{to_cl(n)}")
    return lines


# ---- pooling -------------------------------------------------------------------------------
def _pool_geometry(ctx: Ctx) -> tuple[int, tuple[int, ...], tuple[int, ...],
                                       list[tuple[int, int]]]:
    a = ctx.a
    k = a["pool_size"]
    s = a["strides"] or k
    n = len(k)
    pads = (_window_pads(ctx, n, k, s, (1,) * n) if a["padding"] == "same"
            else [(0, 0)] * n)
    return n, k, s, pads


def max_pool(ctx: Ctx) -> list[str]:
    """'same' pads with -inf so padded positions never win (TF ignores them)."""
    n, k, s, pads = _pool_geometry(ctx)
    x = _padded_cf(ctx, n, pads, value='float("-inf")')
    return [f"{ctx.out} = F.max_pool{n}d({x}, {_ints(k)}, {_ints(s)}){to_cl(n)}"]


def _window_sum(n: int, x: str, k: tuple[int, ...], s: tuple[int, ...], dtype: str) -> str:
    """Sum over each window (channels-first ``x``), with the kernel torch has for the dtype."""
    if n == 3 and dtype in _NO_HALF_AVG3D:
        unfolds = "".join(f".unfold({2 + i}, {k[i]}, {s[i]})" for i in range(n))
        return f"{x}{unfolds}.sum(dim=(-3, -2, -1))"
    return f"F.avg_pool{n}d({x}, {_ints(k)}, {_ints(s)}, divisor_override=1)"


def avg_pool(ctx: Ctx) -> list[str]:
    """'valid': torch's average. 'same': window sums of the zero-padded input divided by the
    count of real elements per window (the same sums over a ones tensor, built once)."""
    n, k, s, pads = _pool_geometry(ctx)
    x = _padded_cf(ctx, n, pads)
    if not any(p for pair in pads for p in pair):
        if n == 3 and ctx.dtype in _NO_HALF_AVG3D:
            total = _window_sum(n, x, k, s, ctx.dtype)
            return [f"{ctx.out} = ({total} / {math.prod(k)}){to_cl(n)}"]
        return [f"{ctx.out} = F.avg_pool{n}d({x}, {_ints(k)}, {_ints(s)}){to_cl(n)}"]
    size = _ints((1, 1, *ctx.in_types[0].shape[1:1 + n]))
    ones = f"F.pad(torch.ones({size}, dtype=DTYPE, device=device), {pad_arg(pads)})"
    if n == 1:  # avg_pool1d has no divisor_override: a ratio of two averages
        count = ctx.const("count", f"F.avg_pool1d({ones}, {_ints(k)}, {_ints(s)})")
        return [f"{ctx.out} = F.avg_pool1d({x}, {_ints(k)}, {_ints(s)})",
                f"{ctx.out} = ({ctx.out} / {count}){to_cl(n)}"]
    count = ctx.const("count", _window_sum(n, ones, k, s, ctx.dtype))
    return [f"{ctx.out} = {_window_sum(n, x, k, s, ctx.dtype)}",
            f"{ctx.out} = ({ctx.out} / {count}){to_cl(n)}"]


def _spatial_dims(ctx: Ctx) -> str:
    return _ints(tuple(range(1, ctx.in_types[0].rank - 1)))


def global_max(ctx: Ctx) -> list[str]:
    return [f"{ctx.out} = {ctx.x}.amax(dim={_spatial_dims(ctx)})"]


def global_avg(ctx: Ctx) -> list[str]:
    return [f"{ctx.out} = {ctx.x}.mean(dim={_spatial_dims(ctx)})"]


# ---- recurrent -----------------------------------------------------------------------------
def _gru_order(var: str, units: int, index: str = ":, ") -> str:
    """Keras GRU gates z, r, h (last axis of ``var[index...]``) reordered to torch's r, z, n."""
    z, r, h = (f"{var}[{index}{i * units}:{(i + 1) * units}]" for i in range(3))
    return f"torch.cat(({r}, {z}, {h}), dim=-1)"


def recurrent(ctx: Ctx) -> list[str]:
    """torch.nn.LSTM/GRU/RNN (batch_first) loaded with the Keras weights, transposed.

    LSTM gate order i, f, c, o is torch's i, f, g, o; GRU z, r, h becomes r, z, n and
    Keras reset_after is torch's GRU formulation; Keras has one bias where torch has two,
    so bias_hh is zero except for the GRU's recurrent bias row."""
    op, units = ctx.node.op, ctx.a["units"]
    feat = ctx.in_types[0].shape[-1]
    module = {"LSTM": "LSTM", "GRU": "GRU", "SimpleRNN": "RNN"}[op]
    m = ctx.const("rnn", f"torch.nn.{module}({feat}, {units}, batch_first=True, "
                         f"dtype=DTYPE, device=device)"
                         f".eval().requires_grad_(False)")
    kernel, rec, bias = (ctx.weight(name) for name in ("kernel", "recurrent_kernel", "bias"))
    if op == "GRU":
        w_ih, w_hh = _gru_order(kernel, units) + ".T", _gru_order(rec, units) + ".T"
        b_ih, b_hh = _gru_order(bias, units, "0, "), _gru_order(bias, units, "1, ")
    else:
        w_ih, w_hh, b_ih, b_hh = f"{kernel}.T", f"{rec}.T", bias, ""
    for name, value in (("weight_ih_l0", w_ih), ("weight_hh_l0", w_hh),
                        ("bias_ih_l0", b_ih)):
        ctx.setup.append(f"{m}.{name}.copy_({value})")
    ctx.setup.append(f"{m}.bias_hh_l0.{f'copy_({b_hh})' if b_hh else 'zero_()'}")
    last = "" if ctx.a["return_sequences"] else "[:, -1]"
    return [f"{ctx.out} = {m}({ctx.x})[0]{last}"]


# ---- activations and normalization ---------------------------------------------------------
def relu(ctx: Ctx) -> list[str]:
    cap = ctx.a["max_value"]
    if cap is None:
        return [f"{ctx.out} = F.relu({ctx.x})"]
    return [f"{ctx.out} = torch.clamp({ctx.x}, min={bound(ctx.dtype, 0.0)}, max={bound(ctx.dtype, cap)})"]


def clip(ctx: Ctx) -> list[str]:
    return [f"{ctx.out} = torch.clamp({ctx.x}, min={bound(ctx.dtype, ctx.a['min_value'])}, "
            f"max={bound(ctx.dtype, ctx.a['max_value'])})"]


def _channels_first_call(ctx: Ctx, call: str) -> list[str]:
    """torch's per-channel ops (prelu, batch_norm) want channels on dim 1: move them there."""
    if ctx.in_types[0].rank == 2:
        return [f"{ctx.out} = {call.format(x=ctx.x)}"]
    return [f"{ctx.out} = {call.format(x=ctx.x + '.movedim(-1, 1)')}.movedim(1, -1)"]


def prelu(ctx: Ctx) -> list[str]:
    alpha = ctx.weight("alpha")
    return _channels_first_call(ctx, f"F.prelu({{x}}, {alpha})")


def batch_norm(ctx: Ctx) -> list[str]:
    g, b, mean, var = (ctx.weight(w) for w in ("gamma", "beta", "moving_mean",
                                               "moving_variance"))
    eps = ctx.a["epsilon"]
    return _channels_first_call(
        ctx, f"F.batch_norm({{x}}, {mean}, {var}, {g}, {b}, training=False, eps={num(eps)})")


def layer_norm(ctx: Ctx) -> list[str]:
    g, b = ctx.weight("gamma"), ctx.weight("beta")
    c = ctx.in_types[0].shape[-1]
    return [f"{ctx.out} = F.layer_norm({ctx.x}, ({c},), {g}, {b}, eps={num(ctx.a['epsilon'])})"]


def gelu(ctx: Ctx) -> list[str]:
    mode = "tanh" if ctx.a["approximate"] else "none"
    return [f'{ctx.out} = F.gelu({ctx.x}, approximate="{mode}")']


# ---- shape ---------------------------------------------------------------------------------
def reshape(ctx: Ctx) -> list[str]:
    return [f"{ctx.out} = {ctx.x}.reshape({ctx.x}.shape[0], "
            f"{', '.join(map(str, ctx.a['target_shape']))})"]


def zero_padding(ctx: Ctx) -> list[str]:
    pairs = [tuple(p) for p in ctx.a["padding"]]
    return [f"{ctx.out} = F.pad({ctx.x}, {pad_arg([*pairs, (0, 0)])})"]


def cropping(ctx: Ctx) -> list[str]:
    shape = ctx.in_types[0].shape
    cuts = [f"{lo}:{shape[1 + i] - hi}" for i, (lo, hi) in enumerate(ctx.a["cropping"])]
    return [f"{ctx.out} = {ctx.x}[:, {', '.join(cuts)}]"]


def upsampling(ctx: Ctx) -> list[str]:
    """Nearest neighbour by an integer factor is an exact repeat of every element."""
    reps = "".join(f".repeat_interleave({s}, dim={1 + i})" for i, s in enumerate(ctx.a["size"]))
    return [f"{ctx.out} = {ctx.x}{reps}"]


def reduce(fn: str, keep_dtype: bool = False) -> Emitter:
    """``keep_dtype``: pass ``dtype=DTYPE`` (torch sums an int32 tensor into int64)."""
    def emitter(ctx: Ctx) -> list[str]:
        dtype = ", dtype=DTYPE" if keep_dtype else ""
        return [f"{ctx.out} = {ctx.x}.{fn}(dim={_ints(ctx.a['axes'])}, "
                f"keepdim={ctx.a['keepdims']}{dtype})"]
    return emitter


def concat(ctx: Ctx) -> list[str]:
    return [f"{ctx.out} = torch.cat([{', '.join(ctx.ins)}], dim={ctx.a['axis']})"]


EMITTERS: dict[str, Emitter] = {
    "Dense": dense,
    "Conv1D": conv, "Conv2D": conv, "Conv3D": conv,
    "DepthwiseConv2D": depthwise,
    "SeparableConv1D": separable, "SeparableConv2D": separable,
    "Conv2DTranspose": conv_transpose, "Conv3DTranspose": conv_transpose,
    **{f"MaxPool{n}D": max_pool for n in (1, 2, 3)},
    **{f"AvgPool{n}D": avg_pool for n in (1, 2, 3)},
    **{f"GlobalMaxPool{n}D": global_max for n in (1, 2, 3)},
    **{f"GlobalAvgPool{n}D": global_avg for n in (1, 2, 3)},
    "ReLU": relu,
    "LeakyReLU": call("F.leaky_relu({x}, negative_slope={alpha})"),
    "PReLU": prelu,
    "ELU": call("F.elu({x}, alpha={alpha})"),
    "ThresholdedReLU": call("F.threshold({x}, {theta}, 0.0)"),
    "Softmax": call("F.softmax({x}, dim={axis})"),
    "Sigmoid": call("torch.sigmoid({x})"),
    "Tanh": call("torch.tanh({x})"),
    "GELU": gelu,
    # F.softplus returns x itself above its threshold 20: off by log1p(exp(-x)) < 2.1e-9,
    # about 1e-10 of the value, below every tolerance dlfuzz judges with.
    "Softplus": call("F.softplus({x})"),
    "Softsign": call("F.softsign({x})"),
    "SELU": call("F.selu({x})"),
    "SiLU": call("F.silu({x})"),
    "HardSigmoid": call("F.hardsigmoid({x})"),
    "Mish": call("F.mish({x})"),
    "Abs": call("torch.abs({x})"),
    "Square": call("torch.square({x})"),
    "Clip": clip,
    "BatchNorm": batch_norm,
    "LayerNorm": layer_norm,
    "Add": infix("+"),
    "Mul": infix("*"),
    "Subtract": infix("-"),
    "Maximum": fold("torch.maximum"),
    "Minimum": fold("torch.minimum"),
    "AddConst": with_const("+"),
    "MulConst": with_const("*"),
    "MatMul": call("torch.matmul({ins[0]}, {ins[1]})"),
    "Flatten": call("{x}.flatten(1)"),
    "Reshape": reshape,
    "Transpose": lambda ctx: [f"{ctx.out} = {ctx.x}.permute{_ints((0, *ctx.a['dims']))}"],
    "Concat": concat,
    **{f"ZeroPadding{n}D": zero_padding for n in (1, 2, 3)},
    **{f"Cropping{n}D": cropping for n in (1, 2, 3)},
    **{f"UpSampling{n}D": upsampling for n in (1, 2, 3)},
    "RepeatVector": call("{x}.unsqueeze(1).repeat(1, {n}, 1)"),
    "ReduceMean": reduce("mean"),
    "ReduceMax": reduce("amax"),
    "ReduceSum": reduce("sum", keep_dtype=True),
    "ReduceMin": reduce("amin"),
    "Identity": call("{x}"),
    "Dropout": call("F.dropout({x}, p={rate}, training=False)"),
    "SimpleRNN": recurrent,
    "LSTM": recurrent,
    "GRU": recurrent,
    "Compare": lambda c: [f"{c.out} = torch.{_COMPARE[c.a['mode']]}({c.ins[0]}, {c.ins[1]})"
                          ".to(DTYPE)"],
    "Logical": lambda c: [f"{c.out} = torch.logical_{c.a['mode']}({c.ins[0]}, {c.ins[1]})"
                          ".to(DTYPE)"],
    "LogicalNot": call("torch.logical_not({x}).to(DTYPE)"),
    "Where": call("torch.where({ins[0]}.to(torch.bool), {ins[1]}, {ins[2]})"),
}
